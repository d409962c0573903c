"""`sqlbench --help` and `--version` load no command, so they stay fast."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
import pytest

from sqlbench.cli.commands import COMMANDS

HEAVY = ("pandas", "duckdb", "sqlalchemy", "sqlglot", "pyarrow", "numpy", "pydantic")


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_heavy_module(args: list[str]) -> None:
    code = (
        "import sys\n"
        "from sqlbench.cli.main import get_cli\n"
        "try:\n"
        f"    get_cli().main({args!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("loaded:"))
    assert line == "loaded:"


def test_every_registered_command_loads_under_its_name(invoke) -> None:
    for name, entry in COMMANDS.items():
        module, attribute = entry.target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command) and command.name == name
    listing = invoke("--help").stdout
    for name, entry in COMMANDS.items():
        assert f"  {name} " in listing and entry.short_help in listing


def test_an_unknown_command_suggests_the_closest(invoke) -> None:
    result = invoke("runz", exit_code=2)
    assert "No such command 'runz'; did you mean 'run'?" in result.stderr
