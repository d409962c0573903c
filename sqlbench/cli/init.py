"""``sqlbench init [DIR]``: scaffold a small example project that validates and runs offline."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.exitcodes import ExitCode
from sqlbench.project.gitfs import PROJECT_MARKERS
from sqlbench.project.scaffold import WORKFLOW_PATH, add_workflow, scaffold_project


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
@click.pass_context
def init_command(ctx: click.Context, directory: Path, github_actions: bool) -> None:
    """Create an example project in DIRECTORY (default: the current folder).

    Writes sqlbench.yml, eval_questions/, certified_queries/, agents/ and models/; refuses to
    overwrite any existing file.
    """
    if github_actions and any((directory / marker).exists() for marker in PROJECT_MARKERS):
        added = add_workflow(directory)
        click.echo(
            f"Wrote {added.root / WORKFLOW_PATH}: it runs `sqlbench check` on pull requests."
        )
        ctx.exit(ExitCode.OK)
    result = scaffold_project(directory, github_actions=github_actions)
    click.echo(f"Created a sqlbench project in {result.root}:")
    for rel in result.created:
        click.echo(f"  {rel}")
    for note in result.notes:
        click.echo(f"Note: {note}.")
    where = "" if directory == Path(".") else f" -C {directory}"
    click.echo("Next:")
    click.echo(f"  sqlbench validate{where}")
    click.echo(f"  sqlbench run{where} --agent example")
    if not github_actions:
        folder = "" if directory == Path(".") else f" {directory}"
        click.echo(
            f"  sqlbench init{folder} --github-actions   # add the pull-request check workflow"
        )
    ctx.exit(ExitCode.OK)
