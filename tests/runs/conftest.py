"""Builders for run records, shared by the run-store and run-loop tests."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sqlbench.records.run import RunInfo, RunStatus, TrialResult, utc_now
from sqlbench.runs.liveness import this_host
from sqlbench.verdicts import Verdict


def _make_info(**overrides: Any) -> RunInfo:
    """A Running run of this process with plausible metadata; any field overridable."""
    now = utc_now()
    fields: dict[str, Any] = {
        "id": uuid.uuid4().hex,
        "name": f"run-{uuid.uuid4().hex[:6]}",
        "status": RunStatus.RUNNING,
        "created_at": now,
        "updated_at": now,
        "created_by": "tester",
        "host": this_host(),
        "pid": os.getpid(),
        "branch": "main",
        "commit": "a" * 40,
        "environment": "prod",
        "question_set_hash": "q" * 16,
        "question_count": 3,
        "agent_name": "fake",
        "agent_kind": "python",
        "agent_settings": {"name": "fake", "kind": "python", "options": {}},
        "agent_settings_hash": "s" * 16,
        "sqlbench_version": "0.1.0",
        "compare": {"order": "ignore"},
        "compare_hash": "c" * 16,
        "warehouse": "in-memory DuckDB",
        "warehouse_hash": "w" * 16,
        "warehouse_built": True,
    }
    fields.update(overrides)
    return RunInfo(**fields)


def _make_trial(name: str, verdict: Verdict = Verdict.PASS, **overrides: Any) -> TrialResult:
    """A graded result of question ``auto/name``."""
    fields: dict[str, Any] = {
        "space": "auto",
        "name": name,
        "verdict": verdict,
        "reason": f"{verdict.value} because",
        "agent_sql": "SELECT 1",
        "truth_sql": "SELECT 1",
        "latency_ms": 12.5,
    }
    fields.update(overrides)
    return TrialResult(**fields)


def _ago(seconds: float) -> Any:
    return utc_now() - timedelta(seconds=seconds)


@pytest.fixture
def make_info() -> Any:
    """``make_info(**fields)``: a Running run of this process; any field overridable."""
    return _make_info


@pytest.fixture
def make_trial() -> Any:
    """``make_trial(name, verdict=pass, **fields)``: a graded result of ``auto/name``."""
    return _make_trial


@pytest.fixture
def ago() -> Any:
    """``ago(seconds)``: a UTC time that many seconds ago."""
    return _ago


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema (dropped afterwards)."""
    base = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL store tests)")
    schema = f"sqlbench_store_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"
"""A small real project: DuckDB setup SQL, 11 questions in 2 spaces, scripted python agents."""


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A copy of ``tests/fixtures/run_loop`` in ``tmp_path/project``."""
    return Path(shutil.copytree(RUN_LOOP, tmp_path / "project"))


def asked(project: Path) -> list[str]:
    """Questions the scripted agents were asked, in order (``space/name``)."""
    log = project / "asked.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


@pytest.fixture
def asked_questions() -> Any:
    """``asked_questions(project_dir)``: what the scripted agents were asked."""
    return asked
