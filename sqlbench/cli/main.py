"""The ``sqlbench`` command group: one error handler, named exit codes.

Each command lives in its own module under ``sqlbench.cli`` and is registered in
``sqlbench.cli.commands``, loaded when first used. Commands
parse options, call one library function, render through ``sqlbench.report`` and return an exit
code; no YAML, git, SQL or comparison logic lives here.
"""

from __future__ import annotations

import atexit
import importlib
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from sqlbench import __version__, gcpolicy, secrets
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode


class SqlbenchGroup(click.Group):
    """Turns every ``SqlbenchError`` into one sentence on stderr and exit code 2, and loads
    each command from ``sqlbench.cli.commands.COMMANDS`` only when it is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from sqlbench.cli.commands import COMMANDS

        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        from sqlbench.cli.commands import COMMANDS

        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute = entry.target.split(":")
        with gcpolicy.long_lived():  # a command's modules stay loaded: no collection finds them
            command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry.target} is not a click command")
        command.short_help = entry.short_help
        _envvars_follow_flags(command)
        self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the registry's one-line helps, importing no command."""
        from sqlbench.cli.commands import COMMANDS

        rows = [(name, entry.short_help) for name, entry in COMMANDS.items()]
        rows += [
            (name, command.get_short_help_str())
            for name, command in self.commands.items()
            if name not in COMMANDS
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            from sqlbench.text import suggest

            ctx.fail(f"No such command {name!r}{suggest(name, self.list_commands(ctx))}")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        # Everything printed passes the one redaction (sqlbench.secrets): no secret reaches
        # the console, whatever an agent, a driver or a file put into a message.
        with secrets.scrubbed_streams():
            try:
                try:
                    return super().invoke(ctx)
                finally:
                    _release_dbt_builds()
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


def _release_dbt_builds() -> None:
    """The command is done with the dbt builds it made on a server warehouse: drop their
    schemas unless kept (docs/dbt.md), saying so. Only when a build was made: the module is
    loaded by the first one."""
    server = sys.modules.get("sqlbench.dbt.server")
    if server is None:
        return
    for line in server.release_builds():
        click.echo(f"Note: dbt: {line}", err=True)


def get_cli() -> click.Group:
    """The group (what tests drive with ``CliRunner``); commands load when first used."""
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
    gcpolicy.own_process()
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
