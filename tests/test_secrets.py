"""Redaction (sqlbench.secrets): what scrub masks, and the work it skips."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench import secrets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("invalid key Bearer s3cr3t-t0ken-value", "invalid key Bearer ***"),
        ("auth: Basic QWxhZGRpbjpvcGVu and more", "auth: Basic *** and more"),
        ("Token  abcdefgh12345678", "Token  ***"),
        ("bearer lowercase-is-not-a-header-word", "bearer lowercase-is-not-a-header-word"),
        ("Bearer short", "Bearer short"),
    ],
)
def test_tokens_after_bearer_basic_or_token_are_masked(text: str, expected: str) -> None:
    assert secrets.scrub(text) == expected


def test_text_without_those_words_is_not_searched_for_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The token search cost 0.1 ms per stored result; text that cannot hold a token skips it."""

    class Refuse:
        def sub(self, *args: object) -> str:
            raise AssertionError("searched")

    monkeypatch.setattr(secrets, "_BEARER", Refuse())
    text = '{"reason": "results match: 1 row x 1 column", "sql": "SELECT a = 1"}'
    assert secrets.scrub(text) == text


def test_a_secret_registered_within_a_block_is_forgotten_after_it() -> None:
    """What the autouse fixture relies on: a test's secrets leave with it, earlier ones stay."""
    secrets.register("kept-from-before-1")
    with secrets.registered_within():
        secrets.register("only-inside-the-block-2", "${INSIDE}")
        assert secrets.scrub("a only-inside-the-block-2 b") == "a ${INSIDE} b"
        assert secrets.scrub("kept-from-before-1") == "***"
    assert secrets.scrub("a only-inside-the-block-2 b") == "a only-inside-the-block-2 b"
    assert secrets.scrub("kept-from-before-1") == "***"


_PARAM_TEXT = st.lists(
    st.sampled_from(
        [
            *("?", "&", ";", "=", "#", " ", "'", '"', "a", "_", "-", ".", "1", "x", "Key"),
            *("TOKEN", "pass", "word", "sig", "auth", "pwd", "secret", "credential", "${V}"),
            *("***", "://"),
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PARAM_TEXT, max_size=4).map("".join))
def test_query_parameters_are_masked_as_by_the_search_over_every_character(text: str) -> None:
    """``scrub`` tries the parameter pattern only where a ``?``, ``&`` or ``;`` is; the
    text is the one the search over every character gives."""
    searched = text
    searched = secrets._URL_PASSWORD.sub(secrets._masked, searched) if "://" in text else text
    searched = secrets._SECRET_PARAM.sub(secrets._masked, searched)
    assert secrets.scrub(text) == searched
    assert secrets._may_hold_param(text) == (secrets._SECRET_PARAM.search(text) is not None)


def test_text_with_no_parameter_is_not_searched_for_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored result's JSON has ``=`` (SQL) and ``;`` but no ``?name=``: the search over its
    every character (about 10 us a result) is skipped."""
    pattern = secrets._SECRET_PARAM

    class MatchOnly:
        def match(self, text: str, pos: int) -> re.Match[str] | None:
            return pattern.match(text, pos)

        def sub(self, *args: object) -> str:
            raise AssertionError("searched text that holds no secret parameter")

    monkeypatch.setattr(secrets, "_SECRET_PARAM", MatchOnly())
    text = '{"agent_sql": "SELECT a FROM t WHERE b = 1; ", "reason": "x & y?"}'
    assert secrets.scrub(text) == text
    monkeypatch.setattr(secrets, "_SECRET_PARAM", pattern)
    assert secrets.scrub("see http://h/x?q=1&api_key=abc") == "see http://h/x?q=1&api_key=***"
