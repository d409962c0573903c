"""Picking questions by name, space/name, glob, tag and space."""

from __future__ import annotations

import pytest

from sqlbench.errors import SelectionError
from sqlbench.project.files import Question
from sqlbench.project.select import select_questions


def _q(space: str, name: str, *tags: str) -> Question:
    return Question.build(
        {"name": name, "question": "?", "tags": list(tags)}, space=space, path="q.yml", line=1
    )


QUESTIONS = [
    _q("auto", "revenue"),
    _q("sales", "revenue", "finance"),
    _q("sales", "top_customers", "top-k"),
    _q("finance", "arr", "finance", "must-pass"),
    _q("finance", "churn"),
    _q("ops", "churn"),
]


def _names(select: list[str] | None = None, space: str | None = None) -> list[str]:
    return [q.full_name for q in select_questions(QUESTIONS, select=select, space=space)]


def test_nothing_selected_means_everything() -> None:
    assert _names() == [q.full_name for q in QUESTIONS]
    assert _names([]) == _names(None)


def test_a_bare_name_prefers_space_auto() -> None:
    assert _names(["revenue"]) == ["auto/revenue"]


def test_a_bare_name_unique_across_spaces_finds_its_space() -> None:
    assert _names(["arr"]) == ["finance/arr"]


def test_a_bare_name_in_several_spaces_is_ambiguous() -> None:
    with pytest.raises(
        SelectionError,
        match=r"'churn' is in several spaces \(finance/churn, "
        r"ops/churn\); write space/name",
    ):
        _names(["churn"])


def test_space_slash_name_and_globs() -> None:
    assert _names(["sales/revenue"]) == ["sales/revenue"]
    assert _names(["sales/*"]) == ["sales/revenue", "sales/top_customers"]
    assert _names(["*/churn"]) == ["finance/churn", "ops/churn"]
    assert _names(["rev*"]) == ["auto/revenue", "sales/revenue"]


def test_tags() -> None:
    assert _names(["tag:finance"]) == ["sales/revenue", "finance/arr"]
    assert _names(["tag:must-*"]) == ["finance/arr"]


def test_patterns_are_a_union_in_project_order_without_repeats() -> None:
    assert _names(["finance/arr", "sales/*", "tag:finance"]) == [
        "sales/revenue",
        "sales/top_customers",
        "finance/arr",
    ]


def test_space_narrows_and_disambiguates() -> None:
    assert _names(space="finance") == ["finance/arr", "finance/churn"]
    assert _names(["churn"], space="ops") == ["ops/churn"]
    assert _names(["revenue"], space="sales") == ["sales/revenue"]


def test_unknown_space_suggests_the_closest() -> None:
    with pytest.raises(
        SelectionError, match=r"no question is in space 'sale'; did you mean 'sales'\?"
    ):
        _names(space="sale")


def test_a_pattern_matching_nothing_suggests_the_closest() -> None:
    with pytest.raises(
        SelectionError, match=r"no question matches 'top_customer'; did you mean 'top_customers'\?"
    ):
        _names(["top_customer"])
    with pytest.raises(SelectionError, match=r"no question matches 'arr' in space 'sales'"):
        _names(["arr"], space="sales")
    with pytest.raises(SelectionError, match=r"no question matches 'xyz/\*'$"):
        _names(["xyz/*"])


def test_a_part_of_a_name_suggests_the_name_containing_it_and_a_glob() -> None:
    with pytest.raises(
        SelectionError,
        match=r"no question matches 'cust'; did you mean 'top_customers' \(or a glob like "
        r"'\*cust\*'\)\?$",
    ):
        _names(["cust"])
