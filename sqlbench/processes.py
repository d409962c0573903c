"""Which process a process id names: its start time, so that a pid reused by another process
is not taken for the one that had it (a killed run's owner, a killed process's temp folders)."""

from __future__ import annotations

from pathlib import Path


def process_started(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks after boot (field 22 of
    ``/proc/PID/stat``); None where there is no ``/proc``. With the pid it names one process:
    a pid reused later has another start time.

    Example:
        >>> import os
        >>> started = process_started(os.getpid())
        >>> started is None or started == process_started(os.getpid())
        True
    """
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` from field 3 (the state) on; None when it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = text.rsplit(")", 1)[-1].split()
    return fields if len(fields) > 19 else None
