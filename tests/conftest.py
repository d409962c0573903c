"""Shared fixtures. User state (stores, caches) is pointed at tmp_path by an autouse fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


@pytest.fixture(autouse=True)
def _isolated_user_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLBENCH_HOME", str(tmp_path / "sqlbench-home"))
    for var in (
        "SQLBENCH_LLM_BASE_URL",
        "SQLBENCH_LLM_MODEL",
        "SQLBENCH_LLM_API_KEY",
        "GITHUB_STEP_SUMMARY",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def shared_benchmarks() -> Path:
    """``../shared/benchmarks`` beside the repository; skips when absent (a user's clone)."""
    if not SHARED_BENCHMARKS.is_dir():
        pytest.skip("../shared/benchmarks is not present in this checkout")
    return SHARED_BENCHMARKS
