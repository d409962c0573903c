"""``sqlbench questions``: the benchmark set (space, name, ground-truth kind, tags)."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import (
    branch_option,
    format_option,
    needs_project,
    note,
    output_option,
    select_option,
    space_option,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.project.select import select_questions
from sqlbench.report import formats
from sqlbench.validation import load_project


@click.command("questions")
@needs_project
@branch_option
@space_option
@select_option
@format_option(*formats.choices("questions"))
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
        note(f"{project.source.dev_mode_note}.")
    picked = select_questions(project.questions, select=list(select) or None, space=space)
    write_output(formats.render("questions", fmt, picked), output)
    ctx.exit(ExitCode.OK)
