"""``sqlbench report [RUN] [--base RUN|--base-ref REF] [-o FILE]``: one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from sqlbench.cli.options import note, project_dir_option
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.report import html
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.pages import report_inputs
from sqlbench.runs.scores import RunResult
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.variants.rebuild import RebuiltVariant


@click.command("report")
@project_dir_option
@click.argument("run_ref", metavar="[RUN]", default="latest")
@click.option("--base", "base_ref", metavar="RUN", default=None, help="Compare with this run.")
@click.option(
    "--base-ref",
    "base_branch",
    metavar="REF",
    default=None,
    help="Compare with the newest stored run of this branch (or commit) with the same agent.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="The HTML file to write.",
)
@click.pass_context
def report_command(
    ctx: click.Context,
    project_dir: Path,
    run_ref: str,
    base_ref: str | None,
    base_branch: str | None,
    output: Path,
) -> None:
    """Write RUN (default: the latest) as one self-contained HTML file: the run's header and
    breakdowns, its questions with filters and keyboard navigation, each question's SQL diff,
    results side by side, reason, trace and metrics, the comparison with a base and the
    accuracy trend. Nothing in it loads from the network."""
    if base_ref is not None and base_branch is not None:
        raise SqlbenchError("--base and --base-ref both name a base: give one")
    with open_project_store(project_dir) as store:
        inputs = report_inputs(store, run_ref, base_ref=base_ref, base_branch=base_branch)
    page = html.render(
        inputs.run,
        base=inputs.base,
        history=inputs.history,
        variants=_failing_variants(project_dir, inputs.run),
    )
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as err:
        raise SqlbenchError(f"cannot write {output}: {err.strerror or err}") from err
    compared = f", compared with {inputs.base.info.name}" if inputs.base else ""
    click.echo(
        f"Wrote {output} ({len(page.encode('utf-8')) / 1024:.0f} KB): run {inputs.run.info.name}"
        f"{compared}. Open it in a browser."
    )
    ctx.exit(ExitCode.OK)


def _failing_variants(project_dir: Path, run: RunResult) -> dict[tuple[str, str], RebuiltVariant]:
    """The data variant each shown answer failed on, rebuilt on the project's warehouse (none
    when no answer failed on one; a note when the warehouse cannot be read)."""
    shown = [
        next((t for t in q.trials if t.verdict is not Verdict.PASS), q.first) for q in run.questions
    ]
    failed = [t for t in shown if t.variants is not None and t.variants.failed_on is not None]
    if not failed:
        return {}
    from sqlbench.runs.variant_view import failing_variants
    from sqlbench.validation import load_project

    try:
        return failing_variants(load_project(project_dir, sql_warnings=False), failed)
    except SqlbenchError as err:
        note(f"the data variants answers failed on are not shown: {err}")
        return {}
