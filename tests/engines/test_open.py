"""Opening the warehouse a project names: DuckDB by default, files by what they are, URLs
through SQLAlchemy; ``${ENV}`` resolved only at connect time; setup globs in order."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.engines.open import open_engine, open_project_engine, setup_files
from sqlbench.errors import EngineError
from sqlbench.project.files import Settings


def test_no_warehouse_is_a_fresh_in_memory_duckdb(tmp_path: Path) -> None:
    first, second = open_engine(Settings(), tmp_path), open_engine(Settings(), tmp_path)
    assert isinstance(first, DuckDBEngine) and first.dialect == "duckdb"
    setup = tmp_path / "t.sql"
    setup.write_text("CREATE TABLE t AS SELECT 1 AS a;")
    first.setup(tmp_path, [setup])
    second.setup(tmp_path, [])
    assert first.run_agent("SELECT a FROM t", timeout_s=5, max_rows=1).num_rows == 1
    assert (
        second.run_agent("SELECT count(*) FROM duckdb_tables()", timeout_s=5, max_rows=1)
        .table[0][0]
        .as_py()
        == 0
    )
    first.close()
    second.close()


def test_paths_and_duckdb_urls_open_the_file_read_only(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "shop.duckdb"))
    con.execute("CREATE TABLE t AS SELECT 7 AS a")
    con.close()
    for warehouse in (
        "shop.duckdb",
        str(tmp_path / "shop.duckdb"),
        "duckdb:///shop.duckdb",
        f"duckdb:///{tmp_path / 'shop.duckdb'}",
    ):
        engine = open_engine(Settings(warehouse=warehouse), tmp_path)
        assert isinstance(engine, DuckDBEngine)
        engine.setup(tmp_path, [])
        assert engine.run_agent("SELECT a FROM t", timeout_s=5, max_rows=1).table[0][0].as_py() == 7
        engine.close()
    memory = open_engine(Settings(warehouse="duckdb:///:memory:"), tmp_path)
    assert isinstance(memory, DuckDBEngine)
    memory.close()


def test_a_sqlite_file_is_recognized_by_its_header(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "shop.db") as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    engine = open_engine(Settings(warehouse="shop.db"), tmp_path)
    assert engine.dialect == "sqlite"
    engine.close()


def test_env_vars_are_resolved_when_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with sqlite3.connect(tmp_path / "shop.db") as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    monkeypatch.setenv("SB_TEST_DB", "shop.db")
    engine = open_engine(Settings(warehouse="sqlite:///${SB_TEST_DB}"), tmp_path)
    assert engine.dialect == "sqlite"
    engine.close()
    monkeypatch.delenv("SB_TEST_DB")
    with pytest.raises(EngineError, match=r"environment variable SB_TEST_DB is not set"):
        open_engine(Settings(warehouse="sqlite:///${SB_TEST_DB}"), tmp_path)


@pytest.mark.parametrize(
    ("warehouse", "message"),
    [
        ("missing.duckdb", "the warehouse DuckDB file .*missing.duckdb does not exist"),
        ("sqlite:///missing.db", "the warehouse SQLite file .*missing.db does not exist"),
        ("snowflake://acct/db", r"is not installed .*pip install snowflake-sqlalchemy"),
        ("vertica://host/db", "unknown warehouse URL scheme `vertica://`, which no installed"),
        ("postgresql://nobody@127.0.0.1:1/x", "cannot connect to the warehouse"),
        ("not a url ::: at all.duckdb", "does not exist"),
        # Regressions: a port that is no number was a traceback (ValueError from SQLAlchemy);
        # in-memory SQLite ran against empty databases and printed a pool traceback.
        ("postgresql://u@[::1", r"the warehouse postgresql://u@\[::1 is not a valid database URL"),
        ("postgresql://u@db:port/x", "is not a valid database URL"),
        ("sqlite://", "is an in-memory SQLite database, which holds no tables"),
        ("sqlite:///:memory:", "is an in-memory SQLite database"),
    ],
)
def test_unopenable_warehouses_are_one_sentence(
    tmp_path: Path, warehouse: str, message: str
) -> None:
    with pytest.raises(EngineError, match=message) as caught:
        open_engine(Settings(warehouse=warehouse), tmp_path)
    assert "\n" not in str(caught.value)


def test_setup_globs_expand_in_order_each_file_once(tmp_path: Path) -> None:
    for name in ("models/b.sql", "models/a.sql", "seed.sql", "models/sub/c.sql"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("SELECT 1;")
    settings = Settings(setup=["seed.sql", "models/*.sql", "models/**/*.sql"])
    files = [p.relative_to(tmp_path).as_posix() for p in setup_files(settings, tmp_path)]
    assert files == ["seed.sql", "models/a.sql", "models/b.sql", "models/sub/c.sql"]
    with pytest.raises(
        EngineError, match=r"setup pattern 'nothing/\*\.sql' in sqlbench\.yml matches no file"
    ):
        setup_files(Settings(setup=["nothing/*.sql"]), tmp_path)


def test_open_project_engine_opens_and_sets_up(tmp_path: Path) -> None:
    from sqlbench.testing import write_project
    from sqlbench.validation import load_project

    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["models/*.sql"]},
            "models/t.sql": "CREATE TABLE t AS SELECT 5 AS five;",
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "five", "question": "Five?", "sql": "SELECT five FROM t"}
                ]
            },
        },
    )
    engine = open_project_engine(load_project(root))
    assert engine.run_truth("SELECT five FROM t", timeout_s=5, max_rows=1).table[0][0].as_py() == 5
    engine.close()


@pytest.mark.parametrize(
    ("url", "advice"),
    [
        ("postgres://u@127.0.0.1/db", "write `postgresql://`"),
        ("postgresq://u@127.0.0.1/db", "did you mean 'postgresql'?"),
        # A scheme close to no database's: unknown, with the schemes to write, not "install a
        # driver" (the dialect: key made it look like a third-party one).
        ("htp://oops", "unknown warehouse URL scheme `htp://`"),
        ("htp://oops", "expected one of duckdb, sqlite, postgresql"),
    ],
)
def test_a_mistyped_url_scheme_names_the_fix(tmp_path: Path, url: str, advice: str) -> None:
    with pytest.raises(EngineError) as caught:
        open_engine(Settings(warehouse=url, dialect="duckdb"), tmp_path)
    assert advice in str(caught.value) and "driver" not in str(caught.value)


def test_a_drivers_lines_are_joined_as_sentences(tmp_path: Path) -> None:
    with pytest.raises(EngineError) as caught:
        open_engine(Settings(warehouse="postgresql+psycopg://nobody@127.0.0.1:1/x"), tmp_path)
    assert "Connection refused. Is the server running" in str(caught.value)
