"""Where a run store lives and how sqlbench connects to it.

SQLite (the default, ``.sqlbench/runs.db``) runs in WAL mode, so another process can read a
run's progress while it is written, with ``synchronous=NORMAL`` (a killed process loses no
committed result) and writers taking the lock up front (``BEGIN IMMEDIATE``). Server databases
(PostgreSQL, MySQL) use SQLAlchemy's defaults with pre-ping.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from sqlbench.errors import StoreError

DEFAULT_STORE_DIR = ".sqlbench"
DEFAULT_STORE_FILE = "runs.db"
LOCK_WAIT_VARIABLE = "SQLBENCH_STORE_LOCK_WAIT"
DEFAULT_LOCK_WAIT_S = 60.0
"""How long a write waits for a SQLite store another process holds locked, unless
``SQLBENCH_STORE_LOCK_WAIT`` (seconds) says otherwise."""


def lock_wait_s() -> float:
    """Seconds a SQLite store write waits for another process's lock: ``SQLBENCH_STORE_LOCK_WAIT``
    when set, else 60.

    Raises:
        StoreError: The variable is not a number of seconds from 0 to 86400.
    """
    raw = os.environ.get(LOCK_WAIT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_LOCK_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:
        raise StoreError(
            f"{LOCK_WAIT_VARIABLE}={raw!r} is not a number of seconds from 0 to 86400 "
            "(how long a write waits for a run store another process holds locked)"
        )
    return value


def sqlite_read_only(url: str) -> str | None:
    """Why the SQLite store file at ``url`` can only be read (the file, or its folder, is not
    writable: a read-only mount, permissions, an immutable file), or None when it can be
    written (or is no SQLite file that exists)."""
    path = sqlite_path(url)
    if path is None or not path.is_file():
        return None
    if not os.access(path, os.W_OK):
        return f"the file {path} is not writable"
    if not os.access(path.parent, os.W_OK):
        return f"its folder {path.parent} is not writable"
    return None


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite store URL; None for another database or an in-memory one."""
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return None
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database)


def store_url(project_dir: Path, store: str | None) -> str:
    """The SQLAlchemy URL of a project's store. ``None``: ``.sqlbench/runs.db`` (the folder is
    created with a ``.gitignore``). A plain path (not a URL) is a SQLite file, or a folder that
    gets ``runs.db``; relative paths, in plain form or ``sqlite:///``, are under the project."""
    if store is None:
        folder = project_dir / DEFAULT_STORE_DIR
        _make_folder(folder, "the run store's folder")
        ignore = folder / ".gitignore"
        if not ignore.exists():
            try:
                ignore.write_text("# sqlbench's local run store\n*\n", encoding="utf-8")
            except OSError as err:
                raise StoreError(
                    f"cannot write {ignore}: {err.strerror or err} (the run store lives in "
                    f"{folder}; set `store:` in sqlbench.yml to keep it elsewhere)"
                ) from err
        return f"sqlite:///{(folder / DEFAULT_STORE_FILE).resolve()}"
    if "://" not in store:
        path = Path(store)
        path = path if path.is_absolute() else project_dir / path
        if path.exists() and not path.is_dir() and not path.suffix:
            raise StoreError(
                f"`store: {store}` in sqlbench.yml names the file {path}; name a folder "
                "(the store is runs.db in it) or a .db file"
            )
        if store.endswith(("/", "\\")) or path.is_dir() or not path.suffix:
            path = path / DEFAULT_STORE_FILE
        _make_folder(path.parent, f"the folder of `store: {store}` in sqlbench.yml")
        return f"sqlite:///{path.resolve()}"
    url = sa.engine.make_url(store)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        path = Path(url.database)
        if not path.is_absolute():
            path = project_dir / path
        _make_folder(path.parent, "the folder of the SQLite `store` in sqlbench.yml")
        return url.set(database=str(path.resolve())).render_as_string(hide_password=False)
    return store


def _make_folder(folder: Path, what: str) -> None:
    """Create ``folder`` (and its parents) or say in one sentence why it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as err:
        blocker = next(
            (p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder
        )
        raise StoreError(
            f"cannot create {what}, {folder}: {blocker} is a file, not a folder"
        ) from err
    except OSError as err:
        raise StoreError(f"cannot create {what}, {folder}: {err.strerror or err}") from err


def create_store_engine(url: str, *, read_only: bool = False) -> Engine:
    """A SQLAlchemy engine for a store URL, configured as the module docstring says.

    ``read_only`` (a SQLite file that cannot be written): opened with SQLite's ``mode=ro``;
    when its folder cannot be written either and it holds no write-ahead log to replay, also
    ``immutable=1`` (SQLite cannot make the ``-shm`` file a WAL reader otherwise needs).
    """
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    wait_s = lock_wait_s()
    path = sqlite_path(url)
    if read_only and path is not None:
        uri = _read_only_uri(path)
        engine = sa.create_engine(
            url,
            creator=lambda: sqlite3.connect(uri, uri=True, timeout=wait_s, check_same_thread=False),
        )
    else:
        engine = sa.create_engine(url, connect_args={"timeout": wait_s})

    wal = bool(parsed.database and parsed.database != ":memory:" and not read_only)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        _configure(dbapi_conn, wait_s=wait_s, wal=wal)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front (BEGIN IMMEDIATE): a deferred transaction that
        # upgrades to a writer can fail at once with "database is locked" under WAL.
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())

    return engine


def _configure(dbapi_conn: Any, *, wait_s: float, wal: bool) -> None:
    """Set up a new SQLite store connection (every engine connection, and ``open_writer``'s)."""
    # Let SQLAlchemy's begin() decide when transactions start (the pysqlite recipe), and
    # use WAL so that readers (`sqlbench runs` in another terminal) never block the run.
    dbapi_conn.isolation_level = None
    # Bytes that are not UTF-8 (a damaged row) read as lone surrogates, never as an
    # error that ends the whole query: the store marks that one run Corrupt.
    dbapi_conn.text_factory = _text_or_surrogates
    # ``sqlbench_utf8(CAST(x AS BLOB))``: 1 when x's bytes are UTF-8 (SQLite never checks);
    # listing runs finds the result rows a damaged file made unreadable with it.
    dbapi_conn.create_function(UTF8_CHECK, 1, _is_utf8, deterministic=True)
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
    if wal:
        cursor.execute("PRAGMA journal_mode = WAL")
        # NORMAL under WAL survives a killed process (only power loss can lose the tail).
        cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def open_writer(engine: Engine) -> sqlite3.Connection:
    """A new DBAPI connection to the writable SQLite file store of ``engine`` (made by
    ``create_store_engine``), set up as the engine's own connections are (WAL,
    ``synchronous=NORMAL``, the busy timeout, foreign keys), outside its pool.

    ``RunStore.record`` writes each graded result through one such connection per process
    (docs/performance.md, "The run loop"): SQLAlchemy's connect, begin and
    execution machinery cost more CPU than the one-row insert and commit it wraps. Usable
    from any thread (the caller serializes its use); never across a ``fork``.
    """
    url = engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        raise ValueError(f"open_writer takes a SQLite file store, not {url!r}")
    args, kwargs = engine.dialect.create_connect_args(url)
    kwargs.update(timeout=lock_wait_s(), check_same_thread=False)
    connect: Any = sqlite3.connect  # the arguments SQLAlchemy would pass it
    conn: sqlite3.Connection = connect(*args, **kwargs)
    try:
        _configure(conn, wait_s=kwargs["timeout"], wal=True)
    except BaseException:
        conn.close()
        raise
    return conn


UTF8_CHECK = "sqlbench_utf8"
"""The SQL function every SQLite store connection has: ``sqlbench_utf8(blob)`` is 1 when the
bytes are UTF-8 text, else 0."""


def _is_utf8(raw: bytes | None) -> int:
    if raw is None:
        return 1
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return 1


def _text_or_surrogates(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _read_only_uri(path: Path) -> str:
    wal = path.with_name(path.name + "-wal")
    try:
        replay = wal.stat().st_size > 0
    except OSError:
        replay = False
    options = "mode=ro"
    if not os.access(path.parent, os.W_OK) and not replay:
        options += "&immutable=1"
    return f"file:{quote(str(path.resolve()))}?{options}"


def mask_url(url: str) -> str:
    """``url`` with its password hidden (for messages)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):
        return "<invalid URL>"
