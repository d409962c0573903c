"""One huge value per engine (issue 17): on PostgreSQL and MariaDB agent SQL runs in the
memory-watched query process, so a value the driver receives whole (libpq) or a first chunk of
big rows (PyMySQL) takes that process, not the run's, past its allowance: too_large for that
query only, whatever the server's own limits. SQLite keeps agent SQL in-process and refuses
a value past ``max_result_mb`` as SQLite builds it; ground truth is not limited so."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from engine_warehouses import MARIADB_READER_URL, PG_READER_URL, env_url

from sqlbench.engines.open import open_engine
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import RunSettings, Settings

MB = 2**20

SERVERS = {
    "postgres": (
        PG_READER_URL,
        "PostgreSQL",
        "SELECT repeat('x', 400000000) AS v",  # one value, received whole by libpq
        "SELECT pg_sleep(3) IS NULL AS slept, 1 AS n",
    ),
    "mariadb": (
        MARIADB_READER_URL,
        "MariaDB",
        # Each value within max_allowed_packet (16 MB here): the first chunk, 64 rows, is
        # read whole by the driver before its bytes can be counted.
        "SELECT repeat('x', 15000000) AS v FROM seq_1_to_64",
        "SELECT SLEEP(3) AS slept, 1 AS n",
    ),
}


def _high_water_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _reset_high_water() -> None:
    with open("/proc/self/clear_refs", "w") as refs:  # 5: reset the peak resident size
        refs.write("5")


@pytest.mark.slow
@pytest.mark.hostile
@pytest.mark.skipif(sys.platform != "linux", reason="the query process is Linux-only")
@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_a_huge_value_on_a_server_is_too_large_and_a_query_beside_it_keeps_its_result(
    kind: str, tmp_path: Path
) -> None:
    variable, label, bomb, beside_sql = SERVERS[kind]
    pytest.importorskip("psycopg" if kind == "postgres" else "pymysql")
    settings = Settings(warehouse=env_url(variable), run=RunSettings(max_result_mb=1))
    engine = open_engine(settings, tmp_path)
    engine.setup(tmp_path, [])
    try:
        assert engine.run_agent("SELECT 1 AS x", timeout_s=60, max_rows=10).num_rows == 1
        found: dict[str, object] = {}

        def run(name: str, sql: str) -> None:
            try:
                found[name] = engine.run_agent(sql, timeout_s=60, max_rows=100, max_bytes=MB)
            except QueryError as err:
                found[name] = err

        _reset_high_water()
        before = _high_water_mb()
        beside = threading.Thread(target=run, args=("beside", beside_sql))
        huge = threading.Thread(target=run, args=("huge", bomb))
        beside.start()
        time.sleep(0.3)
        huge.start()
        beside.join()
        huge.join()
        err = found["huge"]
        assert isinstance(err, QueryError) and err.kind is QueryErrorKind.TOO_LARGE, err
        assert err.message == (
            f"it took sqlbench's {label} query process past the memory it may use (260 MB "
            "beyond its connections); the process was stopped"
        )
        kept = found["beside"]
        assert not isinstance(kept, QueryError), kept
        assert kept.table.column("n").to_pylist() == [1]  # type: ignore[attr-defined]
        # The value never reached this process (in it, 400 MB took about 1.2 GB).
        grown = _high_water_mb() - before
        assert grown < 150, f"this process grew by {grown:.0f} MB"
        # A new query process answers the next query.
        again = engine.run_agent("SELECT 2 AS x", timeout_s=60, max_rows=10)
        assert again.table.to_pylist() == [{"x": 2}]
    finally:
        engine.close()


def _sqlite(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER)")
    con.commit()
    con.close()
    return path


def test_sqlite_refuses_a_value_past_max_result_mb_in_agent_sql_not_in_ground_truth(
    tmp_path: Path,
) -> None:
    engine = open_engine(Settings(warehouse=f"sqlite:///{_sqlite(tmp_path)}"), tmp_path)
    engine.setup(tmp_path, [])
    measured = "SELECT length(hex(zeroblob(4194304))) AS n"  # an 8 MB value, only measured
    try:
        with pytest.raises(QueryError) as caught:
            engine.run_agent(measured, timeout_s=30, max_rows=10, max_bytes=MB)
        assert caught.value.kind is QueryErrorKind.TOO_LARGE
        assert caught.value.message == (
            "the database stopped it at its memory or size limit (string or blob too big)"
        )
        # Ground truth is trusted: a large value it only measures keeps its result...
        truth = engine.run_truth(measured, timeout_s=30, max_rows=10, max_bytes=MB)
        assert truth.table.to_pylist() == [{"n": 8 * MB}]
        # ...and one it returns is still refused by the byte count, once fetched.
        with pytest.raises(QueryError) as returned:
            engine.run_truth(
                "SELECT hex(zeroblob(4194304)) AS v", timeout_s=30, max_rows=10, max_bytes=MB
            )
        assert returned.value.message.startswith("the result reached 8 MB")
        # The limit is undone after each agent query: the same connections serve truth.
        for _ in range(3):
            engine.run_agent("SELECT 1 AS x", timeout_s=30, max_rows=10, max_bytes=MB)
            again = engine.run_truth(measured, timeout_s=30, max_rows=10, max_bytes=MB)
            assert again.table.to_pylist() == [{"n": 8 * MB}]
    finally:
        engine.close()
