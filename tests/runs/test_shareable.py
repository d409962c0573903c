"""Which agent SQL two agents may share one execution of (``batch.shareable``): the ASCII
shortcut decides exactly as the regular expression of volatile words does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.runs.shared_sql import _VOLATILE, _VOLATILE_STEMS, shareable

# Every word _VOLATILE names, as written there (one of each \w* family).
_WORDS = [
    "now", "rand", "randomblob", "randn", "random", "uuid", "uuid_generate_v4", "newid",
    "current_timestamp", "current_date", "localtime", "localtimestamp", "sysdate",
    "systimestamp", "sysdatetime", "getdate", "today", "curdate", "curtime", "utc_timestamp",
    "clock_timestamp", "statement_timestamp", "transaction_timestamp", "timeofday", "setseed",
    "tablesample", "changes", "total_changes", "last_insert_rowid", "nextval", "currval",
    "sample",
]  # fmt: skip


def _by_expression(sql: str) -> bool:
    return _VOLATILE.search(sql) is None


def test_every_alternative_of_the_expression_holds_a_stem() -> None:
    # The alternatives as the source lists them, \w* and \w+ read as nothing more.
    alternatives = re.sub(r"\\[bw][*+]?", "", _VOLATILE.pattern).strip("()").split("|")
    assert "now" in alternatives and "sample" in alternatives and len(alternatives) > 20
    for alternative in alternatives:
        assert any(stem in alternative for stem in _VOLATILE_STEMS), alternative


def test_each_volatile_word_in_any_case_is_not_shared() -> None:
    for word in _WORDS:
        for written in (word, word.upper(), word.title()):
            sql = f"SELECT {written}() FROM t"
            assert not shareable(sql), sql
            assert shareable(sql) == _by_expression(sql)


def test_letters_ignorecase_folds_outside_ascii_still_reach_the_expression() -> None:
    # The Kelvin sign matches k and the long s matches s under IGNORECASE, not under lower().
    for sql in ("SELECT ſample FROM t", "SELECT TABLEſAMPLE FROM t", "SELECT nextval('ſ')"):
        assert shareable(sql) == _by_expression(sql), sql
    assert not shareable("SELECT ſample FROM t")
    assert shareable("SELECT naïve FROM t")


_PIECES = st.sampled_from(
    [*_WORDS, "select", "from", "where", "t", "x", " ", "(", ")", "_", "'", "1", "é", "ſ", "K"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(_PIECES, st.text(max_size=4)), st.booleans()), max_size=8))
def test_shareable_decides_as_the_expression(pieces: list[tuple[str, bool]]) -> None:
    sql = "".join(piece.upper() if upper else piece for piece, upper in pieces)
    assert shareable(sql) == _by_expression(sql)
