"""Text similarity for routing questions to certified queries: TF-IDF cosine, pure Python.

A text becomes two sparse vectors: words (light-stemmed unigrams and bigrams, stop words
dropped, small numbers as digits) and character 3-5-grams of those words (robust to inflections
and spelling: "revenue" vs "revenues"). Each is weighted by sublinear term frequency times
smoothed inverse document frequency over the indexed documents (the certified queries),
L2-normalised, and the two cosines are averaged, words weighing 0.7.

Terms no indexed document has are ignored, as a TF-IDF vectorizer fitted on the documents does:
a question's own phrasing ("bring in", "biggest") says nothing about which document fits,
while a known term a document lacks ("ARR" where it says "revenue", "2023" where it says
"2024") lowers that document's score. Scores are in [0, 1].
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CHAR_NGRAMS = (3, 4, 5)
_WORD_WEIGHT = 0.7
"""Share of the word cosine in the score (the rest is the character n-gram cosine); see
docs/performance.md for how it was chosen."""

_STOP_WORDS_TEXT = """
a about above after all also am an and any are as at be been being below between both but by
can could did do does doing during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on
once only or other our ours out over own same she should so some such than that the their
theirs them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours
show give list tell find get please let us
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_NUMBERS_TEXT = "zero one two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS = {word: str(number) for number, word in enumerate(_NUMBERS_TEXT.split())}
"""Spelled-out small numbers, read as digits ("top five customers" = "top 5 customers")."""
"""Function words and request verbs that say nothing about which data is asked for."""


def stem(word: str) -> str:
    """A light suffix stripper (plurals, -ing, -ed), enough for matching analytics wording.

    Example:
        >>> [stem(w) for w in ["customers", "categories", "ordered", "billing", "status"]]
        ['customer', 'category', 'order', 'bill', 'status']
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Content words of ``text``: snake_case and camelCase split, lower-cased, stemmed.

    Example:
        >>> words("Revenue by quarter for the topFive customers in 2024")
        ['revenue', 'quarter', 'top', '5', 'customer', '2024']
    """
    spaced = _CAMEL.sub(" ", text).replace("_", " ").lower()
    return [
        _NUMBER_WORDS.get(word) or stem(word)
        for word in _WORD.findall(spaced)
        if word not in STOP_WORDS
    ]


def features(text: str) -> tuple[Counter[str], Counter[str]]:
    """Term counts of ``text``: (word unigrams and bigrams, character n-grams)."""
    tokens = words(text)
    word_terms: Counter[str] = Counter(tokens)
    word_terms.update(f"{a} {b}" for a, b in itertools.pairwise(tokens))
    char_terms: Counter[str] = Counter()
    for token in tokens:
        padded = f" {token} "
        for size in _CHAR_NGRAMS:
            char_terms.update(padded[i : i + size] for i in range(len(padded) - size + 1))
    return word_terms, char_terms


class Match(NamedTuple):
    """One indexed document's score for a query."""

    position: int
    """Position of the document in the index."""
    score: float


class TfidfIndex:
    """Documents to compare queries against (``rank``), IDF fitted on the documents.

    Example:
        >>> index = TfidfIndex(["revenue by quarter", "new customers per month"])
        >>> best = index.rank("What was our revenue for each quarter?")[0]
        >>> best.position, round(best.score, 2) > 0.5
        (0, True)
    """

    def __init__(self, documents: Sequence[str]) -> None:
        counts = [features(document) for document in documents]
        self._idf = [_idf([doc[part] for doc in counts]) for part in (0, 1)]
        self._vectors = [self._vector(doc) for doc in counts]

    def rank(self, text: str) -> list[Match]:
        """Every document's score for ``text``, best first (ties keep document order)."""
        query = self._vector(features(text))
        scores = [Match(i, _score(query, vector)) for i, vector in enumerate(self._vectors)]
        return sorted(scores, key=lambda match: -match.score)

    def _vector(self, counts: tuple[Counter[str], Counter[str]]) -> list[dict[str, float]]:
        parts = []
        for part, idf in zip(counts, self._idf, strict=True):
            weights = {
                term: (1.0 + math.log(count)) * idf[term]
                for term, count in part.items()
                if term in idf
            }
            norm = math.sqrt(sum(weight * weight for weight in weights.values()))
            parts.append({term: weight / norm for term, weight in weights.items()} if norm else {})
        return parts


def _idf(documents: Sequence[Counter[str]]) -> dict[str, float]:
    frequency: Counter[str] = Counter()
    for document in documents:
        frequency.update(document.keys())
    total = len(documents)
    return {term: math.log((1 + total) / (1 + df)) + 1.0 for term, df in frequency.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(weight * b.get(term, 0.0) for term, weight in a.items())


def _score(query: list[dict[str, float]], document: list[dict[str, float]]) -> float:
    word = _cosine(query[0], document[0])
    char = _cosine(query[1], document[1])
    return min(1.0, _WORD_WEIGHT * word + (1.0 - _WORD_WEIGHT) * char)
