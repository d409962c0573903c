"""Where a run store lives and how sqlbench connects to it.

SQLite (the default, ``.sqlbench/runs.db``) runs in WAL mode, so another process can read a
run's progress while it is written, with ``synchronous=NORMAL`` (a killed process loses no
committed result) and writers taking the lock up front (``BEGIN IMMEDIATE``). Server databases
(PostgreSQL, MySQL) use SQLAlchemy's defaults with pre-ping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from sqlbench.errors import StoreError

DEFAULT_STORE_DIR = ".sqlbench"
DEFAULT_STORE_FILE = "runs.db"


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


def create_store_engine(url: str) -> Engine:
    """A SQLAlchemy engine for a store URL, configured as the module docstring says."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    engine = sa.create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's begin() decide when transactions start (the pysqlite recipe), and
        # use WAL so that readers (`sqlbench runs` in another terminal) never block the run.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA busy_timeout = 60000")
        if parsed.database and parsed.database != ":memory:":
            cursor.execute("PRAGMA journal_mode = WAL")
            # NORMAL under WAL survives a killed process (only power loss can lose the tail).
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front (BEGIN IMMEDIATE): a deferred transaction that
        # upgrades to a writer can fail at once with "database is locked" under WAL.
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())

    return engine


def mask_url(url: str) -> str:
    """``url`` with its password hidden (for messages)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):
        return "<invalid URL>"
