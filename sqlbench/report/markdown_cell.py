"""Text made safe for one cell of a Markdown table (shared by every Markdown report)."""

from __future__ import annotations


def cell(text: str) -> str:
    r"""Text made safe for one Markdown table cell: one line, backslashes and pipes escaped.

    Backslashes are escaped first, so a reason that already holds ``\|`` cannot end the cell.

    Example:
        >>> cell("a | b\nc")
        'a \\| b c'
        >>> cell("x \\| y")
        'x \\\\\\| y'
    """
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")
