"""The ``sb`` fixture: sqlbench as a subprocess whose every printed byte is kept (secutil)."""

from __future__ import annotations

from pathlib import Path

import pytest
from secutil import Sqlbench


@pytest.fixture
def sb(tmp_path: Path) -> Sqlbench:
    return Sqlbench(tmp_path)
