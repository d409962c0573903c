"""The execution-engine interface: where ground truth, setup and agent SQL run.

Engines are thread-safe: the run loop calls ``run_truth``/``run_agent`` from many threads.
Failures of one query raise ``sqlbench.errors.QueryError`` (with a ``QueryErrorKind``);
failures to open or set up the warehouse raise ``sqlbench.errors.EngineError``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:  # imported where used: the DuckDB query process never loads pandas
    import pandas as pd

    from sqlbench.engines.work import Work


@dataclass(frozen=True)
class ResultSet:
    """A query's result with its types kept (Decimal, dates, time zones, duplicate names)."""

    table: pa.Table
    """Arrow table; column names may repeat."""
    work: Work | None = None
    """What the warehouse reports the query read as it ran (DuckDB's profiler, a local Spark
    session's plan metrics; ``engines.work``); None where it reports nothing then."""

    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame for ``compare_results``: decimals stay ``Decimal``, dates stay
        ``datetime.date``, tz-aware timestamps stay tz-aware, duplicate names stay duplicated,
        a column of several kinds of values (a union) is an object column of those values.
        Dates past Python's range (year 12024, ``infinity``) make their column
        ``datetime64``; a time of day of 24:00:00 becomes a one-day ``Timedelta``."""
        import pandas as pd

        names = list(self.table.column_names)
        columns = [_column_to_pandas(col) for col in self.table.columns]
        frame = (
            pd.concat(columns, axis=1, ignore_index=True)
            if columns
            else pd.DataFrame(index=range(self.table.num_rows))
        )
        frame.columns = names
        return frame

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return int(self.table.num_rows)


def _column_to_pandas(column: pa.ChunkedArray) -> pd.Series:
    import pandas as pd

    kind = column.type
    if pa.types.is_union(kind):
        return pd.Series(column.to_pylist(), dtype=object)
    try:
        return column.to_pandas(date_as_object=True)
    except (ValueError, OverflowError):
        if pa.types.is_date(kind):
            return column.to_pandas(date_as_object=False)
        if not pa.types.is_time(kind):
            raise
    # A time of day past 23:59:59.999999 (24:00:00), which datetime.time cannot hold.
    unit = kind.unit
    storage = pa.int64() if kind.bit_width == 64 else pa.int32()
    raw = pa.chunked_array([chunk.view(storage) for chunk in column.chunks], type=storage)
    day = pd.Timedelta(days=1)
    values = [None if v is None else pd.Timedelta(v, unit=unit) for v in raw.to_pylist()]
    return pd.Series(
        [v if v is None or v >= day else (pd.Timestamp(0) + v).time() for v in values],
        dtype=object,
    )


@dataclass(frozen=True)
class ColumnInfo:
    """One column of a table or view, for the llm agent's schema prompt."""

    name: str
    type: str


@dataclass(frozen=True)
class TableInfo:
    """One table or view visible to agent SQL."""

    name: str
    columns: list[ColumnInfo] = field(default_factory=list)
    schema: str | None = None


class Engine(ABC):
    """A warehouse connection set up for one run."""

    dialect: str
    """sqlglot dialect name of the warehouse (duckdb, postgres, mysql, sqlite, ...)."""
    relations: Mapping[str, str] = MappingProxyType({})
    """dbt model name -> its relation, for ``{{ ref('m') }}`` in ground truth (docs/dbt.md);
    empty without a dbt build."""

    @abstractmethod
    def setup(self, project_root: Path, sql_files: list[Path]) -> None:
        """Run the project's setup SQL (trusted) so the data model exists for this run;
        relative file paths inside the SQL resolve against ``project_root``."""

    @abstractmethod
    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run trusted SQL (ground truth). Over ``max_rows`` raises TOO_MANY_ROWS; past
        ``max_bytes`` fetched (None: no limit), or the engine out of memory, TOO_LARGE."""

    @abstractmethod
    def run_agent(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run untrusted SQL behind the statement guard, read-only. Over ``max_rows`` raises
        TOO_MANY_ROWS, past ``max_bytes`` TOO_LARGE; refused statements raise NOT_READ_ONLY
        before reaching the database. Checking the SQL counts against ``timeout_s``."""

    @abstractmethod
    def tables(self) -> list[TableInfo]:
        """Tables and views agent SQL may read (after setup)."""

    def work_of(self, sql: str, result: ResultSet) -> Work | None:
        """What ``sql``, whose run gave ``result``, read (``engines.work``): by default what
        the run reported (``result.work``); an engine that reports it from its planner instead
        asks it here. None where the engine reports nothing."""
        del sql
        return result.work

    def start_query_process(self) -> None:
        """Start the process agent SQL and ground truth run in, where the engine has one, now
        rather than on the first query: a run starts it before its first question, so no
        question's timings include sqlbench's own start-up (docs/runs.md).

        Raises:
            QueryProcessError: it cannot start (the run's fault, not an answer's).
        """
        return None  # engines without a query process start nothing

    @abstractmethod
    def close(self) -> None:
        """Release connections and temporary files."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
