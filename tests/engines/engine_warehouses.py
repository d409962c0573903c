"""Real warehouses for the engine tests (fixtures in conftest.py): embedded DuckDB (in memory
and a file), a SQLite file, and the PostgreSQL and MariaDB servers named by
``SQLBENCH_TEST_*_URL`` (skipped with a reason when unset; ``.ci/run`` sets them and creates the
read-only role ``sqlbench_reader`` whose ``*_READER_URL`` agent SQL connects as).

Every server object a test makes carries a random prefix, so parallel runs do not collide, and
is dropped afterwards.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sqlbench.engines.base import Engine
from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.engines.open import open_engine
from sqlbench.project.files import Settings

PG_URL = "SQLBENCH_TEST_POSTGRES_URL"
PG_READER_URL = "SQLBENCH_TEST_POSTGRES_READER_URL"
MARIADB_URL = "SQLBENCH_TEST_MARIADB_URL"
MARIADB_READER_URL = "SQLBENCH_TEST_MARIADB_READER_URL"

SPARK_URL = "SQLBENCH_TEST_SPARK_URL"
SPARK_CONNECT_URL = "SQLBENCH_TEST_SPARK_CONNECT_URL"

KINDS = ["duckdb", "duckdb_file", "sqlite", "postgres", "mariadb", "spark", "spark_connect"]
"""Every warehouse kind the engine tests run on."""

ROWS = [
    (1, "ann", "10.50", "2024-01-05"),
    (2, "bob", "7.25", "2024-02-10"),
    (3, "ann", "3.00", "2024-02-20"),
    (4, "cy", "99.99", "2024-03-01"),
]
"""The canary/orders table: id, customer, amount (DECIMAL(10,2)), ordered_at (DATE)."""


def env_url(name: str) -> str:
    """The URL in ``name``, or skip the test saying how to run it."""
    url = os.environ.get(name)
    if not url:
        pytest.skip(f"{name} is not set (run .ci/run, or set it to a test server URL)")
    return url


def _values_sql(table_rows: list[tuple[int, str, str, str]]) -> str:
    return ", ".join(f"({i}, '{c}', {a}, DATE '{d}')" for i, c, a, d in table_rows)


@dataclass
class Warehouse:
    """One real warehouse holding an ``orders`` table (the canary), with its engine open."""

    kind: str
    engine: Engine
    table: str
    """The table's name as queries write it."""
    fingerprint: Callable[[], Any]
    """The warehouse's state, compared before and after hostile SQL."""
    dialect: str
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    mutate: Callable[[], None] | None = None
    """A real change made outside the engine (as the admin), to show ``fingerprint`` sees it."""
    timeout_s: float = 10.0
    """A timeout no ordinary test query comes near (Spark's first queries compile code in a JVM
    that may share two busy cores)."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder_state(folder: Path) -> dict[str, str]:
    return {p.name: _sha256(p) for p in sorted(folder.iterdir()) if p.is_file()}


def _duckdb_memory(tmp: Path) -> Warehouse:
    setup = tmp / "setup.sql"
    setup.write_text(
        "CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2), "
        f"ordered_at DATE);\nINSERT INTO orders VALUES {_values_sql(ROWS)};\n"
    )
    engine = DuckDBEngine()
    engine.setup(tmp, [setup])

    def fingerprint() -> Any:
        tables = engine.run_truth(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL",
            timeout_s=10,
            max_rows=100,
        )
        rows = engine.run_truth("SELECT * FROM orders ORDER BY id", timeout_s=10, max_rows=100)
        settings = engine.run_truth(
            "SELECT current_setting('enable_external_access'), "
            "current_setting('lock_configuration')",
            timeout_s=10,
            max_rows=1,
        )
        return tables.table.to_pylist(), rows.table.to_pylist(), settings.table.to_pylist()

    return Warehouse("duckdb", engine, "orders", fingerprint, "duckdb")


def _duckdb_file(tmp: Path) -> Warehouse:
    path = tmp / "warehouse" / "shop.duckdb"
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2), "
        f"ordered_at DATE); INSERT INTO orders VALUES {_values_sql(ROWS)}"
    )
    con.close()
    engine = open_engine(Settings(warehouse="warehouse/shop.duckdb"), tmp)
    engine.setup(tmp, [])
    return Warehouse("duckdb_file", engine, "orders", lambda: _folder_state(path.parent), "duckdb")


def sqlite_file_engine(tmp: Path, *statements: str) -> Engine:
    """The engine of a SQLite file in ``tmp`` made by ``statements`` (``sqlite:///`` URL)."""
    path = tmp / "w.sqlite"
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return open_engine(Settings(warehouse=f"sqlite:///{path}"), tmp)


def _sqlite_file(tmp: Path) -> Warehouse:
    path = tmp / "warehouse" / "shop.sqlite"
    path.parent.mkdir()
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE orders (id INTEGER, customer TEXT, amount NUMERIC(10,2), ordered_at DATE)"
    )
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?)", [(i, c, float(a), d) for i, c, a, d in ROWS]
    )
    con.commit()
    con.close()
    engine = open_engine(Settings(warehouse=f"sqlite:///{path}"), tmp)
    engine.setup(tmp, [])

    def mutate() -> None:
        with sqlite3.connect(path) as writer:
            writer.execute("UPDATE orders SET customer = 'changed' WHERE id = 1")

    return Warehouse(
        "sqlite", engine, "orders", lambda: _folder_state(path.parent), "sqlite", mutate=mutate
    )


def _postgres(tmp: Path) -> Warehouse:
    import psycopg

    admin_url = env_url(PG_URL).replace("postgresql+psycopg://", "postgresql://")
    reader_url = env_url(PG_READER_URL)
    table = f"sb_{uuid.uuid4().hex[:10]}_orders"
    admin = psycopg.connect(admin_url, autocommit=True)
    admin.execute(
        f"CREATE TABLE {table} (id INTEGER, customer TEXT, amount NUMERIC(10,2), ordered_at DATE)"
    )
    admin.execute(f"INSERT INTO {table} VALUES {_values_sql(ROWS)}")
    admin.execute(f"CREATE SEQUENCE {table}_seq")
    admin.execute(f"GRANT SELECT ON {table} TO sqlbench_reader")
    prefix = table.rsplit("_", 1)[0]

    def fingerprint() -> Any:
        content = admin.execute(
            f"SELECT md5(string_agg(t::text, ',' ORDER BY t.id)) FROM {table} t"
        ).fetchone()
        relations = admin.execute(
            "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE %s",
            (prefix + "%",),
        ).fetchone()
        sequence = admin.execute(f"SELECT last_value, is_called FROM {table}_seq").fetchone()
        return content, relations, sequence

    engine = open_engine(Settings(warehouse=reader_url), tmp)
    engine.setup(tmp, [])

    def drop() -> None:
        admin.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
        admin.execute(f"DROP SEQUENCE IF EXISTS {table}_seq")
        admin.close()

    def mutate() -> None:
        admin.execute(f"UPDATE {table} SET customer = 'changed' WHERE id = 1")

    return Warehouse("postgres", engine, table, fingerprint, "postgres", [drop], mutate)


def _mariadb(tmp: Path) -> Warehouse:
    import pymysql
    from sqlalchemy.engine import make_url

    admin_url = make_url(env_url(MARIADB_URL))
    reader_url = env_url(MARIADB_READER_URL)
    table = f"sb_{uuid.uuid4().hex[:10]}_orders"
    admin = pymysql.connect(
        host=admin_url.host,
        port=admin_url.port or 3306,
        user=admin_url.username,
        password=admin_url.password or "",
        database=admin_url.database,
        autocommit=True,
    )
    with admin.cursor() as cur:
        cur.execute(
            f"CREATE TABLE {table} (id INTEGER, customer TEXT, amount DECIMAL(10,2), "
            "ordered_at DATE)"
        )
        cur.execute(
            f"INSERT INTO {table} VALUES "
            + ", ".join(f"({i}, '{c}', {a}, '{d}')" for i, c, a, d in ROWS)
        )
    prefix = table.rsplit("_", 1)[0]

    def fingerprint() -> Any:
        with admin.cursor() as cur:
            cur.execute(f"CHECKSUM TABLE {table}")
            checksum = cur.fetchall()
            cur.execute(
                "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM "
                "information_schema.tables WHERE table_name LIKE %s",
                (prefix + "%",),
            )
            return checksum, cur.fetchall()

    engine = open_engine(Settings(warehouse=reader_url), tmp)
    engine.setup(tmp, [])

    def drop() -> None:
        with admin.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {table}")
        admin.close()

    def mutate() -> None:
        with admin.cursor() as cur:
            cur.execute(f"UPDATE {table} SET customer = 'changed' WHERE id = 1")

    return Warehouse("mariadb", engine, table, fingerprint, "mysql", [drop], mutate)


def _spark_url(name: str) -> str:
    url = env_url(name)
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install -e '.[spark]')")
    return url


def _spark(tmp: Path, *, connect: bool = False) -> Warehouse:
    """Spark with ``orders`` as a session-temporary view built by setup SQL written in DuckDB's
    dialect (transpiled, as a project's would be)."""
    url = _spark_url(SPARK_CONNECT_URL if connect else SPARK_URL)
    setup = tmp / "setup.sql"
    setup.write_text(
        "CREATE TABLE orders AS SELECT CAST(id AS INTEGER) AS id, customer, "
        "CAST(amount AS DECIMAL(10,2)) AS amount, CAST(ordered_at AS DATE) AS ordered_at "
        "FROM (VALUES "
        + ", ".join(f"({i}, '{c}', '{a}', '{d}')" for i, c, a, d in ROWS)
        + ") AS v(id, customer, amount, ordered_at);\n"
    )
    engine = open_engine(Settings(warehouse=url, dialect="duckdb"), tmp)
    engine.setup(tmp, [setup])
    session = engine._session  # type: ignore[attr-defined]
    # The JVM compiles code on its first queries; warm it so timing tests measure Spark's
    # cancellation, not its start-up.
    engine.run_truth(
        "SELECT customer, SUM(amount) FROM orders GROUP BY customer", timeout_s=300, max_rows=100
    )

    def fingerprint() -> Any:
        views = sorted(t.name for t in session.catalog.listTables())
        rows = engine.run_truth("SELECT * FROM orders ORDER BY id", timeout_s=60, max_rows=100)
        return views, rows.table.to_pylist(), session.conf.get("spark.sql.runSQLOnFiles")

    kind = "spark_connect" if connect else "spark"
    return Warehouse(kind, engine, "orders", fingerprint, "spark", timeout_s=120.0)


FACTORIES: dict[str, Callable[[Path], Warehouse]] = {
    "duckdb": _duckdb_memory,
    "duckdb_file": _duckdb_file,
    "sqlite": _sqlite_file,
    "postgres": _postgres,
    "mariadb": _mariadb,
    "spark": _spark,
    "spark_connect": lambda tmp: _spark(tmp, connect=True),
}


@dataclass(frozen=True)
class CanaryFiles:
    """A secret file the database servers could read, and a folder they could write to."""

    folder: Path
    secret: Path
    secret_text: str
    out: Path

    def listing(self) -> list[str]:
        """Every path under the folder (nothing may be added)."""
        return sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*"))
