"""``sqlbench compare``: two stored runs, or two git refs (running what is missing)."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import (
    automatic_only_option,
    format_option,
    head_option,
    needs_project,
    note,
    output_option,
    side_progress,
    side_run_options,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.report import formats
from sqlbench.rundiff.diff import diff_runs
from sqlbench.rundiff.refs import compare_refs
from sqlbench.rundiff.sides import SideOptions, stored_side
from sqlbench.runs.locate import open_project_store


@click.command("compare")
@needs_project
@click.argument("runs", nargs=-1, metavar="[A B]")
@click.option(
    "--base",
    "base_ref",
    metavar="REF",
    default=None,
    help="Git ref of the base side (run unless a stored run matches it).",
)
@head_option
@side_run_options
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the paired test's conclusion.",
)
@automatic_only_option
@format_option(*formats.choices("comparison"))
@output_option
@click.pass_context
def compare_command(
    ctx: click.Context,
    project_dir: Path,
    runs: tuple[str, ...],
    base_ref: str | None,
    head_ref: str | None,
    agent_name: str | None,
    repeat: int,
    concurrency: int | None,
    fresh: bool,
    trusted_refs: tuple[str, ...],
    alpha: float,
    automatic_only: bool,
    fmt: str,
    output: Path | None,
) -> None:
    """Compare two runs: `compare A B` (stored runs, by name or id) or `--base REF
    [--head REF]` (git refs; a side is run unless a stored run has the same identity).

    Shows each side's accuracy with its 95% interval, the difference, regressions (pass to
    anything else, review included) and fixes with the reason on both sides, flaky, added and
    removed questions, the paired test (exact McNemar; over per-question pass rates with
    --repeat) and a conclusion: improved, regressed, inconclusive or too few questions.
    A person's decision (sqlbench review) counts in place of the automatic verdict, as in
    every accuracy; --automatic-only counts the machine's verdicts alone.
    """
    if runs and (base_ref or head_ref):
        raise click.UsageError("give two runs or --base/--head, not both")
    if runs and len(runs) != 2:
        raise click.UsageError(f"compare takes two runs (base, head), got {len(runs)}")
    if not runs and base_ref is None:
        raise click.UsageError("give two runs (compare A B) or a base ref (--base REF)")
    with open_project_store(project_dir) as store:
        if runs:
            if agent_name is not None or repeat != 1 or fresh:
                raise click.UsageError("--agent, --repeat and --fresh apply to --base/--head only")
            base = stored_side(store, runs[0], note)
            head = stored_side(store, runs[1], note)
            diff = diff_runs(base, head, alpha=alpha, automatic_only=automatic_only)
        else:
            options = SideOptions(
                project_dir=project_dir,
                agent_name=agent_name,
                repeat=repeat,
                concurrency=concurrency,
                fresh=fresh,
                trusted_refs=trusted_refs,
            )
            diff = compare_refs(
                store,
                base_ref,
                head_ref,
                options,
                alpha=alpha,
                progress=side_progress,
                notify=note,
                automatic_only=automatic_only,
            )
    write_output(formats.render("comparison", fmt, diff), output)
    ctx.exit(ExitCode.OK)
