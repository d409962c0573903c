"""Engines by URL scheme: which module opens the warehouse ``warehouse:`` names.

Each engine's module defines ``open_warehouse(target: WarehouseTarget) -> Engine``, and
``ENGINES`` names the module that opens each scheme (None: a DuckDB file path, or no
``warehouse:``); a URL of any other scheme is a SQLAlchemy database (``OTHER_URLS``). A new
engine is its module and one entry here. The module is imported when a warehouse of its
scheme is opened, so a run on SQLite loads no DuckDB and one on DuckDB no Spark.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from sqlbench.engines.base import Engine
from sqlbench.project.dialect import url_scheme
from sqlbench.project.files import Settings

ENGINES: dict[str | None, str] = {
    None: "duckdb",
    "duckdb": "duckdb",
    "spark": "spark",
    "sc": "spark",
}
"""URL scheme -> the module of ``sqlbench.engines`` that opens it."""

OTHER_URLS = "sqlalchemy"
"""The module that opens a URL of any scheme ``ENGINES`` does not name."""


@dataclass(frozen=True)
class WarehouseTarget:
    """A warehouse to open: where it is, and the settings it is opened with."""

    url: str | None
    """The URL or file path, ``${ENV}`` resolved (secrets included: never shown); None: no
    ``warehouse:`` (an in-memory DuckDB)."""
    display: str | None
    """How messages show it: as written in sqlbench.yml."""
    settings: Settings
    project_root: Path
    search_path: tuple[str, ...] = ()
    """Schemas searched first for unqualified names (a dbt build's on PostgreSQL:
    docs/dbt.md); empty: the database's own search path."""

    def local(self, path: str) -> Path:
        """A file path of the warehouse, ``~`` expanded and relative to the project root."""
        found = Path(path).expanduser()
        return found if found.is_absolute() else self.project_root / found


def engine_module(url: str | None) -> str:
    """The module of ``sqlbench.engines`` that opens ``url`` (see ``ENGINES``).

    Example:
        >>> engine_module("sc://spark:15002"), engine_module("data/shop.duckdb")
        ('spark', 'duckdb')
        >>> engine_module("postgresql+psycopg://u@db/x")
        'sqlalchemy'
    """
    scheme = None if url is None else url_scheme(url)
    return ENGINES.get(scheme, OTHER_URLS)


def open_warehouse(target: WarehouseTarget) -> Engine:
    """Open ``target`` with its scheme's engine (not yet set up).

    Raises:
        EngineError: a missing file or driver, an unknown dialect, an unreachable database.
    """
    module = importlib.import_module(f"sqlbench.engines.{engine_module(target.url)}")
    engine: Engine = module.open_warehouse(target)
    return engine
