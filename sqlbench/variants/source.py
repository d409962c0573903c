"""Where data variants come from and where they run (docs/verdicts.md, ``variants``): the tables of
the warehouse read once, and each variant built as a database of the same kind, so the ground
truth and the agent's SQL run there in the warehouse's own dialect.

- Embedded DuckDB built by setup, or a DuckDB file attached read-only: the tables (setup's and
  the file's) are read through the engine; a variant is a fresh in-memory DuckDB holding them,
  with the file's views and setup's views re-created on top.
- A SQLite file (opened read-only): read with Python's ``sqlite3`` (read-only URI, never
  written); a variant is a temporary SQLite file made with the original ``CREATE TABLE`` and
  ``CREATE VIEW`` statements from ``sqlite_master``, removed when the run ends.

At most ``READ_ROWS`` rows of a table are read. Other warehouses (server databases) are refused
before a run starts: their data cannot be copied cheaply and faithfully.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.duckdb import BaseTable, DuckDBEngine
from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
from sqlbench.errors import EngineError, SqlbenchError
from sqlbench.project.files import RunSettings
from sqlbench.tempdirs import make_temp
from sqlbench.variants.generate import Reference, Table

__all__ = ["READ_ROWS", "VariantSource", "variant_source"]

READ_ROWS = 100_000
"""Rows read per table (variants sample at most a few hundred of them)."""


class VariantSource(ABC):
    """A warehouse's tables, and how a variant of them becomes a database."""

    dialect: str
    tables: list[Table]

    @abstractmethod
    def build(self, tables: list[Table]) -> object:
        """The variant stored compactly, ready for ``database``.

        Raises:
            EngineError: The variant's values do not fit its columns' types or constraints.
        """

    @abstractmethod
    @contextmanager
    def database(self, built: object) -> Iterator[Engine]:
        """An engine over a built variant, closed on exit."""

    def run_agent(self, built: object, sql: str, settings: RunSettings) -> ResultSet:
        """The agent's SQL on a built variant, within the run's limits, bounded like agent SQL
        on the warehouse: here, in this process, on a database opened for it (a SQLite
        variant is read through the SQLite engine, whose longest value is ``max_result_mb``).

        Raises:
            QueryError: As ``Engine.run_agent``.
        """
        with self.database(built) as engine:
            return engine.run_agent(
                sql,
                timeout_s=settings.query_timeout_s,
                max_rows=settings.max_rows,
                max_bytes=settings.max_result_bytes,
            )

    @abstractmethod
    def discard(self, built: object) -> None:
        """Forget a built variant that is not kept."""

    @abstractmethod
    def close(self) -> None:
        """Remove what the variants hold on disk."""


def variant_source(engine: Engine, display: str) -> VariantSource:
    """The variant source of an opened, set-up warehouse.

    Raises:
        SqlbenchError: Variants cannot be made for this warehouse (``display`` names it).
        EngineError: Its tables cannot be read.
    """
    if isinstance(engine, DuckDBEngine):
        return DuckDBSource(engine)
    if isinstance(engine, SqlAlchemyEngine) and engine.sqlite_path is not None:
        if engine.has_setup:
            raise SqlbenchError(
                f"compare: variants cannot copy the setup views of {display}, a SQLite file "
                "with setup: set variants to 0 for it, or move the views into the file"
            )
        return SqliteSource(engine.sqlite_path)
    raise SqlbenchError(
        "compare: variants needs the data in embedded DuckDB, a DuckDB file or a SQLite file: "
        f"{display} is none of them (set variants to 0 for it)"
    )


class DuckDBSource(VariantSource):
    """Setup's tables and an attached DuckDB file's, as in-memory DuckDB variants. Where the
    warehouse's engine runs agent SQL in a query process, agent SQL on its variants runs in
    there too (``DuckDBEngine.run_agent_on_variant``): a single huge value on a variant is that
    answer's ``too_large``, not the run's memory."""

    dialect = "duckdb"

    def __init__(self, engine: DuckDBEngine) -> None:
        base, self._views = engine.base_tables(READ_ROWS)
        self._engine = engine
        self.tables = [
            Table(
                schema=t.schema,
                name=t.name,
                columns=t.columns,
                keys=t.keys,
                rows=t.data.to_pylist(),
                references=tuple(Reference(c, t.schema, table, r) for c, table, r in t.references),
                extra=t.data.schema,
            )
            for t in base
        ]

    def build(self, tables: list[Table]) -> object:
        try:
            return [
                BaseTable(
                    t.schema,
                    t.name,
                    t.columns,
                    t.keys,
                    pa.Table.from_pylist(t.rows, schema=t.extra),
                )
                for t in tables
            ]
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as err:
            # A moved value the column's type cannot hold (a DECIMAL(3,1) past 99.9).
            raise EngineError(f"a value does not fit its column: {err}") from err

    @contextmanager
    def database(self, built: object) -> Iterator[Engine]:
        assert isinstance(built, list)
        engine = DuckDBEngine.from_tables(built, self._views)
        try:
            yield engine
        finally:
            engine.close()

    def run_agent(self, built: object, sql: str, settings: RunSettings) -> ResultSet:
        """In the warehouse engine's query process when it has one, else here."""
        assert isinstance(built, list)
        found = self._engine.run_agent_on_variant(
            built,
            self._views,
            sql,
            timeout_s=settings.query_timeout_s,
            max_rows=settings.max_rows,
            max_bytes=settings.max_result_bytes,
        )
        return found if found is not None else super().run_agent(built, sql, settings)

    def discard(self, built: object) -> None:
        """Nothing to remove: the data is only in memory."""

    def close(self) -> None:
        """Nothing to remove: the data is only in memory."""


class SqliteSource(VariantSource):
    """A SQLite file's tables, as temporary SQLite files made with the file's own DDL."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self._folder = make_temp("variants", path.stem)
        self._remove = weakref.finalize(self, shutil.rmtree, str(self._folder), True)
        self._numbers = itertools.count()
        try:
            con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        except sqlite3.Error as err:
            raise EngineError(f"cannot open the SQLite file {path} read-only: {err}") from err
        try:
            self._ddl, self._views, self.tables = _read_sqlite(con)
        except sqlite3.Error as err:
            raise EngineError(f"cannot read the tables of the SQLite file {path}: {err}") from err
        finally:
            con.close()

    def build(self, tables: list[Table]) -> object:
        path = self._folder / f"variant-{next(self._numbers)}.sqlite"
        con = sqlite3.connect(path, isolation_level=None)
        try:
            # A scratch file: no journal, no waiting for the disk, one transaction.
            con.execute("PRAGMA journal_mode = OFF")
            con.execute("PRAGMA synchronous = OFF")
            con.execute("BEGIN")
            for table in tables:
                con.execute(self._ddl[table.name])
                names = [c for c, _, _ in table.columns]
                if table.rows:
                    con.executemany(
                        f"INSERT INTO {_quote(table.name)} ({', '.join(map(_quote, names))}) "
                        f"VALUES ({', '.join('?' for _ in names)})",
                        [tuple(row.get(c) for c in names) for row in table.rows],
                    )
            for sql in self._views:
                con.execute(sql)
            con.execute("COMMIT")
        except sqlite3.Error as err:
            con.close()
            path.unlink(missing_ok=True)
            raise EngineError(f"cannot build a SQLite data variant: {err}") from err
        con.close()
        return path

    @contextmanager
    def database(self, built: object) -> Iterator[Engine]:
        assert isinstance(built, Path)
        engine = SqlAlchemyEngine(
            f"sqlite:///{built}",
            display="data variant",
            dialect="sqlite",
            project_root=self._folder,
            pool_size=1,
        )
        try:
            yield engine
        finally:
            engine.close()

    def discard(self, built: object) -> None:
        assert isinstance(built, Path)
        built.unlink(missing_ok=True)

    def close(self) -> None:
        self._remove()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _read_sqlite(con: sqlite3.Connection) -> tuple[dict[str, str], list[str], list[Table]]:
    """CREATE TABLE per table name, CREATE VIEW statements, and the tables with their rows,
    keys and references."""
    master = con.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND type IN ('table', 'view') AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY rowid"
    ).fetchall()
    ddl = {str(name): str(sql) for kind, name, sql in master if kind == "table"}
    views = [str(sql) for kind, _, sql in master if kind == "view"]
    tables: list[Table] = []
    primary: dict[str, tuple[str, ...]] = {}
    infos: dict[str, list[Any]] = {}
    for name in ddl:
        infos[name] = con.execute(f"PRAGMA table_info({_quote(name)})").fetchall()
        pk = sorted((row[5], row[1]) for row in infos[name] if row[5])
        primary[name.lower()] = tuple(str(column) for _, column in pk)
    for name in ddl:
        info = infos[name]
        columns = tuple((str(row[1]), str(row[2] or ""), not row[3] and not row[5]) for row in info)
        keys: list[tuple[str, ...]] = []
        if primary[name.lower()]:
            keys.append(primary[name.lower()])
        for index in con.execute(f"PRAGMA index_list({_quote(name)})").fetchall():
            if not index[2]:  # not unique
                continue
            cols = tuple(
                str(row[2])
                for row in con.execute(f"PRAGMA index_info({_quote(str(index[1]))})").fetchall()
            )
            if cols and None not in cols and cols not in keys:
                keys.append(cols)
        references: dict[int, tuple[str, list[str], list[str | None]]] = {}
        for row in con.execute(f"PRAGMA foreign_key_list({_quote(name)})").fetchall():
            ident, _seq, target, source, to = row[0], row[1], row[2], row[3], row[4]
            entry = references.setdefault(int(ident), (str(target), [], []))
            entry[1].append(str(source))
            entry[2].append(None if to is None else str(to))
        refs: list[Reference] = []
        for target, sources, tos in references.values():
            resolved = tuple(tos) if None not in tos else primary.get(target.lower(), ())
            if len(resolved) != len(sources) or target.lower() not in primary:
                continue  # refers to a table that is not here, or to no named columns
            actual = next(t for t in ddl if t.lower() == target.lower())
            refs.append(Reference(tuple(sources), "main", actual, tuple(str(c) for c in resolved)))
        cursor = con.execute(f"SELECT * FROM {_quote(name)} LIMIT {READ_ROWS}")
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        tables.append(
            Table(
                schema="main",
                name=name,
                columns=columns,
                keys=tuple(keys),
                rows=rows,
                references=tuple(refs),
            )
        )
    return ddl, views, tables
