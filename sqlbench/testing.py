"""Helpers for testing sqlbench projects and agent plugins (used by sqlbench's own tests).

- ``write_project(root, {"path": content})`` writes project files from strings or data.
- ``GitRepo`` makes a git repository and commits files on any branch, the checkout untouched
  when the branch is not the checked-out one (for ``--branch`` tests).
- ``FakeAgent`` answers from canned answers and records every request; it follows
  ``sqlbench.agents.base.Agent``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import textwrap
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from sqlbench.agents.base import Answer, Request
from sqlbench.errors import AgentError

FileContent = str | bytes | Mapping[str, Any] | Sequence[Any] | None
"""A file's content: text (dedented), bytes, or data dumped as YAML; None deletes the file."""


def _to_bytes(content: FileContent) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return textwrap.dedent(content).encode("utf-8")
    text: str = yaml.safe_dump(content, sort_keys=False, allow_unicode=True)
    return text.encode("utf-8")


def _is_executable(data: bytes) -> bool:
    return data.startswith(b"#!")


def write_project(root: Path | str, files: Mapping[str, FileContent]) -> Path:
    """Write project files under ``root`` and return ``root``.

    Strings are dedented (so triple-quoted YAML can be indented in a test), mappings and lists
    are dumped as YAML, bytes are written as they are, ``None`` deletes the file. Files that
    start with ``#!`` are made executable.

    Args:
        root: The project folder (created if missing).
        files: Relative path (posix) to content.

    Returns:
        ``root`` as a Path.

    Example:
        >>> import tempfile
        >>> root = write_project(tempfile.mkdtemp(), {"sqlbench.yml": {"dialect": "duckdb"}})
        >>> (root / "sqlbench.yml").read_text()
        'dialect: duckdb\\n'
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = root / rel
        if content is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = _to_bytes(content)
        target.write_bytes(data)
        if _is_executable(data):
            target.chmod(0o755)
    return root


class GitRepo:
    """A git repository for tests: commit files on branches, read refs, edit the work tree.

    Example:
        >>> import tempfile
        >>> repo = GitRepo.init(tempfile.mkdtemp())
        >>> _ = repo.commit({"a.txt": "one"})
        >>> _ = repo.commit({"a.txt": "two"}, branch="feature")
        >>> repo.show("feature", "a.txt"), (repo.root / "a.txt").read_text()
        ('two', 'one')
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def init(cls, root: Path | str, *, branch: str = "main") -> GitRepo:
        """Create a repository at ``root`` with ``branch`` checked out (no commit yet)."""
        path = Path(root)
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", branch)
        repo.git("config", "user.name", "sqlbench tests")
        repo.git("config", "user.email", "tests@sqlbench.invalid")
        repo.git("config", "commit.gpgsign", "false")
        return repo

    def git(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        """Run git in the repository and return its stdout (raises on a non-zero exit)."""
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run(
            ["git", *args],
            cwd=self.root,
            input=input,
            env=full_env,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode().strip()}")
        return proc.stdout.decode("utf-8", errors="replace").strip()

    @property
    def current_branch(self) -> str:
        """The checked-out branch."""
        return self.git("symbolic-ref", "--short", "HEAD")

    def head(self, ref: str = "HEAD") -> str:
        """Full sha of ``ref``."""
        return self.git("rev-parse", "--verify", f"{ref}^{{commit}}")

    def show(self, ref: str, path: str) -> str:
        """A file's text as committed at ``ref``."""
        return self.git("show", f"{ref}:{path}")

    def write(self, files: Mapping[str, FileContent]) -> None:
        """Edit the work tree without committing (an uncommitted edit)."""
        write_project(self.root, files)

    def commit(
        self,
        files: Mapping[str, FileContent],
        message: str = "update",
        *,
        branch: str | None = None,
    ) -> str:
        """Commit ``files`` (on top of the branch's tree) and return the new commit's sha.

        On the checked-out branch (the default) the files are written to the work tree and
        committed. On any other branch they are committed with plumbing commands, so the
        checkout, the index and uncommitted edits stay untouched; a missing branch starts at
        the current HEAD (or with no parent in an empty repository).
        """
        on_checkout = branch is None or branch == self.current_branch
        if on_checkout:
            self.write(files)
            self.git("add", "-A", "--", *files.keys())
            self.git("commit", "-q", "--allow-empty", "-m", message)
            return self.head()
        assert branch is not None
        parent = self._rev(f"refs/heads/{branch}") or self._rev("HEAD")
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if parent:
                self.git("read-tree", parent, env=env)
            else:
                self.git("read-tree", "--empty", env=env)
            for rel, content in files.items():
                if content is None:
                    self.git("update-index", "--force-remove", "--", rel, env=env)
                    continue
                data = _to_bytes(content)
                oid = self.git("hash-object", "-w", "--stdin", input=data)
                mode = "100755" if _is_executable(data) else "100644"
                self.git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{rel}", env=env)
            tree = self.git("write-tree", env=env)
        parents = ["-p", parent] if parent else []
        sha = self.git("commit-tree", tree, *parents, "-m", message)
        self.git("update-ref", f"refs/heads/{branch}", sha)
        return sha

    def _rev(self, ref: str) -> str | None:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout.strip() or None


CannedAnswer = str | Answer | Mapping[str, Any] | BaseException
"""SQL text, an Answer, an answer mapping, or an exception to raise."""


class FakeAgent:
    """An agent with canned answers, keyed by question ``name`` or ``space/name``.

    A value may be SQL text, an ``Answer``, an answer mapping, an exception to raise (e.g.
    ``AgentTransientError`` to exercise retries), or a list of those consumed one per call (the
    last one repeats). A question with no canned answer (and no ``default``) raises
    ``AgentError``. Every request is recorded in ``requests``.

    Example:
        >>> agent = FakeAgent({"q1": "SELECT 1"})
        >>> req = Request(name="q1", space="auto", question="?", dialect="duckdb", branch="main")
        >>> agent.answer(req).sql
        'SELECT 1'
    """

    def __init__(
        self,
        answers: Mapping[str, CannedAnswer | Sequence[CannedAnswer]] | None = None,
        *,
        name: str = "fake",
        default: CannedAnswer | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.name = name
        self.answers = dict(answers or {})
        self.default = default
        self.delay_s = delay_s
        self.requests: list[Request] = []
        self._calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def answer(self, request: Request) -> Answer:
        """Return (or raise) the canned answer for ``request``."""
        full_name = f"{request.space}/{request.name}"
        with self._lock:
            self.requests.append(request)
            key = full_name if full_name in self.answers else request.name
            count = self._calls.get(full_name, 0)
            self._calls[full_name] = count + 1
        if self.delay_s:
            time.sleep(self.delay_s)
        if key in self.answers:
            value = self.answers[key]
        elif self.default is not None:
            value = self.default
        else:
            raise AgentError(f"FakeAgent {self.name!r} has no canned answer for {full_name!r}")
        if isinstance(value, list | tuple):
            value = value[min(count, len(value) - 1)]
        return self._to_answer(value)

    @staticmethod
    def _to_answer(value: Any) -> Answer:
        if isinstance(value, BaseException):
            raise value
        if isinstance(value, Answer):
            return value.model_copy(deep=True)
        if isinstance(value, str):
            return Answer(sql=value)
        if isinstance(value, Mapping):
            return Answer.model_validate(dict(value))
        raise TypeError(f"unsupported canned answer: {value!r}")
