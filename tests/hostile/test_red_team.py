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


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def test_a_hostile_run_completes_with_every_verdict_kept(engine: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if engine in _SERVER_ENV:
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
    assert done.peak_mb < CEILING_MB, f"peak RSS {done.peak_mb:.0f} MB"
