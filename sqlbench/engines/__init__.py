"""Execution engines: where setup, ground truth and agent SQL run (docs/project-files.md and
docs/verdicts.md).

``open_engine`` / ``open_project_engine`` open the project's warehouse; ``check_read_only`` is
the statement guard agent SQL passes first; ``preflight`` runs every ground truth for
``sqlbench validate --execute``. Engine modules import their drivers when first used.
"""

from __future__ import annotations

from sqlbench.engines.base import ColumnInfo, Engine, ResultSet, TableInfo
from sqlbench.engines.guard import check_read_only
from sqlbench.engines.open import open_engine, open_project_engine, setup_files

__all__ = [
    "ColumnInfo",
    "Engine",
    "ResultSet",
    "TableInfo",
    "check_read_only",
    "open_engine",
    "open_project_engine",
    "setup_files",
]
