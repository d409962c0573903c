"""Small text rules every layer shares, written once: "did you mean", one-line messages and
percentages. A leaf module: it imports nothing from sqlbench, so any package may use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_LINE = 500
"""Longest one-line message (reasons, agent errors) before it is cut with an ellipsis."""


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice closest to ``word`` (difflib's ratio of at least ``cutoff``), or None.

    Example:
        >>> closest("scripte", ["scripted", "auto"])
        'scripted'
        >>> closest("zzz", ["scripted", "auto"]) is None
        True
    """
    unique = list(dict.fromkeys(choices))
    found = difflib.get_close_matches(word, unique, n=1, cutoff=cutoff)
    return found[0] if found else None


def suggest(
    word: str,
    choices: Iterable[str],
    *,
    cutoff: float = 0.6,
    listing: bool = False,
    otherwise: str = "",
    containing: str | None = None,
) -> str:
    """``; did you mean 'x'?`` for the choice closest to ``word``. The one "did you mean"
    wording of sqlbench: append it to the sentence that names the unknown word.

    Args:
        word: What the user wrote.
        choices: The names that exist.
        cutoff: How close a choice must be (difflib ratio, 0-1).
        listing: When nothing is close, list the choices (``; expected one of: a, b``).
        otherwise: When nothing is close (and not ``listing``), this text.
        containing: When nothing is close, suggest the first choice that contains ``word``
            (case-insensitive), followed by this text inside the question.

    Example:
        >>> "unknown key 'sqll'" + suggest("sqll", ["name", "sql", "tags"])
        "unknown key 'sqll'; did you mean 'sql'?"
        >>> suggest("zzz", ["sql", "name"], listing=True)
        '; expected one of: sql, name'
        >>> suggest("zzz", ["sql"])
        ''
        >>> suggest("rev", ["sales/revenue_by_month"], containing=" (or a glob)")
        "; did you mean 'sales/revenue_by_month' (or a glob)?"
    """
    names = list(dict.fromkeys(choices))
    found = closest(word, names, cutoff=cutoff)
    if found is not None:
        return f"; did you mean {found!r}?"
    if containing is not None:
        inside = next((name for name in names if word.lower() in name.lower()), None)
        if inside is not None:
            return f"; did you mean {inside!r}{containing}?"
    if listing and names:
        return f"; expected one of: {', '.join(names)}"
    return otherwise


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """Collapse whitespace to one line and cut it to ``limit`` characters.

    Example:
        >>> one_line("a\\n  b\\tc")
        'a b c'
        >>> one_line("abcdef", limit=4)
        'abc…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def few_lines(text: str, limit: int = MAX_LINE) -> str:
    """Each line's whitespace collapsed, blank lines dropped, the line breaks kept, cut to
    ``limit`` characters: a message whose lines mean something (a program's stderr).

    Example:
        >>> few_lines("exited; stderr:\\n\\n  warn  \\nValueError: boom\\n")
        'exited; stderr:\\nwarn\\nValueError: boom'
    """
    kept = "\n".join(flat for line in text.splitlines() if (flat := " ".join(line.split())))
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def joined_lines(text: str, limit: int = MAX_LINE) -> str:
    """A message of several lines on one line: ``|`` between lines, a space after a line that
    ends with a colon (it introduces the next).

    Example:
        >>> joined_lines("exited; stderr:\\nwarn\\nValueError: boom")
        'exited; stderr: warn | ValueError: boom'
    """
    lines = few_lines(text, limit=len(text) + 1).splitlines()
    flat = "".join(
        ("" if i == 0 else " " if lines[i - 1].endswith(":") else " | ") + line
        for i, line in enumerate(lines)
    )
    return one_line(flat, limit)


def percent(value: float) -> str:
    """A proportion as a whole percentage, with one decimal where rounding would hide that it is
    not 0% or 100%: 199/200 reads 99.5%, never 100%.

    Example:
        >>> percent(0.8), percent(2 / 3), percent(199 / 200), percent(1 / 1000), percent(1.0)
        ('80%', '67%', '99.5%', '0.1%', '100%')
    """
    whole = f"{value:.0%}"
    if whole in ("0%", "100%") and 0 < value < 1:
        return f"{value:.1%}"
    return whole


def likeness(a: str, b: str) -> float:
    """How alike two texts read, 0 to 1 (difflib's ratio); used to pair similar items.

    Example:
        >>> likeness("SELECT a", "SELECT a"), likeness("abc", "xyz")
        (1.0, 0.0)
    """
    return difflib.SequenceMatcher(None, a, b).ratio()
