"""Spark: a local in-process session (``spark://local[N]``) or a Spark Connect endpoint
(``sc://host:port``, a cluster or Databricks through its Connect endpoint).

Each engine is a Spark session of its own, so a run's temporary views are private to it:
``spark://local[N]`` starts one local Spark per process (the JVM takes seconds to start) and gives
every engine a ``newSession()`` of it; ``sc://`` opens a new Connect session per engine.

The walls around agent SQL (docs/engines.md):
- the statement guard in the ``spark`` dialect (one read-only query; file-format table names such
  as ``csv.`/path```, ``read_files``, ``reflect``/``java_method``, script ``TRANSFORM`` refused);
- the session itself: ``spark.sql.runSQLOnFiles=false`` (no ``csv.`path``` queries), an
  in-memory catalog for local sessions, setup built only as session-temporary views;
- ground truth passes the same guard: ``spark.sql`` runs DDL as soon as it is called, and
  Spark has no setting that turns off script ``TRANSFORM`` or ``reflect()``, which run programs
  and Java code on the cluster, so the guard is the only wall against them;
- timeouts cancel the query's jobs by tag (see ``_JobTags``), from the deadline on until the
  query has ended; the query's own thread waits for Spark to stop it;
- rows are limited in Spark (``limit(max_rows + 1)``) before anything is collected, and results
  arrive as Arrow (``toArrow()``) with their types;
- bytes: a local Spark's ``spark.driver.maxResultSize`` is set from ``run.max_result_mb`` (Spark
  aborts a collect past it), and every result is measured on arrival: over ``max_bytes`` it is
  ``too_large``. A Connect server's own ``maxResultSize`` is its operator's.

PySpark is an optional dependency (the ``spark`` extra); it is imported only when a Spark
warehouse is opened.
"""

from __future__ import annotations

import atexit
import os
import re
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sqlbench.engines.agent_sql import AgentSqlEngine, QueryLimits
from sqlbench.engines.base import ColumnInfo, ResultSet, TableInfo
from sqlbench.engines.fetch import (
    normalize_table,
    timed_out,
    too_large,
    too_many_rows,
)
from sqlbench.engines.guard import unchecked_syntax
from sqlbench.engines.registry import WarehouseTarget
from sqlbench.engines.spark_setup import build_setup, spark_errors, spark_message
from sqlbench.engines.work import ROWS_SCANNED, Work
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.dialect import url_scheme
from sqlbench.text import one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_INSTALL = "pip install 'pyspark[connect]>=4.0' (or `pip install -e '.[spark]'` in a checkout)"
"""How to install what a Spark warehouse needs."""

_LOCAL_SESSIONS: dict[str, SparkSession] = {}
"""One local Spark per process and master (a JVM start costs seconds); engines take
``newSession()`` of it, so their temporary views and settings stay their own."""
_LOCAL_LOCK = threading.Lock()
_CONNECT_MODE_VARIABLE = "SPARK_CONNECT_MODE_ENABLED"
"""Set by PySpark in a process that opened a Spark Connect session, and inherited by the
processes it starts: while set, PySpark builds every session as a Connect one, so a local Spark
fails with "the Spark Connect remote URL has not been set"."""
_CONNECT_OPENED = threading.Event()
"""This process opened a Spark Connect session (so the variable above is its own)."""
_INTERRUPT_EVERY_S = 0.25
_CONNECT_PLANNING_WAIT_S = 15.0
"""How long past the deadline a Connect query that has reported no running stage is left to
plan before it is interrupted anyway (see ``_JobTags``)."""

_SESSION_SETTINGS = {
    # No SQL directly on files (csv.`/path`, parquet.`...`): agent SQL must read only the model.
    "spark.sql.runSQLOnFiles": "false",
    # Results compare in UTC; a cluster's local zone must not shift timestamps.
    "spark.sql.session.timeZone": "UTC",
}
_LOCAL_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "1g",
    **_SESSION_SETTINGS,
}
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n%ex{0}
logger.querycontext.name = SQLQueryContextLogger
logger.querycontext.level = off
logger.pyspark.name = org.apache.spark.api.python
logger.pyspark.level = off
"""


def local_session(master: str, max_result_mb: int | None = None) -> SparkSession:
    """The process's local Spark for ``master`` (``local[2]``), started on first use
    (``max_result_mb`` bounds what one collect may bring to the driver; it is fixed when the
    JVM starts).

    Raises:
        EngineError: PySpark is not installed, or Spark (Java) cannot start.
    """
    with _LOCAL_LOCK:
        session = _LOCAL_SESSIONS.get(master)
        if session is not None:
            return session
        pyspark_sql = _import_pyspark()
        scratch = Path(tempfile.mkdtemp(prefix="sqlbench-spark-"))
        log_config = scratch / "log4j2.properties"
        log_config.write_text(_LOG4J)
        builder = pyspark_sql.SparkSession.builder.master(master).appName("sqlbench")
        for key, value in _LOCAL_SETTINGS.items():
            builder = builder.config(key, value)
        java_options = f"-Dlog4j2.configurationFile=file:{log_config}"
        builder = (
            builder.config("spark.driver.extraJavaOptions", java_options)
            .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
            .config("spark.local.dir", str(scratch / "local"))
        )
        if max_result_mb is not None:
            builder = builder.config("spark.driver.maxResultSize", f"{max_result_mb}m")
        connect_mode = os.environ.pop(_CONNECT_MODE_VARIABLE, None)
        try:
            session = builder.getOrCreate()
        except spark_errors() as err:
            raise EngineError(
                f"cannot start a local Spark ({master}): {spark_message(err)}; "
                "Spark needs Java 17 or later on PATH or JAVA_HOME"
            ) from err
        finally:
            if connect_mode is not None and _CONNECT_OPENED.is_set():
                os.environ[_CONNECT_MODE_VARIABLE] = connect_mode
        session = cast("SparkSession", session)
        _LOCAL_SESSIONS[master] = session
        atexit.register(_stop_quietly, session)
        return session


def _stop_quietly(session: SparkSession) -> None:
    try:
        session.stop()
    except spark_errors():  # the JVM may already be gone at interpreter exit
        return


def _import_pyspark() -> Any:
    try:
        import pyspark.sql
        from pyspark.logger import PySparkLogger
    except ImportError as err:
        raise EngineError(
            f"a Spark warehouse needs PySpark, which is not installed: {SPARK_INSTALL}"
        ) from err
    # PySpark logs every failing query's error with its JVM stack trace to stderr; sqlbench
    # reports it as the question's reason instead.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
    return pyspark.sql


def open_warehouse(target: WarehouseTarget) -> SparkEngine:
    """A Spark warehouse (``engines/registry.py``): ``spark://local[N]`` or Spark Connect's
    ``sc://host:port``."""
    assert target.url is not None and target.display is not None  # a URL, as written
    return SparkEngine(
        target.url,
        display=target.display,
        source_dialect=target.settings.dialect or "spark",
        max_result_mb=max(1, round(target.settings.run.max_result_mb)),
    )


class SparkEngine(AgentSqlEngine):
    """One Spark session for a run.

    Args:
        url: ``spark://local[N]`` or ``sc://host:port[/;params]`` (resolved: secrets included).
        display: The warehouse as written (``${...}`` kept), for messages.
        source_dialect: The dialect setup SQL is written in (the project's ``dialect``);
            transpiled to Spark SQL.
    """

    dialect = "spark"

    def __init__(
        self,
        url: str,
        *,
        display: str,
        source_dialect: str = "spark",
        max_result_mb: int | None = None,
    ) -> None:
        self.display = display
        self.max_result_mb = max_result_mb
        self.source_dialect = source_dialect
        self._session = self._open(url)
        for key, value in _SESSION_SETTINGS.items():
            self._session.conf.set(key, value)
        self._view_names: list[str] = []

    def _open(self, url: str) -> SparkSession:
        scheme, rest = url_scheme(url), url.partition("://")[2]
        if scheme == "spark":
            master = rest.strip("/")
            if not master.startswith("local"):
                raise EngineError(
                    f"warehouse {self.display}: spark:// runs an in-process local Spark "
                    "(spark://local[N]); for a cluster or Databricks use its Spark Connect "
                    "endpoint, sc://host:15002"
                )
            return local_session(master, self.max_result_mb).newSession()
        pyspark_sql = _import_pyspark()
        _CONNECT_OPENED.set()
        try:
            return pyspark_sql.SparkSession.builder.remote(url).create()  # type: ignore[no-any-return, unused-ignore]
        except ImportError as err:
            raise EngineError(
                f"Spark Connect needs its client libraries: {SPARK_INSTALL}: {err}"
            ) from err
        except spark_errors() as err:
            raise EngineError(
                f"cannot open a Spark Connect session at {self.display}: {spark_message(err)}"
            ) from err

    def setup(self, project_root: Path, sql_files: list[Path]) -> None:
        """Build the setup files as session-temporary views (see ``spark_setup``).

        Raises:
            EngineError: a statement is not a CREATE VIEW / CREATE TABLE ... AS, or fails.
        """
        self._view_names = build_setup(self._session, sql_files, project_root, self.source_dialect)

    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run ground truth behind the guard too (see the module docstring); see
        ``Engine.run_truth``."""
        return self.run_agent(sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)

    def _run_checked(self, sql: str, limits: QueryLimits) -> ResultSet:
        return self._run(
            sql,
            timeout_s=limits.timeout_s - limits.spent_s,
            max_rows=limits.max_rows,
            max_bytes=limits.max_bytes,
            shown_timeout_s=limits.timeout_s,
        )

    def _syntax_error(self, sql: str, guard_error: QueryError, limits: QueryLimits) -> QueryError:
        """SQL sqlglot cannot parse: on a local session, Spark's own parser (which builds a plan
        and runs nothing) says what is wrong; where Spark parses it, sqlglot lacks the syntax:
        refused as unchecked. Spark Connect has no parse-only call, so there the guard's
        syntax error stands."""
        if _is_connect(self._session):
            return guard_error
        from pyspark.errors import ParseException

        try:
            self._session._jsparkSession.sessionState().sqlParser().parsePlan(sql)
        except ParseException as err:  # PySpark turns the JVM's ParseException into its own
            text = str(err).split("== SQL ==", 1)[0]
            return QueryError(QueryErrorKind.SYNTAX, one_line(text))
        except spark_errors():  # the parser itself failed: the guard's message stands
            return guard_error
        return unchecked_syntax(guard_error, "Spark")

    def _run(
        self,
        sql: str,
        *,
        timeout_s: float,
        max_rows: int,
        max_bytes: int | None,
        shown_timeout_s: float,
    ) -> ResultSet:
        tags = _JobTags.of(self._session)
        fired = threading.Event()
        done = threading.Event()

        def interrupt() -> None:
            # A cancel reaches only the jobs running at that moment; a job that starts later
            # (Spark was still planning at the deadline, or runs a later stage as a new job) is
            # caught by the next call.
            if done.wait(timeout_s):
                return
            fired.set()
            while not done.is_set():
                try:
                    tags.cancel()
                except spark_errors():  # the query may have ended meanwhile
                    return
                done.wait(_INTERRUPT_EVERY_S)

        watchdog = threading.Thread(target=interrupt, name="sqlbench-spark-timeout", daemon=True)
        deadline = time.monotonic() + timeout_s
        tags.add()
        watchdog.start()
        try:
            frame = self._session.sql(sql).limit(max_rows + 1)
            table = frame.toArrow()
        except spark_errors() as err:
            if fired.is_set():
                raise timed_out(shown_timeout_s) from err
            if "maxResultSize" in str(err):
                raise _over_max_result_size(err, max_bytes) from err
            raise _query_error(err) from err
        finally:
            done.set()
            watchdog.join()
            tags.remove()
        if fired.is_set() or time.monotonic() > deadline:
            raise timed_out(shown_timeout_s)
        if table.num_rows > max_rows:
            raise too_many_rows(max_rows)
        if max_bytes is not None and table.nbytes > max_bytes:
            raise too_large(max_bytes, table.nbytes)
        return ResultSet(
            normalize_table(table), work=scanned_rows(frame, _is_connect(self._session))
        )

    def tables(self) -> list[TableInfo]:
        """The setup's temporary views, then the tables of the session's current database."""
        try:
            listed = self._session.catalog.listTables()
        except spark_errors() as err:  # any Spark failure is a listing failure
            raise EngineError(f"cannot list Spark tables: {spark_message(err)}") from err
        found: list[TableInfo] = []
        for table in listed:
            name = table.name
            try:
                schema = self._session.table(name).schema
            except spark_errors():  # a table this session cannot read is not listed
                continue
            columns = [ColumnInfo(field.name, field.dataType.simpleString()) for field in schema]
            found.append(
                TableInfo(
                    name=name,
                    columns=columns,
                    schema=table.namespace[0] if table.namespace else None,
                )
            )
        return found

    def close(self) -> None:
        """Drop this session's temporary views; a Connect session is released on the server.
        The process's local Spark stays up for later engines."""
        for name in self._view_names:
            try:
                self._session.catalog.dropTempView(name)
            except spark_errors():  # closing must not fail on a lost session
                continue
        if _is_connect(self._session):
            try:
                self._session.stop()
            except spark_errors():  # the server may be gone
                return


class _JobTags:
    """The tag of one query's Spark jobs, set on the thread that runs it and cancelled from the
    watchdog thread.

    A local (classic) session tags jobs through its SparkContext: ``addJobTag`` marks the jobs
    this thread starts and ``cancelJobsWithTag`` cancels them from any thread, with
    ``setInterruptOnCancel`` so the tasks' threads are interrupted too. (The session-level
    ``interruptTag`` of a classic session finds only tags added on the calling thread, so from
    the watchdog it cancelled nothing.) The query's call returns only when its jobs have ended.

    A Connect session tags the operations it sends (``addTag``) and ``interruptTag`` asks the
    server to interrupt them. The server answers the interrupt at once and forgets the
    operation; if it was still planning then, its thread goes on to start the query's job,
    which nothing can reach any more and which runs to its end (measured: a trillion-row range
    held both cores of a local Connect server for as long as it was watched). So the interrupt
    waits until the server reports a stage of the query running (Connect's progress messages)
    and cancels that; a server that reports no progress is interrupted
    ``_CONNECT_PLANNING_WAIT_S`` after the deadline anyway.
    """

    def __init__(self, session: SparkSession, tag: str) -> None:
        self._session = session
        self._tag = tag
        self._connect = _is_connect(session)
        self._stage_seen = threading.Event()
        self._first_cancel: float | None = None

    @classmethod
    def of(cls, session: SparkSession) -> _JobTags:
        """A new tag for one query of ``session``."""
        return cls(session, f"sqlbench-{uuid.uuid4().hex}")

    def add(self) -> None:
        """Tag what this thread runs next."""
        if self._connect:
            self._session.addTag(self._tag)
            self._session.registerProgressHandler(cast("Any", self._progress))
            return
        context = self._session.sparkContext
        context.setInterruptOnCancel(True)
        context.addJobTag(self._tag)

    def cancel(self) -> None:
        """Cancel the tagged jobs running now (called from the watchdog thread, repeatedly)."""
        if not self._connect:
            self._session.sparkContext.cancelJobsWithTag(self._tag)
            return
        now = time.monotonic()
        if self._first_cancel is None:
            self._first_cancel = now
        if self._stage_seen.is_set() or now - self._first_cancel >= _CONNECT_PLANNING_WAIT_S:
            self._session.interruptTag(self._tag)

    def remove(self) -> None:
        """Stop tagging this thread's jobs."""
        if self._connect:
            self._session.removeProgressHandler(cast("Any", self._progress))
            self._session.removeTag(self._tag)
        else:
            self._session.sparkContext.removeJobTag(self._tag)

    def _progress(self, stages: Any, **_: Any) -> None:
        if stages:
            self._stage_seen.set()


_NOT_READ = frozenset({"Scan OneRowRelation"})
"""Leaves whose name says Scan but that read no data (``SELECT 1``)."""


def scanned_rows(frame: Any, connect: bool) -> Work | None:
    """The rows the scans of ``frame``'s executed plan output (``numOutputRows`` of each leaf
    that scans: a file, a cached or local relation), summed, once the frame was collected: from
    the executed plan of a local session, from ``executionInfo`` on Spark Connect (the metrics
    its server sends with the result). None where Spark reported none. Extra information: never
    the query's failure."""
    try:
        rows = _connect_scanned_rows(frame) if connect else _local_scanned_rows(frame)
    except Exception:  # py4j or a client without the metrics: not reported
        return None
    return None if rows is None else Work(float(rows), ROWS_SCANNED)


def _local_scanned_rows(frame: Any) -> float:
    """Walked through the JVM: adaptive plans (their final plan, each query stage's plan) and
    subqueries included; a reused exchange or subquery read nothing again."""
    total = 0.0
    stack = [frame._jdf.queryExecution().executedPlan()]
    while stack:
        node = stack.pop()
        kind = node.getClass().getSimpleName()
        if kind.startswith("Reused"):
            continue
        if kind == "AdaptiveSparkPlanExec":
            stack.append(node.executedPlan())
            continue
        if kind.endswith("QueryStageExec"):
            stack.append(node.plan())
            continue
        inner = [*_scala_items(node.children()), *_scala_items(node.subqueries())]
        if inner:
            stack.extend(inner)
            continue
        name = str(node.nodeName())
        if "Scan" in name and name not in _NOT_READ:
            metric = node.metrics().get("numOutputRows")
            if metric.isDefined():
                total += float(metric.get().value())
    return total


def _scala_items(seq: Any) -> list[Any]:
    items = []
    walk = seq.iterator()
    while walk.hasNext():
        items.append(walk.next())
    return items


def _connect_scanned_rows(frame: Any) -> float | None:
    info = frame.executionInfo
    if info is None or info.metrics is None:
        return None
    root, graph = info.metrics.extract_graph()
    if graph[root].name == "LocalTableScan":
        # The server sends a local relation's rows as they are, running nothing, and reports
        # the scan's rows as 0.
        return None
    total = 0.0
    for node in graph.values():
        if any(child != node.id for child in node.children):
            continue
        if "Scan" in node.name and node.name not in _NOT_READ:
            total += sum(float(m.value) for m in node.metrics if m.name == "numOutputRows")
    return total


def _is_connect(session: SparkSession) -> bool:
    return type(session).__module__.startswith("pyspark.sql.connect")


def _over_max_result_size(err: BaseException, max_bytes: int | None) -> QueryError:
    """Spark aborted the collect at ``spark.driver.maxResultSize`` (set from
    ``run.max_result_mb`` on a local Spark): the byte limit's own sentence, else Spark's one
    sentence about it (the error arrives with a JVM stack trace around it)."""
    if max_bytes is not None:
        return QueryError(
            QueryErrorKind.TOO_LARGE,
            f"the result is over run.max_result_mb={max_bytes / 2**20:g}; Spark stopped "
            "collecting it at spark.driver.maxResultSize and it was not compared (raise "
            "run.max_result_mb in sqlbench.yml if results that large are expected)",
        )
    found = re.search(r"Total size of serialized results.*?maxResultSize \([^)]*\)", str(err))
    return too_large(None, out_of_memory=found.group(0) if found else "spark.driver.maxResultSize")


def _query_error(err: BaseException) -> QueryError:
    from pyspark.errors import AnalysisException, ParseException

    message = spark_message(err)
    if isinstance(err, ParseException):
        return QueryError(QueryErrorKind.SYNTAX, message)
    if isinstance(err, AnalysisException):
        return QueryError(QueryErrorKind.RUNTIME, message)
    return QueryError(QueryErrorKind.RUNTIME, message)
