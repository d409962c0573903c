"""Security-test helpers: sqlbench as a subprocess, a canary secret, crafted git trees.

Every test that hands sqlbench a secret uses ``CANARY`` and ends with ``sb.assert_no_canary()``:
the canary is searched for in every byte sqlbench printed and in every file under the test's
folder (the project, its store, outputs, exports), so a leak anywhere fails the test.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from forkserver import fork_server

CANARY = "CanaryS3cret-q7Zx"
"""A secret value; no byte sqlbench writes or prints may contain it."""


def _walk_files(root: Path) -> Iterable[Path]:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                yield path


def _file_limit(size: int) -> Any:
    """``ulimit -f``: writes past ``size`` bytes fail with EFBIG (Python ignores SIGXFSZ)."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


_PEAK_RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(str(peak))\n"
    "sys.exit(code)\n"
)
"""Runs its arguments as a child and writes the child's peak RSS (KiB) to ``argv[1]``."""


class Sqlbench:
    """Runs ``python -m sqlbench`` in a subprocess and keeps everything it printed."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.printed: list[bytes] = []
        self.planted: set[Path] = set()
        """Files the test itself wrote the canary into (searched no further)."""

    def __call__(
        self,
        *args: str,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
        max_file_bytes: int | None = None,
        peak_rss_file: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run sqlbench; with ``peak_rss_file``, that one process's peak RSS (KiB) is written
        there (measured by a wrapper process, so other children of the test do not count)."""
        full_env = {
            **os.environ,
            "SQLBENCH_HOME": str(self.tmp_path / "home"),
            "COLUMNS": "200",
            **(env or {}),
        }
        command = [sys.executable, "-m", "sqlbench", *args]
        if peak_rss_file is None and max_file_bytes is None:
            code, stdout, stderr = fork_server().run(args, cwd=cwd, env=full_env, timeout=timeout)
        else:
            if peak_rss_file is not None:
                command = [sys.executable, "-c", _PEAK_RSS_WRAPPER, str(peak_rss_file), *command]
            proc = subprocess.run(
                command,
                cwd=cwd,
                env=full_env,
                capture_output=True,
                timeout=timeout,
                check=False,
                preexec_fn=None if max_file_bytes is None else _file_limit(max_file_bytes),
            )
            code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        self.printed += [stdout, stderr]
        out = stdout.decode("utf-8", "replace")
        err = stderr.decode("utf-8", "replace")
        assert "Traceback (most recent call last)" not in out + err, out + err
        return subprocess.CompletedProcess(command, code, out, err)

    def assert_no_canary(self, *extra_roots: Path) -> None:
        """The canary is in nothing sqlbench printed, nor in any file under tmp_path."""
        needle = CANARY.encode()
        for blob in self.printed:
            assert needle not in blob, blob.decode("utf-8", "replace")[-2000:]
        for root in (self.tmp_path, *extra_roots):
            for path in _walk_files(root):
                if path in self.planted:
                    continue
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                assert needle not in data, f"the canary leaked into {path}"


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """``paths`` (files and folders) cannot be written inside the block: their write
    permission removed, or, for root (whom permissions do not stop), the immutable attribute
    set with ``chattr +i``; the test is skipped, saying why, where neither can be done."""
    import pytest

    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in paths}
        for path in paths:
            path.chmod(modes[path] & ~0o222)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    done: list[Path] = []
    try:
        for path in paths:
            proc = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
            if proc.returncode != 0:
                pytest.skip(f"cannot make {path} read-only for root: chattr +i failed")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "t")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "commit.gpgsign", "false")
    return root


def blob(repo: Path, data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return git(repo, "hash-object", "-w", "--stdin", input=raw)


def mktree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree from ``(mode, sha, name)`` entries, names taken as given (``..`` included)."""
    lines = []
    for mode, sha, name in entries:
        kind = "tree" if mode == "040000" else "blob"
        lines.append(f"{mode} {kind} {sha}\t{name}")
    return git(repo, "mktree", "--missing", input=("\n".join(lines) + "\n").encode())


def commit_tree(repo: Path, tree: str, branch: str) -> str:
    sha = git(repo, "commit-tree", tree, "-m", "crafted")
    git(repo, "update-ref", f"refs/heads/{branch}", sha)
    return sha


class Server:
    """An HTTP server on ``host`` answering every POST/GET with ``handler(path, headers, body)``
    -> ``(status, headers, body bytes)``; what it received is kept in ``received``."""

    def __init__(self, host: str, handler: Any) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.received.append((self.path, headers, body))
                status, extra, payload = handler(self.path, headers, body)
                try:
                    self.send_response(status)
                    for key, value in extra.items():
                        self.send_header(key, value)
                    if isinstance(payload, bytes):
                        self.send_header("Content-Length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload)
                    else:  # an iterator of chunks, no length: a body streamed until closed
                        self.send_header("Connection", "close")
                        self.end_headers()
                        for chunk in payload:
                            self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_POST = do_GET = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def json_reply(data: Any, status: int = 200) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(data).encode()


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
