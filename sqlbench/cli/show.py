"""``sqlbench show RUN [QUESTION]``: a run's per-question results, or one question in full."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sqlbench.cli.options import format_option, needs_project, output_option, write_output
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_json, run_text
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.results import find_question


@click.command("show")
@needs_project
@click.argument("run_ref", metavar="RUN")
@click.argument("question", required=False)
@click.option(
    "--trial",
    type=click.IntRange(min=0),
    default=None,
    help="With --repeat runs: which trial of QUESTION to show (default: the first "
    "that did not pass).",
)
@format_option("table", "json")
@output_option
@click.pass_context
def show_command(
    ctx: click.Context,
    project_dir: Path,
    run_ref: str,
    question: str | None,
    trial: int | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Show a run's per-question results; with QUESTION (space/name), that question in full:
    both SQL texts, both result previews with the differing rows marked, the reason, the
    agent's trace, latency and tokens."""
    with open_project_store(project_dir) as store:
        run = store.load_run(run_ref)
    color = output is None and sys.stdout.isatty()
    if question is None:
        text = run_json.render(run) if fmt == "json" else run_text.render_run(run, color=color)
    else:
        picked = find_question(run, question)
        if fmt == "json":
            text = run_json.render_question(run, picked)
        else:
            if trial is not None and all(t.trial != trial for t in picked.trials):
                raise SqlbenchError(
                    f"{picked.full_name} has no trial #{trial} in run "
                    f"{run.info.name} (trials 0-{len(picked.trials) - 1})"
                )
            text = run_text.render_question(run, picked, trial=trial, color=color)
    write_output(text, output)
    ctx.exit(ExitCode.OK)
