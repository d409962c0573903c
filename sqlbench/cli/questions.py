"""``sqlbench questions``: the benchmark set (space, name, ground-truth kind, tags)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from sqlbench.cli.options import (
    branch_option,
    format_option,
    needs_project,
    output_option,
    select_option,
    space_option,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.project.models import Question, TruthKind
from sqlbench.project.select import select_questions
from sqlbench.project.validate import plural
from sqlbench.validation import load_project

SCHEMA_VERSION = 1


def truth_label(question: Question) -> str:
    """``certifiedQuery NAME``, ``sql`` or ``none``."""
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
    without = sum(1 for q in questions if q.truth_kind is TruthKind.NONE)
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


@click.command("questions")
@needs_project
@branch_option
@space_option
@select_option
@format_option("table", "json")
@output_option
@click.pass_context
def questions_command(
    ctx: click.Context,
    project_dir: Path,
    branch: str | None,
    space: str | None,
    select: tuple[str, ...],
    fmt: str,
    output: Path | None,
) -> None:
    """List the benchmark questions: space, name, ground-truth kind and tags."""
    project = load_project(project_dir, branch=branch)
    if project.source.dev_mode_note:
        click.echo(f"Note: {project.source.dev_mode_note}.", err=True)
    picked = select_questions(project.questions, select=list(select) or None, space=space)
    write_output(render_json(picked) if fmt == "json" else render_table(picked), output)
    ctx.exit(ExitCode.OK)
