"""Any database SQLAlchemy reaches: PostgreSQL, MySQL/MariaDB, SQLite, and cloud warehouses
through their dialects.

Connections come from a SQLAlchemy pool (thread-safe; sized to the run's concurrency, checked
with a ping before use). Each query checks one out, runs in a read-only transaction with a
server-side timeout where the database has them (see ``sqlbench.engines.profiles``), streams
rows in chunks up to ``max_rows``, and rolls back. A connection lost mid-query is dropped and the
query retried once on a fresh one; a second loss is a CONNECTION error. Setup builds
session-temporary objects only, replayed on every new pooled connection.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy
from sqlalchemy import event, exc
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import QueuePool

from sqlbench.dbt.refs import has_refs, resolve_refs
from sqlbench.engines.agent_process import QueryProcess, QueryProcessSpec, ServerSpec
from sqlbench.engines.agent_sql import AgentSqlEngine, QueryLimits
from sqlbench.engines.base import ColumnInfo, ResultSet, TableInfo
from sqlbench.engines.fetch import (
    driver_message,
    fetch_rows,
    normalize_table,
    rows_to_table,
)
from sqlbench.engines.guard import unchecked_syntax
from sqlbench.engines.limits import server_query_process_mb
from sqlbench.engines.profiles import MySqlProfile, Profile, profile_for
from sqlbench.engines.registry import WarehouseTarget
from sqlbench.engines.setup_sql import SetupStatement, temporary_setup
from sqlbench.engines.work import Work, explain_statement, explained_work
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.dialect import (
    is_known_scheme,
    unknown_scheme_message,
    url_scheme,
    warehouse_dialect,
    warehouse_url_problem,
)
from sqlbench.project.envvars import redact

_DEFAULT_DRIVERS = {"postgresql": "psycopg", "mysql": "pymysql", "mariadb": "pymysql"}
"""Drivers sqlbench installs with its extras, used when a URL names none."""

_PROCESS_LABELS = {"postgresql": "PostgreSQL", "mysql": "MariaDB", "mariadb": "MariaDB"}
"""Backends whose agent SQL runs in a query process (tested against real servers), and how
its messages name it (MySQL when the server is not MariaDB)."""

_INSTALL_HINTS = {
    "postgresql": "pip install 'psycopg[binary]>=3.1'",
    "mysql": "pip install 'pymysql>=1.1'",
    "mariadb": "pip install 'pymysql>=1.1'",
    "snowflake": "pip install snowflake-sqlalchemy",
    "bigquery": "pip install sqlalchemy-bigquery",
    "trino": "pip install 'trino[sqlalchemy]'",
    "databricks": "pip install databricks-sqlalchemy",
}


class _ConnectionLost(Exception):
    """A query's connection broke (or could not be made); retried once."""


def open_warehouse(target: WarehouseTarget) -> SqlAlchemyEngine:
    """A database SQLAlchemy reaches (``engines/registry.py``: a URL of any scheme no other
    engine opens, and a SQLite file), in the dialect its scheme names or ``dialect:``.

    Raises:
        EngineError: a scheme SQLAlchemy does not accept, or one whose dialect is unknown.
    """
    url, display, settings = target.url, target.display, target.settings
    assert url is not None and display is not None  # a URL, as written
    url_problem = warehouse_url_problem(url, {})
    if url_problem is not None:
        raise EngineError(f"warehouse in sqlbench.yml: {url_problem}")
    dialect = warehouse_dialect(url) or settings.dialect
    if dialect is None:
        raise EngineError(
            f"sqlbench does not know the SQL dialect of {url_scheme(url)}:// warehouses; "
            "set `dialect` in sqlbench.yml to its sqlglot name"
        )
    return SqlAlchemyEngine(
        url,
        display=display,
        dialect=dialect,
        project_root=target.project_root,
        pool_size=settings.run.concurrency,
        query_process_mb=server_query_process_mb(settings.run),
        search_path=target.search_path,
        explain_analyze_s=settings.run.query_timeout_s if settings.run.explain_analyze else None,
    )


_EXPLAIN_TIMEOUT_S = 5.0
"""How long asking the planner for a query's work may take."""


class SqlAlchemyEngine(AgentSqlEngine):
    """A pooled SQLAlchemy engine over a warehouse URL.

    Args:
        url: The resolved URL (``${ENV}`` already substituted; kept only inside the pool).
        display: The URL as written in sqlbench.yml, for messages (secrets stay ``${...}``).
        dialect: The sqlglot dialect of the warehouse.
        project_root: Where relative SQLite paths resolve.
        pool_size: Connections kept open (the run's concurrency).
        search_path: Schemas searched first for unqualified names on every connection (a dbt
            build's schemas on PostgreSQL, docs/dbt.md); empty: the database's own.
        explain_analyze_s: On PostgreSQL, report each query's work from ``EXPLAIN (ANALYZE,
            BUFFERS)`` (which runs it again) under this timeout; None: from its plan.
    """

    def __init__(
        self,
        url: str,
        *,
        display: str,
        dialect: str,
        project_root: Path,
        pool_size: int = 8,
        query_process_mb: int | None = None,
        search_path: tuple[str, ...] = (),
        explain_analyze_s: float | None = None,
    ) -> None:
        self.display = display
        self._explain_analyze_s = explain_analyze_s if dialect == "postgres" else None
        self.dialect = dialect
        self.sqlite_path: Path | None = None
        """The SQLite file, when the warehouse is one (opened read-only)."""
        self._setup: list[SetupStatement] = []
        self._idle: list[Any] = []
        """SQLite: pooled connections checked out and kept for the next query (see
        ``_checkout``), at most ``pool_size``."""
        self._idle_pid = os.getpid()
        self._idle_max = pool_size
        self._inherited: list[Any] = []
        """Idle connections a forked process inherited: kept, never used or closed."""
        parsed = self._parse_url(url)
        backend = parsed.get_backend_name()
        self._profile: Profile = profile_for(backend)
        if search_path:
            refusal = self._profile.search_path_refusal()
            if refusal is not None:
                raise EngineError(refusal)
            self._profile.search_path = search_path
        self._sa = self._create(parsed, backend, project_root, pool_size)
        self._profile.dbapi_error = self._sa.dialect.loaded_dbapi.Error
        event.listen(self._sa, "connect", self._on_connect)
        try:
            with self._sa.connect():
                pass
        except exc.SQLAlchemyError as err:
            self._sa.dispose()
            raise EngineError(
                f"cannot connect to the warehouse {display}: {self._message(err)}"
            ) from err
        if isinstance(self._profile, MySqlProfile):
            self._profile.mariadb = bool(getattr(self._sa.dialect, "is_mariadb", False))
        self._query_process: QueryProcess | None = None
        label = _PROCESS_LABELS.get(backend)
        if query_process_mb is not None and label is not None and sys.platform == "linux":
            # Agent SQL runs in a memory-watched child with its own connections (see
            # sqlbench.engines.agent_process): the driver holds a whole row, however large,
            # before sqlbench can count it.
            if isinstance(self._profile, MySqlProfile) and not self._profile.mariadb:
                label = "MySQL"
            server = ServerSpec(
                url, dialect=dialect, pool_size=pool_size, label=label, search_path=search_path
            )
            self._query_process = QueryProcess(
                QueryProcessSpec(
                    database=None,
                    display=display,
                    memory_limit_mb=None,
                    address_space_mb=query_process_mb,
                    project_root=project_root,
                    server=server,
                )
            )

    def _parse_url(self, url: str) -> URL:
        try:
            parsed = make_url(url)
        except (exc.ArgumentError, ValueError) as err:  # ValueError: a port that is no number
            raise EngineError(f"the warehouse {self.display} is not a valid database URL") from err
        if "+" not in parsed.drivername and parsed.drivername in _DEFAULT_DRIVERS:
            parsed = parsed.set(
                drivername=f"{parsed.drivername}+{_DEFAULT_DRIVERS[parsed.drivername]}"
            )
        return parsed

    def _create(self, parsed: URL, backend: str, root: Path, pool_size: int) -> sqlalchemy.Engine:
        kwargs: dict[str, Any] = {"pool_pre_ping": True}
        if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
            # Each pooled connection would be its own empty database (and SQLAlchemy's
            # per-thread pool for it cannot be closed from the run's thread).
            raise EngineError(
                f"the warehouse {self.display} is an in-memory SQLite database, which holds no "
                "tables: name a SQLite file (sqlite:///path/to/file.db), or leave `warehouse` "
                "unset for a fresh in-memory DuckDB"
            )
        if backend == "sqlite":
            path = Path(str(parsed.database))
            path = path if path.is_absolute() else root / path
            if not path.is_file():
                raise EngineError(f"the warehouse SQLite file {path} does not exist")
            self.sqlite_path = path.resolve()
            uri = f"file:{quote(str(path.resolve()))}?mode=ro"

            def creator() -> sqlite3.Connection:
                return sqlite3.connect(uri, uri=True, check_same_thread=False)

            parsed = make_url("sqlite://")
            # A local file cannot drop the connection: no ping query before each use.
            kwargs.update(
                creator=creator,
                poolclass=QueuePool,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=False,
            )
        else:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size)
        try:
            return sqlalchemy.create_engine(parsed, **kwargs)
        except (exc.NoSuchModuleError, ModuleNotFoundError) as err:
            if isinstance(err, exc.NoSuchModuleError) and not is_known_scheme(backend):
                raise EngineError(
                    f"warehouse {self.display}: {unknown_scheme_message(backend)}"
                ) from err
            hint = _INSTALL_HINTS.get(backend)
            how = f"; install it with {hint}" if hint else ""
            raise EngineError(
                f"the driver for the warehouse {self.display} is not installed ({err}){how}"
            ) from err

    def _on_connect(self, dbapi: Any, _record: Any) -> None:
        self._profile.prepare_connection(dbapi, self._setup)

    def setup(self, project_root: Path, sql_files: list[Path]) -> None:
        """Build the setup's objects as session-temporary ones on every pooled connection.

        Raises:
            EngineError: the database has no temporary views (MySQL/MariaDB), a statement is
                not a CREATE VIEW/TABLE of an unqualified name, or it fails.
        """
        refusal = self._profile.setup_refusal()
        if sql_files and refusal is not None:
            raise EngineError(refusal)
        self._setup = temporary_setup(sql_files, project_root, self.dialect)
        if self._query_process is not None and sql_files:
            # The query process builds the same temporary objects on its own connections.
            spec = self._query_process.spec
            self._query_process.close()
            self._query_process = QueryProcess(
                replace(spec, project_root=project_root, setup_files=tuple(sql_files))
            )
        # Connections made before setup lack its objects: start the pool afresh.
        self._return_idle()
        self._sa.dispose()
        # A failing setup statement raises EngineError (file and statement) from the listener.
        try:
            with self._sa.connect():
                pass
        except exc.SQLAlchemyError as err:
            raise EngineError(
                f"setup failed on the warehouse {self.display}: {self._message(err)}"
            ) from err

    @property
    def has_setup(self) -> bool:
        """Whether setup built temporary objects on each connection."""
        return bool(self._setup)

    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run ground truth (trusted) read-only; see ``Engine.run_truth``."""
        sql = resolve_refs(sql, self.relations) if has_refs(sql) else sql
        process = self._query_process
        if process is not None:
            # Under the query process's memory bound, as agent SQL (docs/security.md): the
            # driver holds a whole row of a ref's ground truth too before it can be counted.
            return process.run_truth(
                sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes
            )
        limits = QueryLimits(timeout_s, max_rows, max_bytes)
        return self._run(sql, limits, agent=False)

    def _agent_query_process(self) -> QueryProcess | None:
        """With a query process (PostgreSQL, MySQL/MariaDB on Linux), all of agent SQL runs
        there."""
        return self._query_process

    def _syntax_error(self, sql: str, guard_error: QueryError, limits: QueryLimits) -> QueryError:
        if self.sqlite_path is None:
            return guard_error
        return self._sqlite_syntax_error(sql, guard_error, limits)

    def _run_checked(self, sql: str, limits: QueryLimits) -> ResultSet:
        return self._run(sql, limits, agent=True)

    def work_of(self, sql: str, result: ResultSet) -> Work | None:
        """The planner's account of ``sql`` (PostgreSQL's plan cost, or with
        ``explain_analyze`` the shared buffers ``EXPLAIN (ANALYZE, BUFFERS)`` reports as it
        runs the query again; SQLite's full table scans; ``engines.work``), asked behind the
        same read-only session as agent SQL (with ``explain_analyze``, under the agent's query
        timeout); None on other databases, or when the planner refuses it."""
        del result  # a DB-API driver reports nothing of a query's work as it runs
        analyze = self._explain_analyze_s is not None
        statement = explain_statement(self.dialect, sql, analyze=analyze)
        if statement is None:
            return None
        timeout_s = self._explain_analyze_s if self._explain_analyze_s else _EXPLAIN_TIMEOUT_S
        try:
            raw = self._checkout()
        except _ConnectionLost:
            return None
        cursor: Any = None
        try:
            self._profile.begin(
                raw.dbapi_connection, timeout_s=timeout_s, max_rows=1000, agent=True
            )
            cursor = raw.dbapi_connection.cursor()
            cursor.execute(statement)
            return explained_work(self.dialect, cursor.fetchall(), analyze=analyze)
        except Exception:  # the work is extra information: never the answer's failure
            return None
        finally:
            self._release(raw, cursor, drop=False, agent=True)

    def _sqlite_syntax_error(
        self, sql: str, guard_error: QueryError, limits: QueryLimits
    ) -> QueryError:
        """Agent SQL sqlglot cannot parse, on a SQLite file: SQLite compiles it behind
        ``EXPLAIN``, which runs nothing (under the read-only authorizer, as a query), and its
        own message says what is wrong. Where SQLite compiles it, sqlglot lacks the syntax: it
        is refused as unchecked, as on DuckDB. Without a connection, the guard's message. (SQL
        that starts with EXPLAIN never gets here: the guard refuses it as not a query.)"""
        try:
            raw = self._checkout()
        except _ConnectionLost:
            return guard_error
        cursor: Any = None
        budget = limits.timeout_s - limits.spent_s
        deadline = time.monotonic() + budget
        try:
            self._profile.begin(
                raw.dbapi_connection,
                timeout_s=budget,
                max_rows=limits.max_rows,
                agent=True,
                max_bytes=limits.max_bytes,
            )
            cursor = raw.dbapi_connection.cursor()
            cursor.execute(f"EXPLAIN {sql}")
        except (sqlite3.Error, sqlite3.Warning) as err:
            return self._profile.classify(
                err,
                timed_out_now=time.monotonic() >= deadline,
                timeout_s=limits.timeout_s,
                agent=True,
            )
        finally:
            self._release(raw, cursor, drop=False, agent=True)
        return unchecked_syntax(guard_error, "SQLite")

    def _run(self, sql: str, limits: QueryLimits, *, agent: bool) -> ResultSet:
        lost: _ConnectionLost | None = None
        for _attempt in range(2):  # a lost connection is retried once, on a fresh one
            try:
                return self._attempt(sql, limits, agent=agent)
            except _ConnectionLost as err:
                lost = err
        raise QueryError(
            QueryErrorKind.CONNECTION, f"lost the connection to the warehouse twice: {lost}"
        ) from lost

    def _attempt(self, sql: str, limits: QueryLimits, *, agent: bool) -> ResultSet:
        timeout_s, max_rows = limits.timeout_s, limits.max_rows
        raw = self._checkout()
        dbapi = raw.dbapi_connection
        cursor: Any = None
        drop = False
        budget = timeout_s - limits.spent_s
        deadline = time.monotonic() + budget
        try:
            self._profile.begin(
                dbapi, timeout_s=budget, max_rows=max_rows, agent=agent, max_bytes=limits.max_bytes
            )
            cursor = self._profile.cursor(dbapi)
            cursor.execute(sql)
            if cursor.description is None:
                raise QueryError(QueryErrorKind.RUNTIME, "the statement returned no result set")
            names = [str(column[0]) for column in cursor.description]

            def fetchmany(size: int) -> Any:
                self._profile.before_fetch(dbapi, deadline - time.monotonic())
                return cursor.fetchmany(size)

            rows = fetch_rows(
                fetchmany,
                max_rows=max_rows,
                deadline=deadline,
                timeout_s=timeout_s,
                max_bytes=limits.max_bytes,
            )
            table = rows_to_table(names, rows)
            if self.sqlite_path is None:
                # SQLite hands over int, float, str, bytes and None only: their Arrow columns
                # are never dictionary or extension types, which is all normalize_table changes.
                table = normalize_table(table)
            return ResultSet(table)
        except QueryError:
            if cursor is not None and self._profile.unbuffered_cursor:
                # An unbuffered cursor left mid-result drains every remaining row on close:
                # stop the query first, or drop the connection if it cannot be stopped.
                drop = not self._stop_elsewhere(dbapi)
            raise
        except self._profile.dbapi_error as err:
            if self._sa.dialect.is_disconnect(err, dbapi, cursor):  # type: ignore[arg-type]
                drop = True
                raise _ConnectionLost(self._message(err)) from err
            timed_out_now = time.monotonic() >= deadline
            raise self._profile.classify(
                err, timed_out_now=timed_out_now, timeout_s=timeout_s, agent=agent
            ) from err
        finally:
            self._release(raw, cursor, drop=drop, agent=agent)

    def _stop_elsewhere(self, dbapi: Any) -> bool:
        statement = self._profile.stop_statement(dbapi)
        if statement is None:
            return False
        try:
            other = self._sa.raw_connection()
        except exc.SQLAlchemyError:
            return False
        try:
            cur: Any = other.cursor()
            cur.execute(statement)
            cur.close()
            return True
        except self._profile.dbapi_error:
            other.invalidate()
            return False
        finally:
            other.close()

    def _checkout(self) -> Any:
        if self._idle:
            # SQLite: a connection its last query left ready (rolled back, limits reset), taken
            # without the pool's checkout (its lock, events and reset cost more CPU than a
            # query of a few rows, with 8 threads). Not in a forked process: see after_fork.
            if self._idle_pid == os.getpid():
                try:
                    return self._idle.pop()
                except IndexError:
                    pass  # another thread took the last one
            else:
                self.after_fork()
        try:
            return self._sa.raw_connection()
        except exc.SQLAlchemyError as err:
            raise _ConnectionLost(self._message(err)) from err
        except EngineError as err:
            # The setup could not be rebuilt on a new pooled connection.
            raise _ConnectionLost(str(err)) from err

    def _release(self, raw: Any, cursor: Any, *, drop: bool, agent: bool) -> None:
        if not drop:
            try:
                if cursor is not None:
                    cursor.close()
                self._profile.end(raw.dbapi_connection, agent=agent)
            except self._profile.dbapi_error:
                # A connection that cannot roll back cleanly is not returned to the pool.
                drop = True
        if drop:
            raw.invalidate()
        elif (
            self.sqlite_path is not None
            and len(self._idle) < self._idle_max
            and self._idle_pid == os.getpid()
        ):
            self._idle.append(raw)
            return
        raw.close()

    def _return_idle(self) -> None:
        """Give the idle connections back to the pool (before it is disposed)."""
        while self._idle:
            try:
                raw = self._idle.pop()
            except IndexError:
                break
            raw.close()

    def tables(self) -> list[TableInfo]:
        """Tables and views agent SQL may read (setup's temporary views first)."""
        raw = self._checkout_or_fail()
        try:
            listed = self._profile.list_tables(raw.dbapi_connection)
        except self._profile.dbapi_error as err:
            raw.invalidate()
            raise EngineError(f"cannot list the warehouse's tables: {self._message(err)}") from err
        finally:
            raw.close()
        if listed is not None:
            return listed
        inspector = sqlalchemy.inspect(self._sa)
        names = inspector.get_table_names() + inspector.get_view_names()
        return [
            TableInfo(
                name, [ColumnInfo(c["name"], str(c["type"])) for c in inspector.get_columns(name)]
            )
            for name in names
        ]

    def _checkout_or_fail(self) -> Any:
        try:
            return self._checkout()
        except _ConnectionLost as lost:
            raise EngineError(f"cannot connect to the warehouse {self.display}: {lost}") from lost

    def after_fork(self) -> None:
        """In a process forked from the one that opened this engine (``runs/forked.py``):
        forget the inherited pooled connections without closing them (they are the parent's)
        so this process opens its own. Only for a SQLite file without a query process."""
        # The idle connections are the parent's too: kept referenced (their release would
        # return them to the inherited pool and roll them back here), never used.
        self._inherited.extend(self._idle)
        self._idle = []
        self._idle_pid = os.getpid()
        self._sa.dispose(close=False)

    def close(self) -> None:
        """Close every pooled connection (their temporary objects go with them) and stop the
        query process."""
        if self._query_process is not None:
            self._query_process.close()
        self._return_idle()
        self._sa.dispose()

    def _message(self, err: BaseException) -> str:
        orig = getattr(err, "orig", None)
        text = str(orig) if orig is not None else str(err)
        return redact(driver_message(text), self.display)
