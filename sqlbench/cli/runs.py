"""``sqlbench runs``: the run list, newest first (docs/commands.md)."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import click

from sqlbench.cli.options import (
    format_option,
    needs_project,
    output_option,
    terminal_width,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_text
from sqlbench.report.runs_json import runs_to_json
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.records import RunStatus


@click.group("runs", invoke_without_command=True)
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
    created by, last updated. A run whose process died shows Interrupted; a run of part of the
    questions is marked partial. `runs delete` and `runs prune` remove runs."""
    if ctx.invoked_subcommand is not None:
        return
    with open_project_store(project_dir) as store:
        runs = store.list_runs(limit=limit, find_damaged=True)
    if fmt == "json":
        text = runs_to_json(runs)
    else:
        text = run_text.render_runs(
            runs,
            color=output is None and sys.stdout.isatty(),
            width=terminal_width() if output is None else None,
        )
    write_output(text, output)
    ctx.exit(ExitCode.OK)


@runs_command.command("delete")
@needs_project
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.pass_context
def delete_command(ctx: click.Context, project_dir: Path, run_refs: tuple[str, ...]) -> None:
    """Remove runs (name, id, `latest`, `latest~N` or the unique start of a name) with their
    results. A running run is never removed."""
    with open_project_store(project_dir) as store:
        infos = list({info.id: info for info in (store.find_run(r) for r in run_refs)}.values())
        store.delete_runs(infos)
    click.echo(run_text.render_removed([info.name for info in infos]), nl=False)
    ctx.exit(ExitCode.OK)


@runs_command.command("prune")
@needs_project
@click.option("--failed", is_flag=True, help="Remove Failed runs.")
@click.option("--interrupted", is_flag=True, help="Remove Interrupted runs.")
@click.option(
    "--older-than",
    "older_than",
    metavar="AGE",
    default=None,
    help="Remove runs not updated for AGE: a number with d, h or m (30d, 12h, 45m).",
)
@click.option(
    "--keep-last",
    "keep_last",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Keep only the N newest runs.",
)
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@click.pass_context
def prune_command(
    ctx: click.Context,
    project_dir: Path,
    failed: bool,
    interrupted: bool,
    older_than: str | None,
    keep_last: int | None,
    dry_run: bool,
) -> None:
    """Remove runs in bulk: Failed, Interrupted, older than an age, or all but the newest N
    (any of these that are given). A running run is never removed."""
    if not (failed or interrupted or older_than or keep_last is not None):
        raise click.UsageError(
            "say what to prune: --failed, --interrupted, --older-than AGE or --keep-last N"
        )
    statuses = [
        s for s, on in ((RunStatus.FAILED, failed), (RunStatus.INTERRUPTED, interrupted)) if on
    ]
    age = parse_age(older_than) if older_than is not None else None
    with open_project_store(project_dir) as store:
        picked = store.prune_candidates(statuses=statuses, older_than=age, keep_last=keep_last)
        if not dry_run:
            store.delete_runs(picked)
    text = run_text.render_removed([info.name for info in picked], dry_run=dry_run, total=True)
    click.echo(text, nl=False)
    ctx.exit(ExitCode.OK)


def parse_age(text: str) -> timedelta:
    """``30d`` / ``12h`` / ``45m`` as a duration.

    Raises:
        click.BadParameter: Another form.

    Example:
        >>> parse_age("30d"), parse_age("12h")
        (datetime.timedelta(days=30), datetime.timedelta(seconds=43200))
    """
    match = re.fullmatch(r"\s*(\d+)\s*([dhm])\s*", text)
    if match is None:
        raise click.BadParameter(
            f"{text!r} is not an age: write a number with d, h or m (30d, 12h, 45m)",
            param_hint="--older-than",
        )
    amount, unit = int(match.group(1)), match.group(2)
    return {
        "d": timedelta(days=amount),
        "h": timedelta(hours=amount),
        "m": timedelta(minutes=amount),
    }[unit]
