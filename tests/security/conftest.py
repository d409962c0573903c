"""The ``sb`` fixture: sqlbench as a subprocess whose every printed byte is kept (secutil).

These tests start many sqlbench processes, so they run when ``SQLBENCH_TEST_SECURITY=1`` is
set (``.ci/run`` sets it) and are skipped, saying so, otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from forkserver import close_fork_server
from secutil import Sqlbench


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is marked ``security``; ``tests/conftest.py`` (``OPT_IN``) skips them
    unless ``SQLBENCH_TEST_SECURITY=1``."""
    for item in items:
        if "tests/security/" in item.nodeid:
            item.add_marker(pytest.mark.security)


@pytest.fixture
def sb(tmp_path: Path) -> Sqlbench:
    return Sqlbench(tmp_path)


@pytest.fixture(scope="session", autouse=True)
def _fork_server_closed() -> Iterator[None]:
    """The fork server (``forkserver.py``) ends with the session."""
    yield
    close_fork_server()
