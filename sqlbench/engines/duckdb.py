"""Embedded DuckDB: the default warehouse, fresh in memory for each run.

A DuckDB file given as ``warehouse`` is attached READ_ONLY (never written) and every table and
view in it is exposed through a view of the same schema and name in the in-memory database, so
setup SQL can add views on top and queries name tables as they would in the file.

Setup SQL (any ref's, the working tree's too) is untrusted: before its first statement DuckDB's
external access is turned off with the project tree at that ref as its only allowed folder
(``allowed_directories``, which DuckDB cannot widen once external access is off), extensions are
neither installed nor loaded, and each statement is read by DuckDB's own parser and refused, with
one sentence, when it would attach a database, load an extension, write a file (``COPY ... TO``,
``EXPORT DATABASE``), change a setting or make a secret (``setup_statement``). ``CREATE TEMP``
objects are made ordinary ones: every query runs on a cursor of its own (a connection, which
would not see another connection's temporary objects), and the in-memory database is the run's
alone. After setup the database is locked for the rest of the run: no extension installs or
loads, and no configuration changes (``lock_configuration=true``); files outside the project
tree stay unreadable (docs/security.md). Every query runs on a connection of its own for its
duration (calls from many threads are safe): one of those made just before the lock with
DuckDB's profiler on, which counts the rows its scans read (``ResultSet.work``, docs/cost.md),
reused one query at a time, else a new one. It runs inside ``BEGIN TRANSACTION READ ONLY``
(rolled back after), is streamed as Arrow batches up to ``max_rows``, and is interrupted from a
timer at its timeout.
Results are exported losslessly (``arrow_lossless_conversion``) and decoded to comparable Arrow
types by ``sqlbench.engines.arrow_values`` (exact 128-bit and BIGNUM integers, TIMETZ in UTC).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlbench.dbt.refs import has_refs, resolve_refs
from sqlbench.engines.agent_process import QueryProcess, QueryProcessSpec, VariantData
from sqlbench.engines.agent_sql import AgentSqlEngine, QueryLimits
from sqlbench.engines.base import ColumnInfo, ResultSet, TableInfo
from sqlbench.engines.fetch import (
    concat_batches,
    driver_message,
    timed_out,
    too_large,
    too_many_rows,
)
from sqlbench.engines.guard import unchecked_syntax
from sqlbench.engines.limits import duckdb_memory_limit_mb, duckdb_query_process_mb
from sqlbench.engines.registry import WarehouseTarget
from sqlbench.engines.work import DUCKDB_PROFILED_METRICS, Work, duckdb_profiled_work
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.dialect import url_location, url_scheme
from sqlbench.tempdirs import make_temp

_BATCH_ROWS = 512
"""Rows per Arrow batch: small enough that bytes are counted often (a row may be megabytes),
large enough to cost little (1M narrow rows: about 0.2 s)."""
_RESERVED_CATALOGS = frozenset({"memory", "system", "temp", "main"})
VARIANT_MEMORY_LIMIT_MB = 256
"""DuckDB's memory limit for a data variant's engine (``DuckDBEngine.from_tables``): a
variant holds a few small tables, so the main engine's minimum is plenty."""
PROFILED_CONNECTIONS = 10
"""Connections with DuckDB's profiler on an engine keeps by default: the run's default
concurrency (8), the ground-truth prefetcher and one more (``open_warehouse`` sizes them to the
run's concurrency)."""


_LOCK_SETTINGS = (
    # Types Arrow has no exact equivalent for (UHUGEINT, TIMETZ) come as DuckDB's own bytes,
    # decoded by sqlbench.engines.arrow_values; set again here in case setup changed it.
    "SET arrow_lossless_conversion = true",
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
    "SET allow_community_extensions = false",
    "SET enable_external_access = false",
)
"""Run by ``lock`` before ``SET lock_configuration = true``, which forbids any change after."""
_EXTERNAL_ACCESS_HINT = (
    " (DuckDB reads no file outside the project: a setup view that reads a file "
    "at query time may fail; create a table from the file in setup instead)"
)
_SETUP_ALLOWED = frozenset(
    {
        duckdb.StatementType.SELECT,
        duckdb.StatementType.INSERT,
        duckdb.StatementType.UPDATE,
        duckdb.StatementType.DELETE,
        duckdb.StatementType.MERGE_INTO,
        duckdb.StatementType.CREATE,
        duckdb.StatementType.CREATE_FUNC,
        duckdb.StatementType.DROP,
        duckdb.StatementType.ALTER,
        duckdb.StatementType.ANALYZE,
        duckdb.StatementType.VACUUM,
        duckdb.StatementType.TRANSACTION,
        duckdb.StatementType.COPY,
        duckdb.StatementType.SET,
    }
)
"""Statement kinds setup SQL may hold (``COPY`` only FROM a file, ``SET`` only ``SET
VARIABLE``, ``CREATE`` never a secret: ``setup_statement``)."""
_SETUP_REFUSED = {
    duckdb.StatementType.ATTACH: "attach a database (ATTACH)",
    duckdb.StatementType.DETACH: "detach a database (DETACH)",
    duckdb.StatementType.LOAD: "install or load an extension",
    duckdb.StatementType.EXTENSION: "install or load an extension",
    duckdb.StatementType.EXPORT: "write files (EXPORT DATABASE)",
    duckdb.StatementType.COPY_DATABASE: "copy a database (COPY FROM DATABASE)",
    duckdb.StatementType.PRAGMA: "change DuckDB's settings (PRAGMA)",
    duckdb.StatementType.CALL: "call a procedure (CALL, CHECKPOINT)",
    duckdb.StatementType.PREPARE: "prepare a statement (PREPARE)",
    duckdb.StatementType.EXECUTE: "execute a prepared statement (EXECUTE)",
    duckdb.StatementType.EXPLAIN: "run EXPLAIN (EXPLAIN ANALYZE runs its statement)",
}
_CREATE_TEMP = re.compile(r"(\s*CREATE\s+(?:OR\s+REPLACE\s+)?)(?:TEMP|TEMPORARY)\s+", re.I)
_CREATE_SECRET = re.compile(
    r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:PERSISTENT|TEMP|TEMPORARY)\s+)?SECRET\b", re.I
)
_NAMES_TEMP = re.compile(r"\b(?:TABLE|VIEW|MACRO|FUNCTION|SEQUENCE|TYPE)\s+\"?temp\"?\s*\.", re.I)
"""A CREATE that names the ``temp`` catalog keeps its TEMP (``_refuse_leftover_temporaries``
then says why it cannot stay)."""
_SET_VARIABLE = re.compile(r"\s*(?:SET|RESET)\s+VARIABLE\b", re.I)


@dataclass(frozen=True)
class BaseTable:
    """One table set up in the in-memory database, with its rows."""

    schema: str
    name: str
    columns: tuple[tuple[str, str, bool], ...]
    """(name, DuckDB type, nullable) in order."""
    keys: tuple[tuple[str, ...], ...]
    """Declared PRIMARY KEY and UNIQUE column sets."""
    data: pa.Table
    references: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = ()
    """Declared FOREIGN KEYs: (columns, referenced table in the same schema, its columns)."""


class DuckDBEngine(AgentSqlEngine):
    """An in-memory DuckDB database, optionally over a DuckDB file attached read-only.

    Args:
        database: A DuckDB file to attach READ_ONLY, or None for an empty database.
        display: How to name the warehouse in messages (the unresolved ``warehouse`` value).
    """

    dialect = "duckdb"

    def __init__(
        self,
        database: Path | None = None,
        *,
        display: str = "embedded DuckDB",
        memory_limit_mb: int | None = None,
        query_process_mb: int | None = None,
        profiled_connections: int = PROFILED_CONNECTIONS,
    ) -> None:
        self.display = display
        self.attached = database is not None
        """True when a DuckDB file is attached (its tables are not in the in-memory database)."""
        self.memory_limit_mb = memory_limit_mb
        # Spilled intermediates go to a private folder, not ``.tmp/`` in the working directory.
        spill = str(make_temp("duckdb"))
        # Removed on close, or when an engine nobody closed is garbage-collected.
        self._remove_spill = weakref.finalize(self, shutil.rmtree, spill, True)
        self._con = duckdb.connect(
            ":memory:", config={"temp_directory": spill, "arrow_lossless_conversion": True}
        )
        self._cursor_lock = threading.Lock()
        self._locked = False
        self._closed = False
        self._catalog: str | None = None
        """The attached file's catalog name."""
        self._wrappers: set[tuple[str, str]] = set()
        """The in-memory views that expose the attached file's tables and views."""
        self._database = database
        self._profiled_connections = profiled_connections
        """How many connections with the profiler on the engine running the queries keeps
        (this one, or its query process's)."""
        self._profiled_here = profiled_connections
        self._profiled: list[duckdb.DuckDBPyConnection] = []
        """Idle connections with the profiler on (``_take_cursor``), made before the lock."""
        self._query_process: QueryProcess | None = None
        if query_process_mb is not None and sys.platform == "linux":
            # Agent SQL runs in a child process under an address-space limit (see
            # sqlbench.engines.agent_process); it gets the setup when setup runs. Its queries
            # run there, on its connections: this one keeps none with the profiler on.
            self._query_process = QueryProcess(self._process_spec(query_process_mb))
            self._profiled_here = 0
        if database is not None:
            self._attach(database)

    def _process_spec(
        self, address_space_mb: int, project_root: Path | None = None, files: Sequence[Path] = ()
    ) -> QueryProcessSpec:
        return QueryProcessSpec(
            database=self._database,
            display=self.display,
            memory_limit_mb=self.memory_limit_mb,
            address_space_mb=address_space_mb,
            project_root=project_root,
            setup_files=tuple(files),
            profiled_connections=self._profiled_connections,
        )

    def _attach(self, database: Path) -> None:
        if not database.is_file():
            raise EngineError(f"the warehouse DuckDB file {database} does not exist")
        alias = database.stem if database.stem.lower() not in _RESERVED_CATALOGS else "warehouse"
        try:
            self._con.execute(f"ATTACH {_literal(str(database))} AS {_ident(alias)} (READ_ONLY)")
            objects = self._con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
                "UNION SELECT schema_name, view_name FROM duckdb_views() "
                "WHERE database_name = ? AND NOT internal ORDER BY 1, 2",
                [alias, alias],
            ).fetchall()
            self._catalog = alias
            for schema, name in objects:
                self._wrappers.add((str(schema), str(name)))
                self._con.execute(f"CREATE SCHEMA IF NOT EXISTS memory.{_ident(schema)}")
                self._con.execute(
                    f"CREATE VIEW memory.{_ident(schema)}.{_ident(name)} AS SELECT * FROM "
                    f"{_ident(alias)}.{_ident(schema)}.{_ident(name)}"
                )
        except duckdb.Error as err:
            raise EngineError(
                f"cannot attach the warehouse DuckDB file {database} read-only: "
                f"{driver_message(str(err))}"
            ) from err

    def setup(self, project_root: Path, sql_files: list[Path]) -> None:
        """Run the setup SQL files in order (paths in them resolve against ``project_root``),
        then lock the database for the run.

        Raises:
            EngineError: a setup file fails, or setup was already run.
        """
        if self._locked:
            raise EngineError("setup already ran on this engine; open a new one for a new run")
        tree = os.path.realpath(project_root)
        try:
            self._con.execute(f"SET file_search_path = {_literal(tree)}")
            # The walls go up before setup's first statement: only the project tree at this
            # ref can be read (DuckDB resolves symlinks, relative paths and `..` before it
            # compares), and no extension is fetched or loaded behind a function call.
            self._con.execute(f"SET allowed_directories = [{_literal(tree.rstrip('/') + '/')}]")
            self._con.execute("SET enable_external_access = false")
            self._con.execute("SET autoinstall_known_extensions = false")
            self._con.execute("SET autoload_known_extensions = false")
            self._con.execute("SET allow_community_extensions = false")
        except duckdb.Error as err:
            raise EngineError(
                f"cannot prepare DuckDB for setup: {driver_message(str(err))}"
            ) from err
        # DuckDB looks for a relative path in the process's working directory before
        # file_search_path: setup must read the evaluated ref's data files, not the checkout's.
        with _working_directory(Path(tree)):
            for path in sql_files:
                self._run_setup_file(path, project_root)
        self._refuse_leftover_temporaries()
        self.lock()
        if self._query_process is not None:
            spec = self._query_process.spec
            self._query_process = QueryProcess(
                self._process_spec(spec.address_space_mb, project_root, sql_files)
            )

    def _run_setup_file(self, path: Path, project_root: Path) -> None:
        shown = _relative(path, project_root)
        try:
            sql = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise EngineError(f"{shown}: cannot read setup SQL: {err}") from err
        try:
            statements = self._con.extract_statements(sql)
        except duckdb.Error as err:
            raise EngineError(f"{shown}: setup SQL failed: {driver_message(str(err))}") from err
        for number, statement in enumerate(statements, start=1):
            where = f"{shown} (statement {number})" if len(statements) > 1 else shown
            text = setup_statement(statement, where)
            try:
                self._con.execute(text)
            except duckdb.Error as err:
                raise EngineError(f"{where}: setup SQL failed: {driver_message(str(err))}") from err

    def _refuse_leftover_temporaries(self) -> None:
        """Objects setup put in the ``temp`` catalog by name (``CREATE TABLE temp.t``) would be
        invisible to every question's cursor: refused rather than silently missing."""
        try:
            found = self._con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'temp' "
                "UNION ALL SELECT view_name FROM duckdb_views() "
                "WHERE database_name = 'temp' AND NOT internal ORDER BY 1"
            ).fetchall()
        except duckdb.Error as err:
            raise EngineError(f"cannot list setup's objects: {driver_message(str(err))}") from err
        if found:
            names = ", ".join(str(row[0]) for row in found[:5])
            raise EngineError(
                f"setup created {names} in DuckDB's temp catalog, which questions would not "
                "see (each runs on a connection of its own); create it without `temp.`"
            )

    def lock(self) -> None:
        """Forbid file and network access, extension loading and configuration changes from now
        on (``setup`` calls this; an engine with no setup is locked on its first query)."""
        if self._locked:
            return
        try:
            if self.memory_limit_mb is not None:
                # After setup (which may build tables bigger than this; DuckDB spills them to
                # the temp directory): agent SQL that needs more fails as out of memory.
                self._con.execute(f"SET memory_limit = '{int(self.memory_limit_mb)}MB'")
            for statement in _LOCK_SETTINGS:
                self._con.execute(statement)
            self._make_profiled()
            self._con.execute("SET lock_configuration = true")
        except duckdb.Error as err:
            raise EngineError(
                f"cannot lock DuckDB for the run: {driver_message(str(err))}"
            ) from err
        self._locked = True

    def _make_profiled(self) -> None:
        """The connections queries run on with DuckDB's profiler on, counting the rows their
        scans read (``engines.work``). The profiler is a setting of each connection, which the
        lock forbids changing, so they are made now and reused, one query at a time each. A
        DuckDB whose profiler lacks the count gets none: its work is not reported."""
        for _ in range(self._profiled_here):
            cursor = self._con.cursor()
            try:
                cursor.execute("SET enable_profiling = 'no_output'")
                cursor.execute(f"SET tracked_metrics = {DUCKDB_PROFILED_METRICS}")
            except duckdb.Error:
                cursor.close()
                return
            self._profiled.append(cursor)

    def _take_cursor(self) -> tuple[duckdb.DuckDBPyConnection, bool]:
        """A connection for one query, and whether its profiler is on: an idle profiled one,
        else (more queries at once than there are) a new one without."""
        with self._cursor_lock:
            if self._profiled:
                return self._profiled.pop(), True
            return self._con.cursor(), False

    def _put_back(self, cursor: duckdb.DuckDBPyConnection, profiled: bool) -> None:
        """Done with a query's connection: a profiled one ends its transaction (a failed one
        too) and waits for the next query; any other is closed."""
        if profiled and not self._closed:
            try:
                cursor.execute("ROLLBACK")
            except duckdb.Error:
                pass  # no transaction began, or the connection is unusable: not reused
            else:
                with self._cursor_lock:
                    self._profiled.append(cursor)
                return
        cursor.close()

    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run ground truth (trusted) read-only; see ``Engine.run_truth``."""
        sql = resolve_refs(sql, self.relations) if has_refs(sql) else sql
        _check_one_select(sql, agent=False)
        process = self._agent_query_process()
        if process is not None:
            # Under the query process's memory bound, as agent SQL (docs/security.md).
            return process.run_truth(
                sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes
            )
        return self._run(sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)

    def _agent_query_process(self) -> QueryProcess | None:
        """With a query process (``query_process_mb``), all of agent SQL runs there."""
        if self._query_process is not None:
            self.lock()
        return self._query_process

    def _check_agent_sql(self, sql: str) -> None:
        _check_one_select(sql, agent=True)

    def _run_checked(self, sql: str, limits: QueryLimits) -> ResultSet:
        return self._run(
            sql,
            timeout_s=limits.timeout_s,
            max_rows=limits.max_rows,
            max_bytes=limits.max_bytes,
            spent_s=limits.spent_s,
        )

    def _syntax_error(self, sql: str, guard_error: QueryError, limits: QueryLimits) -> QueryError:
        """SQL sqlglot cannot parse: DuckDB's own parser (which runs nothing) says what is
        wrong. Where DuckDB parses it, sqlglot lacks the syntax: refused as unchecked."""
        with self._cursor_lock:
            cursor = self._con.cursor()
        try:
            cursor.extract_statements(sql)
        except duckdb.ParserException as err:
            return QueryError(QueryErrorKind.SYNTAX, driver_message(str(err)))
        except duckdb.Error:
            return guard_error
        finally:
            cursor.close()
        return unchecked_syntax(guard_error, "DuckDB")

    def _run(
        self,
        sql: str,
        *,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None,
        spent_s: float | None = None,
    ) -> ResultSet:
        """``spent_s``: agent SQL only, the part of ``timeout_s`` the guard took already."""
        agent = spent_s is not None
        self.lock()
        cursor, profiled = self._take_cursor()
        fired = threading.Event()
        # A timer firing late must not interrupt the next query on a reused connection.
        running = threading.Lock()
        done = False

        def interrupt() -> None:
            with running:
                if done:
                    return
                fired.set()
                cursor.interrupt()

        budget = timeout_s - (spent_s or 0.0)
        timer = threading.Timer(budget, interrupt)
        timer.daemon = True
        deadline = time.monotonic() + budget
        reader: pa.RecordBatchReader | None = None
        try:
            cursor.execute("BEGIN TRANSACTION READ ONLY")
            timer.start()
            relation = cursor.sql(sql)
            if relation is None:
                raise QueryError(QueryErrorKind.RUNTIME, "the statement returned no result set")
            reader = relation.to_arrow_reader(min(_BATCH_ROWS, max_rows + 1))
            batches: list[pa.RecordBatch] = []
            count = held = 0
            for batch in reader:
                batches.append(batch)
                count += batch.num_rows
                held += batch.nbytes
                if count > max_rows:
                    raise too_many_rows(max_rows)
                if max_bytes is not None and held > max_bytes:
                    raise too_large(max_bytes, held)
                if time.monotonic() > deadline:
                    raise timed_out(timeout_s)
            table = concat_batches(batches, reader.schema)
            return ResultSet(table, work=_profiled_work(cursor) if profiled else None)
        except duckdb.OutOfMemoryException as err:
            raise too_large(max_bytes, out_of_memory=_oom_text(err)) from err
        except duckdb.Error as err:
            raise _query_error(err, fired.is_set(), timeout_s, agent) from err
        except OSError as err:
            # Errors met while exporting Arrow batches come as OSError: the timer's interrupt,
            # or a batch whose strings pass Arrow's 2 GB limit.
            if fired.is_set():
                raise timed_out(timeout_s) from err
            if "string size" in str(err) or "Out of Memory" in str(err):
                raise too_large(max_bytes, out_of_memory=_oom_text(err)) from err
            raise
        finally:
            timer.cancel()
            with running:
                done = True
            if reader is not None:
                reader.close()  # a result left open (a limit reached) would keep the connection
            self._put_back(cursor, profiled)

    def base_tables(self, max_rows: int | None = None) -> tuple[list[BaseTable], list[str]]:
        """The tables queries see (setup's, and an attached file's; not views) with their
        rows (the first ``max_rows`` of each), column types, nullability, declared keys and
        references, and the SQL of the views (the attached file's, then setup's) to re-create
        them over those tables (for data variants)."""
        with self._cursor_lock:
            cursor = self._con.cursor()
        catalogs = ["memory"] + ([self._catalog] if self._catalog is not None else [])
        try:
            found: list[BaseTable] = []
            for catalog in catalogs:
                found += _tables_of(cursor, catalog, max_rows)
            views: list[str] = []
            for catalog in reversed(catalogs):
                listed = cursor.execute(
                    "SELECT schema_name, view_name, sql FROM duckdb_views() "
                    "WHERE database_name = ? AND NOT internal ORDER BY view_oid",
                    [catalog],
                ).fetchall()
                views += [
                    str(sql)
                    for schema, name, sql in listed
                    if catalog != "memory" or (str(schema), str(name)) not in self._wrappers
                ]
        except duckdb.Error as err:
            raise EngineError(f"cannot read DuckDB tables: {driver_message(str(err))}") from err
        finally:
            cursor.close()
        return found, views

    @classmethod
    def from_tables(
        cls,
        tables: list[BaseTable],
        view_sql: list[str],
        *,
        memory_limit_mb: int = VARIANT_MEMORY_LIMIT_MB,
    ) -> DuckDBEngine:
        """A new locked in-memory engine holding ``tables`` (rows from ``BaseTable.data``,
        no constraints) and the views ``view_sql`` creates, under DuckDB's ``memory_limit_mb``
        (set once the tables are in; DuckDB spills past it to the engine's private temp
        directory). Its queries run in the process that calls this: ground truth in sqlbench's;
        agent SQL in the warehouse engine's query process where it has one
        (``run_agent_on_variant``), since ``memory_limit`` does not bound one huge value."""
        engine = cls(
            display="data variant", memory_limit_mb=memory_limit_mb, profiled_connections=0
        )
        con = engine._con
        try:
            for table in tables:
                target = f"memory.{_ident(table.schema)}.{_ident(table.name)}"
                con.execute(f"CREATE SCHEMA IF NOT EXISTS memory.{_ident(table.schema)}")
                defs = ", ".join(f"{_ident(c)} {t}" for c, t, _ in table.columns)
                con.execute(f"CREATE TABLE {target} ({defs})")
                if table.data.num_rows:
                    con.register("_sqlbench_rows", table.data)
                    con.execute(f"INSERT INTO {target} SELECT * FROM _sqlbench_rows")
                    con.unregister("_sqlbench_rows")
            for sql in view_sql:
                con.execute(sql)
        except duckdb.Error as err:
            engine.close()
            raise EngineError(f"cannot build a data variant: {driver_message(str(err))}") from err
        engine.lock()
        return engine

    def run_agent_on_variant(
        self,
        tables: list[BaseTable],
        view_sql: list[str],
        sql: str,
        *,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None = None,
    ) -> ResultSet | None:
        """Run agent SQL on a data variant of this engine's tables in this engine's query
        process, watched as agent SQL on the engine itself is (the variant's database is built
        there for the query, ``from_tables``, and closed after); None when this engine has no
        query process (the caller runs it in-process).

        Raises:
            QueryError: As ``run_agent``.
        """
        if self._query_process is None:
            return None
        self.lock()
        variant = VariantData(
            tables=tuple(tables),
            views=tuple(view_sql),
            nbytes=sum(table.data.nbytes for table in tables),
        )
        return self._query_process.run_agent(
            sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes, variant=variant
        )

    def tables(self) -> list[TableInfo]:
        """Tables and views in the in-memory database (setup's, and the attached file's)."""
        with self._cursor_lock:
            cursor = self._con.cursor()
        try:
            rows = cursor.execute(
                "SELECT table_schema, table_name, column_name, data_type "
                "FROM information_schema.columns WHERE table_catalog = 'memory' "
                "ORDER BY table_schema, table_name, ordinal_position"
            ).fetchall()
        except duckdb.Error as err:
            raise EngineError(f"cannot list DuckDB tables: {driver_message(str(err))}") from err
        finally:
            cursor.close()
        return _group_columns(rows)

    def close(self) -> None:
        """Close the database (in memory: everything set up is gone) and its query process."""
        if self._query_process is not None:
            self._query_process.close()
        with self._cursor_lock:
            self._closed = True
            idle, self._profiled = self._profiled, []
        for cursor in idle:
            cursor.close()
        self._con.close()
        self._remove_spill()


def open_warehouse(target: WarehouseTarget) -> DuckDBEngine:
    """A DuckDB warehouse (``engines/registry.py``): in memory (no ``warehouse:``,
    ``duckdb:///:memory:``), else a DuckDB file attached read-only (a path, or
    ``duckdb:///relative.duckdb``, ``duckdb:////absolute.duckdb``)."""
    run = target.settings.run
    memory = duckdb_memory_limit_mb(run)
    process = duckdb_query_process_mb(run)
    # The run's workers and its ground-truth prefetcher each run one query at a time.
    profiled = run.concurrency + 2
    if target.url is None:
        return DuckDBEngine(
            memory_limit_mb=memory, query_process_mb=process, profiled_connections=profiled
        )
    location, display = target.url, target.display
    assert display is not None  # a path or URL, as written
    if url_scheme(location) is not None:
        rest = url_location(location)
        location = rest[1:] if rest.startswith("/") else rest
        if location in ("", ":memory:"):
            return DuckDBEngine(
                display=display,
                memory_limit_mb=memory,
                query_process_mb=process,
                profiled_connections=profiled,
            )
    return DuckDBEngine(
        target.local(location),
        display=display,
        memory_limit_mb=memory,
        query_process_mb=process,
        profiled_connections=profiled,
    )


def setup_statement(statement: duckdb.Statement, where: str) -> str:
    """The text to run for one statement of setup SQL, as DuckDB's parser read it:
    ``CREATE TEMP``/``CREATE TEMPORARY`` made an ordinary ``CREATE`` (the in-memory database
    is the run's own; a temporary object would be seen by setup's connection only).

    Raises:
        EngineError: one sentence naming ``where`` when the statement would attach a database,
            load an extension, write a file, change a setting or create a secret.
    """
    text = statement.query
    try:
        kind = statement.type
    except ValueError:  # a statement kind this duckdb module has no name for
        kind = None
    reason = _SETUP_REFUSED.get(kind) if kind is not None else "run this kind of statement"
    if reason is None and kind not in _SETUP_ALLOWED:
        reason = f"run {kind.name if kind is not None else 'this'} statements"
    elif kind is duckdb.StatementType.COPY and not _copies_from_a_file(text):
        reason = "write files (COPY ... TO); only COPY ... FROM a file of the project"
    elif kind is duckdb.StatementType.SET and not _SET_VARIABLE.match(text):
        reason = "change DuckDB's settings (SET, RESET, USE)"
    elif kind is duckdb.StatementType.CREATE and _CREATE_SECRET.match(text):
        reason = "create a secret (CREATE SECRET)"
    if reason is not None:
        raise EngineError(
            f"{where}: setup SQL may not {reason}: it runs with the project's files readable "
            "and nothing else (docs/security.md)"
        )
    if kind is duckdb.StatementType.CREATE and not _NAMES_TEMP.search(text[:300]):
        return _CREATE_TEMP.sub(r"\1", text, count=1)
    return text


def _copies_from_a_file(text: str) -> bool:
    """True for ``COPY table FROM 'file'`` (sqlglot reads the direction; a COPY it cannot
    parse is taken as a write)."""
    try:
        parsed = sqlglot.parse_one(text.strip().rstrip(";"), read="duckdb")
    except SqlglotError:
        return False
    return isinstance(parsed, exp.Copy) and parsed.args.get("kind") is True


def _profiled_work(cursor: duckdb.DuckDBPyConnection) -> Work | None:
    """The rows the query just run on ``cursor`` scanned, from its profiler (extra
    information: never the query's failure)."""
    try:
        return duckdb_profiled_work(cursor.get_profiling_information())
    except duckdb.Error:
        return None


def _oom_text(err: Exception) -> str:
    """DuckDB's out-of-memory message without its list of suggestions."""
    return driver_message(str(err).split("Possible solutions", 1)[0])


def _check_one_select(sql: str, *, agent: bool) -> None:
    """DuckDB's own parser as a second opinion: exactly one SELECT statement (DuckDB would run
    every statement of a script, a COMMIT included, so this is checked for ground truth too)."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as err:
        raise QueryError(QueryErrorKind.SYNTAX, driver_message(str(err))) from err
    kinds = [statement.type for statement in statements]
    if len(kinds) == 1 and kinds[0] == duckdb.StatementType.SELECT:
        return
    names = ", ".join(kind.name for kind in kinds) or "nothing"
    if agent:
        raise QueryError(
            QueryErrorKind.NOT_READ_ONLY,
            f"not a read-only query: DuckDB reads it as {names}, not one SELECT",
        )
    raise QueryError(
        QueryErrorKind.RUNTIME,
        f"ground truth must be exactly one query; DuckDB reads it as {names}",
    )


def _query_error(err: duckdb.Error, fired: bool, timeout_s: float, agent: bool) -> QueryError:
    if isinstance(err, duckdb.InterruptException) and fired:
        return timed_out(timeout_s)
    message = driver_message(str(err))
    if isinstance(err, duckdb.ParserException):
        return QueryError(QueryErrorKind.SYNTAX, message)
    if isinstance(err, duckdb.PermissionException):
        if agent:
            return QueryError(
                QueryErrorKind.NOT_READ_ONLY, f"not a read-only query: DuckDB refused it: {message}"
            )
        return QueryError(QueryErrorKind.RUNTIME, message + _EXTERNAL_ACCESS_HINT)
    if isinstance(err, duckdb.TransactionException) and "read-only" in message:
        return QueryError(
            QueryErrorKind.NOT_READ_ONLY, f"not a read-only query: DuckDB refused it: {message}"
        )
    return QueryError(QueryErrorKind.RUNTIME, message)


def _group_columns(rows: list[tuple[str, str, str, str]]) -> list[TableInfo]:
    tables: dict[tuple[str, str], list[ColumnInfo]] = {}
    for schema, table, column, data_type in rows:
        tables.setdefault((schema, table), []).append(ColumnInfo(column, data_type))
    return [
        TableInfo(name=table, columns=columns, schema=schema)
        for (schema, table), columns in tables.items()
    ]


_CWD_LOCK = threading.Lock()


@contextmanager
def _working_directory(folder: Path) -> Iterator[None]:
    """The process's working directory set to ``folder`` for the duration (setup only, before
    the run's threads start; the lock keeps two setups from interleaving)."""
    with _CWD_LOCK:
        previous = os.getcwd()
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(previous)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _tables_of(
    cursor: duckdb.DuckDBPyConnection, catalog: str, max_rows: int | None
) -> list[BaseTable]:
    names = cursor.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "WHERE database_name = ? AND NOT internal ORDER BY 1, 2",
        [catalog],
    ).fetchall()
    found: list[BaseTable] = []
    for schema, name in names:
        where = [catalog, schema, name]
        columns = cursor.execute(
            "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
            "WHERE database_name = ? AND schema_name = ? AND table_name = ? "
            "ORDER BY column_index",
            where,
        ).fetchall()
        constraints = cursor.execute(
            "SELECT constraint_type, constraint_column_names, referenced_table, "
            "referenced_column_names FROM duckdb_constraints() "
            "WHERE database_name = ? AND schema_name = ? AND table_name = ? "
            "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
            "ORDER BY constraint_index",
            where,
        ).fetchall()
        limit = "" if max_rows is None else f" LIMIT {int(max_rows)}"
        data = cursor.sql(
            f"SELECT * FROM {_ident(catalog)}.{_ident(schema)}.{_ident(name)}{limit}"
        ).to_arrow_table()
        found.append(
            BaseTable(
                schema=str(schema),
                name=str(name),
                columns=tuple((str(c), str(t), bool(n)) for c, t, n in columns),
                keys=tuple(
                    tuple(str(k) for k in cols)
                    for kind, cols, _, _ in constraints
                    if kind != "FOREIGN KEY"
                ),
                data=data,
                references=tuple(
                    (tuple(str(k) for k in cols), str(table), tuple(str(k) for k in target))
                    for kind, cols, table, target in constraints
                    if kind == "FOREIGN KEY"
                ),
            )
        )
    return found
