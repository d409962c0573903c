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

from sqlglot import exp


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
    return [node for node in parsed if node is not None and not isinstance(node, exp.Semicolon)]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def error_text(err: Exception, limit: int) -> str:
    """A sqlglot error as plain one-line text of at most ``limit`` characters.

    sqlglot underlines the failing token with ANSI escapes and spreads its message over lines;
    a reason is plain text on one line.

    Example:
        >>> error_text(ValueError("Invalid expression\\n  SELECT \\x1b[4mFROM\\x1b[0m"), 40)
        'Invalid expression SELECT FROM'
    """
    text = _ANSI.sub("", " ".join(str(err).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
