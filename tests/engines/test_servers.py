"""SQLAlchemy warehouses: setup as session-temporary objects on every pooled connection (never
in the warehouse), refused where the database has no temporary views; a lost connection retried
once; agent SQL as the least-privilege role."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from engine_warehouses import MARIADB_READER_URL, PG_READER_URL, PG_URL, CanaryFiles, env_url

from sqlbench.engines.open import open_engine
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.files import Settings


@pytest.fixture
def pg_admin() -> Iterator[Any]:
    import psycopg

    url = env_url(PG_URL).replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as admin:
        yield admin


@pytest.fixture
def pg_table(pg_admin: Any) -> Iterator[str]:
    import psycopg

    table = f"sb_{uuid.uuid4().hex[:10]}_people"
    pg_admin.execute(f"CREATE TABLE {table} (id INTEGER, name TEXT)")
    pg_admin.execute(f"INSERT INTO {table} VALUES (1, 'ann'), (2, 'bob')")
    pg_admin.execute(f"GRANT SELECT ON {table} TO sqlbench_reader")
    yield table
    # A closed engine's backends drop their temporary views (which depend on the table) as
    # they exit; dropping the table at that moment can deadlock with them: try again.
    for attempt in range(20):
        try:
            pg_admin.execute(f"DROP TABLE {table} CASCADE")
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == 19:
                raise
            time.sleep(0.1)


@pytest.mark.postgres
def test_postgres_setup_builds_temporary_views_on_every_pooled_connection(
    tmp_path: Path, pg_admin: Any, pg_table: str
) -> None:
    setup = tmp_path / "models.sql"
    view = f"{pg_table}_upper"
    setup.write_text(
        f"-- the data model\nCREATE VIEW {view} AS SELECT id, upper(name) AS name FROM {pg_table};"
        f"\nCREATE OR REPLACE VIEW {view}_count AS SELECT count(*) AS n FROM {view};\n"
    )
    engine = open_engine(
        Settings(warehouse=env_url(PG_READER_URL), run={"concurrency": 4}), tmp_path
    )
    engine.setup(tmp_path, [setup])

    def names(_: int) -> tuple[list[object], int]:
        # pg_sleep holds each connection, so the pool opens several at once.
        result = engine.run_agent(
            f"SELECT name, pg_backend_pid() AS pid, pg_sleep(0.2) FROM {view} ORDER BY id",
            timeout_s=10,
            max_rows=10,
        )
        return result.table.column(0).to_pylist(), result.table.column(1)[0].as_py()

    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(names, range(8)))
    assert all(rows == ["ANN", "BOB"] for rows, _ in outcomes)
    assert len({pid for _, pid in outcomes}) >= 2, "several pooled connections were used"
    count = engine.run_agent(f"SELECT n FROM {view}_count", timeout_s=10, max_rows=1)
    assert count.table.column(0).to_pylist() == [2]
    listed = [t.name for t in engine.tables()]
    assert listed[:2] == [view, f"{view}_count"] and pg_table in listed
    # Nothing of the setup exists outside the sessions: the warehouse has no such view.
    persistent = pg_admin.execute(
        "SELECT count(*) FROM pg_views WHERE viewname LIKE %s AND schemaname NOT LIKE 'pg_temp%%'",
        (f"{pg_table}%",),
    ).fetchone()
    assert persistent == (0,)
    engine.close()


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("INSERT INTO {t} VALUES (3, 'cy')", "this is INSERT, not CREATE VIEW or CREATE TABLE"),
        ("CREATE VIEW public.{t}_v AS SELECT 1", "name the object without a schema"),
        ("CREATE MATERIALIZED VIEW {t}_m AS SELECT 1", "materialized view"),
        ("DROP TABLE {t}", "this is DROP"),
        ("CREATE VIEW {t}_v AS SELECT 1; GRANT ALL ON {t} TO PUBLIC", "statement 2"),
    ],
)
def test_postgres_setup_that_would_change_the_warehouse_is_refused(
    tmp_path: Path, pg_admin: Any, pg_table: str, statement: str, why: str
) -> None:
    setup = tmp_path / "evil.sql"
    setup.write_text(statement.format(t=pg_table))
    engine = open_engine(Settings(warehouse=env_url(PG_READER_URL)), tmp_path)
    with pytest.raises(EngineError) as caught:
        engine.setup(tmp_path, [setup])
    assert str(caught.value).startswith("evil.sql (statement ")
    assert why in str(caught.value)
    assert "\n" not in str(caught.value)
    engine.close()
    rows = pg_admin.execute(f"SELECT count(*) FROM {pg_table}").fetchone()
    assert rows == (2,)


@pytest.mark.postgres
def test_a_failing_postgres_setup_names_file_and_statement(tmp_path: Path) -> None:
    setup = tmp_path / "models.sql"
    setup.write_text("CREATE VIEW ok_v AS SELECT 1 AS a;\nCREATE VIEW bad_v AS SELECT * FROM nope;")
    engine = open_engine(Settings(warehouse=env_url(PG_READER_URL)), tmp_path)
    with pytest.raises(
        EngineError, match=r'^models\.sql \(statement 2\): setup SQL failed: .*"nope"'
    ):
        engine.setup(tmp_path, [setup])
    engine.close()


@pytest.mark.mariadb
def test_mariadb_refuses_setup_in_one_sentence(tmp_path: Path) -> None:
    setup = tmp_path / "models.sql"
    setup.write_text("CREATE VIEW v AS SELECT 1 AS a;")
    engine = open_engine(Settings(warehouse=env_url(MARIADB_READER_URL)), tmp_path)
    with pytest.raises(EngineError) as caught:
        engine.setup(tmp_path, [setup])
    message = str(caught.value)
    assert message.startswith(
        "setup is not supported on MySQL/MariaDB warehouses: they have no temporary views"
    )
    assert message.count(".") == 1 and message.endswith("sqlbench.yml")
    engine.setup(tmp_path, [])  # no setup is fine
    assert engine.run_agent("SELECT 1 AS one", timeout_s=5, max_rows=1).num_rows == 1
    engine.close()


def test_sqlite_setup_builds_temp_views_and_the_file_stays_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "data" / "shop.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (id INTEGER, name TEXT)")
        con.execute("INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    setup = tmp_path / "models.sql"
    setup.write_text("CREATE VIEW shout AS SELECT upper(name) AS name FROM people;")
    # A path relative to the project root; the file is recognized as SQLite by its header.
    engine = open_engine(Settings(warehouse="data/shop.db", run={"concurrency": 3}), tmp_path)
    assert engine.dialect == "sqlite"
    engine.setup(tmp_path, [setup])
    with ThreadPoolExecutor(3) as pool:
        results = list(
            pool.map(
                lambda _: (
                    engine.run_agent("SELECT name FROM shout ORDER BY 1", timeout_s=5, max_rows=5)
                    .table.column(0)
                    .to_pylist()
                ),
                range(6),
            )
        )
    assert results == [["ANN", "BOB"]] * 6
    assert [t.name for t in engine.tables()] == ["shout", "people"]
    engine.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in path.parent.iterdir()) == ["shop.db"]


@pytest.mark.postgres
def test_a_lost_connection_is_retried_once(pg_admin: Any, pg_table: str, tmp_path: Path) -> None:
    marker = f"sb_lost_{uuid.uuid4().hex[:8]}"
    url = env_url(PG_READER_URL) + f"?application_name={marker}"
    engine = open_engine(Settings(warehouse=url), tmp_path)
    engine.setup(tmp_path, [])
    sql = f"SELECT id, pg_sleep(1) AS slept FROM {pg_table} ORDER BY id"
    kills: list[int] = []

    def kill(times: int) -> None:
        deadline = time.monotonic() + 8
        while len(kills) < times and time.monotonic() < deadline:
            # The agent's query only (a second per row): the query process's own statements
            # while it starts are active too, for a few milliseconds, under the same name.
            row = pg_admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND state = 'active' "
                "AND clock_timestamp() - query_start > interval '0.2 seconds'",
                (marker,),
            ).fetchone()
            if row is not None and row[0] not in kills:
                pg_admin.execute("SELECT pg_terminate_backend(%s)", row)
                kills.append(row[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill, args=(1,))
    killer.start()
    result = engine.run_agent(sql, timeout_s=10, max_rows=10)
    killer.join()
    assert len(kills) == 1
    assert result.table.column(0).to_pylist() == [1, 2]

    kills.clear()
    killer = threading.Thread(target=kill, args=(2,))
    killer.start()
    with pytest.raises(QueryError) as caught:
        engine.run_agent(sql, timeout_s=10, max_rows=10)
    killer.join()
    assert len(kills) == 2
    assert caught.value.kind is QueryErrorKind.CONNECTION
    assert caught.value.message.startswith("lost the connection to the warehouse twice: ")
    # The pool recovers for the next query.
    assert engine.run_agent("SELECT 1 AS one", timeout_s=5, max_rows=1).num_rows == 1
    engine.close()


@pytest.mark.postgres
def test_the_postgres_server_can_read_the_canary_but_the_reader_engine_cannot(
    pg_admin: Any, canary_files: CanaryFiles, tmp_path: Path
) -> None:
    """The file-access tests mean something: the server itself can read the canary file."""
    text = pg_admin.execute("SELECT pg_read_file(%s)", (str(canary_files.secret),)).fetchone()
    assert canary_files.secret_text in text[0]
    engine = open_engine(Settings(warehouse=env_url(PG_READER_URL)), tmp_path)
    with pytest.raises(QueryError) as caught:
        engine.run_truth(f"SELECT pg_read_file('{canary_files.secret}')", timeout_s=5, max_rows=1)
    assert "permission denied" in caught.value.message
    engine.close()


@pytest.mark.postgres
def test_secrets_in_the_url_stay_in_env_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = env_url(PG_READER_URL)
    monkeypatch.setenv("SB_TEST_PG_USER", "sqlbench_reader")
    templated = url.replace("sqlbench_reader", "${SB_TEST_PG_USER}")
    engine = open_engine(Settings(warehouse=templated), tmp_path)
    assert (
        engine.run_agent("SELECT current_user AS u", timeout_s=5, max_rows=1).table[0][0].as_py()
        == "sqlbench_reader"
    )
    assert engine.display == templated
    engine.close()
    monkeypatch.setenv("SB_TEST_PG_USER", "no_such_role_xyz")
    with pytest.raises(EngineError) as caught:
        open_engine(Settings(warehouse=templated), tmp_path)
    assert "${SB_TEST_PG_USER}" in str(caught.value)
