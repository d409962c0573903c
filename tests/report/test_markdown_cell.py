"""One Markdown cell rule for every report: a reason can never break a table row."""

from __future__ import annotations

import pytest

from sqlbench.report.markdown_cell import cell


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a | b\nc", "a \\| b c"),
        # An already-escaped pipe: without escaping the backslash first, `\\|` would leave a
        # bare `|` that ends the cell in GitHub's Markdown.
        ("x \\| y", "x \\\\\\| y"),
        ("  spaced\tout  ", "spaced out"),
    ],
)
def test_cell_escapes_backslashes_then_pipes(text: str, expected: str) -> None:
    assert cell(text) == expected
