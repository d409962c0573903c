"""Limits on one query, whatever the agent wrote (docs/project-files.md ``run:``, docs/verdicts.md
reasons).

Agent SQL is bounded before anything parses it (``run.max_sql_kb`` and a parenthesis depth
sqlglot's recursive parser survives), its check counts against ``run.query_timeout_s``, and
its result against ``run.max_rows`` and ``run.max_result_mb`` while it is fetched. The
embedded DuckDB gets a memory limit derived from ``run.max_result_mb``. Every limit reached is
a ``QueryError`` whose message names the limit and what was reached.
"""

from __future__ import annotations

import re

from sqlbench.engines.base import Engine, ResultSet
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import RunSettings

MAX_SQL_DEPTH = 30
"""Deepest parenthesis nesting of agent SQL that sqlbench parses (sqlglot's recursive parser
overflows Python's stack at 40 to 50 levels of nested expressions, by dialect)."""


def check_sql_limits(sql: str, *, max_bytes: int) -> None:
    """Refuse agent SQL longer than ``max_bytes`` (UTF-8) or nested deeper than
    ``MAX_SQL_DEPTH`` parentheses, before anything parses it (a 4 MB IN list takes sqlglot
    minutes and gigabytes; a few thousand parentheses overflow its recursion).

    Raises:
        QueryError: kind SQL_LIMIT, saying which limit and the size or depth reached.

    Example:
        >>> check_sql_limits("SELECT ((1))", max_bytes=1024)
        >>> try:
        ...     check_sql_limits("SELECT " + "(" * 50 + "1" + ")" * 50, max_bytes=1024)
        ... except QueryError as err:
        ...     print(err.message)
        the SQL nests parentheses 50 deep, over sqlbench's limit of 30; it was not parsed or run
    """
    size = len(sql.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise QueryError(
            QueryErrorKind.SQL_LIMIT,
            f"the SQL is {_kib(size)} KB, over run.max_sql_kb={_kib(max_bytes)}; "
            "it was not parsed or run",
        )
    depth = nesting_depth(sql)
    if depth > MAX_SQL_DEPTH:
        raise QueryError(
            QueryErrorKind.SQL_LIMIT,
            f"the SQL nests parentheses {depth} deep, over sqlbench's limit of "
            f"{MAX_SQL_DEPTH}; it was not parsed or run",
        )


def _kib(size: int) -> str:
    value = size / 1024
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


_DEPTH_TOKENS = re.compile(
    r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|--[^\n]*|/\*.*?(?:\*/|\Z)|[()]", re.S
)


def nesting_depth(sql: str) -> int:
    """The deepest parenthesis nesting of ``sql`` outside strings, quoted names and comments.

    Example:
        >>> nesting_depth("SELECT ((1)), '((((' -- (((")
        2
    """
    depth = deepest = 0
    for match in _DEPTH_TOKENS.finditer(sql):
        token = match.group()
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth = max(0, depth - 1)
    return deepest


def run_agent_sql(engine: Engine, sql: str, run: RunSettings) -> ResultSet:
    """Run agent SQL within every ``run:`` limit: text size and depth first (nothing parses
    SQL past them), then the guard and the query inside ``query_timeout_s``, fetching at most
    ``max_rows`` rows and ``max_result_mb`` bytes.

    Raises:
        QueryError: any limit reached (SQL_LIMIT, TIMEOUT, TOO_MANY_ROWS, TOO_LARGE), or the
            SQL refused or failing.
    """
    check_sql_limits(sql, max_bytes=run.max_sql_bytes)
    return engine.run_agent(
        sql,
        timeout_s=run.query_timeout_s,
        max_rows=run.max_rows,
        max_bytes=run.max_result_bytes,
    )


def duckdb_memory_limit_mb(run: RunSettings) -> int:
    """The embedded DuckDB's memory limit: twice ``max_result_mb``, at least 256 MB (with
    the defaults 512 MB, which keeps the sqlbench process under 2 GB with 8 queries at once).

    Example:
        >>> [duckdb_memory_limit_mb(RunSettings(max_result_mb=mb)) for mb in (256, 9)]
        [512, 256]
    """
    return max(256, int(2 * run.max_result_mb))


def duckdb_query_process_mb(run: RunSettings) -> int:
    """Address space the embedded DuckDB's query process may take beyond its set-up database
    (``sqlbench.engines.agent_process``): DuckDB's memory limit, the result being fetched and
    its copy on the way out (``max_result_mb`` each), and 256 MB for everything else (thread
    stacks, DuckDB's vectors). With the defaults 768 MB.

    Example:
        >>> duckdb_query_process_mb(RunSettings())
        768
    """
    return duckdb_memory_limit_mb(run) + int(2 * run.max_result_mb) + 256


def server_query_process_mb(run: RunSettings) -> int:
    """Resident memory the query process of a PostgreSQL or MySQL/MariaDB warehouse may take
    beyond what it holds once connected (``sqlbench.engines.agent_process``): four times
    ``max_result_mb`` plus 256 MB, 768 MB with the defaults. A result just under the byte
    limit is held 3.5 to 4 times there at its peak (measured: 126 rows of 1 MB, 8 times in a
    row, up to +500 MB on PostgreSQL and +466 MB on MariaDB: the driver's chunk, the rows as
    Python values, their Arrow table and its copy on the way out), so such a result passes at
    any ``max_result_mb``.

    Example:
        >>> server_query_process_mb(RunSettings())
        768
    """
    return int(4 * run.max_result_mb) + 256
