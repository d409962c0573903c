"""``sqlbench audit [RUN ...]``: the questions whose ground truth is suspect, with evidence."""

from __future__ import annotations

import os
from pathlib import Path

import click

from sqlbench.cli.options import format_option, needs_project, output_option, write_output
from sqlbench.exitcodes import ExitCode
from sqlbench.report import formats


@click.command("audit")
@needs_project
@click.argument("run_refs", metavar="[RUN ...]", nargs=-1)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Text output: show the first N suspects (0: all). JSON lists all.",
)
@format_option(*formats.choices("audit"))
@output_option
@click.pass_context
def audit_command(
    ctx: click.Context,
    project_dir: Path,
    run_refs: tuple[str, ...],
    limit: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Rank the questions whose ground truth is suspect, most suspect first, each with its
    evidence: agents agreeing with each other against the key, fails only on data variants,
    smells of the ground truth itself, and with a judge configured its opinion (cached).
    RUN defaults to the latest completed run of each
    agent on the current ref (an imported benchmark: all its systems)."""
    from sqlbench.audit import audit_runs
    from sqlbench.audit.select import disputes_in_force, latest_per_agent
    from sqlbench.metrics.judge import Judge, resolve_judge
    from sqlbench.runs.locate import open_project_store
    from sqlbench.validation import load_project

    project = load_project(project_dir, sql_warnings=False)
    with open_project_store(project_dir) as store:
        refs = list(run_refs) or latest_per_agent(store, project.source)
        runs = [store.load_run(ref) for ref in refs]
        disputes = disputes_in_force(project, store.disputes())
        endpoint, _ = resolve_judge(project.settings.judge, os.environ)
        judge = None if endpoint is None else Judge(endpoint, store, os.environ)
        report = audit_runs(project, runs, judge=judge)
    text = formats.render("audit", fmt, (report, disputes), limit=limit or None)
    write_output(text, output)
    ctx.exit(ExitCode.OK)
