"""Answer changes (SPEC section 2, ``compare``): questions whose ground-truth result differs
between two runs, whatever their verdicts — a data-model change that alters an expected answer
is what a reviewer must see even when the agent kept passing.

Built from the result previews each run stores (columns, types, total rows, and the rows
themselves when both previews are complete); issue 11 adds stored ground-truth fingerprints,
which decide this exactly for results longer than a preview.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from sqlbench.runs.models import Preview, TrialResult


class AnswerChange(NamedTuple):
    """One question whose expected result differs between base and head."""

    space: str
    name: str
    base: Preview
    head: Preview


def answer_changes(base: Iterable[TrialResult], head: Iterable[TrialResult]) -> list[AnswerChange]:
    """The questions on both sides whose ground-truth previews differ, in head's order."""
    base_by = _first_previews(base)
    changes = []
    for key, head_preview in _first_previews(head).items():
        base_preview = base_by.get(key)
        if base_preview is not None and previews_differ(base_preview, head_preview):
            changes.append(AnswerChange(key[0], key[1], base_preview, head_preview))
    return changes


def previews_differ(base: Preview, head: Preview) -> bool:
    """True when two previews of a ground truth cannot be the same result: other columns or
    types, another row count, or (both previews complete) other rows, in any order. Rows of a
    truncated preview are not compared: their order need not be stable between runs.

    Example:
        >>> p = Preview(columns=["n"], types=["int64"], rows=[[1], [2]], row_numbers=[0, 1],
        ...             differs=[False, False], total_rows=2)
        >>> previews_differ(p, p.model_copy(update={"rows": [[2], [1]]}))
        False
        >>> previews_differ(p, p.model_copy(update={"rows": [[1], [3]]}))
        True
    """
    if (base.columns, base.types, base.total_rows) != (head.columns, head.types, head.total_rows):
        return True
    if base.truncated or head.truncated:
        return False
    return Counter(map(_row_key, base.rows)) != Counter(map(_row_key, head.rows))


def _row_key(row: list[Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _first_previews(trials: Iterable[TrialResult]) -> dict[tuple[str, str], Preview]:
    found: dict[tuple[str, str], Preview] = {}
    for trial in trials:
        key = (trial.space, trial.name)
        if key not in found and trial.expected_preview is not None:
            found[key] = trial.expected_preview
    return found
