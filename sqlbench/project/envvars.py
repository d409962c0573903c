"""``${ENV_VAR}`` interpolation for secrets in project settings and agent options.

Project objects keep the ``${...}`` form: values are resolved only at the moment they are used
(opening a warehouse, sending an HTTP request), and nothing resolved is ever stored in a run,
JSON or report. ``redact`` turns resolved values back into their ``${NAME}`` form, for error
messages that might quote a URL or header.

Syntax: ``${NAME}``; ``${NAME:-default}`` (the default when NAME is unset or empty); ``$${`` is a
literal ``${``. NAME is letters, digits and underscores, not starting with a digit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from sqlbench import secrets
from sqlbench.errors import EnvVarError

_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse(inner: str) -> tuple[str, str | None]:
    name, sep, default = inner.partition(":-")
    return name, (default if sep else None)


def template_error(text: str) -> str | None:
    """Why ``text`` is not a valid template, or None when it is.

    Example:
        >>> template_error("postgresql://u:${PG_PASSWORD}@db/x") is None
        True
        >>> print(template_error("postgresql://u:${PG PASSWORD}@db/x"))  # doctest: +ELLIPSIS
        '${PG PASSWORD}' is not a valid variable reference (use ${NAME}, NAME of letters, ...)
    """
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == "$${":
            continue
        if match.group(1) is None:
            return f"'{text[match.start() :]}' has an unclosed '${{' (write $${{ for a literal one)"
        name, _ = _parse(match.group(1))
        if not _NAME.fullmatch(name):
            return (
                f"'{token}' is not a valid variable reference "
                "(use ${NAME}, NAME of letters, digits and _)"
            )
    return None


def env_var_names(text: str) -> list[str]:
    """The variable names ``text`` refers to, in order, without repeats.

    Example:
        >>> env_var_names("https://${HOST}/x?k=${KEY:-none}&h=${HOST}")
        ['HOST', 'KEY']
    """
    names: list[str] = []
    for match in _TOKEN.finditer(text):
        if match.group(1) is None:
            continue
        name, _ = _parse(match.group(1))
        if _NAME.fullmatch(name) and name not in names:
            names.append(name)
    return names


def resolve(text: str, environ: Mapping[str, str] | None = None, *, where: str = "") -> str:
    """``text`` with every ``${NAME}`` replaced by the variable's value. Never store the result.

    Args:
        text: A template.
        environ: Variables to use (default ``os.environ``).
        where: What the value is, for the error message (e.g. ``sqlbench.yml warehouse``).

    Raises:
        EnvVarError: A reference is malformed or names an unset variable without a default.

    Example:
        >>> resolve("a=${A}, b=${B:-2}, c=$${C}", {"A": "1"})
        'a=1, b=2, c=${C}'
    """
    env = os.environ if environ is None else environ
    problem = template_error(text)
    suffix = f" (in {where})" if where else ""
    if problem:
        raise EnvVarError(problem + suffix)

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = _parse(match.group(1))
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise EnvVarError(
                    f"environment variable {name} is not set{suffix}; "
                    f"set it, or write ${{{name}:-default}}"
                )
            return default
        # Every resolved value is a secret from now on (sqlbench.secrets): wherever it would
        # be printed or stored, ${NAME} is shown instead.
        secrets.register(value, f"${{{name}}}")
        return _url_encoded(text, match, value)

    return _TOKEN.sub(replace, text)


def _url_encoded(text: str, match: re.Match[str], value: str) -> str:
    """``value`` percent-encoded where the reference sits inside a URL's userinfo, path or
    query, so that ``@``, ``/``, ``:`` or ``?`` in a password cannot change the host.

    Example:
        >>> resolve("postgresql://u:${PW}@db/x?k=${PW}", {"PW": "a@b/c?d"})
        'postgresql://u:a%40b%2Fc%3Fd@db/x?k=a%40b%2Fc%3Fd'
        >>> resolve("${URL}", {"URL": "https://u:p@h/x"})
        'https://u:p@h/x'
        >>> resolve("https://${HOST}/", {"HOST": "h:1"})
        'https://h:1/'
    """
    before, after = text[: match.start()], text[match.end() :]
    if "://" not in before:
        return value  # the scheme, or a whole URL in one variable
    authority_and_rest = before.split("://", 1)[1]
    if "?" in authority_and_rest or "#" in authority_and_rest:
        return quote(value, safe="")
    if "/" in authority_and_rest:
        return quote(value, safe="/")
    if "@" in authority_and_rest:
        return value  # the host (after the userinfo)
    rest_of_authority = re.split(r"[/?#]", after, maxsplit=1)[0]
    if "@" in rest_of_authority:
        return quote(value, safe="")  # userinfo
    return value


def resolve_data(data: Any, environ: Mapping[str, str] | None = None, *, where: str = "") -> Any:
    """A copy of ``data`` (mappings, lists, strings) with every string resolved.

    Example:
        >>> resolve_data({"headers": {"Authorization": "Bearer ${T}"}, "n": 3}, {"T": "t0k"})
        {'headers': {'Authorization': 'Bearer t0k'}, 'n': 3}
    """
    if isinstance(data, str):
        return resolve(data, environ, where=where)
    if isinstance(data, Mapping):
        return {key: resolve_data(value, environ, where=where) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [resolve_data(item, environ, where=where) for item in data]
    return data


def redact(
    message: str, templates: list[str] | str, environ: Mapping[str, str] | None = None
) -> str:
    """``message`` with the values of variables used in ``templates`` put back as ``${NAME}``.

    Use on error messages from drivers or HTTP clients that may quote a resolved URL or header.

    Example:
        >>> redact("cannot connect to postgresql://u:s3cret@db", "postgresql://u:${PW}@db",
        ...        {"PW": "s3cret"})
        'cannot connect to postgresql://u:${PW}@db'
    """
    env = os.environ if environ is None else environ
    names: list[str] = []
    for template in [templates] if isinstance(templates, str) else templates:
        names.extend(n for n in env_var_names(template) if n not in names)
    # Longest values first, so a value containing another is replaced whole.
    values = sorted(((env[n], n) for n in names if env.get(n)), key=lambda vn: -len(vn[0]))
    for value, name in values:
        message = message.replace(value, f"${{{name}}}")
    return secrets.scrub(message)


def redact_data(
    data: Any, templates: list[str] | str, environ: Mapping[str, str] | None = None
) -> Any:
    """A copy of ``data`` (mappings, lists, strings) with ``redact`` applied to every string.

    Use on replies that may echo a resolved secret back (a server quoting its auth header).

    Example:
        >>> redact_data({"echo": ["Bearer t0k"], "n": 3}, "Bearer ${T}", {"T": "t0k"})
        {'echo': ['Bearer ${T}'], 'n': 3}
    """
    if isinstance(data, str):
        return redact(data, templates, environ)
    if isinstance(data, Mapping):
        return {key: redact_data(value, templates, environ) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(item, templates, environ) for item in data]
    return data
