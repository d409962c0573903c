"""``sqlbench judge RUN``: judged metrics over a stored run's traces (docs/agent-behaviour.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sqlbench.cli.options import needs_project
from sqlbench.exitcodes import ExitCode
from sqlbench.report.metric_format import metric_lines
from sqlbench.runs.judging import judge_run
from sqlbench.runs.locate import open_project_store
from sqlbench.validation import load_project


@click.command("judge")
@needs_project
@click.argument("run_ref", metavar="RUN")
@click.pass_context
def judge_command(ctx: click.Context, project_dir: Path, run_ref: str) -> None:
    """Compute (or recompute) the judged metrics of a stored run from its traces, without
    asking the agent again: answer correctness, logical consistency, tool execution accuracy
    and the custom metrics of sqlbench.yml. Needs a judge (`judge:` or SQLBENCH_JUDGE_*);
    identical judge calls come from the run store's cache."""
    project = load_project(project_dir)
    with open_project_store(project_dir) as store:
        outcome = judge_run(project, store, run_ref)
    run = outcome.run
    lines = [
        f"Judged {outcome.judged} answer{'' if outcome.judged == 1 else 's'} of run "
        f"{run.info.name} ({outcome.requests} judge request"
        f"{'' if outcome.requests == 1 else 's'}, the rest from the cache)",
        *metric_lines(t for q in run.questions for t in q.trials),
    ]
    if outcome.missing:
        lines.append(
            "not in the project any more (judged without their expectations): "
            + ", ".join(outcome.missing)
        )
    click.echo("\n".join(lines), file=sys.stdout)
    ctx.exit(ExitCode.OK)
