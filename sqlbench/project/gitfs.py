"""Project files at a git ref, with the checkout, the index and uncommitted edits untouched.

Only read-only git commands run here (``rev-parse``, ``ls-tree``, ``cat-file``, ``status``,
``for-each-ref``, ``remote``). ``extract_project`` writes the project's subtree as committed at
a ref into a new temporary folder, so agent scripts, replay files, setup SQL and data files
all come from that ref; the caller owns the folder (``ExtractedTree.cleanup``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, NamedTuple

from sqlbench.errors import GitError

PROJECT_MARKERS = ("sqlbench.yml", "sqlbench.yaml", "eval_questions")
"""A folder (or a ref's subtree) holding any of these is a sqlbench project."""

STORE_DIR = ".sqlbench"
"""The default run store inside a project: never part of the project's content."""

_SHA = re.compile(r"[0-9a-fA-F]{7,40}")


class RepoLocation(NamedTuple):
    """Where a project folder sits in its git repository."""

    toplevel: Path
    """The repository's work-tree root."""
    prefix: str
    """The project folder relative to ``toplevel``: '' or 'sub/dir/' (posix, trailing slash)."""


class WorkingTreeState(NamedTuple):
    """The checkout a working-tree load reads."""

    branch: str | None
    """The checked-out branch, None when HEAD is detached."""
    commit: str | None
    """HEAD's sha, None in a repository without commits."""
    dirty: bool
    """Uncommitted changes (untracked files included) under the project folder."""
    changes_hash: str | None
    """sha256 over HEAD and every changed file's path and content (dirty trees only)."""


def _env() -> dict[str, str]:
    # English messages to match on; GIT_OPTIONAL_LOCKS=0 keeps `git status` from refreshing
    # (writing) the index.
    return {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


def _git(args: list[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=_env()
        )
    except FileNotFoundError as err:
        raise GitError(
            "git is not installed (or not on PATH); it is needed to read git refs"
        ) from err
    if check and proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()
        raise GitError(f"git {args[0]} failed in {cwd}: {detail[-1] if detail else 'no output'}")
    return proc


def locate_repo(path: Path | str) -> RepoLocation | None:
    """The repository holding ``path`` and the project's place in it; None outside git.

    Raises:
        GitError: git is missing, or refuses the repository (e.g. dubious ownership).
    """
    folder = Path(path).resolve()
    proc = _git(["rev-parse", "--show-toplevel", "--show-prefix"], folder, check=False)
    if proc.returncode != 0:
        message = proc.stderr.strip()
        if "not a git repository" in message:
            return None
        raise GitError(
            f"git cannot read the repository at {folder}: "
            f"{message.splitlines()[-1] if message else 'unknown error'}"
        )
    lines = proc.stdout.splitlines()
    prefix = lines[1] if len(lines) > 1 else ""
    return RepoLocation(Path(lines[0]), prefix)


def _require_repo(path: Path | str, ref: str) -> RepoLocation:
    location = locate_repo(path)
    if location is None:
        raise GitError(
            f"{Path(path).resolve()} is not in a git repository, so ref {ref!r} "
            "cannot be read; leave the branch out to use the files as they are"
        )
    return location


def _rev_parse(location: RepoLocation, ref: str) -> str | None:
    if not ref or ref.startswith("-"):
        return None
    proc = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        location.toplevel,
        check=False,
    )
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def ref_exists(path: Path | str, ref: str) -> bool:
    """Whether ``ref`` names a commit in the repository at ``path`` (False outside git)."""
    location = locate_repo(path)
    return location is not None and _rev_parse(location, ref) is not None


def resolve_ref(path: Path | str, ref: str) -> str:
    """The full commit sha that ``ref`` names.

    Args:
        path: Any folder in the repository (usually the project folder).
        ref: A branch, tag, commit, ``origin/main``, ``HEAD~1``...

    Raises:
        GitError: Not a git repository, or the ref does not exist (the message says how to
            fetch a missing remote branch).
    """
    location = _require_repo(path, ref)
    sha = _rev_parse(location, ref)
    if sha is None:
        raise _missing_ref(location, ref)
    return sha


def _missing_ref(location: RepoLocation, ref: str) -> GitError:
    remotes = _git(["remote"], location.toplevel).stdout.split()
    head, _, rest = ref.partition("/")
    shallow = (
        _git(
            ["rev-parse", "--is-shallow-repository"], location.toplevel, check=False
        ).stdout.strip()
        == "true"
    )
    if head in remotes and rest:
        return GitError(
            f"git ref {ref!r} is not in this clone; fetch it with `git fetch {head} {rest}` "
            "(CI checkouts are often shallow or single-branch: fetch the base branch first, or "
            "clone with fetch-depth: 0)"
        )
    if _SHA.fullmatch(ref):
        how = f"`git fetch {remotes[0]} {ref}`" if remotes else "fetching it"
        more = " (this clone is shallow)" if shallow else ""
        return GitError(f"commit {ref!r} is not in this clone{more}; try {how}")
    names = _git(
        ["for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags", "refs/remotes"],
        location.toplevel,
    ).stdout.split()
    remote_match = [n for n in names if any(n == f"{r}/{ref}" for r in remotes)]
    if remote_match:
        hint = f"; did you mean {remote_match[0]!r}?"
    else:
        close = difflib.get_close_matches(ref, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
    if not hint and "/" in ref and head not in remotes and not remotes:
        hint = f" (this repository has no remote named {head!r})"
    return GitError(f"git ref {ref!r} does not exist in {location.toplevel}{hint}")


def branch_name(path: Path | str, ref: str) -> str:
    """``ref`` as a branch name: ``refs/heads/x``, ``refs/remotes/origin/x`` and ``origin/x``
    (when ``origin`` is a remote) all give ``x``; anything else comes back unchanged."""
    if ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    if ref.startswith("refs/remotes/"):
        return ref.removeprefix("refs/remotes/").partition("/")[2] or ref
    head, _, rest = ref.partition("/")
    location = locate_repo(path)
    if rest and location is not None and head in _git(["remote"], location.toplevel).stdout.split():
        return rest
    return ref


def has_project_at(path: Path | str, ref: str) -> bool:
    """Whether the project folder at ``ref`` holds a sqlbench project (``PROJECT_MARKERS``).

    A PR check treats a base ref without a project as an empty benchmark.

    Raises:
        GitError: Not a git repository, or the ref does not exist.
    """
    location = _require_repo(path, ref)
    commit = resolve_ref(path, ref)
    paths = [location.prefix + marker for marker in PROJECT_MARKERS]
    proc = _git(["ls-tree", "--name-only", "--full-tree", commit, "--", *paths], location.toplevel)
    return bool(proc.stdout.strip())


class ExtractedTree:
    """A temporary folder holding a project's files as committed at one ref.

    The creator owns it: call ``cleanup()`` (idempotent) when done. ``load_project`` ties it to
    the returned ``Project`` instead (removed when the Project is garbage-collected, or at exit).
    """

    def __init__(self, root: Path, commit: str, ref: str) -> None:
        self.root = root
        self.commit = commit
        self.ref = ref

    def cleanup(self) -> None:
        """Remove the folder."""
        shutil.rmtree(self.root, ignore_errors=True)


def extract_project(path: Path | str, ref: str) -> ExtractedTree:
    """Write the project folder's files as committed at ``ref`` into a new temporary folder.

    Reads objects with ``git ls-tree``/``git cat-file`` (not ``git archive``, which would apply
    ``export-ignore``/``export-subst`` attributes). Executable bits and symlinks are kept;
    submodules are left out. The checkout, index and uncommitted edits are not touched.

    Raises:
        GitError: Not a git repository, the ref does not exist, or git fails.
    """
    location = _require_repo(path, ref)
    commit = resolve_ref(path, ref)
    pathspec = ["--", location.prefix] if location.prefix else []
    listing = _git(
        ["ls-tree", "-r", "-z", "--full-tree", commit, *pathspec], location.toplevel
    ).stdout
    entries: list[tuple[str, str, str]] = []
    for record in filter(None, listing.split("\0")):
        meta, _, file_path = record.partition("\t")
        mode, kind, oid = meta.split()
        if kind != "blob":
            continue  # a submodule's commit: not part of this repository's files
        entries.append((mode, oid, file_path.removeprefix(location.prefix)))
    safe_ref = re.sub(r"[^A-Za-z0-9._-]+", "-", ref)[:40]
    root = Path(tempfile.mkdtemp(prefix=f"sqlbench-{safe_ref}-"))
    tree = ExtractedTree(root, commit, ref)
    try:
        _write_blobs(location.toplevel, root, entries)
    except BaseException:
        tree.cleanup()
        raise
    return tree


def _write_blobs(toplevel: Path, root: Path, entries: list[tuple[str, str, str]]) -> None:
    if not entries:
        return
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=toplevel,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed(stdin: IO[bytes]) -> None:
        # A thread writes the object ids so that neither pipe can fill up and deadlock.
        try:
            for _, oid, _ in entries:
                stdin.write(f"{oid}\n".encode())
        finally:
            stdin.close()

    writer = threading.Thread(target=feed, args=(proc.stdin,), daemon=True)
    writer.start()
    try:
        for mode, oid, rel in entries:
            header = proc.stdout.readline().decode().split()
            if len(header) != 3 or header[0] != oid:
                raise GitError(f"git cat-file could not read {rel} ({' '.join(header)})")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                os.symlink(data.decode(), target)
                continue
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def working_tree_state(path: Path | str) -> WorkingTreeState | None:
    """Branch, HEAD and uncommitted changes of the project folder's checkout; None outside git.

    Changes count only under the project folder, untracked files included, ignored files and
    the ``.sqlbench/`` store excluded.
    """
    folder = Path(path).resolve()
    location = locate_repo(folder)
    if location is None:
        return None
    branch_proc = _git(["symbolic-ref", "--short", "-q", "HEAD"], folder, check=False)
    branch = branch_proc.stdout.strip() or None
    commit = _rev_parse(location, "HEAD")
    status = _git(
        [
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            ".",
            f":(exclude){STORE_DIR}",
        ],
        folder,
    ).stdout
    changed = sorted((rec[3:], rec[:2]) for rec in status.split("\0") if rec)
    if not changed:
        return WorkingTreeState(branch, commit, False, None)
    digest = hashlib.sha256(f"head {commit}\n".encode())
    for rel, code in changed:
        file = location.toplevel / rel
        digest.update(f"{code} {rel}\n".encode())
        if file.is_symlink():
            digest.update(os.readlink(file).encode())
        elif file.is_file():
            digest.update(hashlib.sha256(file.read_bytes()).digest())
        else:
            digest.update(b"<deleted>")
    return WorkingTreeState(branch, commit, True, digest.hexdigest())
