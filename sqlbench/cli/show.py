"""``sqlbench show RUN [QUESTION]``: a run's per-question results, or one question in full."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sqlbench.cli.options import (
    automatic_only_option,
    format_option,
    needs_project,
    output_option,
    select_option,
    space_option,
    terminal_width,
    write_output,
)
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.project.select import select_questions
from sqlbench.report import formats
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.scores import QuestionResult, RunResult, find_question
from sqlbench.text import suggest
from sqlbench.verdicts import Verdict


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
@click.option(
    "--verdict",
    "verdicts",
    metavar="V[,V...]",
    default=None,
    help="Only questions with these verdicts (pass, fail, review, error, skipped), e.g. "
    "--verdict fail,error.",
)
@click.option(
    "--variant",
    type=click.IntRange(min=0),
    default=None,
    metavar="K",
    help="With QUESTION: print data variant #K's rows (the number in the reason) of the "
    "tables the ground truth and the agent's SQL read, rebuilt from the run's seed.",
)
@space_option
@select_option
@click.option(
    "--summary",
    is_flag=True,
    help="Accuracy per space and per tag, latency p50/p95 and tokens, instead of the table.",
)
@automatic_only_option
@format_option(*formats.choices("run", leave_out=("markdown", "junit")))
@output_option
@click.pass_context
def show_command(
    ctx: click.Context,
    project_dir: Path,
    run_ref: str,
    question: str | None,
    trial: int | None,
    variant: int | None,
    verdicts: str | None,
    space: str | None,
    select: tuple[str, ...],
    summary: bool,
    automatic_only: bool,
    fmt: str,
    output: Path | None,
) -> None:
    """Show a run's per-question results; with QUESTION (space/name), that question in full:
    both SQL texts, both result previews with the differing rows marked, the reason, the
    agent's trace, latency and tokens. RUN is a name, an id, `latest`, `latest~N` or the
    unique start of a name."""
    with open_project_store(project_dir) as store:
        run = store.load_run(run_ref, automatic_only=automatic_only)
    color = output is None and sys.stdout.isatty()
    picked_questions = pick_questions(run, parse_verdicts(verdicts), space, select)
    width = terminal_width() if output is None else None
    if question is None:
        text = formats.render(
            "run",
            fmt,
            run,
            color=color,
            questions=picked_questions,
            summary=summary,
            width=width,
        )
    else:
        found = find_question(run, question)
        if variant is not None:
            text = _variant_text(project_dir, run, found, variant, trial, color, width)
        else:
            picked = (run, found)
            text = formats.render("question", fmt, picked, trial=trial, color=color, width=width)
    write_output(text, output)
    ctx.exit(ExitCode.OK)


def _variant_text(
    project_dir: Path,
    run: RunResult,
    picked: QuestionResult,
    number: int,
    trial: int | None,
    color: bool,
    width: int | None,
) -> str:
    """Data variant ``number`` of the shown trial, rebuilt on the project's warehouse."""
    from sqlbench.report import run_text
    from sqlbench.runs.scores import pick_trial
    from sqlbench.runs.variant_view import variant_of
    from sqlbench.validation import load_project

    result = pick_trial(run, picked, trial)
    rebuilt = variant_of(load_project(project_dir, sql_warnings=False), result, number)
    return run_text.render_variant(picked.full_name, rebuilt, color=color, width=width)


def parse_verdicts(text: str | None) -> set[Verdict] | None:
    """``fail,error`` -> {FAIL, ERROR}; None for no filter.

    Raises:
        SqlbenchError: An unknown verdict (the closest is suggested).
    """
    if text is None:
        return None
    picked: set[Verdict] = set()
    names = [v.value for v in Verdict]
    for word in (w.strip().lower() for w in text.split(",")):
        if word not in names:
            raise SqlbenchError(f"--verdict: unknown verdict {word!r}{suggest(word, names)}")
        picked.add(Verdict(word))
    return picked


def pick_questions(
    run: RunResult, verdicts: set[Verdict] | None, space: str | None, select: tuple[str, ...]
) -> list[QuestionResult] | None:
    """The run's questions the filters keep (None: no filter given)."""
    if verdicts is None and space is None and not select:
        return None
    picked = select_questions(run.questions, select=list(select), space=space)
    return [q for q in picked if verdicts is None or q.verdict in verdicts]
