"""Spark as a warehouse, on a real local Spark (``SQLBENCH_TEST_SPARK_URL=spark://local[2]``,
set by ``.ci/run``; skipped without it or without PySpark).

The generic engine tests (limits, types, the hostile corpus, cross-engine ground truth) run on
Spark through the ``warehouse`` fixture; this file holds what only Spark has: its session walls
behind the guard, setup as temporary views, and the demo project giving the same verdicts on
Spark as on DuckDB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from engine_warehouses import SPARK_URL, CanaryFiles, Warehouse, env_url

from sqlbench.engines.open import open_engine
from sqlbench.errors import EngineError, QueryError, QueryErrorKind
from sqlbench.project.files import Settings

ROOT = Path(__file__).resolve().parents[2]
DEMO_PARTS = ("sqlbench.yml", "eval_questions", "certified_queries", "agents", "models", "data")

pytestmark = pytest.mark.spark


def _spark_url() -> str:
    url = env_url(SPARK_URL)
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install -e '.[spark]')")
    return url


@pytest.fixture
def spark_warehouse(tmp_path: Path) -> Warehouse:
    from engine_warehouses import FACTORIES

    _spark_url()
    return FACTORIES["spark"](tmp_path)


def test_the_session_refuses_sql_on_files_even_behind_the_guard(
    spark_warehouse: Warehouse, canary_files: CanaryFiles
) -> None:
    """``spark.sql.runSQLOnFiles=false``: a csv.`path` query that reached Spark unguarded
    still reads nothing."""
    session = spark_warehouse.engine._session  # type: ignore[attr-defined]
    with pytest.raises(Exception) as caught:
        session.sql(f"SELECT * FROM csv.`{canary_files.secret}`").collect()
    assert canary_files.secret_text not in str(caught.value)
    assert session.conf.get("spark.sql.runSQLOnFiles") == "false"
    spark_warehouse.engine.close()


def test_ground_truth_passes_the_guard_too(spark_warehouse: Warehouse) -> None:
    """spark.sql runs DDL at once, and nothing in Spark turns off script TRANSFORM."""
    for sql in ("DROP VIEW orders", "SELECT TRANSFORM(customer) USING 'cat' AS (x) FROM orders"):
        with pytest.raises(QueryError) as caught:
            spark_warehouse.engine.run_truth(sql, timeout_s=60, max_rows=10)
        assert caught.value.kind is QueryErrorKind.NOT_READ_ONLY
    rows = spark_warehouse.engine.run_truth("SELECT COUNT(*) FROM orders", timeout_s=60, max_rows=1)
    assert rows.table.column(0).to_pylist() == [4]
    spark_warehouse.engine.close()


def test_agent_syntax_errors_carry_sparks_own_message_and_are_not_run(
    spark_warehouse: Warehouse,
) -> None:
    """sqlglot cannot parse it: Spark's parser (which runs nothing) says what is wrong."""
    with pytest.raises(QueryError) as caught:
        spark_warehouse.engine.run_agent("SELEC customer FROM orders", timeout_s=60, max_rows=10)
    assert caught.value.kind is QueryErrorKind.SYNTAX
    assert caught.value.message.startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'")
    assert "sqlglot" not in caught.value.message and "\n" not in caught.value.message
    spark_warehouse.engine.close()


def test_each_engine_has_its_own_temporary_views(tmp_path: Path) -> None:
    url = _spark_url()
    first = tmp_path / "a.sql"
    first.write_text("CREATE VIEW only_here AS SELECT 1 AS x;\n")
    one = open_engine(Settings(warehouse=url), tmp_path)
    two = open_engine(Settings(warehouse=url), tmp_path)
    try:
        one.setup(tmp_path, [first])
        two.setup(tmp_path, [])
        assert [t.name for t in one.tables()] == ["only_here"]
        with pytest.raises(QueryError, match="only_here"):
            two.run_agent("SELECT x FROM only_here", timeout_s=60, max_rows=1)
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("INSERT INTO t VALUES (1)", "may only create views and tables from a query"),
        ("DROP VIEW t", "may only create views and tables from a query"),
        ("CREATE TABLE t (x INTEGER)", "may only create views and tables from a query"),
        ("CREATE VIEW other.t AS SELECT 1 AS x", "unqualified names"),
    ],
)
def test_setup_that_would_change_the_warehouse_is_refused(
    tmp_path: Path, statement: str, message: str
) -> None:
    url = _spark_url()
    setup = tmp_path / "models.sql"
    setup.write_text("CREATE VIEW fine AS SELECT 1 AS x;\n" + statement + ";\n")
    engine = open_engine(Settings(warehouse=url, dialect="duckdb"), tmp_path)
    try:
        with pytest.raises(EngineError) as caught:
            engine.setup(tmp_path, [setup])
        assert str(caught.value).startswith("models.sql (statement 2): ")
        assert message in str(caught.value)
    finally:
        engine.close()


def test_spark_needs_local_or_connect(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match=r"sc://host:15002"):
        open_engine(Settings(warehouse="spark://cluster.example:7077"), tmp_path)


def test_a_missing_pyspark_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(EngineError) as caught:
        open_engine(Settings(warehouse="spark://local[1]"), tmp_path)
    assert "needs PySpark" in str(caught.value)
    assert "pip install 'pyspark[connect]>=4.0'" in str(caught.value)


def _demo_copy(folder: Path, warehouse: str | None) -> Path:
    folder.mkdir()
    for part in DEMO_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, folder / part)
        else:
            shutil.copy2(source, folder / part)
    settings = yaml.safe_load((folder / "sqlbench.yml").read_text())
    if warehouse is not None:
        settings["warehouse"] = warehouse
        # Spark on two shared cores can be slow on its first queries; the verdicts must not
        # depend on that.
        settings.setdefault("run", {}).update(query_timeout_s=300, gold_timeout_s=300)
    (folder / "sqlbench.yml").write_text(yaml.safe_dump(settings))
    return folder


def test_the_demo_gives_the_same_verdicts_on_spark_as_on_duckdb(tmp_path: Path) -> None:
    """The demo runs on Spark with only ``warehouse:`` changed: its DuckDB setup (CSV loading
    included) and ground truth transpiled, the recorded DuckDB answers transpiled (the replay
    agent's ``dialect: duckdb``)."""
    import sqlbench

    url = _spark_url()
    verdicts = {}
    for label, warehouse in (("duckdb", None), ("spark", url)):
        folder = _demo_copy(tmp_path / label, warehouse)
        project = sqlbench.load_project(folder)
        result = sqlbench.run_benchmark(
            project, "recorded", sqlbench.RunOptions(project_dir=folder)
        )
        verdicts[label] = {f"{q.space}/{q.name}": q.verdict for q in result.questions}
    assert len(verdicts["duckdb"]) == 41
    differing = {
        name: (verdict, verdicts["spark"].get(name))
        for name, verdict in verdicts["duckdb"].items()
        if verdicts["spark"].get(name) != verdict
    }
    assert differing == {}


def test_a_local_spark_starts_in_a_process_started_by_one_that_used_spark_connect(
    tmp_path: Path,
) -> None:
    # PySpark sets SPARK_CONNECT_MODE_ENABLED in a process that opened Spark Connect; a sqlbench
    # started from it (a test runner, a notebook) inherited it and could not start a local Spark.
    url = env_url("SQLBENCH_TEST_SPARK_URL")
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install -e '.[spark]')")
    script = (
        "from pathlib import Path\n"
        "from sqlbench.engines.open import open_engine\n"
        "from sqlbench.project.files import Settings\n"
        f"engine = open_engine(Settings(warehouse={url!r}), Path({str(tmp_path)!r}))\n"
        "result = engine.run_truth('SELECT 41 + 1 AS answer', timeout_s=120, max_rows=10)\n"
        "print(result.table.to_pylist())\n"
    )
    env = {**os.environ, "SPARK_CONNECT_MODE_ENABLED": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[{'answer': 42}]" in done.stdout
