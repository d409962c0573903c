"""The ``sqlbench`` command group: one error handler, named exit codes.

Each command lives in its own module under ``sqlbench.cli`` and is registered below. Commands
parse options, call one library function, render through ``sqlbench.report`` and return an exit
code; no YAML, git, SQL or comparison logic lives here.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from sqlbench import __version__
from sqlbench.errors import SqlbenchError

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_ERROR = 2


class SqlbenchGroup(click.Group):
    """Turns every ``SqlbenchError`` into one sentence on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SqlbenchError as err:
            click.echo(f"Error: {err}", err=True)
            ctx.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)


@click.group(
    cls=SqlbenchGroup,
    context_settings={"auto_envvar_prefix": "SQLBENCH", "help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="sqlbench")
def cli() -> None:
    """Benchmark text-to-SQL agents by executing their SQL against known-correct answers."""


def get_cli() -> click.Group:
    """The group with every command registered (what tests drive with ``CliRunner``)."""
    # Imported here so that `import sqlbench.cli.main` has no side effects beyond the group.
    from sqlbench.cli import commands

    for command in commands.ALL:
        if command.name not in cli.commands:
            cli.add_command(command)
    return cli


def main() -> None:
    """Console-script entry point."""
    sys.exit(get_cli().main(standalone_mode=True) or 0)
