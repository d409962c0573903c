"""``sqlbench review RUN QUESTION pass|fail [--note TEXT]``: a person decides a verdict."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import needs_project
from sqlbench.exitcodes import ExitCode
from sqlbench.report.run_format import accuracy_line, human_line
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.reviews import also_accept_proposal, decide
from sqlbench.runs.scores import find_question
from sqlbench.verdicts import Verdict


@click.command("review")
@needs_project
@click.argument("run_ref", metavar="RUN")
@click.argument("question")
@click.argument("decision", type=click.Choice(["pass", "fail"]))
@click.option("--note", default=None, help="Why (kept with the decision and shown with it).")
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
    run_ref: str,
    question: str,
    decision: str,
    note: str | None,
    turn: int | None,
) -> None:
    """Decide QUESTION (space/name) of RUN as pass or fail. The automatic verdict is kept; the
    decision is stored beside it with who and when, counted in the run's accuracy, and carried
    to later runs while the ground truth and the agent's SQL are unchanged. A decided pass
    prints the also_accept YAML that would make it pass on its own (your files are not
    edited)."""
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
