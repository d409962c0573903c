"""``sqlbench view [--port N]``: the report pages served from the run store on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import click

from sqlbench.cli.options import project_dir_option
from sqlbench.exitcodes import ExitCode
from sqlbench.runs.locate import open_project_store
from sqlbench.view import ViewServer


@click.command("view")
@project_dir_option
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one).",
)
@click.pass_context
def view_command(ctx: click.Context, project_dir: Path, port: int) -> None:
    """Serve the run list (updating live, runs in progress included) and each run's report on
    127.0.0.1 only, until Ctrl-C. Decisions made in the pages are stored as `sqlbench review`
    stores them; nothing else is written."""
    with open_project_store(project_dir) as store:
        server = ViewServer(store, port)
        click.echo(f"sqlbench view: {server.url} (Ctrl-C stops it)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("Stopped.", err=True)
        finally:
            server.shutdown()
    ctx.exit(ExitCode.OK)
