"""`sqlbench --help` and `--version` load no command, so they stay fast; a run loads only what
it uses."""

from __future__ import annotations

import importlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest

from sqlbench.cli.commands import COMMANDS
from sqlbench.public import import_benchmark

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


# Loaded only by the runs that need them: HTTP agents and judges (httpx), DuckDB warehouses and
# data variants (duckdb), --affected-by (run-to-run comparison).
NOT_FOR_A_SQLITE_REPLAY_RUN = ("httpx", "duckdb", "sqlbench.variants", "sqlbench.rundiff")


def test_a_replay_run_on_sqlite_imports_no_http_duckdb_or_rundiff(tmp_path: Path) -> None:
    bench = tmp_path / "spider"
    (bench / "database" / "shop").mkdir(parents=True)
    conn = sqlite3.connect(bench / "database" / "shop" / "shop.sqlite")
    conn.executescript("CREATE TABLE item (n INTEGER); INSERT INTO item VALUES (1), (2);")
    conn.commit()
    conn.close()
    dev = [{"db_id": "shop", "question": "How many?", "query": "SELECT count(*) FROM item"}]
    (bench / "dev.json").write_text(json.dumps(dev))
    (bench / "tables.json").write_text("[]")
    systems = []
    for name, sql in (("a", "SELECT count(*) FROM item"), ("b", "SELECT 3")):
        (tmp_path / f"{name}.sql").write_text(sql + "\n")
        systems.append((tmp_path / f"{name}.sql", name))
    import_benchmark("spider", bench, tmp_path / "proj", systems)
    code = (
        "import atexit, sys\n"
        "from sqlbench.cli.main import main\n"
        "atexit.register(lambda: print('loaded:' + ','.join(m for m in "
        f"{NOT_FOR_A_SQLITE_REPLAY_RUN!r} if m in sys.modules), file=sys.stderr))\n"
        f"sys.argv = ['sqlbench', 'run', '-C', {str(tmp_path / 'proj')!r}, '--agent', 'a,b',"
        " '--format', 'json']\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [run["accuracy"]["passed"] for run in json.loads(out.stdout)["runs"]] == [1, 0]
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("loaded:"))
    assert line == "loaded:"
