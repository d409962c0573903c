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
# data variants (duckdb), --affected-by (run-to-run comparison), JSONPaths (http agents and
# assertions), the formats not asked for (the JUnit report's XML). pandas is not among them:
# pyarrow imports it on its first conversion of Python values (its pandas shim), which the
# SQLite engine's results and the comparison of small results make.
NOT_FOR_A_SQLITE_REPLAY_RUN = (
    "httpx",
    "duckdb",
    "sqlbench.variants",
    "sqlbench.rundiff",
    "jsonpath_ng",
    "sqlbench.report.run_junit",
    "sqlbench.report.run_markdown",
    "xml.etree",
)


def _spider_project(tmp_path: Path) -> None:
    """A Spider folder of one database (``tmp_path/spider``), imported as ``tmp_path/proj``
    with two replayed systems, ``a`` (right) and ``b`` (wrong)."""
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


def _loaded_by(argv: list[str], modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """The stdout of ``sqlbench ARGV`` run as the command runs, and which of ``modules`` it had
    imported when it exited."""
    code = (
        "import atexit, sys\n"
        "from sqlbench.cli.main import main\n"
        "atexit.register(lambda: print('loaded:' + ','.join(m for m in "
        f"{modules!r} if m in sys.modules), file=sys.stderr))\n"
        f"sys.argv = ['sqlbench', *{argv!r}]\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("loaded:"))
    return out.stdout, [m for m in line.removeprefix("loaded:").split(",") if m]


def test_a_replay_run_on_sqlite_imports_no_http_duckdb_or_rundiff(tmp_path: Path) -> None:
    _spider_project(tmp_path)
    stdout, loaded = _loaded_by(
        ["run", "-C", str(tmp_path / "proj"), "--agent", "a,b", "--format", "json"],
        NOT_FOR_A_SQLITE_REPLAY_RUN,
    )
    assert [run["accuracy"]["passed"] for run in json.loads(stdout)["runs"]] == [1, 0]
    assert loaded == []


# `init --from` reads JSON and writes YAML: no models, no warehouse, no run store.
NOT_FOR_INIT_FROM = ("pydantic", "sqlalchemy", "sqlglot", "pyarrow", "numpy", "rich")


def test_init_from_a_benchmark_imports_no_models_or_engines(tmp_path: Path) -> None:
    _spider_project(tmp_path)  # made in this process; the command below makes another
    folder = tmp_path / "again"
    argv = ["init", str(folder), "--from", "spider", str(tmp_path / "spider" / "dev.json")]
    argv += ["--predictions", str(tmp_path / "a.sql"), "--agent", "a"]
    stdout, loaded = _loaded_by(argv, NOT_FOR_INIT_FROM)
    assert "Created a spider project" in stdout
    assert (folder / "eval_questions" / "shop.yml").read_text() == (
        tmp_path / "proj" / "eval_questions" / "shop.yml"
    ).read_text()
    assert loaded == []


# Reading stored runs needs the store and the records, not SQL, Arrow or statistics: a project's
# `dialect:` is checked without sqlglot, a stored interval is read without numpy.
NOT_FOR_READING_RUNS = ("sqlglot", "numpy", "pyarrow", "pandas", "duckdb", "sqlbench.compare")


def test_reading_stored_runs_imports_no_sql_parser_arrow_or_numpy(tmp_path: Path) -> None:
    _spider_project(tmp_path)
    project = tmp_path / "proj"
    with (project / "sqlbench.yml").open("a", encoding="utf-8") as settings:
        settings.write("dialect: sqlite\n")
    ran = subprocess.run(
        [sys.executable, "-m", "sqlbench", "run", "-C", str(project), "--agent", "a"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    listed, loaded = _loaded_by(
        ["runs", "-C", str(project), "--format", "json"], NOT_FOR_READING_RUNS
    )
    assert loaded == []
    name = json.loads(listed)["runs"][0]["name"]
    for argv in (
        ["show", "-C", str(project), name],
        ["show", "-C", str(project), name, "shop/dev_0000"],
        ["export", "-C", str(project), name, "--output", str(tmp_path / "run.json")],
    ):
        _, loaded = _loaded_by(argv, NOT_FOR_READING_RUNS)
        assert loaded == [], argv
    # Comparing two stored runs runs nothing: no agents, engines or planning (numpy it needs).
    not_for_comparing = tuple(m for m in NOT_FOR_READING_RUNS if m != "numpy")
    compared, loaded = _loaded_by(
        ["compare", "-C", str(project), name, name, "--format", "json"],
        (*not_for_comparing, "sqlbench.agents", "sqlbench.engines", "sqlbench.runs.plan"),
    )
    assert loaded == []
    assert json.loads(compared)["base"]["run"] == name
