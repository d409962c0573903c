"""Embedded DuckDB: setup at the project root, then locked; a DuckDB file attached read-only and
never written; many threads at once."""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sqlbench.engines.duckdb import BaseTable, DuckDBEngine
from sqlbench.engines.open import open_engine
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.files import Settings


def _project(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "customers.csv").write_text("id,name\n1,ann\n2,bob\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "01_tables.sql").write_text(
        "CREATE TABLE customers AS SELECT * FROM read_csv('data/customers.csv');\n"
    )
    (tmp_path / "models" / "02_views.sql").write_text(
        "CREATE VIEW customer_names AS SELECT upper(c.name) AS shout FROM customers c;\n"
        "CREATE VIEW live_csv AS SELECT * FROM read_csv('data/customers.csv');\n"
    )
    return tmp_path


def test_setup_reads_files_relative_to_the_project_then_the_lock_holds(tmp_path: Path) -> None:
    root = _project(tmp_path)
    engine = DuckDBEngine()
    engine.setup(root, sorted((root / "models").glob("*.sql")))
    names = engine.run_agent(
        "SELECT shout FROM customer_names ORDER BY 1", timeout_s=10, max_rows=10
    )
    assert names.table.column(0).to_pylist() == ["ANN", "BOB"]
    # A view that reads a file at query time is blocked once setup is over, with a hint.
    with pytest.raises(QueryError) as caught:
        engine.run_truth("SELECT * FROM live_csv", timeout_s=10, max_rows=10)
    assert caught.value.kind is QueryErrorKind.RUNTIME
    assert "create a table from the file in setup instead" in caught.value.message
    with pytest.raises(QueryError) as again:
        engine.run_truth("SELECT * FROM read_csv('data/customers.csv')", timeout_s=10, max_rows=10)
    assert "disabled by configuration" in again.value.message
    settings = engine.run_truth(
        "SELECT current_setting('enable_external_access'), current_setting('lock_configuration')",
        timeout_s=10,
        max_rows=1,
    )
    assert settings.table.to_pylist()[0] == {
        "current_setting('enable_external_access')": False,
        "current_setting('lock_configuration')": True,
    }
    engine.close()


def test_failing_setup_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE VIEW v AS SELECT * FROM missing_table;")
    engine = DuckDBEngine()
    with pytest.raises(EngineError, match=r"^bad\.sql: setup SQL failed: Catalog Error"):
        engine.setup(tmp_path, [bad])
    engine.close()


def test_setup_runs_once(tmp_path: Path) -> None:
    engine = DuckDBEngine()
    engine.setup(tmp_path, [])
    with pytest.raises(EngineError, match="setup already ran"):
        engine.setup(tmp_path, [])
    engine.close()


def _shop(path: Path) -> str:
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE SCHEMA sales; CREATE TABLE orders (id INTEGER, amount DECIMAL(10,2));"
        "INSERT INTO orders VALUES (1, 2.50), (2, 4.00);"
        "CREATE TABLE sales.items (order_id INTEGER, sku VARCHAR);"
        "INSERT INTO sales.items VALUES (1, 'a'), (2, 'b');"
        "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 3;"
    )
    con.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_duckdb_file_is_attached_read_only_and_never_written(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    digest = _shop(path)
    setup = tmp_path / "model.sql"
    setup.write_text(
        "CREATE VIEW order_skus AS SELECT o.id, i.sku, o.amount FROM orders o "
        "JOIN sales.items i ON i.order_id = o.id;\n"
        "CREATE OR REPLACE VIEW big_orders AS SELECT * FROM orders WHERE amount > 1;\n"
    )
    engine = open_engine(Settings(warehouse="shop.duckdb"), tmp_path)
    engine.setup(tmp_path, [setup])
    rows = engine.run_agent("SELECT * FROM order_skus ORDER BY id", timeout_s=10, max_rows=10)
    assert rows.table.to_pylist()[1]["sku"] == "b"
    # The file's own names work too, qualified as in the file; setup's view replaced its view.
    assert engine.run_agent(
        "SELECT count(*) FROM shop.main.big_orders", timeout_s=10, max_rows=1
    ).table.column(0).to_pylist() == [1]
    assert engine.run_agent(
        "SELECT count(*) FROM big_orders", timeout_s=10, max_rows=1
    ).table.column(0).to_pylist() == [2]
    for sql in (
        "INSERT INTO shop.main.orders VALUES (3, 1)",
        "DROP TABLE shop.main.orders",
        "CREATE TABLE shop.main.x AS SELECT 1",
    ):
        with pytest.raises(QueryError):
            engine.run_truth(sql, timeout_s=10, max_rows=10)
    names = {(t.schema, t.name) for t in engine.tables()}
    assert names == {
        ("main", "orders"),
        ("main", "big_orders"),
        ("sales", "items"),
        ("main", "order_skus"),
    }
    engine.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.sql", "shop.duckdb"]


def test_a_missing_duckdb_file_is_an_engine_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="does not exist"):
        open_engine(Settings(warehouse="nope.duckdb"), tmp_path)


def test_many_threads_at_once_each_get_their_own_result(tmp_path: Path) -> None:
    engine = DuckDBEngine()
    engine.setup(tmp_path, [])

    def run(n: int) -> list[int]:
        result = engine.run_agent(
            f"SELECT i FROM range({n}) t(i) ORDER BY i", timeout_s=30, max_rows=10_000
        )
        return result.table.column(0).to_pylist()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, range(1, 200)))
    assert all(rows == list(range(n)) for n, rows in zip(range(1, 200), results, strict=True))
    engine.close()


def test_a_timeout_stops_only_its_own_query(tmp_path: Path) -> None:
    engine = DuckDBEngine()
    engine.setup(tmp_path, [])
    outcome: dict[str, object] = {}

    def slow() -> None:
        try:
            engine.run_agent(
                "SELECT count(*) FROM range(1000000000) a, range(1000000000) b",
                timeout_s=1,
                max_rows=1,
            )
        except QueryError as err:
            outcome["slow"] = err.kind

    thread = threading.Thread(target=slow)
    thread.start()
    fast = []
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        fast.append(engine.run_agent("SELECT 42", timeout_s=5, max_rows=1).table[0][0].as_py())
    thread.join()
    assert outcome["slow"] is QueryErrorKind.TIMEOUT
    assert fast and set(fast) == {42}
    engine.close()


def test_agent_sql_runs_in_a_read_only_transaction(tmp_path: Path) -> None:
    """Behind the guard: DuckDB itself refuses a write (the guard is bypassed by run_truth,
    which shares the transaction)."""
    setup = tmp_path / "t.sql"
    setup.write_text("CREATE TABLE t AS SELECT 1 AS a;")
    engine = DuckDBEngine()
    engine.setup(tmp_path, [setup])
    with pytest.raises(QueryError) as caught:
        engine.run_truth("INSERT INTO t VALUES (2)", timeout_s=5, max_rows=1)
    assert "ground truth must be exactly one query" in caught.value.message
    with pytest.raises(QueryError) as second:
        engine.run_truth("SELECT 1; COMMIT; DELETE FROM t", timeout_s=5, max_rows=1)
    assert second.value.kind is QueryErrorKind.RUNTIME
    assert (
        engine.run_agent("SELECT count(*) FROM t", timeout_s=5, max_rows=1).table[0][0].as_py() == 1
    )
    engine.close()


def test_agent_syntax_errors_carry_duckdbs_own_message_and_are_not_run() -> None:
    engine = DuckDBEngine()
    with pytest.raises(QueryError) as caught:
        engine.run_agent("SELEC name FROM customers", timeout_s=10, max_rows=10)
    assert caught.value.kind is QueryErrorKind.SYNTAX
    assert caught.value.message == 'Parser Error: syntax error at or near "SELEC"'
    # DuckDB parses it but sqlglot cannot: not checkable, so still refused, and said why.
    with pytest.raises(QueryError) as caught:
        engine.run_agent("SELECT lambda x: x + 1", timeout_s=10, max_rows=10)
    assert caught.value.kind is QueryErrorKind.NOT_READ_ONLY
    assert "DuckDB itself parses it: sqlglot lacks this syntax" in caught.value.message


@pytest.mark.parametrize(
    "bomb",
    [
        # Each builds ~500 MB inside DuckDB and returns one small value, so only the memory
        # limit (not the fetch's byte count) can stop it.
        "SELECT len(list(range)) AS n FROM range(60000000)",
        "SELECT length(string_agg(repeat('x', 100), ',')) AS n FROM range(5000000)",
    ],
)
def test_a_memory_bomb_on_a_data_variant_is_too_large(bomb: str) -> None:
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    table = BaseTable("main", "t", (("id", "BIGINT", True),), (), rows)
    engine = DuckDBEngine.from_tables([table], [], memory_limit_mb=64)
    try:
        assert engine.run_agent("SELECT sum(id) AS s FROM t", timeout_s=30, max_rows=10).table[
            "s"
        ].to_pylist() == [6]
        with pytest.raises(QueryError) as raised:
            engine.run_agent(bomb, timeout_s=60, max_rows=10, max_bytes=2**20)
        assert raised.value.kind is QueryErrorKind.TOO_LARGE
        assert "Out of Memory" in str(raised.value)
    finally:
        engine.close()


def test_a_data_variant_runs_under_a_memory_limit() -> None:
    engine = DuckDBEngine.from_tables([], [])
    try:
        limit = (
            engine.run_truth(
                "SELECT current_setting('memory_limit') AS m", timeout_s=30, max_rows=1
            )
            .table["m"][0]
            .as_py()
        )
        assert limit.endswith("MiB") and float(limit.split()[0]) <= 256, limit
    finally:
        engine.close()
