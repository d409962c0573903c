"""The ``sqlbench`` command group: one error handler, named exit codes.

Each command lives in its own module under ``sqlbench.cli`` and is registered below. Commands
parse options, call one library function, render through ``sqlbench.report`` and return an exit
code; no YAML, git, SQL or comparison logic lives here.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from sqlbench import __version__, secrets
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode


class SqlbenchGroup(click.Group):
    """Turns every ``SqlbenchError`` into one sentence on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        # Everything printed passes the one redaction (sqlbench.secrets): no secret reaches
        # the console, whatever an agent, a driver or a file put into a message.
        with secrets.scrubbed_streams():
            try:
                return super().invoke(ctx)
            except SqlbenchError as err:
                click.echo(f"Error: {err}", err=True)
                ctx.exit(ExitCode.ERROR)
            except KeyboardInterrupt:
                click.echo("Interrupted.", err=True)
                ctx.exit(ExitCode.INTERRUPTED)


@click.group(
    cls=SqlbenchGroup,
    context_settings={"auto_envvar_prefix": "SQLBENCH", "help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="sqlbench")
@click.option(
    "--project-dir",
    "-C",
    "project_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Project folder, for every command (also accepted after the command).",
)
def cli(project_dir: Path | None) -> None:
    """Benchmark text-to-SQL agents by executing their SQL against known-correct answers."""


def get_cli() -> click.Group:
    """The group with every command registered (what tests drive with ``CliRunner``)."""
    # Imported here so that `import sqlbench.cli.main` has no side effects beyond the group.
    from sqlbench.cli import commands

    for command in commands.ALL:
        if command.name not in cli.commands:
            _envvars_follow_flags(command)
            cli.add_command(command)
    return cli


def _envvars_follow_flags(command: click.Command) -> None:
    """Let ``SQLBENCH_<COMMAND>_<OPTION>`` follow the flag (``--format`` ->
    ``SQLBENCH_RUN_FORMAT``) where the Python parameter is named otherwise (``fmt``); click's
    automatic name (``SQLBENCH_RUN_FMT``) keeps working too."""
    prefix = f"SQLBENCH_{(command.name or '').upper().replace('-', '_')}"
    for param in command.params:
        if not isinstance(param, click.Option) or param.envvar or not param.name:
            continue
        flag = max(param.opts, key=len).lstrip("-").replace("-", "_").upper()
        if flag != param.name.upper():
            param.envvar = [f"{prefix}_{flag}", f"{prefix}_{param.name.upper()}"]


def main() -> None:
    """Console-script entry point."""
    # A CI job being cancelled (or `kill`) sends SIGTERM: stop like Ctrl-C, so the run is
    # marked Interrupted and command agents' process trees are killed, not orphaned.
    signal.signal(signal.SIGTERM, _interrupt)
    code: str | int | None
    try:
        code = get_cli().main(standalone_mode=True)
    except SystemExit as done:
        code = done.code
    if code == ExitCode.INTERRUPTED:
        _exit_at_once(ExitCode.INTERRUPTED)
    sys.exit(code or 0)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _exit_at_once(code: int) -> NoReturn:
    """Exit after Ctrl-C without tearing the interpreter down.

    Worker threads may still be inside an agent call, holding the warehouse connection; a
    normal teardown around them makes DuckDB's bindings print pages of "nanobind: leaked ..."
    reports under the one-line message. Exit handlers still run first: they kill command
    agents' processes and remove checkouts extracted for --branch.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)
