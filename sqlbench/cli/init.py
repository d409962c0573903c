"""``sqlbench init [DIR]``: scaffold a small example project that validates and runs offline."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.main import EXIT_OK
from sqlbench.project.scaffold import scaffold_project


@click.command("init")
@click.argument(
    "directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path)
)
@click.pass_context
def init_command(ctx: click.Context, directory: Path) -> None:
    """Create an example project in DIRECTORY (default: the current folder).

    Writes sqlbench.yml, eval_questions/, certified_queries/, agents/ and models/; refuses to
    overwrite any existing file.
    """
    result = scaffold_project(directory)
    click.echo(f"Created a sqlbench project in {result.root}:")
    for rel in result.created:
        click.echo(f"  {rel}")
    for note in result.notes:
        click.echo(f"Note: {note}.")
    where = "" if directory == Path(".") else f" -C {directory}"
    click.echo("Next:")
    click.echo(f"  sqlbench validate{where}")
    click.echo(f"  sqlbench run{where} --agent example")
    ctx.exit(EXIT_OK)
