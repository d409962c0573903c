"""The statements of a sqlglot parse: one rule for what counts as a statement, used wherever
sqlbench counts statements (the agent-SQL guard, ``order: auto``'s outermost ORDER BY).

sqlglot returns ``None`` for an empty statement (``SELECT 1;;``) and an ``exp.Semicolon`` node
holding the comment for a comment after the last semicolon (``SELECT 1; -- done``). Neither is
a statement: counting them would call ``SELECT 1; -- done`` two statements.

``error_text`` is the one way a sqlglot error is shown inside a reason or message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlglot import exp

# sqlglot is imported by the functions that read its nodes and errors, not with this module:
# the project's loader imports it, and commands that read no SQL (`runs`, `show`) load the
# project too.


def statements(parsed: Iterable[exp.Expr | None]) -> list[exp.Expr]:
    """The real statements among the nodes a sqlglot parse returned, in order.

    Args:
        parsed: What ``sqlglot.parse`` (or a dialect parser's ``parse``) returned.

    Example:
        >>> import sqlglot
        >>> [s.sql() for s in statements(sqlglot.parse("SELECT 1; -- done"))]
        ['SELECT 1']
        >>> len(statements(sqlglot.parse("SELECT 1;; SELECT 2")))
        2
    """
    from sqlglot import exp

    return [node for node in parsed if node is not None and not isinstance(node, exp.Semicolon)]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def error_text(err: Exception, limit: int) -> str:
    """A sqlglot error as plain one-line text of at most ``limit`` characters.

    sqlglot underlines the failing token with ANSI escapes and spreads its message over lines;
    a reason is plain text on one line. Errors sqlglot found at one place are listed in one
    order (``_in_stable_order``), so the same SQL gets the same text in every process.

    Example:
        >>> error_text(ValueError("Invalid expression\\n  SELECT \\x1b[4mFROM\\x1b[0m"), 40)
        'Invalid expression SELECT FROM'
    """
    text = _ANSI.sub("", " ".join(_in_stable_order(err).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _in_stable_order(err: Exception) -> str:
    """``str(err)``, except that one expression's missing arguments are listed by name.

    sqlglot reports an expression's missing arguments (``Required keyword: 'end' missing for
    <class ...>``, one error each, together) in the order of a set of their names, so with two
    or more missing (DuckDB's ``range(``: 'start' and 'end') the order, and which of them fit
    in the three errors shown, changed with the interpreter's hash seed. Each such run of
    errors (same token, same expression) is sorted; every other error keeps its place. The
    message is rebuilt as sqlglot builds it (``description. Line L, Col: C.`` and the context,
    at most three, then ``... and N more``) only when that changes the order.
    """
    from sqlglot.errors import ParseError

    found = getattr(err, "errors", None)
    if not isinstance(err, ParseError) or not isinstance(found, list) or len(found) < 2:
        return str(err)
    ordered: list[dict[str, object]] = []
    k = 0
    while k < len(found):
        run = _missing_run(found, k)
        ordered.extend(sorted(found[k:run], key=lambda e: str(e.get("description"))))
        k = run
    if all(a is b for a, b in zip(ordered, found, strict=True)):
        return str(err)
    parts = [
        f"{e.get('description')}. Line {e.get('line')}, Col: {e.get('col')}.\n  "
        f"{e.get('start_context', '')}{e.get('highlight', '')}{e.get('end_context', '')}"
        for e in ordered[:_SHOWN_ERRORS]
    ]
    if len(ordered) > _SHOWN_ERRORS:
        parts.append(f"... and {len(ordered) - _SHOWN_ERRORS} more")
    return "\n\n".join(parts)


def _missing_run(found: list[dict[str, object]], start: int) -> int:
    """The end of the run of errors from ``start`` that name missing arguments of one
    expression at one token (``start + 1`` when ``found[start]`` is not such an error)."""
    key = _missing_key(found[start])
    end = start + 1
    if key is None:
        return end
    while end < len(found) and _missing_key(found[end]) == key:
        end += 1
    return end


def _missing_key(error: dict[str, object]) -> tuple[object, object, str] | None:
    """(line, column, expression) of a ``Required keyword: 'x' missing for <class>`` error."""
    match = _MISSING.fullmatch(str(error.get("description", "")))
    if match is None:
        return None
    return error.get("line"), error.get("col"), match.group(1)


_MISSING = re.compile(r"Required keyword: '[^']*' missing for (.*)", re.DOTALL)


_SHOWN_ERRORS = 3
"""How many errors a sqlglot parse error's message shows (``Parser.max_errors``' default)."""
