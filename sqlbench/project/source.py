"""Which version of a project was loaded (``SourceInfo``) and its environment.

A ref's environment: ``prod`` for the deploy branch (``deploy_branch``, default ``main``, or
``master`` in a repository without ``main``), ``staging`` for ``staging_branch``, else ``dev``.
The working tree is always ``dev`` (docs/project-files.md), even a clean checkout of ``main``: it
may hold untracked or ignored files a commit does not. Its ``SourceInfo`` still records HEAD's
commit with ``dirty=False``, so a run's identity (commit, no working-tree hash) equals that of a run
of the same commit by ref, and such runs can be reused for each other.
"""

from __future__ import annotations

from pathlib import Path

from sqlbench.project import gitfs
from sqlbench.project.files import Environment, Settings, SourceInfo


def environment_for(folder: Path | str, ref: str | None, settings: Settings) -> Environment:
    """``prod`` for the deploy branch, ``staging`` for the staging branch, else ``dev``.

    ``ref`` None means the working tree, which is always ``dev``. Remote-tracking names
    (``origin/main``) count as their branch. Without ``deploy_branch`` the deploy branch is
    ``main``, or ``master`` in a repository that has no ``main``.
    """
    if ref is None:
        return Environment.DEV
    name = gitfs.branch_name(folder, ref)
    if settings.staging_branch and name == settings.staging_branch:
        return Environment.STAGING
    if settings.deploy_branch:
        return Environment.PROD if name == settings.deploy_branch else Environment.DEV
    if name == "main":
        return Environment.PROD
    if name == "master" and not any(gitfs.ref_exists(folder, r) for r in ("main", "origin/main")):
        return Environment.PROD
    return Environment.DEV


def working_tree_source(folder: Path, note: str | None = None) -> SourceInfo:
    """The ``SourceInfo`` of a working-tree load: checked-out branch (``working tree`` when
    detached or outside git), HEAD, dirty flag and the hash of uncommitted changes."""
    state = gitfs.working_tree_state(folder)
    if state is None:
        return SourceInfo(branch="working tree", commit=None, dev_mode_note=note)
    return SourceInfo(
        branch=state.branch or "working tree",
        commit=state.commit,
        dirty=state.dirty,
        working_tree_hash=state.changes_hash,
        dev_mode_note=note,
    )
