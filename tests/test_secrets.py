"""Redaction (sqlbench.secrets): what scrub masks, and the work it skips."""

from __future__ import annotations

import pytest

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
