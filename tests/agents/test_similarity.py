"""TF-IDF similarity used by ``auto`` to route questions to certified queries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sqlbench.agents.similarity import TfidfIndex, features, stem, words

DOCUMENTS = [
    "revenue by region 2023. Total revenue by customer region in 2023",
    "revenue by region 2024. Total revenue by customer region in 2024",
    "arr by year end. Total ARR at the end of each year from 2021 to 2024",
    "new customers by month 2022. Number of new customers who signed up in each month of 2022",
]


def test_words_split_names_drop_stop_words_and_stem() -> None:
    assert words("new_customers_by_month") == ["new", "customer", "month"]
    assert words("What were the top five Customers?") == ["top", "5", "customer"]
    assert stem("categories") == "category" and stem("status") == "status"


def test_features_hold_bigrams_and_character_ngrams() -> None:
    word_terms, char_terms = features("revenue region")
    assert set(word_terms) == {"revenue", "region", "revenue region"}
    assert {" re", "rev", "reve", " reve", "nue "} <= set(char_terms)


def test_the_right_year_wins_between_near_identical_documents() -> None:
    index = TfidfIndex(DOCUMENTS)
    ranked = index.rank("How much revenue did each customer region bring in during 2024?")
    assert ranked[0].position == 1
    assert ranked[0].score > ranked[1].score > ranked[2].score


def test_a_concept_no_document_has_scores_low() -> None:
    index = TfidfIndex(DOCUMENTS)
    best = index.rank("What was ARR by region?")[0]
    revenue_by_region = index.rank("What was revenue by region in 2023?")[0]
    assert revenue_by_region.score > best.score + 0.1


def test_phrasing_words_no_document_has_do_not_lower_the_score() -> None:
    index = TfidfIndex(DOCUMENTS)
    plain = index.rank("new customers each month of 2022")[0]
    chatty = index.rank("Hey, could you kindly pull new customers each month of 2022 for me")[0]
    assert plain.position == chatty.position == 3
    assert abs(plain.score - chatty.score) < 1e-9


def test_an_empty_index_and_empty_questions() -> None:
    assert TfidfIndex([]).rank("anything") == []
    assert [match.score for match in TfidfIndex(DOCUMENTS).rank("the of and")] == [0.0] * 4


@given(st.text(max_size=60))
def test_scores_stay_in_the_unit_interval(question: str) -> None:
    for match in TfidfIndex(DOCUMENTS).rank(question):
        assert 0.0 <= match.score <= 1.0


def test_a_document_matches_itself_best() -> None:
    index = TfidfIndex(DOCUMENTS)
    for position, document in enumerate(DOCUMENTS):
        best = index.rank(document)[0]
        assert best.position == position
        assert best.score > 0.999
