"""Security-test helpers: sqlbench as a subprocess, a canary secret, crafted git trees.

Every test that hands sqlbench a secret uses ``CANARY`` and ends with ``sb.assert_no_canary()``:
the canary is searched for in every byte sqlbench printed and in every file under the test's
folder (the project, its store, outputs, exports), so a leak anywhere fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

CANARY = "CanaryS3cret-q7Zx"
"""A secret value; no byte sqlbench writes or prints may contain it."""


def _walk_files(root: Path) -> Iterable[Path]:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                yield path


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
    ) -> subprocess.CompletedProcess[str]:
        full_env = {
            **os.environ,
            "SQLBENCH_HOME": str(self.tmp_path / "home"),
            "COLUMNS": "200",
            **(env or {}),
        }
        proc = subprocess.run(
            [sys.executable, "-m", "sqlbench", *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        self.printed += [proc.stdout, proc.stderr]
        out = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback (most recent call last)" not in out + err, out + err
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

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
