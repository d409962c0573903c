"""What a kept PostgreSQL build's table models read (docs/dbt.md, "Changed sources"): the
relations their compiled SQL names outside the build, resolved on the server; a node whose SQL
cannot be read makes the build one that is never reused. Runs on the real server named by
SQLBENCH_TEST_POSTGRES_URL, in schemas of its own dropped at the end."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from sqlbench.dbt.sources import Compiled, read_state, relations, table_reads, unchanged

PG_URL = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(PG_URL is None, reason="SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL)"),
]


@pytest.fixture
def conn() -> Iterator[tuple[sa.Connection, str, str]]:
    """A connection, a schema ``raw_<random>`` with tables ``orders`` and ``Items``, and a
    build schema ``b_<random>`` with a table ``m``."""
    assert PG_URL is not None
    token = uuid.uuid4().hex[:8]
    raw, built = f"raw_{token}", f"b_{token}"
    engine = sa.create_engine(PG_URL, poolclass=sa.pool.NullPool)
    with engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        for statement in (
            f'CREATE SCHEMA "{raw}"',
            f'CREATE SCHEMA "{built}"',
            f'CREATE TABLE "{raw}".orders (id int)',
            f'CREATE TABLE "{raw}"."Items" (id int)',
            f'CREATE TABLE "{built}".m (id int)',
        ):
            connection.execute(sa.text(statement))
        try:
            yield connection, raw, built
        finally:
            connection.execute(sa.text(f'DROP SCHEMA "{raw}", "{built}" CASCADE'))
    engine.dispose()


def _table(name: str, code: str | None, materialized: str = "table") -> Compiled:
    return Compiled(f"model {name!r}", materialized, "sql", code)


def test_the_relations_a_table_model_names_are_found_outside_the_build(
    conn: tuple[sa.Connection, str, str],
) -> None:
    connection, raw, built = conn
    sql = (
        f'with orders as (select id from "test"."{raw}".ORDERS) '
        f'select * from orders join "{raw}"."Items" using (id) join "{built}".m using (id) '
        f'join "{raw}".gone using (id) join pg_catalog.pg_class on false'
    )
    reads, unread = table_reads(
        connection,
        [_table("t", sql), _table("v", f'select * from "{raw}".other', "view")],
        [built],
        [f'"test"."{raw}"."Items"'],  # a declared source: recorded as such already
    )
    # The CTE, the build's own table, PostgreSQL's catalog, the source and the view are left
    # out; a qualified name not there now is recorded (missing).
    assert (reads, unread) == ([f'"{raw}"."gone"', f'"{raw}"."orders"'], {})
    state = read_state(connection, reads)
    assert state[f'"{raw}"."gone"'] == "missing"
    assert state[f'"{raw}"."orders"'].startswith("table ")


def test_an_unqualified_name_is_resolved_on_the_search_path(
    conn: tuple[sa.Connection, str, str],
) -> None:
    connection, raw, built = conn
    node = _table("t", 'select * from orders join "Items" using (id) join m using (id)')
    reads, unread = table_reads(connection, [node], [built], [], f'"{built}", "{raw}"')
    assert (reads, unread) == ([f'"{raw}"."Items"', f'"{raw}"."orders"'], {})
    # Not on the default search path: the model cannot be checked.
    _, unread = table_reads(connection, [node], [built], [])
    assert unread == {
        "(unread model 't')": "model 't' reads \"Items\", which sqlbench cannot find on the "
        "search path"
    }


def test_a_build_whose_sql_cannot_be_read_is_never_reused(
    conn: tuple[sa.Connection, str, str],
) -> None:
    connection, raw, built = conn
    nodes = [
        _table("ok", f'select * from "{raw}".orders'),
        _table("lost", None),
        _table("broken", "select from from where"),
        Compiled("model 'py'", "table", "python", "def model(dbt, session): ..."),
    ]
    reads, unread = table_reads(connection, nodes, [built], [])
    assert reads == [f'"{raw}"."orders"']
    assert sorted(unread) == [
        "(unread model 'broken')",
        "(unread model 'lost')",
        "(unread model 'py')",
    ]
    recorded = {**read_state(connection, reads), **unread}
    assert relations(recorded) == reads
    why = unchanged(recorded, read_state(connection, relations(recorded)))
    assert why is not None and why.startswith("the kept build cannot be checked: sqlbench ")
    assert "model 'broken'" in why and "does not parse" in why
