"""Setup SQL on Spark: every statement becomes a session-temporary view, so nothing persistent is
created in the warehouse (a cluster's catalog, a Databricks workspace) and the views vanish with
the session.

A setup statement must be ``CREATE [OR REPLACE] VIEW name AS query`` or ``CREATE TABLE name AS
query`` of an unqualified name; it is parsed in the project's ``dialect``, transpiled to Spark SQL
with sqlglot, and run as ``CREATE OR REPLACE TEMPORARY VIEW name AS ...``. Anything else (INSERT,
DROP, a qualified name, a table without AS) is refused with one sentence naming the file and the
statement.

Files read by DuckDB table functions in a DuckDB-dialect setup (``read_csv('data/x.csv', ...)``,
``read_parquet``, ``read_json``) have no Spark SQL equivalent that works against a remote cluster
(the file is on this machine, not the cluster's). They are read here, by DuckDB with the same
options, and sent to Spark as a temporary view of the data (``createDataFrame`` from Arrow), so
the demo's CSV loading gives the same typed columns on Spark as on DuckDB.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from sqlbench.engines.setup_sql import setup_statements
from sqlbench.errors import EngineError
from sqlbench.text import one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_FILE_READERS = (exp.ReadCSV, exp.ReadParquet)
"""sqlglot nodes of DuckDB's file-reading table functions (others arrive as ``Anonymous``)."""


def build_setup(
    session: SparkSession, files: list[Path], project_root: Path, source_dialect: str
) -> list[str]:
    """Run every setup statement as a temporary view in ``session``.

    Returns:
        The names of the temporary views created (data loaded from files included).

    Raises:
        EngineError: a file cannot be read, a statement is not a CREATE VIEW / CREATE TABLE
            ... AS of an unqualified name, or Spark refuses it.
    """
    views: list[str] = []
    for where, statement in setup_statements(files, project_root, source_dialect):
        name, query = _view_definition(statement, source_dialect, where)
        views.extend(_load_files(session, query, project_root, where, len(views)))
        try:
            spark_sql = query.sql(dialect="spark", unsupported_level=ErrorLevel.RAISE)
        except SqlglotError as err:
            raise EngineError(
                f"{where}: sqlglot cannot transpile it from {source_dialect} to Spark SQL: "
                f"{one_line(str(err))}"
            ) from err
        try:
            session.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {spark_sql}")
        except spark_errors() as err:
            raise EngineError(f"{where}: setup SQL failed on Spark: {spark_message(err)}") from err
        views.append(name)
    return views


def _view_definition(statement: str, dialect: str, where: str) -> tuple[str, exp.Query]:
    try:
        node = sqlglot.parse_one(statement, read=dialect, error_level=ErrorLevel.RAISE)
    except SqlglotError as err:
        raise EngineError(
            f"{where}: sqlglot cannot parse it as {dialect} SQL: {one_line(str(err))}"
        ) from err
    kind = str(node.args.get("kind") or "").upper() if isinstance(node, exp.Create) else ""
    query = node.expression if isinstance(node, exp.Create) else None
    target = node.this if isinstance(node, exp.Create) else None
    if kind not in ("VIEW", "TABLE") or not isinstance(query, exp.Query):
        raise EngineError(
            f"{where}: on Spark, setup may only create views and tables from a query "
            "(CREATE VIEW name AS ... / CREATE TABLE name AS ...), built as session-temporary "
            "views; this statement is something else"
        )
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table) or target.args.get("db") or target.args.get("catalog"):
        raise EngineError(
            f"{where}: setup objects must have unqualified names on Spark (they become "
            "session-temporary views, which live in no schema)"
        )
    return target.name, query


def _load_files(
    session: SparkSession, query: exp.Query, project_root: Path, where: str, counter: int
) -> list[str]:
    """Replace each DuckDB file reader in ``query`` by a temporary view of the file's data."""
    loaded: list[str] = []
    for table in list(query.find_all(exp.Table)):
        reader = table.this
        if not _is_file_reader(reader):
            continue
        name = f"__sqlbench_file_{counter + len(loaded) + 1}"
        data = _read_with_duckdb(reader, project_root, where)
        try:
            session.createDataFrame(data).createOrReplaceTempView(name)
        except spark_errors() as err:
            raise EngineError(
                f"{where}: cannot send the file's data to Spark: {spark_message(err)}"
            ) from err
        alias = table.args.get("alias")
        replacement = exp.to_table(name)
        if alias is not None:
            replacement.set("alias", alias)
        table.replace(replacement)
        loaded.append(name)
    return loaded


def _is_file_reader(node: exp.Expression | None) -> bool:
    if isinstance(node, _FILE_READERS):
        return True
    return isinstance(node, exp.Anonymous) and node.name.lower().startswith("read_")


def _read_with_duckdb(reader: exp.Expression, project_root: Path, where: str) -> object:
    """The reader's result, read by DuckDB with relative paths resolved in the project."""
    first = reader.this if isinstance(reader, _FILE_READERS) else reader.expressions[0]
    if isinstance(first, exp.Literal) and first.is_string and not Path(first.this).is_absolute():
        first.replace(exp.Literal.string(str(project_root / first.this)))
    con = duckdb.connect(":memory:")
    try:
        return con.sql(f"SELECT * FROM {reader.sql(dialect='duckdb')}").to_arrow_table()
    except duckdb.Error as err:
        raise EngineError(f"{where}: cannot read the file: {one_line(str(err))}") from err
    finally:
        con.close()


def spark_errors() -> tuple[type[BaseException], ...]:
    """What PySpark raises: its own errors (Connect's gRPC failures included), py4j's for the
    local JVM, and RuntimeError/OSError when the JVM cannot start."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError, RuntimeError, OSError)


def spark_message(err: BaseException) -> str:
    """A Spark error as one line: without the JVM stack trace Spark Connect appends."""
    text = str(err).split("\n\nJVM stacktrace:", 1)[0]
    return one_line(text)
