"""Text hygiene at the boundary (docs/security.md, "Text"): every string that comes from an
agent, a database, a file or an import is valid Unicode before it is stored or shown, and
untrusted text reaches a terminal with its control characters visible.

- ``valid_text``: lone surrogates and NUL replaced with U+FFFD (``clean_data`` for JSON-like
  data, counting what it replaced);
- ``xml_safe``: characters XML 1.0 forbids shown as escapes (JUnit);
- ``visible``: C0/C1 control characters (ESC, BEL, backspace, form feed...), DEL and bidi
  overrides shown as ``\\x1b``-style escapes; newlines and tabs kept;
- ``SafeConsole``: a rich Console that prints untrusted text with markup and ``:emoji:`` codes
  off and every character of the data passed through ``visible``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment

REPLACEMENT = "\ufffd"
_INVALID = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def valid_text(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates and NUL replaced, and how many were.

    Example:
        >>> valid_text("words \\udfff here\\x00")
        ('words \\ufffd here\\ufffd', 2)
    """
    if text.isascii() and "\x00" not in text:
        return text, 0
    return _INVALID.subn(REPLACEMENT, text)


def clean_data(data: Any) -> tuple[Any, int]:
    """A copy of JSON-like ``data`` with ``valid_text`` applied to every string (keys too),
    and the number of characters replaced.

    Example:
        >>> clean_data({"sql": "SELECT '\\ud800'", "n": [1, "\\x00"]})
        ({'sql': "SELECT '\\ufffd'", 'n': [1, '\\ufffd']}, 2)
    """
    if isinstance(data, str):
        return valid_text(data)
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, value in data.items():
            new_key, a = clean_data(key)
            out[new_key], b = clean_data(value)
            total += a + b
        return out, total
    if isinstance(data, list | tuple):
        items = []
        total = 0
        for item in data:
            new, count = clean_data(item)
            items.append(new)
            total += count
        return items, total
    return data, 0


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    r"""``text`` with every character XML 1.0 forbids (NUL, ESC, form feed, lone surrogates...)
    shown as a ``\x1b``-style escape, so a JUnit file always parses.

    Example:
        >>> xml_safe(chr(0) + "b" + chr(27) + "c" + chr(12)) == r"\x00b\x1bc\x0c"
        True
    """
    return _NOT_XML.sub(_escape, text)


def visible(text: str) -> str:
    r"""Control characters shown, never sent: ESC prints as the four characters ``\x1b``.

    Example:
        >>> visible("ok" + chr(27) + "[2Kfake" + chr(0x202E)) == r"ok\x1b[2Kfake\u202e"
        True
        >>> visible("line one\n\tline two")
        'line one\n\tline two'
    """
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class SafeConsole(Console):
    """A rich Console for untrusted text: no markup, no emoji codes, control characters
    visible (rich's own styling and cursor control still work)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        safe = (
            segment if segment.control else Segment(visible(segment.text), segment.style)
            for segment in buffer
        )
        return super()._render_buffer(safe)
