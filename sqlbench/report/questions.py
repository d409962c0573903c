"""``sqlbench questions``' report: the benchmark set as an aligned table or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlbench.project.files import Question, TruthKind
from sqlbench.project.validate import plural

SCHEMA_VERSION = 1


def truth_label(question: Question) -> str:
    """``certifiedQuery NAME``, ``sql``, ``none``, ``expect: decline`` or ``conversation (N
    turns)``."""
    if question.turns is not None:
        return f"conversation ({len(question.turns)} turns)"
    if question.expect is not None:
        return f"expect: {question.expect}"
    if question.truth_kind is TruthKind.CERTIFIED_QUERY:
        return f"certifiedQuery {question.certified_query}"
    return question.truth_kind.value


def _tags_cell(question: Question) -> str:
    cells = [", ".join(question.tags)] if question.tags else []
    if question.skip is not None:
        cells.append(f"(skipped: {question.skip})")
    return "  ".join(cells)


def render_table(questions: Sequence[Question]) -> str:
    """Aligned columns SPACE, NAME, GROUND TRUTH, TAGS (and a skip note), then a count."""
    header = ("SPACE", "NAME", "GROUND TRUTH", "TAGS")
    rows = [(q.space, q.name, truth_label(q), _tags_cell(q)) for q in questions]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    lines = [
        "  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])), row[3]]).rstrip()
        for row in [header, *rows]
    ]
    spaces = len({q.space for q in questions})
    skipped = sum(1 for q in questions if q.skip is not None)
    without = sum(
        1
        for q in questions
        if q.truth_kind is TruthKind.NONE and q.turns is None and q.expect is None
    )
    extra = [f"{skipped} skipped"] if skipped else []
    if without:
        extra.append(f"{without} without ground truth")
    note = f" ({', '.join(extra)})" if extra else ""
    lines.append(f"{plural(len(questions), 'question')} in {plural(spaces, 'space')}{note}")
    return "\n".join(lines)


def render_json(questions: Sequence[Question]) -> str:
    """Every question's fields as JSON (``schema_version`` 1)."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "questions": [
            {
                "space": q.space,
                "name": q.name,
                "full_name": q.full_name,
                "question": q.question,
                "ground_truth": q.truth_kind.value,
                # Only where set (docs/conversations.md), so other questions read as before.
                **({"expect": q.expect} if q.expect is not None else {}),
                **(
                    {"turns": [t.model_dump(by_alias=True, exclude_defaults=True) for t in q.turns]}
                    if q.turns is not None
                    else {}
                ),
                "certified_query": q.certified_query,
                "tags": list(q.tags),
                "skip": q.skip,
                "path": q.path,
                "line": q.line,
            }
            for q in questions
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)
