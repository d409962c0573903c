"""Project files at a git ref, with the checkout, the index and uncommitted edits untouched.

Only read-only git commands run here (``rev-parse``, ``ls-tree``, ``cat-file``, ``status``,
``for-each-ref``, ``remote``, ``merge-base --is-ancestor``). ``extract_project`` writes the
project's subtree as committed at a ref into a new temporary folder, so agent scripts, replay
files, setup SQL and data files all come from that ref; the caller owns the folder
(``ExtractedTree.cleanup``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO, NamedTuple

from sqlbench.errors import GitError
from sqlbench.tempdirs import make_temp
from sqlbench.text import suggest

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


def is_ancestor(path: Path | str, commit: str) -> bool:
    """Whether ``commit`` is in the history of the working tree's HEAD (HEAD itself included);
    False outside git, in a repository without commits, or for an unknown commit."""
    location = locate_repo(path)
    if location is None or not _SHA.fullmatch(commit):
        return False
    proc = _git(
        ["merge-base", "--is-ancestor", "--end-of-options", commit, "HEAD"],
        location.toplevel,
        check=False,
    )
    return proc.returncode == 0


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
    hint = suggest(ref, remote_match, cutoff=0.0) if remote_match else suggest(ref, names)
    if not hint and "/" in ref and head not in remotes and not remotes:
        hint = f" (this repository has no remote named {head!r})"
    return GitError(f"git ref {ref!r} does not exist in {location.toplevel}{hint}")


def resolved_name(path: Path | str, ref: str, commit: str) -> str:
    """What ``ref`` resolved to, as a run records it: the branch or tag it names (``HEAD`` on
    ``main`` gives ``main``), else the short ``commit`` (``HEAD~1``, ``main^``, a sha), so a
    stored run never says ``HEAD~1``, which means another commit tomorrow."""
    location = locate_repo(path)
    if location is None or not ref or ref.startswith("-"):
        return commit[:7]
    proc = _git(["rev-parse", "--abbrev-ref", ref], location.toplevel, check=False)
    name = proc.stdout.strip() if proc.returncode == 0 else ""
    return name if name and name != "HEAD" else commit[:7]


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

    Another branch's tree is untrusted (docs/security.md): a path with an empty, ``.`` or
    ``..`` part, a file under a path that is also a symlink, or a symlink that points outside
    the folder (absolute, or up through ``..``) is refused with one sentence, and nothing is
    ever written through a symlink (regular files first, symlinks last, ``O_NOFOLLOW``).
    Folders left by killed sqlbench processes are removed first (``tempdirs.make_temp``).

    Raises:
        GitError: Not a git repository, the ref does not exist, git fails, or the tree is unsafe.
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
    _check_tree_paths(entries, ref)
    root = make_temp("tree", ref)
    tree = ExtractedTree(root, commit, ref)
    try:
        _write_blobs(location.toplevel, root, entries, ref)
    except BaseException:
        tree.cleanup()
        raise
    return tree


def _unsafe_tree(ref: str, rel: str, why: str) -> GitError:
    return GitError(
        f"the tree at {ref!r} is unsafe: {rel!r} {why}; sqlbench reads nothing from it "
        "(see docs/security.md)"
    )


def _check_tree_paths(entries: list[tuple[str, str, str]], ref: str) -> None:
    """Refuse crafted trees before anything is written (see ``extract_project``)."""
    links = {rel for mode, _, rel in entries if mode == "120000"}
    seen: set[str] = set()
    for _, _, rel in entries:
        parts = rel.split("/")
        if rel.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise _unsafe_tree(ref, rel, "has an empty, '.' or '..' part")
        if rel in seen:
            raise _unsafe_tree(ref, rel, "appears twice")
        seen.add(rel)
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in links:
                raise _unsafe_tree(
                    ref, rel, f"lies under {'/'.join(parts[:depth])!r}, which is a symlink"
                )


def _link_target_ok(rel: str, target: str) -> bool:
    """Whether a symlink at ``rel`` pointing at ``target`` stays inside the tree, as written.

    Example:
        >>> _link_target_ok("a/b.yml", "../c.yml"), _link_target_ok("a/b.yml", "../../etc")
        (True, False)
        >>> _link_target_ok("x", "/etc/passwd")
        False
    """
    if not target or target.startswith("/") or "\0" in target:
        return False
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return joined != ".." and not joined.startswith("../") and not os.path.isabs(joined)


def _write_blobs(
    toplevel: Path, root: Path, entries: list[tuple[str, str, str]], ref: str = ""
) -> None:
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

    links: list[tuple[str, str]] = []
    writer = threading.Thread(target=feed, args=(proc.stdin,), daemon=True)
    writer.start()
    try:
        for mode, oid, rel in entries:
            header = proc.stdout.readline().decode().split()
            if len(header) != 3 or header[0] != oid:
                raise GitError(f"git cat-file could not read {rel} ({' '.join(header)})")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            if mode == "120000":
                target_text = data.decode("utf-8", "replace")
                if not _link_target_ok(rel, target_text):
                    raise _unsafe_tree(
                        ref, rel, f"is a symlink to {target_text!r}, outside the project"
                    )
                links.append((rel, target_text))
                continue
            _write_file(root, rel, data, executable=mode == "100755")
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    # Symlinks last, so no file is ever written through one; then every link, resolved
    # through the others, must still land inside the folder.
    for rel, target_text in links:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.symlink(target_text, target)
        except FileExistsError as err:
            raise _unsafe_tree(ref, rel, "is both a symlink and a folder or file") from err
    real_root = os.path.realpath(root)
    for rel, target_text in links:
        real = os.path.realpath(root / rel)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise _unsafe_tree(ref, rel, f"is a symlink to {target_text!r}, outside the project")


def _write_file(root: Path, rel: str, data: bytes, *, executable: bool) -> None:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


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
