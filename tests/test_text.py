"""The shared text rules: one "did you mean", one one-line, one percentage."""

from __future__ import annotations

from pathlib import Path

import sqlbench
from sqlbench.text import closest, one_line, percent, suggest

PACKAGE = Path(sqlbench.__file__).parent


def test_suggest_has_one_wording_and_lists_on_request() -> None:
    assert suggest("scripte", ["auto", "scripted"]) == "; did you mean 'scripted'?"
    assert suggest("qqq", ["auto", "scripted"]) == ""
    assert suggest("qqq", ["auto", "auto", "scripted"], listing=True) == (
        "; expected one of: auto, scripted"
    )
    assert suggest("qqq", [], listing=True) == ""
    assert closest("sale", ["sales", "finance"], cutoff=0.5) == "sales"


def test_no_module_writes_its_own_did_you_mean() -> None:
    """difflib's close matches are looked up in sqlbench/text.py only: every suggestion goes
    through ``suggest``."""
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "text.py" and "get_close_matches" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_percent_never_rounds_a_miss_up_to_a_whole() -> None:
    assert percent(199 / 200) == "99.5%"
    assert percent(1 / 1000) == "0.1%"
    assert (percent(0.0), percent(1.0), percent(0.3)) == ("0%", "100%", "30%")


def test_one_line_collapses_and_cuts() -> None:
    assert one_line("a\n\n b\tc") == "a b c"
    assert one_line("x" * 20, 10) == "x" * 9 + "…"
