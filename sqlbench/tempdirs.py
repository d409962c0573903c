"""sqlbench's temporary folders, and the clean-up of those a killed process left behind.

Every temporary folder sqlbench makes is named ``sqlbench-<kind>-<pid>.<start>-<label>-<random>``
(``kind``: ``tree`` for a branch's files, ``duckdb`` for DuckDB's spill folder, ``variants``
for SQLite data variants, ``agent`` for a ``command`` agent's working folder; ``start``: when
the process started, ``processes.process_started``, left out where unknown). A process killed
with ``kill -9`` cannot remove its own; the next ``make_temp`` removes every such folder of this
user whose process is no longer running, or whose pid now names another process (one that
started at another time).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from sqlbench.processes import process_started

_NAME = re.compile(r"sqlbench-(tree|duckdb|variants|agent)-(\d+)(?:\.(\d+))?-")


def make_temp(kind: str, label: str = "") -> Path:
    """A new private temporary folder for ``kind``; stale ones are removed first.

    Example:
        >>> folder = make_temp("tree", "main")
        >>> folder.name.startswith(f"sqlbench-tree-{os.getpid()}")
        True
        >>> folder.name.split("-")[3]
        'main'
        >>> folder.rmdir()
    """
    clean_stale_temp()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label)[:40]
    started = process_started(os.getpid())
    owner = f"{os.getpid()}" if started is None else f"{os.getpid()}.{started}"
    return Path(tempfile.mkdtemp(prefix=f"sqlbench-{kind}-{owner}-{safe}-"))


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
            if child.stat().st_uid != os.getuid() or _owner_alive(match):
                continue
        except OSError:
            continue
        shutil.rmtree(child, ignore_errors=True)
        removed.append(child)
    return removed


def _owner_alive(match: re.Match[str]) -> bool:
    """Whether the process that made a folder still runs: its pid is alive and, where the name
    records a start time, that pid's process started then (it was not reused)."""
    pid = int(match.group(2))
    if not pid_alive(pid):
        return False
    started = match.group(3)
    if started is None or pid == os.getpid():
        return True
    now = process_started(pid)
    return now is None or str(now) == started


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
