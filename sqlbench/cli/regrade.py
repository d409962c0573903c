"""``sqlbench regrade``: grade a stored run's answers again without asking the agent."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import (
    branch_option,
    needs_project,
    progress_display,
    stdout_to_stderr,
    trust_ref_option,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_text
from sqlbench.runs.locate import open_project_store
from sqlbench.validation import load_project


@click.command("regrade")
@needs_project
@click.argument("run_ref", metavar="RUN")
@branch_option
@click.option("--name", "run_name", default=None, help="Name of the new run.")
@trust_ref_option
@click.pass_context
def regrade_command(
    ctx: click.Context,
    project_dir: Path,
    run_ref: str,
    branch: str | None,
    run_name: str | None,
    trusted_refs: tuple[str, ...],
) -> None:
    """Grade RUN's stored agent answers again under the current (or --branch REF's) ground
    truth, compare options and warehouse, without asking the agent: a new run that names RUN
    as its source (RUN is kept unchanged). The way to see what fixing a ground truth or a
    tolerance changes, at zero agent cost."""
    from sqlbench.runs.runner import regrade_run

    project = load_project(project_dir, branch=branch, trusted_refs=trusted_refs)
    with (
        open_project_store(project_dir) as store,
        stdout_to_stderr(),
        progress_display() as display,
    ):
        run = regrade_run(
            project,
            store,
            run_ref,
            name=run_name,
            project_dir=project_dir.resolve(),
            progress=display,
        )
    click.echo(run_text.render_run(run), nl=False)
    ctx.exit(ExitCode.OK)
