"""Answer changes (docs/commands.md, ``compare``): questions whose ground-truth result differs
between two runs, whatever their verdicts — a data-model change that alters an expected answer
is what a reviewer must see even when the agent kept passing (both sides read the same view).

Each run stores, per question, a fingerprint of its main ground truth's result
(``TrialResult.truth_fingerprint``: row order, column names and numeric typing aside) and a
preview. Two fingerprints decide exactly, however long the results; runs stored before
fingerprints existed fall back to their previews (columns, types, total rows, and the rows
themselves when both previews are complete). A change is shown with the preview rows found on
one side only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sqlbench.records.run import JsonValue, Preview, TrialResult

Key = tuple[str, str]
"""``(space, name)``."""


class TruthAnswer(NamedTuple):
    """One run's ground-truth result for one question, as stored."""

    fingerprint: str | None
    """``sqlbench.runs.previews.result_fingerprint``; None in runs stored before it existed."""
    preview: Preview | None
    """Its first rows."""
    turns: tuple[TruthAnswer | None, ...] = ()
    """A conversation's answer per turn (docs/conversations.md); empty for a question."""


class AnswerChange(NamedTuple):
    """One question whose expected result differs between base and head."""

    space: str
    name: str
    base: Preview | None
    head: Preview | None
    base_fingerprint: str | None = None
    head_fingerprint: str | None = None
    turn: int | None = None
    """The conversation turn whose expected answer changed; None for a question."""

    @property
    def full_name(self) -> str:
        """``space/name``."""
        return f"{self.space}/{self.name}"

    @property
    def base_only(self) -> list[list[JsonValue]]:
        """Previewed base rows that the head's preview does not have (duplicates counted)."""
        return _only_in(self.base, self.head)

    @property
    def head_only(self) -> list[list[JsonValue]]:
        """Previewed head rows that the base's preview does not have."""
        return _only_in(self.head, self.base)

    def summary(self) -> str:
        """One line: the row counts and the rows that differ (from the previews).

        Example:
            >>> p = lambda rows: Preview(columns=["n"], types=["int64"], rows=rows,
            ...     row_numbers=list(range(len(rows))), differs=[False] * len(rows),
            ...     total_rows=len(rows))
            >>> AnswerChange("s", "q", p([[6]]), p([[3]])).summary()
            '1 row → 1 row; base only: [6]; head only: [3]'
        """
        parts = [f"{_rows(self.base)} → {_rows(self.head)}"]
        if self.turn is not None:
            parts[0] = f"turn {self.turn}: {parts[0]}"
        base_only, head_only = self.base_only, self.head_only
        if base_only:
            parts.append(f"base only: {_row_list(base_only, _numbers(self.base))}")
        if head_only:
            parts.append(f"head only: {_row_list(head_only, _numbers(self.head))}")
        if not base_only and not head_only:
            parts.append("the previewed rows agree; the difference is further down")
        return "; ".join(parts)


def truth_answer(trials: Iterable[TrialResult]) -> TruthAnswer | None:
    """The ground-truth answer a question's trials recorded (the first trial that has one)."""
    for trial in trials:
        if trial.turns is not None:
            turns = tuple(
                TruthAnswer(t.truth_fingerprint, t.expected_preview)
                if t.truth_fingerprint is not None or t.expected_preview is not None
                else None
                for t in trial.turns
            )
            if any(turns):
                return TruthAnswer(trial.truth_fingerprint, trial.expected_preview, turns)
            continue
        if trial.truth_fingerprint is not None or trial.expected_preview is not None:
            return TruthAnswer(trial.truth_fingerprint, trial.expected_preview)
    return None


def answer_changes(base: Iterable[TrialResult], head: Iterable[TrialResult]) -> list[AnswerChange]:
    """The questions on both sides whose ground-truth results differ, in head's order."""
    return changes_between(_by_question(base), _by_question(head))


def changes_between(
    base: Mapping[Key, TruthAnswer | None], head: Mapping[Key, TruthAnswer | None]
) -> list[AnswerChange]:
    """The questions in both mappings whose answers differ, in ``head``'s order. A question
    with nothing recorded on a side (no ground truth, or a failing one) is not listed."""
    changes = []
    for key, new in head.items():
        old = base.get(key)
        if old is not None and new is not None and (old.turns or new.turns):
            # A conversation: each turn's expected answer on its own, named by its turn.
            for number, (was, now) in enumerate(zip(old.turns, new.turns, strict=False), 1):
                if was is not None and now is not None and answers_differ(was, now):
                    changes.append(
                        AnswerChange(
                            key[0],
                            key[1],
                            was.preview,
                            now.preview,
                            was.fingerprint,
                            now.fingerprint,
                            number,
                        )
                    )
            continue
        if old is not None and new is not None and answers_differ(old, new):
            changes.append(
                AnswerChange(
                    key[0], key[1], old.preview, new.preview, old.fingerprint, new.fingerprint
                )
            )
    return changes


def answers_differ(base: TruthAnswer, head: TruthAnswer) -> bool:
    """Fingerprints decide when both sides have one; else the previews (``previews_differ``);
    with neither on both sides nothing can be told, so no change is claimed."""
    if base.fingerprint is not None and head.fingerprint is not None:
        return base.fingerprint != head.fingerprint
    if base.preview is not None and head.preview is not None:
        return previews_differ(base.preview, head.preview)
    return False


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


def _by_question(trials: Iterable[TrialResult]) -> dict[Key, TruthAnswer | None]:
    grouped: dict[Key, list[TrialResult]] = {}
    for trial in trials:
        grouped.setdefault((trial.space, trial.name), []).append(trial)
    return {key: truth_answer(group) for key, group in grouped.items()}


def _row_key(row: list[Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _only_in(one: Preview | None, other: Preview | None) -> list[list[JsonValue]]:
    if one is None:
        return []
    remaining = Counter(_row_key(row) for row in (other.rows if other is not None else []))
    found = []
    for row in one.rows:
        key = _row_key(row)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            found.append(row)
    return found


def _rows(preview: Preview | None) -> str:
    if preview is None:
        return "? rows"
    return f"{preview.total_rows} row{'s' if preview.total_rows != 1 else ''}"


def _numbers(preview: Preview | None) -> tuple[bool, ...]:
    """Per column: True for a decimal column, whose values a preview keeps as strings (exact)
    but which are numbers, written as numbers beside the floats of another side."""
    if preview is None:
        return ()
    return tuple(kind.startswith("decimal") for kind in preview.types)


def _value(value: JsonValue, number: bool) -> str:
    """A previewed value as JSON, a decimal column's string as the number it is.

    Example:
        >>> _value("69.30", True), _value("69.30", False), _value(69.3, False)
        ('69.30', '"69.30"', '69.3')
    """
    if number and isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _row_list(rows: list[list[JsonValue]], numbers: tuple[bool, ...] = (), limit: int = 3) -> str:
    shown = ", ".join(
        "["
        + ", ".join(_value(v, numbers[i] if i < len(numbers) else False) for i, v in enumerate(row))
        + "]"
        for row in rows[:limit]
    )
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")
