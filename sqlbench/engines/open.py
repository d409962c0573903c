"""Opening the warehouse a project names (docs/project-files.md, ``warehouse``, ``setup``).

- no ``warehouse``: a fresh in-memory DuckDB database;
- a path (not a URL): a DuckDB file attached read-only, or a SQLite file opened read-only when
  the file is SQLite's; relative paths resolve against the project root;
- ``duckdb:///path``: the same DuckDB file handling;
- any other URL: SQLAlchemy, with ``${ENV}`` resolved here, at connect time. The resolved URL
  lives only inside the connection pool; messages show the URL as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlbench.engines.base import Engine
from sqlbench.engines.limits import (
    duckdb_memory_limit_mb,
    duckdb_query_process_mb,
    server_query_process_mb,
)
from sqlbench.errors import EngineError, EnvVarError
from sqlbench.project.confine import outside_message, outside_project
from sqlbench.project.dialect import (
    url_location,
    url_scheme,
    warehouse_dialect,
    warehouse_url_problem,
)
from sqlbench.project.envvars import resolve
from sqlbench.project.files import DEFAULT_WAREHOUSE, Project, Settings

_SQLITE_MAGIC = b"SQLite format 3\x00"


def open_engine(settings: Settings, project_root: Path) -> Engine:
    """Open the project's warehouse (not yet set up).

    Args:
        settings: The project's sqlbench.yml (``warehouse``, ``dialect``, ``run.concurrency``).
        project_root: Where relative warehouse paths resolve.

    Returns:
        An engine; call ``engine.setup(project_root, setup_files(settings, project_root))``
        before running queries (``open_project_engine`` does both).

    Raises:
        EngineError: an unset ``${ENV}``, a missing file or driver, or an unreachable database.
    """
    memory = duckdb_memory_limit_mb(settings.run)
    process = duckdb_query_process_mb(settings.run)
    warehouse = settings.warehouse
    if warehouse is None:
        return _duckdb(memory_limit_mb=memory, query_process_mb=process)
    try:
        resolved = resolve(warehouse, where="sqlbench.yml warehouse")
    except EnvVarError as err:
        raise EngineError(str(err)) from err
    scheme = url_scheme(resolved)
    if scheme is None:
        path = _local(Path(resolved), project_root)
        if _is_sqlite_file(path):
            return _sqlalchemy(f"sqlite:///{path}", warehouse, "sqlite", settings, project_root)
        return _duckdb(path, display=warehouse, memory_limit_mb=memory, query_process_mb=process)
    if scheme == "duckdb":
        # duckdb:///relative.duckdb, duckdb:////absolute.duckdb, duckdb:///:memory:
        rest = url_location(resolved)
        location = rest[1:] if rest.startswith("/") else rest
        if location in ("", ":memory:"):
            return _duckdb(display=warehouse, memory_limit_mb=memory, query_process_mb=process)
        return _duckdb(
            _local(Path(location), project_root),
            display=warehouse,
            memory_limit_mb=memory,
            query_process_mb=process,
        )
    if scheme in ("spark", "sc"):
        from sqlbench.engines.spark import SparkEngine

        return SparkEngine(
            resolved,
            display=warehouse,
            source_dialect=settings.dialect or "spark",
            max_result_mb=max(1, round(settings.run.max_result_mb)),
        )
    url_problem = warehouse_url_problem(resolved, {})
    if url_problem is not None:
        raise EngineError(f"warehouse in sqlbench.yml: {url_problem}")
    dialect = warehouse_dialect(resolved) or settings.dialect
    if dialect is None:
        raise EngineError(
            f"sqlbench does not know the SQL dialect of {scheme}:// warehouses; "
            "set `dialect` in sqlbench.yml to its sqlglot name"
        )
    return _sqlalchemy(resolved, warehouse, dialect, settings, project_root)


def _duckdb(database: Path | None = None, **options: Any) -> Engine:
    """A DuckDB engine: DuckDB is imported for a DuckDB warehouse only (a SQLite one's run
    does not load it)."""
    from sqlbench.engines.duckdb import DuckDBEngine

    return DuckDBEngine(database, **options)


def _sqlalchemy(
    url: str, display: str, dialect: str, settings: Settings, project_root: Path
) -> Engine:
    from sqlbench.engines.sqlalchemy import SqlAlchemyEngine

    return SqlAlchemyEngine(
        url,
        display=display,
        dialect=dialect,
        project_root=project_root,
        pool_size=settings.run.concurrency,
        query_process_mb=server_query_process_mb(settings.run),
    )


def setup_files(settings: Settings, project_root: Path) -> list[Path]:
    """The setup SQL files, in order: each ``setup`` glob's matches sorted by path, each file
    once (its first match wins).

    Raises:
        EngineError: a glob is absolute or matches no file.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> for name in ("models/b.sql", "models/a.sql", "seed.sql"):
        ...     (root / name).parent.mkdir(exist_ok=True); _ = (root / name).write_text("")
        >>> settings = Settings(setup=["seed.sql", "models/*.sql"])
        >>> [p.relative_to(root).as_posix() for p in setup_files(settings, root)]
        ['seed.sql', 'models/a.sql', 'models/b.sql']
    """
    files: list[Path] = []
    for pattern in settings.setup:
        if Path(pattern).is_absolute():
            raise EngineError(
                f"setup pattern {pattern!r} in sqlbench.yml must be relative to the project folder"
            )
        matches = sorted(p for p in project_root.glob(pattern) if p.is_file())
        for match in matches:
            if outside_project(project_root, match):
                raise EngineError(outside_message(match.relative_to(project_root).as_posix()))
        if not matches:
            raise EngineError(f"setup pattern {pattern!r} in sqlbench.yml matches no file")
        files.extend(p for p in matches if p not in files)
    return files


def open_project_engine(project: Project, warehouse: str | None = None) -> Engine:
    """Open the project's warehouse (or the one named in ``warehouses:``) and run its setup
    (at the project's root, which for ``--branch REF`` is that ref's files).

    Raises:
        EngineError: the warehouse cannot be opened or its setup fails (the message names a
            named warehouse).
    """
    settings = project.settings.for_warehouse(warehouse)
    try:
        engine = open_engine(settings, project.root)
        try:
            engine.setup(project.root, setup_files(settings, project.root))
        except BaseException:
            engine.close()
            raise
    except EngineError as err:
        if warehouse is None or warehouse == DEFAULT_WAREHOUSE:
            raise
        raise EngineError(f"warehouse {warehouse!r}: {err}") from err
    return engine


def _local(path: Path, project_root: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else project_root / path


def _is_sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False
