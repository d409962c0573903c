"""Text made safe for Markdown (shared by every Markdown report): untrusted text (names,
reasons, agent SQL, column names) can add no HTML, link, heading or table cell of its own."""

from __future__ import annotations

import re

_ESCAPES = str.maketrans({"<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]", "`": "\\`"})


def cell(text: str) -> str:
    r"""Text made safe for one Markdown table cell: one line, backslashes and pipes escaped,
    HTML, link and code syntax escaped.

    Backslashes are escaped first, so a reason that already holds ``\|`` cannot end the cell.

    Example:
        >>> cell("a | b\nc")
        'a \\| b c'
        >>> cell("x \\| y")
        'x \\\\\\| y'
        >>> cell("<h1>ALL PASSED</h1> [phish](http://x)")
        '&lt;h1&gt;ALL PASSED&lt;/h1&gt; \\[phish\\](http://x)'
    """
    one = " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")
    return one.translate(_ESCAPES)


def code(text: str) -> str:
    """Text for inside a Markdown code span (`...`): one line, no backtick to end the span
    early (shown as '), pipes escaped for tables. HTML and links are inert inside a span.

    Example:
        >>> code("feat/`x` | y")
        "feat/'x' \\\\| y"
    """
    return re.sub(r"\s+", " ", text).strip().replace("`", "'").replace("|", "\\|")
