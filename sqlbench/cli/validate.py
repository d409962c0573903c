"""``sqlbench validate``: check every project file and print each problem with its line."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import (
    branch_option,
    format_option,
    needs_project,
    note,
    output_option,
    trust_ref_option,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.report import formats
from sqlbench.validation import validate_project


@click.command("validate")
@needs_project
@branch_option
@click.option(
    "--execute",
    is_flag=True,
    help="Also run every ground truth on the warehouse: failing ground truth is an "
    "error; empty, NULL-only or non-deterministic results are warnings.",
)
@format_option(*formats.choices("validation"))
@trust_ref_option
@output_option
@click.pass_context
def validate_command(
    ctx: click.Context,
    project_dir: Path,
    branch: str | None,
    execute: bool,
    trusted_refs: tuple[str, ...],
    fmt: str,
    output: Path | None,
) -> None:
    """Check every project file; print each problem as `path:line: severity: message`.

    Exit 0 when there is no error (warnings allowed), 1 when there is any.
    """
    validation = validate_project(
        project_dir, branch=branch, execute=execute, trusted_refs=trusted_refs
    )
    for text in validation.notes:
        note(text)
    text = formats.render("validation", fmt, validation, branch=branch)
    write_output(text, output)
    ctx.exit(ExitCode.FAIL if validation.errors else ExitCode.OK)
