"""sqlbench processes without paying for Python's imports each time.

Every security test starts real ``sqlbench`` processes; on a loaded 2-core machine most of each
one's time went into importing sqlbench and its libraries (about 2 s of CPU per command). A
server process imports them once; each command is then a ``fork`` of it: a new process with its
own pid, folder, environment, standard streams and exit code, running ``sqlbench.cli.main`` as
``python -m sqlbench`` would, from a state in which nothing has run yet (no secret registered,
no store opened, no console made). Processes that need more than that (a file-size limit, a
measured peak RSS, a kill -9 from the test) are still started as ``python -m sqlbench``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

_SERVER = r"""
import importlib, json, os, pkgutil, sys, tempfile
import sqlbench
for found in pkgutil.walk_packages(sqlbench.__path__, "sqlbench."):
    if "spark" in found.name:
        continue
    try:
        importlib.import_module(found.name)
    except Exception:
        pass
from sqlbench.cli.main import main

requests = os.fdopen(os.dup(0), "r")
replies = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)
replies.write("ready\n")
replies.flush()
for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        requests.close()
        replies.close()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.argv = ["sqlbench", *request["args"]]
        main()
        raise SystemExit(0)
    replies.write(f"pid {pid}\n")
    replies.flush()
    _, status = os.waitpid(pid, 0)
    replies.write(f"exit {os.waitstatus_to_exitcode(status)}\n")
    replies.flush()
"""


class ForkServer:
    """One server process; ``run`` forks it for one sqlbench command (one at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outputs = Path(tempfile.mkdtemp(prefix="sqlbench-test-forkserver-"))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)
        assert self._line(600) == "ready"

    def _line(self, timeout: float) -> str | None:
        """The server's next reply line, or None after ``timeout`` seconds."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            if not self._selector.select(timeout):
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the sqlbench fork server ended")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def run(
        self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
    ) -> tuple[int, bytes, bytes]:
        """``sqlbench ARGS`` in ``cwd`` with exactly ``env``: exit code, stdout, stderr.

        Raises:
            subprocess.TimeoutExpired: It ran longer than ``timeout`` (it is killed).
        """
        with self._lock:
            out, err = self._outputs / "stdout", self._outputs / "stderr"
            request = {
                "args": list(args),
                "cwd": str(cwd),
                "env": dict(env),
                "stdout": str(out),
                "stderr": str(err),
            }
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
            started = self._line(60)
            assert started is not None and started.startswith("pid "), started
            pid = int(started.split()[1])
            finished = self._line(timeout)
            if finished is None:
                os.kill(pid, signal.SIGKILL)
                self._line(60)
                raise subprocess.TimeoutExpired(["sqlbench", *args], timeout)
            code = int(finished.split()[1])
            return code, out.read_bytes(), err.read_bytes()

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=60)
        for path in self._outputs.iterdir():
            path.unlink()
        self._outputs.rmdir()


_server: ForkServer | None = None


def fork_server() -> ForkServer:
    """The test session's server, started on first use."""
    global _server
    if _server is None:
        _server = ForkServer()
    return _server


def close_fork_server() -> None:
    global _server
    if _server is not None:
        _server.close()
        _server = None
