"""Whether the process that owns a Running run is still alive, and who is running sqlbench."""

from __future__ import annotations

import getpass
import os
import socket

from sqlbench.processes import stat_fields


def this_host() -> str:
    """This machine's host name (recorded with the pid of each run's process)."""
    return socket.gethostname()


def process_alive(host: str, pid: int, started: int | None = None) -> bool | None:
    """True/False when ``pid`` runs on this host (a zombie counts as dead, and so does a
    process that started at another time than ``started``: the pid was reused); None when the
    run belongs to another host (or has no pid), where only its heartbeat can tell."""
    if not host or pid <= 0 or host != this_host():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = stat_fields(pid)
    if fields is None:
        return True  # no /proc (not Linux): the pid is all there is to go by
    if fields[0] == "Z":  # the state: a zombie is dead, not yet reaped
        return False
    return started is None or fields[19] == str(started)


def current_user() -> str:
    """Who runs sqlbench: the login name (``getpass.getuser``)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        # No passwd entry (some containers): name the uid rather than invent a user.
        return f"uid {os.getuid()}"
