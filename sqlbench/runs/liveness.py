"""Whether the process that owns a Running run is still alive, and who is running sqlbench."""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path


def this_host() -> str:
    """This machine's host name (recorded with the pid of each run's process)."""
    return socket.gethostname()


def process_alive(host: str, pid: int) -> bool | None:
    """True/False when ``pid`` runs on this host (a zombie counts as dead); None when the run
    belongs to another host (or has no pid), where only its heartbeat can tell."""
    if not host or pid <= 0 or host != this_host():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        # Field 3 of /proc/PID/stat is the state; Z is a zombie (dead, not yet reaped).
        state = stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def current_user() -> str:
    """Who runs sqlbench: the login name (``getpass.getuser``)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        # No passwd entry (some containers): name the uid rather than invent a user.
        return f"uid {os.getuid()}"
