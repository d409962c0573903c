"""``sqlbench merge RUN...``: join shard runs (``run --shard I/N``) into one run."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import needs_project, run_name_option
from sqlbench.exitcodes import ExitCode
from sqlbench.rundiff.merge import merge_shards
from sqlbench.runs.locate import open_project_store


@click.command("merge")
@needs_project
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
@run_name_option("Name of the merged run. Default: merged-<time>-<suffix>.")
@click.pass_context
def merge_command(
    ctx: click.Context, project_dir: Path, runs: tuple[str, ...], run_name: str | None
) -> None:
    """Join the shard runs of one benchmark (`sqlbench run --shard I/N` on N machines) into
    one stored run, which `compare` and `check` can then reuse.

    The shards must all be Completed, of the same project version, agent, compare options,
    --repeat and selection, with disjoint questions covering the whole question set.
    """
    with open_project_store(project_dir) as store:
        info = merge_shards(store, runs, project_dir=project_dir, name=run_name)
        summary = next(s for s in store.list_runs() if s.info.id == info.id)
    click.echo(
        f"Merged {len(runs)} shard runs into run {info.name}: {info.question_count} "
        f"questions, Accuracy: {summary.accuracy.label()}"
    )
    ctx.exit(ExitCode.OK)
