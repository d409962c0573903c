"""``sqlbench review RUN QUESTION pass|fail [--note TEXT]``: a person decides a verdict;
``sqlbench review QUESTION --dispute WHY``: a person disputes a ground truth."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import needs_project
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.report.run_format import accuracy_line, human_line
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.reviews import also_accept_proposal, decide
from sqlbench.runs.scores import find_question
from sqlbench.text import suggest
from sqlbench.verdicts import Verdict


@click.command("review")
@needs_project
@click.argument("args", metavar="RUN QUESTION pass|fail | QUESTION --dispute WHY", nargs=-1)
@click.option("--note", default=None, help="Why (kept with the decision and shown with it).")
@click.option(
    "--dispute",
    "why",
    default=None,
    metavar="WHY",
    help="Dispute QUESTION's ground truth: it leaves accuracy (the count is shown) on every "
    "run graded against it, until its question text or ground truth changes.",
)
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    default=None,
    help="Decide one turn of a conversation (1-based); the conversation's verdict follows.",
)
@click.pass_context
def review_command(
    ctx: click.Context,
    project_dir: Path,
    args: tuple[str, ...],
    note: str | None,
    why: str | None,
    turn: int | None,
) -> None:
    """Decide QUESTION (space/name) of RUN as pass or fail. The automatic verdict is kept; the
    decision is stored beside it with who and when, counted in the run's accuracy, and carried
    to later runs while the ground truth and the agent's SQL are unchanged. A decided pass
    prints the also_accept YAML that would make it pass on its own (your files are not
    edited). With --dispute WHY and only QUESTION: mark its ground truth disputed."""
    if why is not None:
        if len(args) != 1 or note is not None or turn is not None:
            raise click.UsageError(
                "--dispute takes one QUESTION and no RUN, decision, --note or --turn"
            )
        _dispute(project_dir, args[0], why)
        ctx.exit(ExitCode.OK)
    if len(args) != 3:
        raise click.UsageError("give RUN QUESTION pass|fail, or QUESTION --dispute WHY")
    run_ref, question, decision = args
    if decision not in ("pass", "fail"):
        raise click.UsageError(f"{decision!r} is not one of 'pass', 'fail'")
    with open_project_store(project_dir) as store:
        run = store.load_run(run_ref)
        picked = find_question(run, question)
        done = decide(store, run, picked, Verdict(decision), note, turn=turn)
        run = store.load_run(run.info.id)
    picked = find_question(run, picked.full_name)
    replaced = (
        f" (replacing {done.replaced.verdict.value} by {done.replaced.decided_by})"
        if done.replaced is not None
        else ""
    )
    click.echo(
        f"{picked.full_name} in run {run.info.name}: automatic verdict "
        f"{picked.verdict.value}, human decision {human_line(done.review)}{replaced}"
    )
    click.echo(accuracy_line(run.accuracy, run.info.repeat))
    proposal = also_accept_proposal(picked)
    if proposal is not None:
        click.echo(
            f"\nTo accept this SQL automatically next time, paste into question "
            f"'{picked.name}' (space {picked.space}) in its YAML file:\n\n{proposal}"
        )
    ctx.exit(ExitCode.OK)


def _dispute(project_dir: Path, name: str, why: str) -> None:
    from sqlbench.runs.disputes import dispute
    from sqlbench.validation import load_project

    if not why.strip():
        raise SqlbenchError("--dispute needs a reason: say why the ground truth is wrong")
    project = load_project(project_dir, sql_warnings=False)
    found = [q for q in project.questions if name in (q.full_name, q.name)]
    if len(found) != 1:
        names = [q.full_name for q in project.questions]
        if found:
            listed = ", ".join(q.full_name for q in found)
            raise SqlbenchError(
                f"question {name!r} is in several spaces ({listed}); write space/name"
            )
        raise SqlbenchError(f"the project has no question {name!r}{suggest(name, names)}")
    question = found[0]
    if question.truth_sql is None:
        raise SqlbenchError(f"{question.full_name} has no ground truth to dispute")
    with open_project_store(project_dir) as store:
        done = dispute(store, question, why.strip())
    click.echo(
        f"{question.full_name}: ground truth disputed by {done.disputed_by} "
        f"({done.reason}); left out of accuracy until its question or ground truth changes"
    )
