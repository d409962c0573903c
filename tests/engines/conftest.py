"""Fixtures for the engine tests: each real warehouse kind, and canary files (see
engine_warehouses.py for how they are built)."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_warehouses import FACTORIES, KINDS, CanaryFiles, Warehouse

_SERVER_MARKS = {
    "postgres": pytest.mark.postgres,
    "mariadb": pytest.mark.mariadb,
    "spark": pytest.mark.spark,
    "spark_connect": pytest.mark.spark,
}


@pytest.fixture(params=[pytest.param(kind, marks=_SERVER_MARKS.get(kind, ())) for kind in KINDS])
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Warehouse]:
    """Each warehouse kind in turn, with an ``orders`` table and its engine open."""
    built = FACTORIES[request.param](tmp_path)
    try:
        yield built
    finally:
        built.engine.close()
        for step in built.cleanup:
            step()


@pytest.fixture
def canary_files() -> Iterator[CanaryFiles]:
    """Canary files in a world-readable folder of /tmp (pytest's tmp_path is private to its
    user, which would make a server's failure to read or write there prove nothing)."""
    folder = Path(tempfile.mkdtemp(prefix="sqlbench-canary-", dir="/tmp"))
    folder.chmod(0o777)
    secret_text = f"sqlbench-secret-{uuid.uuid4().hex}"
    secret = folder / "secret.csv"
    secret.write_text(f"secret\n{secret_text}\n")
    secret.chmod(0o644)
    out = folder / "out"
    out.mkdir()
    out.chmod(0o777)
    try:
        yield CanaryFiles(folder, secret, secret_text, out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
