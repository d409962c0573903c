"""``sqlbench runs``: the run list, newest first (SPEC section 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sqlbench.cli.options import format_option, needs_project, output_option, write_output
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_text
from sqlbench.report.runs_json import runs_to_json
from sqlbench.runs.locate import open_project_store


@click.command("runs")
@needs_project
@click.option(
    "--limit", "-n", type=click.IntRange(min=1), default=None, help="Show only the newest N runs."
)
@format_option("table", "json")
@output_option
@click.pass_context
def runs_command(
    ctx: click.Context, project_dir: Path, limit: int | None, fmt: str, output: Path | None
) -> None:
    """List the stored runs: name, environment, branch@commit, agent, status, accuracy,
    created by, last updated. A run whose process died shows Interrupted."""
    with open_project_store(project_dir) as store:
        runs = store.list_runs(limit=limit)
    if fmt == "json":
        text = runs_to_json(runs)
    else:
        text = run_text.render_runs(runs, color=output is None and sys.stdout.isatty())
    write_output(text, output)
    ctx.exit(ExitCode.OK)
