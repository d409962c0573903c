"""``sqlbench init [DIR]``: scaffold a small example project that validates and runs offline."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.exitcodes import ExitCode
from sqlbench.project.gitfs import PROJECT_MARKERS
from sqlbench.project.scaffold import WORKFLOW_PATH, Scaffold, add_workflow, scaffold_project


@click.command("init")
@click.argument(
    "directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--github-actions",
    is_flag=True,
    help=f"Also write {WORKFLOW_PATH}, which runs `sqlbench check` on pull requests "
    "(docs/ci.md). In a folder that already holds a project, writes only that file.",
)
@click.option(
    "--from",
    "from_",
    nargs=2,
    metavar="spider|bird|defog PATH",
    default=None,
    help="Make the project from a public benchmark in its published layout at PATH (Spider: "
    "dev.json, tables.json, database/; BIRD: dev.json or mini_dev_sqlite.json, dev_databases/; "
    "defog: questions CSV, databases/). The databases stay where they are.",
)
@click.option(
    "--predictions",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="With --from: a published predictions file, replayed as the agent named by the "
    "--agent that follows it (repeat the pair for several systems).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="NAME",
    help="With --from: the agent name for the --predictions file given with it.",
)
@click.option(
    "--dbt",
    "dbt",
    is_flag=True,
    help="Write the sqlbench files beside the dbt project in DIRECTORY (sqlbench.yml with "
    "`dbt:`, an example question and agent; never into models/). The default when DIRECTORY "
    "holds dbt_project.yml (docs/dbt.md).",
)
@click.pass_context
def init_command(
    ctx: click.Context,
    directory: Path,
    github_actions: bool,
    from_: tuple[str, str] | None,
    predictions: tuple[Path, ...],
    agents: tuple[str, ...],
    dbt: bool,
) -> None:
    """Create an example project in DIRECTORY (default: the current folder).

    Writes sqlbench.yml, eval_questions/, certified_queries/, agents/ and models/; refuses to
    overwrite any existing file. With --from, makes the project from a public benchmark
    instead: one warehouse and question file per database, the compare options closest to
    the benchmark's official evaluator (and what still differs), each --predictions FILE
    --agent NAME pair as a replay agent.
    """
    if from_ is not None:
        _init_from(ctx, directory, from_, predictions, agents, github_actions)
    if predictions or agents:
        raise click.UsageError("--predictions and --agent go with --from")
    if github_actions and any((directory / marker).exists() for marker in PROJECT_MARKERS):
        added = add_workflow(directory)
        click.echo(
            f"Wrote {added.root / WORKFLOW_PATH}: it runs `sqlbench check` on pull requests."
        )
        ctx.exit(ExitCode.OK)
    from sqlbench.dbt.scaffold import is_dbt_project, scaffold_dbt_project

    if dbt or (is_dbt_project(directory) and not github_actions):
        result = scaffold_dbt_project(directory)
        heading = f"Created sqlbench files beside the dbt project in {result.root}"
        where = _created(result, heading, directory)
        click.echo("Next (docs/dbt.md):")
        click.echo(f"  sqlbench run{where}            # builds the models with dbt, then asks")
        click.echo(f"  sqlbench check{where} --base main --affected")
        ctx.exit(ExitCode.OK)
    result = scaffold_project(directory, github_actions=github_actions)
    where = _created(result, f"Created a sqlbench project in {result.root}", directory)
    click.echo("Next:")
    click.echo(f"  sqlbench validate{where}")
    click.echo(f"  sqlbench run{where} --agent example")
    click.echo(f"  sqlbench run{where} --agent my_agent   # the command agent agents/my_agent.py")
    if not github_actions:
        folder = "" if directory == Path(".") else f" {directory}"
        click.echo(
            f"  sqlbench init{folder} --github-actions   # add the pull-request check workflow"
        )
    ctx.exit(ExitCode.OK)


def _created(result: Scaffold, heading: str, directory: Path) -> str:
    """Say what a scaffold wrote (``heading``, its files, its notes); the ``-C DIR`` its next
    commands need (empty in the current folder)."""
    click.echo(f"{heading}:")
    for rel in result.created:
        click.echo(f"  {rel}")
    for note in result.notes:
        click.echo(f"Note: {note}.")
    return "" if directory == Path(".") else f" -C {directory}"


def _init_from(
    ctx: click.Context,
    directory: Path,
    from_: tuple[str, str],
    predictions: tuple[Path, ...],
    agents: tuple[str, ...],
    github_actions: bool,
) -> None:
    from sqlbench.public import KINDS, import_benchmark
    from sqlbench.report.public_import import render_import

    kind, path = from_
    if kind not in KINDS:
        raise click.BadParameter(
            f"{kind!r} is not a benchmark sqlbench reads; use one of {', '.join(KINDS)}",
            param_hint="--from",
        )
    if len(predictions) != len(agents):
        raise click.UsageError(
            f"{len(predictions)} --predictions but {len(agents)} --agent: give each "
            "predictions file its agent name (--predictions FILE --agent NAME)"
        )
    if github_actions:
        raise click.UsageError("--github-actions does not go with --from; add it afterwards")
    result = import_benchmark(
        kind, Path(path), directory, list(zip(predictions, agents, strict=True))
    )
    click.echo(render_import(result, directory))
    if result.absent_warning:
        click.echo(f"Warning: {result.absent_warning}.", err=True)
    ctx.exit(ExitCode.OK)
