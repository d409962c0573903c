"""Whose code sqlbench may run: the one trust decision for a git ref's tree (docs/security.md).

Running a ``command`` or ``python`` agent defined (or redefined) in another ref's tree, or a
ref's dbt project, runs that ref's author's code with the user's credentials. That is done only
for refs the user trusts (``ref_trust``):

- the working tree (the user's own files);
- a commit already in the working tree's history (``git merge-base --is-ancestor``): the base
  of a pull request, main, any tag behind HEAD, were already on this machine's branch;
- a ref whose files that matter (an agent's definitions and scripts, a dbt project's files)
  equal the working tree's, byte for byte: running them is running the user's own code;
- a ref named with ``--trust-ref REF``: the user read it and says so.

Everything else is refused with one sentence naming what would run and how to trust the ref.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from sqlbench.errors import GitError
from sqlbench.project import gitfs

TRUST_OPTION = "--trust-ref"


class RefTrust(NamedTuple):
    """Whether a ref's code may run, and why (for messages and docs)."""

    trusted: bool
    why: str


def ref_trust(
    checkout: Path,
    commit: str | None,
    *,
    trusted_refs: Sequence[str] = (),
    ref_root: Path | None = None,
    files: Iterable[str] = (),
) -> RefTrust:
    """Whether code from the tree of ``commit`` may run.

    Args:
        checkout: The working tree's project folder (where the user runs sqlbench).
        commit: The ref's commit; None for the working tree itself.
        trusted_refs: Refs named with ``--trust-ref`` (resolved here, so a branch name and its
            sha alike trust the same commit).
        ref_root: Where the ref's project files are extracted (for ``files``).
        files: Project-relative paths that decide what would run (agent files, a dbt project's
            files); when every one is byte-for-byte the working tree's (both missing counts as
            equal), the ref runs nothing the user does not already run.

    Example:
        >>> ref_trust(Path("."), None)
        RefTrust(trusted=True, why='the working tree')
    """
    if commit is None:
        return RefTrust(True, "the working tree")
    for ref in trusted_refs:
        try:
            named = gitfs.resolve_ref(checkout, ref)
        except GitError:
            continue
        if named == commit:
            return RefTrust(True, f"named with {TRUST_OPTION} {ref}")
    if gitfs.is_ancestor(checkout, commit):
        return RefTrust(True, "a commit already in the working tree's history")
    wanted = sorted(set(files))
    if ref_root is not None and wanted and all(_same(ref_root, checkout, r) for r in wanted):
        return RefTrust(True, "its agent files equal the working tree's")
    return RefTrust(False, "not the working tree, not in its history, and its files differ")


def untrusted_sentence(what: str, ref: str) -> str:
    """The one sentence refusing to run ``what`` from ``ref``'s tree."""
    return (
        f"{what} comes from {ref}'s tree, which is not trusted: it is not the working tree nor "
        "in its history, and its agent files differ from the working tree's, so running it "
        f"would run that ref's author's code; read the change, then pass {TRUST_OPTION} {ref} "
        "to run it"
    )


def untrusted_dbt_sentence(ref: str) -> str:
    """The one sentence refusing to build or parse ``ref``'s dbt project."""
    return (
        f"the dbt project comes from {ref}'s tree, which is not trusted: it is not the working "
        "tree nor in its history, and its dbt files differ from the working tree's, so building "
        f"it would run that ref's author's code (macros, SQL, Python models); read the change, "
        f"then pass {TRUST_OPTION} {ref} to build it"
    )


def tree_files(root: Path, folder: str) -> list[str]:
    """Project-relative paths of the files under ``root/folder`` (none when it is missing)."""
    base = root / folder
    if not base.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file())


def _same(ref_root: Path, checkout: Path, rel: str) -> bool:
    mine, theirs = checkout / rel, ref_root / rel
    if not mine.is_file() and not theirs.is_file():
        return True
    try:
        return mine.is_file() and theirs.is_file() and mine.read_bytes() == theirs.read_bytes()
    except OSError:
        return False
