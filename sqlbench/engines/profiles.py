"""How each SQLAlchemy database is driven: read-only transactions, server-side timeouts,
streaming cursors, error kinds, temporary setup objects and the table list.

One profile per database family; ``profile_for`` picks it from the SQLAlchemy dialect name.
PostgreSQL, MariaDB/MySQL and SQLite are tested against real databases; every other dialect
gets the base ``Profile`` (guard only, timeout checked between fetched chunks, no setup), which
docs/engines.md marks untested.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import sqlite3
import threading
import time
from typing import Any

from sqlbench.engines.base import ColumnInfo, TableInfo
from sqlbench.engines.fetch import driver_message, timed_out, too_large
from sqlbench.engines.setup_sql import SetupStatement
from sqlbench.errors import EngineError, QueryError, QueryErrorKind

_DENIED = "not a read-only query: the database refused it: "


class Profile:
    """Defaults for a database reached through SQLAlchemy (no server-side walls known)."""

    label = "this database"
    dbapi_error: type[Exception] = Exception
    """The driver's DB-API ``Error`` class (set by the engine from SQLAlchemy's dialect)."""
    temporary_setup = False
    """Whether setup can be built as session-temporary views and tables."""
    unbuffered_cursor = False
    """Whether a cursor left mid-result would drain every remaining row on close, so its query
    must be stopped first (``stop_statement``) or its connection dropped."""
    search_path: tuple[str, ...] = ()
    """Schemas searched first for unqualified names on each connection (a dbt build's)."""

    def search_path_refusal(self) -> str | None:
        """Why this database cannot search schemas first, or None when it can."""
        return f"sqlbench cannot set the schema search path on {self.label} warehouses"

    def begin(
        self,
        dbapi: Any,
        *,
        timeout_s: float,
        max_rows: int,
        agent: bool,
        max_bytes: int | None = None,
    ) -> None:
        """Start the query's transaction (read-only where the database has one) and timeout."""

    def cursor(self, dbapi: Any) -> Any:
        """A cursor that streams rows from the server in chunks where the driver can."""
        return dbapi.cursor()

    def before_fetch(self, dbapi: Any, remaining_s: float) -> None:
        """Called before each chunk is fetched, with the time left before the timeout."""

    def stop_statement(self, dbapi: Any) -> str | None:
        """SQL that, run on another connection, stops the query running on ``dbapi`` (used
        before closing an unbuffered cursor left mid-result); None when there is none."""
        return None

    def end(self, dbapi: Any, *, agent: bool) -> None:
        """Roll back the query's transaction and undo per-query settings."""
        dbapi.rollback()

    def classify(
        self, err: Exception, *, timed_out_now: bool, timeout_s: float, agent: bool
    ) -> QueryError:
        """The QueryError for a driver error that is not a lost connection."""
        message = driver_message(str(err))
        if timed_out_now:
            return timed_out(timeout_s)
        if "syntax" in message.lower():
            return QueryError(QueryErrorKind.SYNTAX, message)
        return QueryError(QueryErrorKind.RUNTIME, message)

    def setup_refusal(self) -> str | None:
        """Why setup cannot run on this database, or None when it builds temporary objects."""
        if self.temporary_setup:
            return None
        return (
            f"setup is not supported on {self.label} warehouses yet: sqlbench builds setup "
            "only as session-temporary views, on PostgreSQL and SQLite; create the views in "
            "the warehouse and remove `setup` from sqlbench.yml"
        )

    def prepare_connection(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        """Make a new pooled connection ready: build the setup's temporary objects on it."""
        if statements:
            self.apply_setup(dbapi, statements)

    def apply_setup(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        """Build the setup's temporary objects on one connection."""
        raise EngineError(self.setup_refusal() or f"setup is not supported on {self.label}")

    def list_tables(self, dbapi: Any) -> list[TableInfo] | None:
        """Tables and views visible to queries, or None to use SQLAlchemy's inspector."""
        return None


class PostgresProfile(Profile):
    """PostgreSQL: ``SET TRANSACTION READ ONLY``, ``statement_timeout`` set to the time left
    before every fetch, a server-side (named) cursor, setup as TEMPORARY views; dates,
    timestamps and times Python cannot hold (``'infinity'``) loaded as values
    (``sqlbench.engines.pg_values``)."""

    label = "PostgreSQL"
    temporary_setup = True

    def search_path_refusal(self) -> str | None:
        return None

    def prepare_connection(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        from sqlbench.engines.pg_values import register_loaders

        register_loaders(dbapi)
        if self.search_path:
            self.apply_search_path(dbapi)
        super().prepare_connection(dbapi, statements)

    def apply_search_path(self, dbapi: Any) -> None:
        """Put ``search_path``'s schemas before the session's own (the role's setting, else
        ``"$user", public``), for the whole session: setup SQL and every query then resolve
        unqualified names in them first."""
        first = ", ".join('"' + s.replace('"', '""') + '"' for s in self.search_path)
        with dbapi.cursor() as cur:
            cur.execute(
                "SELECT set_config('search_path', "
                "concat_ws(', ', %s::text, nullif(current_setting('search_path'), '')), false)",
                (first,),
            )
        dbapi.commit()

    def begin(
        self,
        dbapi: Any,
        *,
        timeout_s: float,
        max_rows: int,
        agent: bool,
        max_bytes: int | None = None,
    ) -> None:
        with dbapi.cursor() as cur:
            cur.execute("SET TRANSACTION READ ONLY")
            cur.execute(f"SET LOCAL statement_timeout = {_ms(timeout_s)}")

    def cursor(self, dbapi: Any) -> Any:
        # A named cursor wraps the query in DECLARE, which takes one SELECT or VALUES only.
        return dbapi.cursor(name="sqlbench_query")

    def before_fetch(self, dbapi: Any, remaining_s: float) -> None:
        with dbapi.cursor() as cur:
            cur.execute(f"SET LOCAL statement_timeout = {_ms(remaining_s)}")

    def classify(
        self, err: Exception, *, timed_out_now: bool, timeout_s: float, agent: bool
    ) -> QueryError:
        state = getattr(err, "sqlstate", None) or ""
        message = driver_message(str(err))
        if state == "57014" and ("statement timeout" in message or timed_out_now):
            return timed_out(timeout_s)
        if state == "42601":
            return QueryError(QueryErrorKind.SYNTAX, message)
        if state in ("53200", "54000"):  # out_of_memory, program_limit_exceeded
            return too_large(None, out_of_memory=message)
        if state == "25006":
            return QueryError(QueryErrorKind.NOT_READ_ONLY, _DENIED + message)
        return QueryError(QueryErrorKind.RUNTIME, message)

    def apply_setup(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        with dbapi.cursor() as cur:
            # A least-privilege role defaults to read-only transactions; temporary objects
            # still need a writable one. The statements were checked to create nothing else.
            cur.execute("SET TRANSACTION READ WRITE")
            for statement in statements:
                try:
                    cur.execute(statement.sql)
                except self.dbapi_error as err:
                    dbapi.rollback()
                    raise EngineError(
                        f"{statement.where}: setup SQL failed: {driver_message(str(err))}"
                    ) from err
        dbapi.commit()

    def list_tables(self, dbapi: Any) -> list[TableInfo]:
        # With a dbt build's schemas searched first, other refs' builds (kept schemas, another
        # process's) are not this run's tables: left out of the list (docs/dbt.md).
        others = (
            "AND (c.table_schema !~ '_sqlb_[0-9a-f]{12}' OR c.table_schema = ANY(%s)) "
            if self.search_path
            else ""
        )
        with dbapi.cursor() as cur:
            cur.execute(
                "SELECT c.table_schema, c.table_name, c.column_name, c.data_type, "
                "c.table_schema ~ '^pg_temp_' FROM information_schema.columns c "
                "WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') "
                "AND (c.table_schema !~ '^pg_temp_' "
                "OR c.table_schema = pg_my_temp_schema()::regnamespace::text) "
                f"{others}ORDER BY 5 DESC, 1, 2, c.ordinal_position",
                (list(self.search_path),) if self.search_path else None,
            )
            rows = cur.fetchall()
        dbapi.rollback()
        return _group(rows)


class MySqlProfile(Profile):
    """MariaDB and MySQL: ``START TRANSACTION READ ONLY``, ``max_statement_time`` (MariaDB) or
    ``max_execution_time`` (MySQL), an unbuffered server-side cursor; no setup (no temporary
    views)."""

    label = "MySQL/MariaDB"
    unbuffered_cursor = True

    def __init__(self, *, mariadb: bool = False) -> None:
        self.mariadb = mariadb
        """MariaDB (``max_statement_time``) rather than MySQL (``max_execution_time``)."""

    def begin(
        self,
        dbapi: Any,
        *,
        timeout_s: float,
        max_rows: int,
        agent: bool,
        max_bytes: int | None = None,
    ) -> None:
        with dbapi.cursor() as cur:
            if self.mariadb:
                cur.execute(f"SET SESSION max_statement_time = {max(timeout_s, 0.001):.3f}")
            else:
                cur.execute(f"SET SESSION max_execution_time = {_ms(timeout_s)}")
            # Rows past max_rows + 1 are never sent (an over-long result is refused anyway).
            cur.execute(f"SET SESSION sql_select_limit = {max_rows + 1}")
            cur.execute("START TRANSACTION READ ONLY")

    def stop_statement(self, dbapi: Any) -> str | None:
        thread_id = getattr(dbapi, "thread_id", None)
        return f"KILL QUERY {int(thread_id())}" if callable(thread_id) else None

    def cursor(self, dbapi: Any) -> Any:
        module = type(dbapi).__module__.split(".", 1)[0]
        if module == "pymysql":
            import pymysql.cursors

            return dbapi.cursor(pymysql.cursors.SSCursor)
        if module == "MySQLdb":
            import MySQLdb.cursors

            return dbapi.cursor(MySQLdb.cursors.SSCursor)
        return dbapi.cursor()

    def classify(
        self, err: Exception, *, timed_out_now: bool, timeout_s: float, agent: bool
    ) -> QueryError:
        code = err.args[0] if err.args and isinstance(err.args[0], int) else None
        message = driver_message(
            str(err.args[1]) if code is not None and len(err.args) > 1 else str(err)
        )
        if code in (1969, 3024) or (timed_out_now and code == 1317):
            return timed_out(timeout_s)
        if code == 1064:
            return QueryError(QueryErrorKind.SYNTAX, message)
        if code in (1037, 1038, 1041):  # out of memory, out of sort memory, out of resources
            return too_large(None, out_of_memory=message)
        if code in (1792, 1227):
            return QueryError(QueryErrorKind.NOT_READ_ONLY, _DENIED + message)
        return QueryError(QueryErrorKind.RUNTIME, message)

    def setup_refusal(self) -> str | None:
        return _MYSQL_SETUP_REFUSED

    def list_tables(self, dbapi: Any) -> list[TableInfo]:
        with dbapi.cursor() as cur:
            cur.execute("SET SESSION sql_select_limit = DEFAULT")
            cur.execute(
                "SELECT table_schema, table_name, column_name, column_type, 0 "
                "FROM information_schema.columns WHERE table_schema = DATABASE() "
                "ORDER BY table_name, ordinal_position"
            )
            rows = cur.fetchall()
        dbapi.rollback()
        return [TableInfo(t.name, t.columns, None) for t in _group(rows)]


_MYSQL_SETUP_REFUSED = (
    "setup is not supported on MySQL/MariaDB warehouses: they have no temporary views, so "
    "building the data model would change the warehouse; create the views in the database "
    "(or use a DuckDB or PostgreSQL warehouse) and remove `setup` from sqlbench.yml"
)


class SqliteProfile(Profile):
    """SQLite: the file opened read-only (``mode=ro``), ``PRAGMA query_only``, an authorizer
    that allows only reads while any query runs, an interrupt at the timeout, setup as
    TEMP views; for agent SQL, no text or blob longer than ``max_bytes``
    (``SQLITE_LIMIT_LENGTH``: "string or blob too big")."""

    label = "SQLite"
    temporary_setup = True

    def begin(
        self,
        dbapi: Any,
        *,
        timeout_s: float,
        max_rows: int,
        agent: bool,
        max_bytes: int | None = None,
    ) -> None:
        # No text or blob in agent SQL past the result limit: SQLite builds them in this
        # process, whole, before a row can be counted. Not for ground truth: it is trusted, and
        # a value past the limit that is only measured (length(group_concat(...))) must keep
        # its result; a value it returns past the limit is refused by the byte count anyway.
        if agent and max_bytes is not None:
            dbapi.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(1, min(max_bytes, _SQLITE_LENGTH)))
        SQLITE_DEADLINES.arm(dbapi, time.monotonic() + timeout_s)
        # Ground truth too: it is a query, and nothing may attach or create files.
        dbapi.set_authorizer(_sqlite_authorizer)

    def end(self, dbapi: Any, *, agent: bool) -> None:
        SQLITE_DEADLINES.disarm(dbapi)
        dbapi.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _SQLITE_LENGTH)
        dbapi.set_authorizer(None)
        dbapi.rollback()

    def classify(
        self, err: Exception, *, timed_out_now: bool, timeout_s: float, agent: bool
    ) -> QueryError:
        message = driver_message(str(err))
        lowered = message.lower()
        if "interrupted" in lowered and timed_out_now:
            return timed_out(timeout_s)
        if (
            "syntax error" in lowered
            or "incomplete input" in lowered
            or lowered.startswith("unrecognized token")
        ):
            return QueryError(QueryErrorKind.SYNTAX, message)
        if "string or blob too big" in lowered or "out of memory" in lowered:
            return too_large(None, out_of_memory=message)
        if (
            "not authorized" in lowered
            or "readonly database" in lowered
            or ("one statement at a time" in lowered)
        ):
            return QueryError(QueryErrorKind.NOT_READ_ONLY, _DENIED + message)
        return QueryError(QueryErrorKind.RUNTIME, message)

    def prepare_connection(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        self.apply_setup(dbapi, statements)

    def apply_setup(self, dbapi: Any, statements: list[SetupStatement]) -> None:
        for statement in statements:
            try:
                dbapi.execute(statement.sql)
            except sqlite3.Error as err:
                raise EngineError(
                    f"{statement.where}: setup SQL failed: {driver_message(str(err))}"
                ) from err
        dbapi.commit()
        # From here on nothing on this connection may write, temporary objects included.
        dbapi.execute("PRAGMA query_only = 1")

    def list_tables(self, dbapi: Any) -> list[TableInfo]:
        tables: list[TableInfo] = []
        for master in ("sqlite_temp_master", "sqlite_master"):
            names = [
                row[0]
                for row in dbapi.execute(
                    f"SELECT name FROM {master} WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
                ).fetchall()
            ]
            for name in names:
                quoted = '"' + name.replace('"', '""') + '"'
                columns = [
                    ColumnInfo(row[1], row[2] or "")
                    for row in dbapi.execute(f"PRAGMA table_info({quoted})").fetchall()
                ]
                tables.append(TableInfo(name, columns, None))
        return tables


class SqliteDeadlines:
    """Interrupts SQLite queries at their deadlines, from one thread.

    A query's connection is armed with its deadline when the query begins and disarmed when it
    ends; at a deadline still armed this thread calls ``interrupt()`` on that connection, and
    the query fails with "interrupted" (classified as the timeout). Nothing runs inside SQLite
    while it works: a progress handler checking the clock is a Python call that takes the
    interpreter lock every few thousand SQLite instructions, so a long query beside the run's
    other threads waited for the lock at each check (BIRD's toxicology q247, 15 s alone, ran
    into its 30 s timeout in a run), and the checks held the lock from the other threads.
    Arming and disarming happen under one lock with the interrupt, so a connection is never
    interrupted after its query ended. A forked child starts with nothing armed and its own
    thread, made when it first arms.
    """

    def __init__(self) -> None:
        self._reset()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, tuple[int, Any]] = {}
        """Connection id -> (its arming's token, the connection)."""
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, dbapi: Any, deadline: float) -> None:
        """Interrupt ``dbapi`` at ``deadline`` (``time.monotonic()``) unless disarmed first."""
        with self._lock:
            token = next(self._tokens)
            self._armed[id(dbapi)] = (token, dbapi)
            heapq.heappush(self._heap, (deadline, token))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._watch, daemon=True, name="sqlbench-sqlite-deadlines"
                )
                self._thread.start()
            elif self._heap[0][1] == token:
                self._wake.notify()

    def disarm(self, dbapi: Any) -> None:
        """``dbapi``'s query ended: it is not interrupted."""
        with self._lock:
            self._armed.pop(id(dbapi), None)

    def _watch(self) -> None:
        with self._lock:
            while True:
                live = {token: conn for token, conn in self._armed.values()}
                while self._heap and self._heap[0][1] not in live:
                    heapq.heappop(self._heap)  # its query ended
                if not self._heap:
                    self._wake.wait()
                    continue
                deadline, token = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._heap)
                conn = live[token]
                del self._armed[id(conn)]
                # A connection closed without its query's end runs nothing to interrupt.
                with contextlib.suppress(sqlite3.Error):
                    conn.interrupt()


SQLITE_DEADLINES = SqliteDeadlines()
"""The one thread that interrupts every SQLite query of this process at its timeout."""

_SQLITE_LENGTH = 1_000_000_000
"""SQLite's default longest text or blob (SQLITE_MAX_LENGTH)."""

_SQLITE_READS = frozenset(
    {
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_FUNCTION,
        getattr(sqlite3, "SQLITE_RECURSIVE", 33),
    }
)
_SQLITE_DENIED_FUNCTIONS = frozenset(
    {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
)


def _sqlite_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
) -> int:
    if action not in _SQLITE_READS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def profile_for(backend: str) -> Profile:
    """The profile for a SQLAlchemy backend name (``postgresql``, ``mysql``, ``sqlite``, ...)."""
    if backend == "postgresql":
        return PostgresProfile()
    if backend in ("mysql", "mariadb"):
        return MySqlProfile()
    if backend == "sqlite":
        return SqliteProfile()
    profile = Profile()
    profile.label = backend
    return profile


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _group(rows: list[Any]) -> list[TableInfo]:
    tables: dict[tuple[str, str, bool], list[ColumnInfo]] = {}
    for schema, table, column, data_type, temporary in rows:
        tables.setdefault((schema, table, bool(temporary)), []).append(
            ColumnInfo(column, str(data_type))
        )
    return [
        TableInfo(name=table, columns=columns, schema=None if temporary else schema)
        for (schema, table, temporary), columns in tables.items()
    ]
