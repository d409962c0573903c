"""Agent SQL run in a child process whose memory is watched: the embedded DuckDB, PostgreSQL and
MySQL/MariaDB.

DuckDB bounds what its buffer manager holds (``memory_limit``), but not the vectors a query
builds on the way: 2,048 rows of a 1 MB string are 2 GB of memory before the first batch comes
out, and ``repeat('x', 2000000000)`` is one 2 GB allocation. A server's driver is no better:
libpq (PostgreSQL) receives a whole row before Python sees it, so ``SELECT repeat('x',
1000000000)`` is a gigabyte in the client, held about three times over once converted; PyMySQL
reads the first chunk of rows (64) whole, each up to the server's ``max_allowed_packet``. In the
run's own process nothing can stop them. So agent SQL on these engines runs in one child process
per engine (the *query process*) that holds the same database: for DuckDB, the same warehouse
file attached read-only and the same setup SQL run again; for a server, its own connection pool
with the same URL and credentials, the same setup (temporary views) and the same per-query
limits (read-only transaction, server-side timeout, ``max_rows``, bytes counted while fetching,
the statement guard). The query process watches its resident memory and stops itself past its
allowance; the query that took it there gets ``too_large``, and the run's process never holds
more than the results that came back (each within ``run.max_result_mb``).

The query process serves the engine's threads at once (one thread per query, as in-process) and
sends each result back as Arrow IPC. It is forked from a small "zygote" whose interpreter has
DuckDB, pyarrow and sqlglot imported already (a server's SQLAlchemy dialect and driver are
imported in the query process, once), so starting one takes tens of milliseconds plus the setup.
If it dies mid-query, the queries that were running beside the culprit are retried alone on a
new one, so only the culprit is blamed.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlbench.engines.base import ResultSet
from sqlbench.engines.fetch import timed_out
from sqlbench.errors import EngineError, QueryError, QueryErrorKind, QueryProcessError

_START_TIMEOUT_S = 600.0
"""How long a query process may take to start (its setup SQL runs again in it)."""
_GRACE_S = 10.0
"""How long past its timeout a query's answer is waited for (the query process interrupts the
query at its timeout itself; this covers a process too busy to answer)."""


@dataclass(frozen=True)
class QueryProcessSpec:
    """What a query process needs to hold the same database as its engine."""

    database: Path | None
    display: str
    memory_limit_mb: int | None
    address_space_mb: int
    """Resident memory the query process may take beyond what it holds once set up."""
    project_root: Path | None = None
    setup_files: tuple[Path, ...] = ()
    server: ServerSpec | None = None
    """For a server reached through SQLAlchemy (PostgreSQL, MySQL/MariaDB): how to connect;
    None for the embedded DuckDB."""
    profiled_connections: int = 0
    """The embedded DuckDB's connections with its profiler on (``DuckDBEngine``)."""

    @property
    def label(self) -> str:
        """The engine, as messages name its query process ("sqlbench's DuckDB query process")."""
        return "DuckDB" if self.server is None else self.server.label

    @property
    def holding(self) -> str:
        """What the query process holds once set up, for the memory sentence."""
        return "its database" if self.server is None else "its connections"


@dataclass(frozen=True)
class ServerSpec:
    """How a query process connects to a server warehouse: the resolved URL (credentials
    included; it stays in memory, sent over the private socket to the child), the dialect and
    the pool size (the run's concurrency)."""

    url: str = field(repr=False)
    dialect: str
    pool_size: int
    label: str
    search_path: tuple[str, ...] = ()
    """Schemas searched first (``SqlAlchemyEngine``'s ``search_path``)."""


@dataclass(frozen=True)
class VariantData:
    """A data variant's tables (a few hundred rows each), sent with a query to run on them: the
    query process builds the variant's database (``DuckDBEngine.from_tables``) beside its own,
    runs the query there and closes it."""

    tables: tuple[Any, ...]
    """``sqlbench.engines.duckdb.BaseTable`` each (Arrow rows, pickled as Arrow buffers)."""
    views: tuple[str, ...]
    nbytes: int
    """The tables' Arrow bytes."""


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    reply: tuple[Any, ...] | None = None


class _ProcessLost(Exception):
    """The query process ended while a query was waiting on it."""

    def __init__(self, reason: str, *, over_memory: bool, alone: bool) -> None:
        super().__init__(reason)
        self.over_memory = over_memory
        """It stopped itself because it passed its memory limit."""
        self.alone = alone
        """No other query was running in it."""


class _Solo:
    """Queries share the query process, except one that runs alone (a retry after a loss)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._shared = 0
        self._alone = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._alone)
            self._shared += 1
        try:
            yield
        finally:
            with self._changed:
                self._shared -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._alone)
            self._alone = True
            self._changed.wait_for(lambda: self._shared == 0)
        try:
            yield
        finally:
            with self._changed:
                self._alone = False
                self._changed.notify_all()


_STARTUP = threading.local()
"""Per thread: milliseconds its queries spent waiting for a query process to start."""


def take_startup_ms() -> float:
    """The milliseconds this thread's queries spent waiting for a query process to start
    since the last call (0 when none started): the part of an answer's ``agent_sql`` time
    that was sqlbench's own start-up (docs/runs.md), not the query."""
    spent = float(getattr(_STARTUP, "ms", 0.0))
    _STARTUP.ms = 0.0
    return spent


class QueryProcess:
    """The parent's handle on one query process; started on first use, restarted when lost.

    Thread-safe: many threads may call ``run_agent`` at once.
    """

    def __init__(self, spec: QueryProcessSpec) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._conn: Connection | None = None
        self._process: Any = None
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed = False
        self._finalizer: Any = None
        self._solo = _Solo()
        self._starts = 0
        """How many times a query process was started (a lost one is started again)."""

    def run_agent(
        self,
        sql: str,
        *,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None,
        variant: VariantData | None = None,
    ) -> ResultSet:
        """Run agent SQL in the query process (guard, the engine's checks, the query, the fetch
        within ``max_rows`` and ``max_bytes``); its result (with the work the engine reported
        there), or the ``QueryError`` it raised.
        With ``variant``, on that data variant's database instead of the engine's.

        Raises:
            QueryError: as the engine's ``run_agent``; TOO_LARGE when the query took the query
                process past its memory limit; CONNECTION when the query process stopped
                otherwise while running it alone.
            EngineError: the query process cannot start (its setup failed).
        """
        return self._query(sql, timeout_s, max_rows, max_bytes, variant, truth=False)

    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None
    ) -> ResultSet:
        """Run ground truth in the query process (the engine's ``run_truth``: no guard), under
        the same memory bound as agent SQL: ground truth is a ref's text too, and one that
        takes too much memory is stopped there (TOO_LARGE) instead of taking sqlbench's.

        Raises:
            QueryError: as ``run_agent``.
            EngineError: the query process cannot start (its setup failed).
        """
        return self._query(sql, timeout_s, max_rows, max_bytes, None, truth=True)

    def _query(
        self,
        sql: str,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None,
        variant: VariantData | None,
        *,
        truth: bool,
    ) -> ResultSet:
        try:
            with self._solo.shared():
                return self._attempt(sql, timeout_s, max_rows, max_bytes, variant, truth)
        except _ProcessLost as lost:
            if lost.alone:
                raise self._lost_error(lost) from lost
        # Lost with others running beside it: run it again alone, so that if it is the one
        # that takes the query process down, only it is told so.
        try:
            with self._solo.alone():
                return self._attempt(sql, timeout_s, max_rows, max_bytes, variant, truth)
        except _ProcessLost as lost:
            raise self._lost_error(lost) from lost

    def _lost_error(self, lost: _ProcessLost) -> QueryError:
        spec = self.spec
        if lost.over_memory:
            return QueryError(
                QueryErrorKind.TOO_LARGE,
                f"it took sqlbench's {spec.label} query process past the memory it may use "
                f"({spec.address_space_mb:,} MB beyond {spec.holding}); the process was "
                "stopped",
            )
        return QueryError(
            QueryErrorKind.CONNECTION,
            f"sqlbench's {spec.label} query process stopped while running it ({lost})",
        )

    def _attempt(
        self,
        sql: str,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None,
        variant: VariantData | None,
        truth: bool = False,
    ) -> ResultSet:
        conn, pending, request = self._submit()
        try:
            with self._send_lock:
                conn.send(("query", request, sql, timeout_s, max_rows, max_bytes, variant, truth))
        except (OSError, EOFError, ValueError) as err:
            self._forget(request)
            raise _ProcessLost(str(err), over_memory=False, alone=False) from err
        if not pending.done.wait(timeout_s + _GRACE_S):
            self._forget(request)
            with contextlib.suppress(OSError, ValueError), self._send_lock:
                conn.send(("cancel", request))
            raise timed_out(timeout_s)
        reply = pending.reply
        assert reply is not None
        kind = reply[0]
        if kind == "table":
            with pa.ipc.open_stream(pa.py_buffer(reply[2])) as reader:
                return ResultSet(reader.read_all(), work=reply[1])
        if kind == "query_error":
            raise QueryError(QueryErrorKind(reply[1]), reply[2])
        if kind == "lost":
            raise _ProcessLost(reply[1], over_memory=reply[2], alone=reply[3])
        raise RuntimeError(f"in sqlbench's {self.spec.label} query process: {reply[1]}")

    def start(self) -> None:
        """Start the query process now unless it runs already (or the engine is closed).

        Raises:
            QueryProcessError: It could not start.
        """
        with self._lock:
            if self._closed or self._conn is not None:
                return
            self._start()
            self._starts += 1

    def _submit(self) -> tuple[Connection, _Pending, int]:
        began = time.monotonic()
        starts = self._starts
        with self._lock:
            if self._closed:
                raise EngineError(f"the {self.spec.label} engine is closed")
            if self._conn is None:
                self._start()
                self._starts += 1
            if self._starts != starts:  # this call started the process, or waited on its start
                _STARTUP.ms = getattr(_STARTUP, "ms", 0.0) + (time.monotonic() - began) * 1000.0
            assert self._conn is not None
            self._next_id += 1
            pending = _Pending()
            self._pending[self._next_id] = pending
            return self._conn, pending, self._next_id

    def _forget(self, request: int) -> None:
        with self._lock:
            self._pending.pop(request, None)

    def _start(self) -> None:
        """Start a query process and wait until its database is set up (caller holds _lock).

        Raises:
            QueryProcessError: It could not start: the run's fault, not an answer's.
        """
        conn = _ZYGOTE.fork()
        try:
            conn.send(self.spec)
            if not conn.poll(_START_TIMEOUT_S):
                raise QueryProcessError(
                    f"sqlbench's {self.spec.label} query process did not start in time"
                )
            first = conn.recv()
        except (OSError, EOFError) as err:
            conn.close()
            raise QueryProcessError(
                f"sqlbench's {self.spec.label} query process could not start "
                f"({str(err) or 'it stopped before it was ready'})"
            ) from err
        except EngineError:
            conn.close()
            raise
        if first[0] != "ready":
            conn.close()
            raise QueryProcessError(
                f"sqlbench's {self.spec.label} query process could not start: {first[1]}"
            )
        self._conn = conn
        self._finalizer = weakref.finalize(self, _stop, conn)
        threading.Thread(
            target=self._read, args=(conn,), name="sqlbench-duckdb-replies", daemon=True
        ).start()

    def _read(self, conn: Connection) -> None:
        """Route the query process's replies to the threads waiting on them; when it ends,
        tell every waiting thread (they retry on a new query process)."""
        over_memory = False
        while True:
            try:
                message = conn.recv()
            except (OSError, EOFError):
                break
            if message[0] == "over_memory":
                over_memory = True
                continue
            if message[0] == "table":  # ("table", request, work), then the table's bytes
                try:
                    message = ("table", message[1], message[2], conn.recv_bytes())
                except (OSError, EOFError):
                    break
            with self._lock:
                pending = self._pending.pop(message[1], None)
            if pending is not None:
                pending.reply = (message[0], *message[2:])
                pending.done.set()
        with self._lock:
            if self._conn is conn:
                self._conn = None
            waiting = list(self._pending.values())
            self._pending.clear()
        reason = "it passed its memory limit" if over_memory else "it ended"
        for pending in waiting:
            pending.reply = ("lost", reason, over_memory, len(waiting) == 1)
            pending.done.set()

    def close(self) -> None:
        """Stop the query process (if one runs)."""
        with self._lock:
            self._closed = True
            finalizer, self._finalizer = self._finalizer, None
            self._conn = None
        if finalizer is not None:
            finalizer()


def _stop(conn: Connection) -> None:
    """Tell a query process to stop (it also stops when its connection closes)."""
    with contextlib.suppress(OSError, ValueError):
        conn.send(("stop",))
    conn.close()


_CHILD = "sqlbench.engines.query_child"
"""The query process's own side (``python -m`` it starts the zygote): a module of its own, which
imports the engines it opens, as they import this one."""


class _Zygote:
    """A small process that forks query processes: a fresh interpreter (``python -m
    sqlbench.engines.query_child``) with DuckDB, pyarrow and sqlglot imported and no database
    open, started once per sqlbench process. Forking it costs milliseconds where starting an
    interpreter costs seconds, and unlike ``multiprocessing`` it never re-imports the caller's
    ``__main__``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def fork(self) -> Connection:
        """A connection to a new query process (which waits for its ``QueryProcessSpec``)."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._launch()
            assert self._control is not None
            ours, theirs = socket.socketpair()
            try:
                socket.send_fds(self._control, [b"f"], [theirs.fileno()])
            except OSError as err:
                self._process = None
                raise QueryProcessError(
                    f"sqlbench's query process could not start ({err})"
                ) from err
            finally:
                theirs.close()
        return Connection(ours.detach())

    def _launch(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", _CHILD, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as err:
            ours.close()
            raise QueryProcessError(f"cannot start sqlbench's query process: {err}") from err
        finally:
            theirs.close()
        if self._control is not None:
            self._control.close()
        self._control = ours


_ZYGOTE = _Zygote()
