"""Opening the warehouse a project names (docs/project-files.md, ``warehouse``, ``setup``).

- no ``warehouse``: a fresh in-memory DuckDB database;
- a path (not a URL): a DuckDB file attached read-only, or a SQLite file opened read-only when
  the file is SQLite's; relative paths resolve against the project root;
- ``duckdb:///path``: the same DuckDB file handling;
- any other URL: SQLAlchemy, with ``${ENV}`` resolved here, at connect time. The resolved URL
  lives only inside the connection pool; messages show the URL as written.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sqlbench.dbt.invoke import Progress
from sqlbench.engines.base import Engine
from sqlbench.engines.registry import WarehouseTarget, open_warehouse
from sqlbench.errors import EngineError, EnvVarError
from sqlbench.project.confine import outside_message, outside_project
from sqlbench.project.dialect import url_location, url_scheme
from sqlbench.project.envvars import resolve
from sqlbench.project.files import DEFAULT_WAREHOUSE, Project, Settings

_SQLITE_MAGIC = b"SQLite format 3\x00"


def open_engine(
    settings: Settings, project_root: Path, *, search_path: tuple[str, ...] = ()
) -> Engine:
    """Open the project's warehouse (not yet set up).

    Args:
        settings: The project's sqlbench.yml (``warehouse``, ``dialect``, ``run.concurrency``).
        project_root: Where relative warehouse paths resolve.
        search_path: Schemas searched first for unqualified names (a dbt build's, on
            PostgreSQL).

    Returns:
        An engine; call ``engine.setup(project_root, setup_files(settings, project_root))``
        before running queries (``open_project_engine`` does both).

    Raises:
        EngineError: an unset ``${ENV}``, a missing file or driver, or an unreachable database.
    """
    warehouse = settings.warehouse
    if warehouse is None:
        return open_warehouse(WarehouseTarget(None, None, settings, project_root))
    resolved = _resolved(warehouse)
    target = WarehouseTarget(resolved, warehouse, settings, project_root, search_path)
    if url_scheme(resolved) is None and _is_sqlite_file(target.local(resolved)):
        target = replace(target, url=f"sqlite:///{target.local(resolved)}")
    return open_warehouse(target)


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


def open_project_engine(
    project: Project, warehouse: str | None = None, *, progress: Progress | None = None
) -> Engine:
    """Open the project's warehouse (or the one named in ``warehouses:``) and run its setup
    (at the project's root, which for ``--branch REF`` is that ref's files). With ``dbt:``,
    the default warehouse is the ref's dbt build (``sqlbench.dbt.build.build_ref``, or on
    PostgreSQL ``sqlbench.dbt.server.build_on_server``, whose schemas are searched first;
    ``progress`` gets dbt's progress lines) and setup SQL runs on top of it.

    Raises:
        EngineError: the warehouse cannot be opened, the dbt build fails (``DbtError``) or its
            setup fails (the message names a named warehouse).
    """
    settings = project.settings.for_warehouse(warehouse)
    relations: dict[str, str] = {}
    search_path: tuple[str, ...] = ()
    if settings.dbt is not None and (warehouse is None or warehouse == DEFAULT_WAREHOUSE):
        settings, relations, search_path = _dbt_warehouse(project, settings, progress)
    try:
        engine = open_engine(settings, project.root, search_path=search_path)
        engine.relations = relations
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


def _dbt_warehouse(
    project: Project, settings: Settings, progress: Progress | None
) -> tuple[Settings, dict[str, str], tuple[str, ...]]:
    """The settings with the ref's dbt build as the warehouse, its models' relations and the
    schemas to search first. A DuckDB file ``warehouse`` is where the build starts from (its
    tables are the sources); on a PostgreSQL warehouse the build goes to schemas of its own
    there, searched first."""
    server = dbt_server(settings)
    if server is not None:
        from sqlbench.dbt.server import build_on_server

        assert settings.warehouse is not None
        built = build_on_server(project, server, display=settings.warehouse, progress=progress)
        if progress is not None:
            done = "built" if built.built else "reusing the build of"
            progress(
                f"{done} {project.source.branch} in schema {built.schemas[0]} ({built.key}, "
                f"{built.seconds:.1f} s); dbt's log: .sqlbench/dbt/logs/{built.key}.log"
            )
        return settings, built.relations, built.schemas
    from sqlbench.dbt.build import build_ref

    build = build_ref(project, warehouse=dbt_start(settings, project.root), progress=progress)
    if progress is not None:
        done = "built" if build.built else "reusing the build of"
        progress(
            f"{done} {project.source.branch} ({build.key}, {build.seconds:.1f} s); dbt's log: "
            f".sqlbench/dbt/logs/{build.key}.log"
        )
    return settings.model_copy(update={"warehouse": str(build.database)}), build.relations, ()


def _resolved(warehouse: str) -> str:
    """``warehouse`` with its ``${ENV}`` references filled in.

    Raises:
        EngineError: an unset ``${ENV}``.
    """
    try:
        return resolve(warehouse, where="sqlbench.yml warehouse")
    except EnvVarError as err:
        raise EngineError(str(err)) from err


def dbt_server(settings: Settings) -> str | None:
    """The resolved URL of a server ``warehouse`` a dbt build goes to (docs/dbt.md), or None
    when the build is a DuckDB file (the embedded warehouse, or a DuckDB ``warehouse``).

    Raises:
        EngineError: an unset ``${ENV}``.
    """
    if settings.warehouse is None:
        return None
    resolved = _resolved(settings.warehouse)
    scheme = url_scheme(resolved)
    return None if scheme is None or scheme in ("duckdb", "sqlite") else resolved


def dbt_start(settings: Settings, project_root: Path) -> Path | None:
    """The DuckDB file a dbt build starts from: the ``warehouse`` file, or None for the
    embedded warehouse (docs/dbt.md).

    Raises:
        EngineError: the warehouse is a server or a SQLite file (dbt builds on DuckDB here), an
            unset ``${ENV}``, or a missing file.
    """
    if settings.warehouse is None:
        return None
    resolved = _resolved(settings.warehouse)
    location = resolved
    scheme = url_scheme(resolved)
    if scheme is not None:
        rest = url_location(resolved)
        location = rest[1:] if rest.startswith("/") else rest
        if scheme != "duckdb" or location in ("", ":memory:"):
            location = ""
    path = _local(Path(location), project_root) if location else None
    if path is None or _is_sqlite_file(path):
        raise EngineError(
            f"sqlbench.yml has `dbt:` with warehouse {settings.warehouse!r}; sqlbench builds "
            "dbt projects on the embedded warehouse, a DuckDB file or PostgreSQL (docs/dbt.md)"
        )
    if not path.is_file():
        raise EngineError(f"the warehouse DuckDB file {path} does not exist")
    return path


def _local(path: Path, project_root: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else project_root / path


def _is_sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False
