"""The query process's own side (``engines/agent_process.py`` is its parent's): the zygote that
forks query processes (``python -m sqlbench.engines.query_child``), and a query process serving
agent SQL on the engine its parent described (``QueryProcessSpec``), with its memory watched.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlbench.engines.agent_process import QueryProcessSpec, VariantData
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.errors import QueryError, QueryErrorKind

_WATCH_INTERVAL_S = 0.01
_RESERVED_MB = 3072
"""Address space allowed beyond the memory limit: what DuckDB's and Arrow's allocators reserve
without touching (measured: about 1.8 GB with a few hundred MB resident). The address-space
limit is a backstop; the resident-memory watch is the limit."""
_GIVE_BACK_BYTES = 16 * 2**20
"""After sending a result this large, the query process returns freed memory to the system."""
_M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the number of malloc arenas (each reserves 64 MB of
address space per thread that gets one, which would eat the address-space limit unused)."""

_VARIANT_HELD_MB = 16
"""Resident memory allowed for a variant's database while a query runs on it, beyond
``_VARIANT_HELD`` times its Arrow bytes (an empty in-memory DuckDB takes about 5 MB)."""
_VARIANT_HELD = 4
"""Its tables in DuckDB and the Arrow copy they came in, as a multiple of their Arrow bytes."""


def _zygote_main(control_fd: int) -> None:
    """The zygote: fork a query process for every socket the parent sends; end with it."""
    import sqlglot  # noqa: F401  (imported once here rather than in every query process)

    import sqlbench.engines.duckdb  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            _message, fds, _flags, _address = socket.recv_fds(control, 1, 1)
        except OSError:
            break
        if not fds:
            break
        if os.fork() == 0:
            control.close()
            conn = Connection(fds[0])
            try:
                serve(conn, conn.recv())
            finally:
                os._exit(0)
        os.close(fds[0])


def serve(conn: Connection, spec: QueryProcessSpec) -> None:
    """The query process: build the engine's database, limit the address space, then run
    each query the parent sends on a thread of its own until told to stop."""
    try:
        engine = _open(spec)
    except Exception as err:
        conn.send(("failed", str(err)))
        return
    send_lock = threading.Lock()
    held = _Held()
    try:
        _limit_address_space(spec.address_space_mb + _RESERVED_MB)
    except (ValueError, OSError) as err:  # a hard limit (ulimit -v) below what it needs
        extra_mb = spec.address_space_mb + _RESERVED_MB
        conn.send(
            ("failed", f"it cannot set its address-space limit ({err}): {_hard_limit(extra_mb)}")
        )
        return
    threading.Thread(
        target=_watch_memory, args=(conn, send_lock, spec.address_space_mb, held), daemon=True
    ).start()

    def reply(*message: Any) -> None:
        with send_lock, contextlib.suppress(OSError, ValueError):
            conn.send(message)

    def answer(
        request: int,
        sql: str,
        timeout_s: float,
        rows: int,
        size: int | None,
        variant: VariantData | None = None,
        truth: bool = False,
    ) -> None:
        try:
            if variant is not None:
                result = _on_variant(variant, held, sql, timeout_s, rows, size)
            elif truth:
                result = engine.run_truth(sql, timeout_s=timeout_s, max_rows=rows, max_bytes=size)
            else:
                result = engine.run_agent(sql, timeout_s=timeout_s, max_rows=rows, max_bytes=size)
            table, work = result.table, result.work
            del result
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            del table
            payload = sink.getvalue()
            with send_lock, contextlib.suppress(OSError, ValueError):
                # The header, then the bytes as they are (no pickled copy on either side).
                conn.send(("table", request, work))
                conn.send_bytes(memoryview(payload))
            if payload.size >= _GIVE_BACK_BYTES:
                del payload
                _give_back()
        except QueryError as err:
            reply("query_error", request, err.kind.value, err.message)
        except MemoryError:
            reply(
                "query_error",
                request,
                QueryErrorKind.TOO_LARGE.value,
                f"it passed the memory sqlbench's {spec.label} query process may use "
                f"({spec.address_space_mb:,} MB beyond {spec.holding}) and was stopped",
            )
        except Exception as err:
            reply("crash", request, f"{type(err).__name__}: {err}")

    conn.send(("ready", os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (OSError, EOFError):
            break
        if message[0] == "stop":
            break
        if message[0] == "query":
            threading.Thread(target=answer, args=message[1:], daemon=True).start()
    closing = threading.Thread(target=engine.close, daemon=True)  # removes its spill folder
    closing.start()
    closing.join(5)


def _open(spec: QueryProcessSpec) -> Engine:
    """The engine the query process runs agent SQL on, set up as its parent's (with no query
    process of its own)."""
    if spec.server is not None:
        # Imported here, not in the zygote: only a server's query process needs SQLAlchemy
        # and its driver.
        from sqlbench.engines.sqlalchemy import SqlAlchemyEngine

        server = SqlAlchemyEngine(
            spec.server.url,
            display=spec.display,
            dialect=spec.server.dialect,
            project_root=spec.project_root or Path.cwd(),
            pool_size=spec.server.pool_size,
            search_path=spec.server.search_path,
        )
        if spec.setup_files:
            assert spec.project_root is not None
            server.setup(spec.project_root, list(spec.setup_files))
        return server
    from sqlbench.engines.duckdb import DuckDBEngine

    engine = DuckDBEngine(
        spec.database,
        display=spec.display,
        memory_limit_mb=spec.memory_limit_mb,
        profiled_connections=spec.profiled_connections,
    )
    if spec.project_root is not None:
        engine.setup(spec.project_root, list(spec.setup_files))
    else:
        engine.lock()
    return engine


class _Held:
    """Bytes the query process holds for the data variants its queries run on now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.bytes = 0

    @contextlib.contextmanager
    def holding(self, size: int) -> Iterator[None]:
        with self._lock:
            self.bytes += size
        try:
            yield
        finally:
            with self._lock:
                self.bytes -= size


def _on_variant(
    variant: VariantData,
    held: _Held,
    sql: str,
    timeout_s: float,
    rows: int,
    size: int | None,
) -> ResultSet:
    """Agent SQL on a data variant's database, built here for it and closed after; the memory
    watch allows for the database while it is open."""
    from sqlbench.engines.duckdb import DuckDBEngine

    allowance = _VARIANT_HELD_MB * 2**20 + _VARIANT_HELD * variant.nbytes
    with held.holding(allowance):
        engine = DuckDBEngine.from_tables(list(variant.tables), list(variant.views))
        try:
            return engine.run_agent(sql, timeout_s=timeout_s, max_rows=rows, max_bytes=size)
        finally:
            engine.close()


def _give_back() -> None:
    """Return freed memory to the system (glibc's heap and Arrow's pool keep it otherwise), so
    the query process does not stay at the size of its largest result."""
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _watch_memory(conn: Connection, send_lock: threading.Lock, extra_mb: int, held: _Held) -> None:
    """Stop this process the moment its resident memory passes what it held once set up plus
    ``extra_mb`` plus what the data variants in use are allowed (checked every 10 ms), telling
    the parent why first."""
    limit = _resident_bytes() + extra_mb * 2**20
    while _resident_bytes() <= limit + held.bytes:
        time.sleep(_WATCH_INTERVAL_S)
    if send_lock.acquire(timeout=0.05):
        with contextlib.suppress(OSError, ValueError):
            conn.send(("over_memory", 0))
    os.kill(os.getpid(), signal.SIGKILL)


def _resident_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _limit_address_space(extra_mb: int) -> None:
    """Cap this process's address space at what it holds now plus ``extra_mb``; fewer malloc
    arenas, so threads do not reserve it unused."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 2)
    now = _vm_size_bytes()
    limit = now + extra_mb * 2**20
    import resource  # POSIX only, like the query process

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _hard_limit(extra_mb: int) -> str:
    """The hard address-space limit in words, for the sentence saying why the query process
    could not start (it needs what it holds plus ``extra_mb``)."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard == resource.RLIM_INFINITY:
        return "no hard limit is set"
    held = _vm_size_bytes() // 2**20
    return (
        f"the hard address-space limit (ulimit -v) is {hard // 2**20:,} MB and it needs "
        f"{held + extra_mb:,} MB ({held:,} MB it holds and {extra_mb:,} MB for queries); raise "
        "the limit or lower run.max_result_mb"
    )


def _vm_size_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    _zygote_main(int(sys.argv[1]))
