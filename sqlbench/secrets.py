"""One redaction for every place text leaves sqlbench (docs/security.md, "Secrets").

Secrets are:

- every resolved ``${VAR}`` value (``envvars.resolve`` registers it; shown as ``${VAR}``),
  and API keys read from the environment (``register``);
- URL passwords (``scheme://user:PASSWORD@host``) and the values of query parameters named
  like key, token, password, secret, signature or credential, in any text (shown as ``***``);
- ``Bearer`` tokens and the values of configured secret headers (``register``).

``scrub`` applies all of that to one string, ``scrub_data`` to JSON-like data. The sinks call
them: the CLI's stdout and stderr (``scrubbed_streams``), files the CLI writes, and every row
the run store writes. Values shorter than ``MIN_SECRET_CHARS`` are not registered (redacting
"1" everywhere would garble every number); keep secrets longer than that.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

MIN_SECRET_CHARS = 4
MASK = "***"

_lock = threading.Lock()
_secrets: dict[str, str] = {}
"""Registered value -> what it is shown as."""

_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@?#]*:)(?P<secret>[^\s@/?#]+)(?P<at>@)"
)
_SECRET_PARAM = re.compile(
    r"(?P<head>[?&;](?:[A-Za-z0-9_.\-]*?)"
    r"(?:key|token|password|passwd|pwd|secret|signature|sig|credential|auth)"
    r"[A-Za-z0-9_.\-]*=)(?P<secret>[^&\s#\"'<>]+)",
    re.IGNORECASE,
)
_BEARER_WORDS = ("Bearer", "Basic", "Token")
_BEARER = re.compile(
    rf"(?P<head>\b(?:{'|'.join(_BEARER_WORDS)})\s+)(?P<secret>[A-Za-z0-9._~+/=\-]{{8,}})"
)
"""A token after one of ``_BEARER_WORDS`` (case as written): ``scrub`` runs it only on text
holding one of them (the search costs 0.1 ms per stored result otherwise)."""
_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password|signature", re.IGNORECASE)


def register(value: str | None, shown_as: str = MASK) -> None:
    """Treat ``value`` as a secret from now on in this process (shown as ``shown_as``)."""
    if not value or len(value) < MIN_SECRET_CHARS:
        return
    with _lock:
        _secrets.setdefault(value, shown_as)
        # The URL-encoded form too: values are encoded where they go into URLs.
        from urllib.parse import quote

        encoded = quote(value, safe="")
        if encoded != value:
            _secrets.setdefault(encoded, shown_as)


def register_header(name: str, value: str) -> None:
    """A configured header's value is secret when its name says so (Authorization, X-Api-Key,
    Cookie...), or its token is (``Bearer xxx``: the token)."""
    if _SECRET_HEADER.search(name):
        register(value)
        _, _, token = value.partition(" ")
        register(token)


def forget_all() -> None:
    """Forget every registered value (tests)."""
    with _lock:
        _secrets.clear()


@contextlib.contextmanager
def registered_within() -> Iterator[None]:
    """Forget, when the block ends, what was registered inside it (tests: one test's secrets
    must not mask another's text in the same process)."""
    with _lock:
        before = dict(_secrets)
    try:
        yield
    finally:
        with _lock:
            _secrets.clear()
            _secrets.update(before)


def scrub(text: str) -> str:
    """``text`` with every secret replaced (see the module docstring).

    Example:
        >>> scrub("cannot reach postgresql://u:hunter22@db/x?sslkey=k&api_key=abc123&x=1")
        'cannot reach postgresql://u:***@db/x?sslkey=***&api_key=***&x=1'
        >>> register("s3cr3t-value", "${PW}")
        >>> scrub("invalid key Bearer s3cr3t-value")
        'invalid key Bearer ${PW}'
    """
    if not text:
        return text
    with _lock:
        pairs = sorted(_secrets.items(), key=lambda item: -len(item[0]))
    for value, shown in pairs:
        if value in text:
            text = text.replace(value, shown)
    if "://" in text:
        text = _URL_PASSWORD.sub(_masked, text)
    if "=" in text and _may_hold_param(text):
        text = _SECRET_PARAM.sub(_masked, text)
    if " " in text and any(word in text for word in _BEARER_WORDS):
        text = _BEARER.sub(_masked, text)
    return text


def _may_hold_param(text: str) -> bool:
    """Whether ``_SECRET_PARAM`` matches somewhere in ``text``: it can only start at a ``?``,
    ``&`` or ``;``, so it is tried there alone (found with ``str.find``), not scanned over
    every character (about 10 us of a stored result's 14 us of ``scrub``).

    Example:
        >>> _may_hold_param("a = 1; b = 2"), _may_hold_param("x?a=1&api_key=k")
        (False, True)
    """
    for mark in _PARAM_STARTS:
        at = text.find(mark)
        while at >= 0:
            if _SECRET_PARAM.match(text, at) is not None:
                return True
            at = text.find(mark, at + 1)
    return False


_PARAM_STARTS = ("?", "&", ";")
"""The characters a ``_SECRET_PARAM`` match starts with (its first ``[?&;]``)."""


def _masked(match: re.Match[str]) -> str:
    secret = match.group("secret")
    if secret.startswith("${") or secret == MASK:
        return match.group(0)
    return match.group("head") + MASK + (match.groupdict().get("at") or "")


def scrub_data(data: Any) -> Any:
    """A copy of JSON-like ``data`` with ``scrub`` applied to every string (keys included).

    Example:
        >>> scrub_data({"reason": ["see http://a:pw123@h/"], "n": 3})
        {'reason': ['see http://a:***@h/'], 'n': 3}
    """
    if isinstance(data, str):
        return scrub(data)
    if isinstance(data, dict):
        return {scrub_data(key): scrub_data(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [scrub_data(item) for item in data]
    return data


class ScrubbingStream:
    """A text stream that scrubs everything written through it (the CLI's stdout/stderr)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("a text stream takes str")  # click probes with bytes
        self._inner.write(scrub(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def scrubbed_streams() -> Iterator[None]:
    """While inside: ``sys.stdout`` and ``sys.stderr`` scrub what is written to them."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, ScrubbingStream):
        sys.stdout = ScrubbingStream(sys.stdout)
    if not isinstance(sys.stderr, ScrubbingStream):
        sys.stderr = ScrubbingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
