"""The one constructor of the fields every new run record starts with (``run``, ``merge``):
a fresh id, its name, timestamps, and who runs it where. Identity fields (project version,
question set, agent settings, compare options) come from ``runs/identity.py``."""

from __future__ import annotations

import os
import secrets
import threading
import uuid
from typing import Any

from sqlbench.processes import process_started
from sqlbench.records.run import utc_now
from sqlbench.runs.liveness import current_user, this_host


def default_run_name(prefix: str = "") -> str:
    """``<prefix>YYYYmmdd-HHMMSS-xxxx``: creation time (UTC) plus a short unique suffix.

    Example:
        >>> default_run_name("merged-").startswith("merged-")
        True
    """
    with _given_lock:
        while True:
            name = f"{prefix}{utc_now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
            if name not in _given:
                _given.add(name)
                return name


_given: set[str] = set()
"""Default names this process gave: never twice. ``run --agent a,b,...`` names its runs in
the same second, and two of 9 suffixes drawn from 65,536 are alike once in about 1,800
invocations, which stopped the whole invocation ("a run named ... already exists")."""
_given_lock = threading.Lock()


def new_run_fields(name: str | None, *, prefix: str = "") -> dict[str, Any]:
    """``RunInfo`` fields of a run record made now by this process.

    Args:
        name: The user's name for the run; None: ``default_run_name(prefix)``.
        prefix: Prefix of the default name (``merged-`` for merged shards).

    Example:
        >>> fields = new_run_fields("nightly")
        >>> fields["name"], fields["pid"] == os.getpid(), len(fields["id"])
        ('nightly', True, 32)
    """
    now = utc_now()
    return {
        "id": uuid.uuid4().hex,
        "name": name or default_run_name(prefix),
        "created_at": now,
        "updated_at": now,
        "created_by": current_user(),
        "host": this_host(),
        "pid": os.getpid(),
        "pid_started": process_started(os.getpid()),
    }
