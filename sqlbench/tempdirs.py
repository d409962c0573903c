"""sqlbench's temporary folders, and the clean-up of those a killed process left behind.

Every temporary folder sqlbench makes is named ``sqlbench-<kind>-<pid>-<label>-<random>``
(``kind``: ``tree`` for a branch's files, ``duckdb`` for DuckDB's spill folder, ``variants``
for SQLite data variants). A process killed with ``kill -9`` cannot remove its own; the next
``make_temp`` removes every such folder of this user whose process is no longer running.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

_NAME = re.compile(r"sqlbench-(tree|duckdb|variants)-(\d+)-")


def make_temp(kind: str, label: str = "") -> Path:
    """A new private temporary folder for ``kind``; stale ones are removed first.

    Example:
        >>> folder = make_temp("tree", "main")
        >>> folder.name.startswith(f"sqlbench-tree-{os.getpid()}-main-")
        True
        >>> folder.rmdir()
    """
    clean_stale_temp()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label)[:40]
    return Path(tempfile.mkdtemp(prefix=f"sqlbench-{kind}-{os.getpid()}-{safe}-"))


def clean_stale_temp(temp_dir: Path | None = None) -> list[Path]:
    """Remove sqlbench temporary folders whose process is gone; return what was removed.

    Only folders (never symlinks) owned by this user, whose name carries a process id that is
    not running, are removed.
    """
    base = Path(temp_dir or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        children = list(base.glob("sqlbench-*"))
    except OSError:
        return removed
    for child in children:
        match = _NAME.match(child.name)
        try:
            if match is None or child.is_symlink() or not child.is_dir():
                continue
            if child.stat().st_uid != os.getuid() or pid_alive(int(match.group(2))):
                continue
        except OSError:
            continue
        shutil.rmtree(child, ignore_errors=True)
        removed.append(child)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (on this machine)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True
