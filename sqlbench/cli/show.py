"""``sqlbench show RUN [QUESTION]``: a run's per-question results, or one question in full."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sqlbench.cli.options import format_option, needs_project, output_option, write_output
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_json, run_text
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.results import QuestionResult, RunResult
from sqlbench.text import suggest


def find_question(run: RunResult, name: str) -> QuestionResult:
    """The run's question ``space/name`` (or a bare name, when unique).

    Raises:
        SqlbenchError: Not in the run (the closest name is suggested) or ambiguous.
    """
    found = run.question(name)
    if found is not None:
        return found
    same = [q.full_name for q in run.questions if q.name == name]
    if len(same) > 1:
        raise SqlbenchError(
            f"question {name!r} is in several spaces of run {run.info.name} "
            f"({', '.join(same)}); write space/name"
        )
    names = [q.full_name for q in run.questions] + [q.name for q in run.questions]
    raise SqlbenchError(f"run {run.info.name} has no question {name!r}{suggest(name, names)}")


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
            text = json.dumps(
                {
                    "schema_version": run_json.SCHEMA_VERSION,
                    "run": run_json.run_to_json(run)["run"],
                    "result": _question_json(picked),
                },
                indent=2,
                ensure_ascii=False,
            )
        else:
            if trial is not None and all(t.trial != trial for t in picked.trials):
                raise SqlbenchError(
                    f"{picked.full_name} has no trial #{trial} in run "
                    f"{run.info.name} (trials 0-{len(picked.trials) - 1})"
                )
            text = run_text.render_question(run, picked, trial=trial, color=color)
    write_output(text, output)
    ctx.exit(ExitCode.OK)


def _question_json(question: QuestionResult) -> dict[str, object]:
    return {
        "space": question.space,
        "name": question.name,
        "verdict": question.verdict.value,
        "reason": question.reason,
        "pass_rate": question.pass_rate,
        "flaky": question.flaky,
        "trials": [run_json.trial_to_json(t) for t in question.trials],
    }
