"""Building one ref's dbt project on a PostgreSQL warehouse, into schemas of its own
(docs/dbt.md, "On a server warehouse").

Each build goes to ``<schema>_sqlb_<key>`` (the target's own ``schema`` with a per-ref suffix
from the build key), and a custom schema to ``<schema>_sqlb_<key>_<custom>``, as dbt's
``generate_schema_name`` places it: base and head never read each other's models, and the
target's own schema is never written. A finished build is marked with a comment on its schema,
which records the state of its sources too (``dbt.sources``): a marked schema with the same key
is reused, not built again, while its sources are as it found them; else it is dropped and
built afresh. The schemas are dropped when the command is done with them (``release_builds``,
called once the command ends), unless ``dbt: keep_schemas`` keeps them.

While a build's schemas are in use, sqlbench holds a shared advisory lock on them (on a
connection of the builder's own, as the profile connects): a second sqlbench process building
the same key waits for the first build and reuses it, and a process done with the schemas drops
them only when no other one still reads them. Only schemas carrying sqlbench's suffix for the
build's key are ever created or dropped.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from sqlbench.dbt.build import build_failure, dbt_home, parse_project
from sqlbench.dbt.invoke import Progress, run_dbt
from sqlbench.dbt.manifest import Parsed, build_args
from sqlbench.dbt.profile import (
    SCHEMA_MARK,
    DbtProject,
    built_schema,
    parse_schema,
    profiles_yml,
    read_project,
    rendered_profile,
)
from sqlbench.dbt.sources import (
    Compiled,
    decode,
    encode,
    read_state,
    relations,
    table_reads,
    unchanged,
    view_reads,
)
from sqlbench.errors import DbtError
from sqlbench.project.files import Project

_MAX_IDENTIFIER = 63
"""PostgreSQL's longest identifier: a longer schema name would be cut, silently."""
_DONE = "sqlbench dbt build "
"""How a finished build's schema is marked: ``COMMENT ON SCHEMA ... IS 'sqlbench dbt build
<key>'``, then a line of the state of its sources (``sources.encode``)."""
_CONNECT_KEYS = {
    "sslmode": "sslmode",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "sslrootcert": "sslrootcert",
    "connect_timeout": "connect_timeout",
    "keepalives_idle": "keepalives_idle",
}
"""dbt-postgres target keys passed on to the builder's connection as they are."""


@dataclass(frozen=True)
class ServerBuild:
    """One ref's dbt build in schemas of its own, ready to query."""

    schemas: tuple[str, ...]
    """The build's schemas, the target's first: the search path of the run's connections."""
    relations: dict[str, str]
    """Model name -> its relation (``"schema"."alias"``), for ``{{ ref('m') }}``."""
    key: str
    log: Path
    built: bool
    """False: a finished build with the same key was there already."""
    seconds: float
    kept: bool
    """``dbt: keep_schemas``: the schemas stay when the command is done."""


def build_on_server(
    project: Project, url: str, *, display: str, progress: Progress | None = None
) -> ServerBuild:
    """Build ``project``'s dbt project as its ref has it into schemas of its own on the
    PostgreSQL database of ``url`` (the resolved warehouse URL; ``display`` as written), or
    reuse the finished build of the same key. The schemas are dropped by ``release_builds``
    (when the command is done) unless ``dbt: keep_schemas``.

    Raises:
        DbtError: the target is not a postgres one or builds into another database, dbt or the
            adapter is missing, the project does not parse, the builder cannot connect, or a
            node fails to build (one sentence naming it, the ref and dbt's message).
    """
    started = time.perf_counter()
    settings = project.settings.dbt
    if settings is None:
        raise DbtError("sqlbench.yml has no `dbt:` key")
    dbt_project = read_project(settings, project.root)
    connect = _check_target(dbt_project, url, display)
    parsed = parse_project(project)
    key = parsed.key
    parsed_with = parse_schema(dbt_project)
    schemas = _schemas(parsed, parsed_with, key)
    relations = _relations(parsed, parsed_with, key)
    log = dbt_home(project) / "logs" / f"{key}.log"
    with _LIVE_LOCK:
        live = _LIVE.get((connect.identity, key))
    if live is not None:  # built or reused earlier in this command
        return ServerBuild(
            schemas, relations, key, log, False, time.perf_counter() - started, live.keep
        )
    holder = _Holder(
        connect,
        schemas,
        key,
        keep=settings.keep_schemas,
        reader=connect.reader,
        sources=parsed.sources,
        search_path=connect.search_path,
        progress=progress,
    )
    try:
        built = holder.acquire(
            lambda: _build(project, dbt_project, holder, log, progress),
        )
    except BaseException:
        holder.close()
        raise
    with _LIVE_LOCK:
        live = _LIVE.setdefault((connect.identity, key), holder)
    if live is not holder:
        # Another thread of this process got there first: one holder per build, so that
        # release_builds drops it (a second one's shared lock would keep it from that).
        holder.close()
    _register_exit()
    return ServerBuild(
        schemas, relations, key, log, built, time.perf_counter() - started, live.keep
    )


def release_builds() -> list[str]:
    """Drop the schemas of every server build this process made or reused (those not kept),
    once the command is done with them; returns one line per build saying what was done.
    Never raises: a schema that cannot be dropped is said so."""
    if _LIVE_PID[0] != os.getpid():
        return []  # a forked child: the schemas are its parent's
    with _LIVE_LOCK:
        holders = list(_LIVE.values())
        _LIVE.clear()
    return [line for holder in holders if (line := holder.release())]


def _build(
    project: Project,
    dbt_project: DbtProject,
    holder: _Holder,
    log: Path,
    progress: Progress | None,
) -> list[Compiled]:
    """Run ``dbt build`` into the holder's schemas (with the exclusive lock held); returns the
    models and snapshots it built, with their compiled SQL."""
    settings = project.settings.dbt
    assert settings is not None
    ref = project.source.branch
    work = Path(tempfile.mkdtemp(prefix="sqlbench-dbt-build-"))
    try:
        (work / "profiles.yml").write_text(
            profiles_yml(dbt_project, schema=holder.schemas[0]), encoding="utf-8"
        )
        outcome = run_dbt(
            "build",
            dbt_project.project_dir,
            work,
            work,
            build_args(settings),
            log_dir=work / "logs",
            progress=progress,
            adapter=dbt_project.adapter,
        )
        log.parent.mkdir(parents=True, exist_ok=True)
        if (work / "logs" / "dbt.log").is_file():
            shutil.copyfile(work / "logs" / "dbt.log", log)
        if not outcome.success:
            raise DbtError(build_failure(outcome.result, outcome.exception, ref, log, project))
        return _compiled(outcome.result)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compiled(result: Any) -> list[Compiled]:
    """The models and snapshots a successful ``dbt build`` ran, from its result (each node as
    dbt compiled it, ``compiled_code`` its SQL, None when dbt kept none)."""
    found = []
    for each in getattr(result, "results", None) or []:
        node = each.node
        kind = str(node.resource_type)
        if kind not in ("model", "snapshot"):
            continue
        code = getattr(node, "compiled_code", None)
        found.append(
            Compiled(
                name=f"{kind} {str(node.name)!r}",
                materialized=str(getattr(node.config, "materialized", "") or ""),
                language=str(getattr(node, "language", "sql") or "sql"),
                code=code if isinstance(code, str) else None,
            )
        )
    return found


def _schemas(parsed: Parsed, parsed_with: str, key: str) -> tuple[str, ...]:
    """The schemas a build of ``key`` may create: the target's, then each custom one.

    Raises:
        DbtError: one would be longer than PostgreSQL's identifiers.
    """
    own = built_schema(parsed_with, parsed_with, key)
    found = {built_schema(n.schema, parsed_with, key) for n in parsed.nodes.values()}
    schemas = (own, *sorted(found - {own}))
    for schema in schemas:
        if len(schema.encode("utf-8")) > _MAX_IDENTIFIER:
            raise DbtError(
                f"dbt: the schema {schema!r} sqlbench would build into is longer than "
                f"PostgreSQL's {_MAX_IDENTIFIER} bytes: use a shorter target schema"
            )
    return schemas


def _relations(parsed: Parsed, parsed_with: str, key: str) -> dict[str, str]:
    return {
        n.name: f"{_quote(built_schema(n.schema, parsed_with, key))}.{_quote(n.alias)}"
        for n in parsed.nodes.values()
    }


def _quote(name: str) -> str:
    """A PostgreSQL identifier, quoted.

    Example:
        >>> _quote('shop_sqlb_0123"x')
        '"shop_sqlb_0123""x"'
    """
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class _Connect:
    """How the builder connects: the target's host, port, database and user, as dbt does."""

    url: sa.URL = field(repr=False)
    identity: str
    """Host, port and database (no credentials): which server's schemas these are."""
    reader: str | None
    """The warehouse URL's role when it is not the target's: granted read access to the
    build's schemas (a least-privilege role reads what the builder made)."""
    search_path: str | None = None
    """The target's ``search_path``, which dbt sets on its connections (how an unqualified
    name in a model's SQL was resolved)."""


def _check_target(project: DbtProject, url: str, display: str) -> _Connect:
    """The target's connection, checked against the warehouse: sqlbench runs the questions
    where dbt builds the models, so both must name the same PostgreSQL database.

    Raises:
        DbtError: the warehouse or the target is not PostgreSQL, or they name two databases.
    """
    try:
        warehouse = make_url(url)
    except (sa.exc.ArgumentError, ValueError) as err:
        raise DbtError(f"the warehouse {display} is not a valid database URL") from err
    backend = warehouse.get_backend_name()
    if backend in ("mysql", "mariadb"):
        raise DbtError(
            f"sqlbench.yml has `dbt:` with the MariaDB/MySQL warehouse {display}; sqlbench "
            "builds each ref's dbt models into schemas of their own, which MariaDB and MySQL "
            "do not have (a schema is a database there): use PostgreSQL or DuckDB"
        )
    if backend != "postgresql":
        raise DbtError(
            f"sqlbench.yml has `dbt:` with the warehouse {display}; sqlbench builds dbt "
            "projects on DuckDB (the embedded warehouse or a DuckDB file) and PostgreSQL only"
        )
    if project.adapter != "postgres":
        raise DbtError(
            f"dbt: target {project.target!r} ({project.profile_source}) is a {project.adapter} "
            f"target, but sqlbench.yml's warehouse {display} is PostgreSQL: use a postgres "
            "target building into the same database (`dbt: target`)"
        )
    target = rendered_profile(project)
    database = str(target.get("dbname") or target.get("database") or "")
    if database != (warehouse.database or ""):
        raise DbtError(
            f"dbt: target {project.target!r} builds into database {database!r}, but "
            f"sqlbench.yml's warehouse {display} is database {warehouse.database or ''!r}: "
            "sqlbench runs the questions where dbt builds the models, so both must name the "
            "same database"
        )
    query = {
        ours: str(target[theirs]) for theirs, ours in _CONNECT_KEYS.items() if theirs in target
    }
    port = int(target.get("port") or 5432)
    host = str(target.get("host") or "")
    builder = sa.URL.create(
        warehouse.drivername if "+" in warehouse.drivername else "postgresql+psycopg",
        username=str(target.get("user") or "") or None,
        password=str(target.get("password") or target.get("pass") or "") or None,
        host=host or None,
        port=port,
        database=database,
        query=query,
    )
    user = str(target.get("user") or "")
    reader = warehouse.username if warehouse.username and warehouse.username != user else None
    search_path = str(target.get("search_path") or "") or None
    return _Connect(builder, f"{host}:{port}/{database}", reader, search_path)


class _Holder:
    """A build's schemas while this process uses them: a connection of the builder's (as the
    target connects) holding a shared advisory lock on them, which ``release`` gives up,
    dropping the schemas when no other process holds one and they are not kept."""

    def __init__(
        self,
        connect: _Connect,
        schemas: tuple[str, ...],
        key: str,
        *,
        keep: bool,
        reader: str | None = None,
        sources: tuple[str, ...] = (),
        search_path: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        assert all(_ours(s, key) for s in schemas)
        self.schemas = schemas
        self.key = key
        self.keep = keep
        self.reader = reader
        self.sources = sources
        """The relations of the dbt sources the build reads (``Parsed.sources``)."""
        self.search_path = search_path
        """The target's ``search_path`` (``_Connect.search_path``)."""
        self.progress = progress
        self._lock_id = int(hashlib.sha256(schemas[0].encode()).hexdigest()[:15], 16)
        self._engine = sa.create_engine(connect.url, poolclass=sa.pool.NullPool)
        self._conn: sa.Connection | None = None

    def acquire(self, build: Callable[[], list[Compiled]]) -> bool:
        """Hold the shared lock on a finished build of the key whose sources are as it found
        them, running ``build()`` first (under the exclusive lock, after dropping what an
        unfinished or stale one left) when there is none. Returns whether it built.

        Raises:
            DbtError: the builder cannot connect, or ``build`` raised it.
        """
        try:
            conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        except sa.exc.SQLAlchemyError as err:
            self._engine.dispose()
            raise DbtError(
                f"dbt: cannot connect to PostgreSQL as the target does: {_message(err)}"
            ) from err
        self._conn = conn
        try:
            self._execute("SELECT pg_advisory_lock_shared(:id)")
            if self._stale() is None:
                self._grant()
                return False
            self._execute("SELECT pg_advisory_unlock_shared(:id)")
            self._execute("SELECT pg_advisory_lock(:id)")  # waits for a build of the same key
            try:
                stale = self._stale()
                if stale is None:
                    built = False
                else:
                    if stale and self.progress is not None:
                        self.progress(
                            f"not reusing the build in schema {self.schemas[0]}: {stale}; "
                            "building it afresh"
                        )
                    self._drop()  # what an interrupted or stale build of this key left
                    self._execute(f"CREATE SCHEMA {_quote(self.schemas[0])}")
                    found = read_state(conn, self.sources)  # before dbt reads them
                    try:
                        compiled = build()
                    except BaseException:
                        if not self.keep:
                            with contextlib.suppress(sa.exc.SQLAlchemyError):
                                self._drop()  # dbt's failure is the one said
                        raise
                    viewed = view_reads(conn, self.schemas, self.sources)
                    tabled, unread = table_reads(
                        conn, compiled, self.schemas, self.sources, self.search_path
                    )
                    if viewed or tabled:
                        found = {**read_state(conn, [*viewed, *tabled]), **found}
                    found = {**found, **unread}
                    self._execute(
                        f"COMMENT ON SCHEMA {_quote(self.schemas[0])} IS "
                        f"'{_DONE}{self.key}\n{encode(found)}'"
                    )
                    built = True
                self._grant()
                self._execute("SELECT pg_advisory_lock_shared(:id)")
            finally:
                self._execute("SELECT pg_advisory_unlock(:id)")
            return built
        except sa.exc.SQLAlchemyError as err:
            raise DbtError(
                f"dbt: PostgreSQL refused sqlbench's schema {self.schemas[0]!r}: {_message(err)}"
            ) from err

    def release(self) -> str:
        """Give the schemas up: drop them unless kept or another process still reads them."""
        schemas = ", ".join(self.schemas)
        try:
            if self.keep:
                return f"kept schemas {schemas} (dbt: keep_schemas)"
            self._execute("SELECT pg_advisory_unlock_shared(:id)")
            alone = self._execute("SELECT pg_try_advisory_lock(:id)").scalar()
            if not alone:
                return f"left schemas {schemas} to another sqlbench process reading them"
            try:
                self._drop()
            finally:
                self._execute("SELECT pg_advisory_unlock(:id)")
            return f"dropped schemas {schemas}"
        except sa.exc.SQLAlchemyError as err:
            return f"could not drop schemas {schemas}: {_message(err)}"
        finally:
            self.close()

    def close(self) -> None:
        """Close the connection (its advisory locks go with it)."""
        if self._conn is not None:
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                self._conn.close()
            self._conn = None
        self._engine.dispose()

    def _execute(self, sql: str, **params: Any) -> Any:
        assert self._conn is not None
        return self._conn.execute(sa.text(sql), {"id": self._lock_id, **params})

    def _stale(self) -> str | None:
        """None when a finished build of the key is there and its sources are as it found them;
        else why it cannot be reused (empty when there is no finished build)."""
        comment = self._execute(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = :name",
            name=self.schemas[0],
        ).scalar()
        mark, _, rest = str(comment or "").partition("\n")
        if mark != f"{_DONE}{self.key}":
            return ""
        recorded = decode(rest)
        assert self._conn is not None
        return unchanged(recorded, read_state(self._conn, [*relations(recorded), *self.sources]))

    def _grant(self) -> None:
        """Let the warehouse's role (when it is another) read the build's schemas."""
        if self.reader is None:
            return
        existing = set(
            self._execute(
                "SELECT nspname FROM pg_namespace WHERE nspname = ANY(:names)",
                names=list(self.schemas),
            ).scalars()
        )
        role = _quote(self.reader)
        for schema in (s for s in self.schemas if s in existing):
            self._execute(f"GRANT USAGE ON SCHEMA {_quote(schema)} TO {role}")
            self._execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {_quote(schema)} TO {role}")

    def _drop(self) -> None:
        """Drop the build's schemas that exist: only names carrying its key's suffix."""
        for schema in self.schemas:
            if not _ours(schema, self.key):
                raise DbtError(f"sqlbench drops only schemas of its own, not {schema!r}")
            self._execute(f"DROP SCHEMA IF EXISTS {_quote(schema)} CASCADE")


def _ours(schema: str, key: str) -> bool:
    """Whether ``schema`` is one a build of ``key`` makes: ``<schema>_sqlb_<key[:12]>``, or that
    followed by ``_<custom>``.

    Example:
        >>> _ours("shop_sqlb_0123456789ab_marts", "0123456789abcdef"), _ours("shop", "0123")
        (True, False)
    """
    mark = f"{SCHEMA_MARK}{key[:12]}"
    head, found, tail = schema.partition(mark)
    return bool(head and found and (not tail or tail.startswith("_")))


def _message(err: BaseException) -> str:
    orig = getattr(err, "orig", None)
    text = str(orig if orig is not None else err).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(err).__name__


_LIVE: dict[tuple[str, str], _Holder] = {}
"""The server builds this process holds, by server and key, until ``release_builds``."""
_LIVE_LOCK = threading.Lock()
_LIVE_PID = [os.getpid()]
_EXIT_REGISTERED = [False]


def _register_exit() -> None:
    """Drop what a command left at interpreter exit too (a library caller that never calls
    ``release_builds``); the command line calls it when each command ends."""
    with _LIVE_LOCK:
        if _EXIT_REGISTERED[0]:
            return
        _EXIT_REGISTERED[0] = True
        _LIVE_PID[0] = os.getpid()
    atexit.register(release_builds)
