"""The red-team suite (issue 17): per engine, a run whose agent answers with one hostile SQL per
attack class (nesting past the parser, a huge IN list, results past the byte limit, memory
bombs, huge values) completes; the good questions keep their verdicts; each hostile question
fails with the reason naming its limit; the warehouse is unchanged; and the sqlbench process,
measured in a subprocess, stays under the memory ceiling. Limits are set low so the bombs stay
small (each one crosses them many times over)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from corpus import ENGINES, GOOD, attacks, file_warehouse, run_measured, sha256, write_project

pytestmark = pytest.mark.hostile

CEILING_MB = 1024
"""Peak RSS allowed with the low limits (max_result_mb 1, so DuckDB's memory_limit 256 MB)."""
SPARK_CEILING_MB = 2048
"""On a local Spark the measured processes include Spark's JVM (driver memory 1 GB)."""

_SERVER_ENV = {
    "postgres": ("SQLBENCH_TEST_POSTGRES_URL", "SQLBENCH_TEST_POSTGRES_READER_URL"),
    "mariadb": ("SQLBENCH_TEST_MARIADB_URL", "SQLBENCH_TEST_MARIADB_READER_URL"),
}


def _server_warehouse(engine: str) -> tuple[str, Callable[[], Any]]:
    admin_var, reader_var = _SERVER_ENV[engine]
    admin = os.environ.get(admin_var)
    if not admin:
        pytest.skip(f"{admin_var} is not set (run .ci/run, or set it to a test server URL)")
    url = os.environ.get(reader_var) or admin
    db = sa.create_engine(admin)
    with db.begin() as con:
        con.execute(sa.text("DROP TABLE IF EXISTS redteam_orders"))
        con.execute(sa.text("CREATE TABLE redteam_orders (id INTEGER)"))
        con.execute(sa.text("INSERT INTO redteam_orders VALUES (1), (2), (3)"))
        if engine == "postgres" and url != admin:
            con.execute(sa.text("GRANT SELECT ON redteam_orders TO sqlbench_reader"))

    def fingerprint() -> Any:
        with db.connect() as con:
            rows = con.execute(sa.text("SELECT id FROM redteam_orders ORDER BY id")).all()
        return [tuple(r) for r in rows]

    return url, fingerprint


@pytest.fixture(params=[*ENGINES, pytest.param("spark", marks=pytest.mark.spark)])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def _spark_warehouse() -> tuple[str, Callable[[], Any]]:
    url = os.environ.get("SQLBENCH_TEST_SPARK_URL")
    if not url:
        pytest.skip("SQLBENCH_TEST_SPARK_URL is not set (run .ci/run, or spark://local[2])")
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install -e '.[spark]')")

    def fingerprint() -> Any:  # a local Spark lives and dies with the run: nothing persists
        return None

    return url, fingerprint


def test_a_hostile_run_completes_with_every_verdict_kept(engine: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if engine == "spark":
        warehouse, fingerprint = _spark_warehouse()
    elif engine in _SERVER_ENV:
        warehouse, fingerprint = _server_warehouse(engine)
    else:
        path = file_warehouse(project, engine)
        warehouse = path.name

        def fingerprint() -> Any:
            return sha256(path)

    before = fingerprint()
    write_project(project, engine, warehouse, low_limits=True)
    env = {**os.environ, "SQLBENCH_NO_COLOR": "1"}
    done = run_measured(
        ["run", "-C", str(project), "--agent", "hostile", "--format", "json"], tmp_path, env
    )
    assert done.returncode == 0, done.stderr  # a completed run (no --fail-under): no crash
    assert "Traceback" not in done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    assert {n: results[n]["verdict"] for n in GOOD} == dict.fromkeys(GOOD, "pass")
    for attack in attacks(engine):
        got = results[attack.name]
        assert got["verdict"] == "fail", (attack.name, got["reason"])
        assert attack.reason in got["reason"], (attack.name, got["reason"])
    assert fingerprint() == before
    ceiling = SPARK_CEILING_MB if engine == "spark" else CEILING_MB
    assert done.peak_mb < ceiling, f"peak RSS {done.peak_mb:.0f} MB: {done.processes}"


LAUGHS = "lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)
)
"""A "billion laughs": 10^9 values once its aliases are expanded."""


def test_hostile_project_files_are_sentences_in_bounded_memory(tmp_path: Path) -> None:
    """Every kind of project file attacked at once (billion laughs in sqlbench.yml, a question
    file, an agent file and a YAML replay file; nesting past the depth limit in YAML and
    JSONL): `sqlbench validate` names each with its line, in a subprocess under 300 MB."""
    project = tmp_path / "project"
    (project / "eval_questions").mkdir(parents=True)
    (project / "agents").mkdir()
    (project / "sqlbench.yml").write_text(LAUGHS)
    (project / "eval_questions" / "laughs.yml").write_text(LAUGHS)
    (project / "eval_questions" / "deep.yml").write_text("eval_questions: " + "[" * 100 + "]" * 100)
    (project / "agents" / "laughs.yml").write_text(LAUGHS)
    (project / "agents" / "replay.yml").write_text(
        "agents:\n  - {name: deep, kind: replay, path: ../recordings/deep.jsonl}\n"
        "  - {name: laughs, kind: replay, path: ../recordings/laughs.yml}\n"
    )
    (project / "recordings").mkdir()
    (project / "recordings" / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (project / "recordings" / "laughs.yml").write_text(
        "- name: a\n  sql: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(
            f"- name: a{i}\n  sql: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)
        )
    )
    done = run_measured(["validate", "-C", str(project)], tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    laughs = "YAML aliases here expand the file past 100,000 values"
    assert any(line.startswith("sqlbench.yml:5: error: " + laughs) for line in lines)
    assert any(line.startswith("eval_questions/laughs.yml:5: error: " + laughs) for line in lines)
    assert any(line.startswith("agents/laughs.yml:5: error: " + laughs) for line in lines)
    assert "eval_questions/deep.yml:1: error: the YAML is nested more than 64 levels deep" in (
        done.stdout
    )
    assert "recordings/deep.jsonl:1: the JSON is nested too deeply for sqlbench to read" in (
        done.stdout
    )
    assert "recordings/laughs.yml:10: " + laughs in done.stdout
    assert done.peak_mb < 300, f"peak RSS {done.peak_mb:.0f} MB"
