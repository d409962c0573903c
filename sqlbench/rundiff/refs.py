"""``compare --base`` and ``check`` as library functions: two git refs of a project compared,
each side run unless a stored run has its identity, so the Python API does what the CLI does.

Progress: each side that must be run gets its own progress display from ``progress``, a
factory of context managers (the CLI's shows live progress on stderr); None runs quietly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import Project
from sqlbench.project.load import close_project
from sqlbench.rundiff.diff import RunDiff, RunSide, diff_runs
from sqlbench.rundiff.policy import CheckPolicy, CheckResult, run_check
from sqlbench.rundiff.sides import (
    Notify,
    SideOptions,
    affected_reuse,
    load_side_project,
    project_side,
    ref_side,
)
from sqlbench.runs.events import ProgressCallback
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.scores import RunResult
from sqlbench.runs.store import RunStore

if TYPE_CHECKING:
    from sqlbench.runs.plan import RunOptions

ProgressScope = Callable[[], AbstractContextManager[ProgressCallback | None]]
"""Makes the progress display of one side's run (entered while that side runs)."""


@contextlib.contextmanager
def _quiet() -> Iterator[ProgressCallback | None]:
    yield None


def compare_refs(
    store: RunStore,
    base_ref: str | None,
    head_ref: str | None,
    options: SideOptions,
    *,
    alpha: float = 0.05,
    progress: ProgressScope | None = None,
    notify: Notify | None = None,
    automatic_only: bool = False,
) -> RunDiff:
    """``sqlbench compare --base REF [--head REF]``: both sides from git refs (the head's
    default: the working tree), base first so that a head identical to the base reuses its run.

    Args:
        store: Where runs are reused from and stored.
        base_ref: The base's git ref; a ref without a sqlbench project is an empty side.
        head_ref: The head's git ref; None for the working tree.
        options: The project folder and how a side is run (agent, repeat, concurrency, fresh).
        alpha: Significance level of the paired test's conclusion.
        progress: Progress display per side that has to be run; None: none.
        notify: Receives one-line notes (a reused run, a dev-mode fallback).
        automatic_only: Count the automatic verdicts alone, not people's decisions.

    Raises:
        SqlbenchError: A ref that cannot be read, a head without a project, a failed run.
    """
    scope = progress or _quiet
    with scope() as display:
        base = ref_side(
            base_ref, store, options, role="base", allow_empty=True, progress=display, notify=notify
        )
    with scope() as display:
        head = ref_side(head_ref, store, options, role="head", progress=display, notify=notify)
    return diff_runs(base, head, alpha=alpha, automatic_only=automatic_only)


def check_refs(
    store: RunStore,
    base_ref: str,
    head_ref: str | None,
    options: SideOptions,
    *,
    fail_on: Sequence[str] | None = None,
    floor: float | None = None,
    alpha: float | None = None,
    must_pass_tag: str | None = None,
    progress: ProgressScope | None = None,
    notify: Notify | None = None,
    automatic_only: bool = False,
) -> CheckResult:
    """``sqlbench check``: compare ``base_ref`` with ``head_ref`` and apply the check policy of
    ``check:`` in the head's sqlbench.yml, the arguments given on top.

    Args:
        store: Where runs are reused from and stored.
        base_ref: The git ref the change goes into; without a project it counts as empty.
        head_ref: The change's git ref; None for the working tree.
        options: The project folder and how a side is run.
        fail_on: Rules that fail the check (default: ``check.fail_on``).
        floor: Minimum head accuracy, 0-1.
        alpha: Significance level of ``significant_drop`` (default: ``check.alpha``).
        must_pass_tag: Tag of the questions that must pass (default: ``check.must_pass_tag``).
        progress: Progress display per side that has to be run; None: none.
        notify: Receives one-line notes.
        automatic_only: Count the automatic verdicts alone, not people's decisions.

    Raises:
        SqlbenchError: A ref that cannot be read, a head without a project, a failed run.
    """
    loaded = load_side_project(head_ref, options, role="head", notify=notify)
    if isinstance(loaded, RunSide):  # only an allow_empty base can be empty
        raise SqlbenchError("the head has no sqlbench project")
    scope = progress or _quiet
    try:
        policy = CheckPolicy.from_settings(
            loaded.settings.check,
            fail_on=fail_on,
            floor=floor,
            alpha=alpha,
            must_pass_tag=must_pass_tag,
        )
        with scope() as display:
            base = ref_side(
                base_ref,
                store,
                options,
                role="base",
                allow_empty=True,
                progress=display,
                notify=notify,
            )
        reuse = None
        if options.affected:
            reuse = affected_reuse(loaded, base_ref, base, store, options, notify)
        with scope() as display:
            head = project_side(
                loaded, store, options, role="head", progress=display, notify=notify, reuse=reuse
            )
    finally:
        close_project(loaded)
    return run_check(base, head, policy, automatic_only=automatic_only)


def affected_run(
    project: Project,
    base_ref: str,
    agent_name: str | None,
    options: RunOptions,
    *,
    progress: ProgressCallback | None = None,
    notify: Notify | None = None,
) -> RunResult:
    """``sqlbench run --affected-by REF``: a run of ``project`` that asks the agent only the
    questions the change from ``base_ref`` can have touched; the others take the answers of the
    base run (reused from the store, else run first), labelled ``unaffected (reused)``.

    Raises:
        SqlbenchError: The ref cannot be read, a run fails, the project does not load.
    """
    # The run loop pulls in engines, comparison and agents: import it on use only.
    from sqlbench.runs.runner import run_benchmark

    project_dir = options.project_dir or project.root
    sides = SideOptions(
        project_dir=project_dir,
        agent_name=agent_name,
        repeat=options.repeat or 1,
        concurrency=options.concurrency,
        trusted_refs=options.trusted_refs,
    )
    with open_project_store(project_dir, options.env) as store:
        base = ref_side(
            base_ref, store, sides, role="base", allow_empty=True, progress=progress, notify=notify
        )
        reuse = affected_reuse(project, base_ref, base, store, sides, notify)
        return run_benchmark(
            project, agent_name, replace(options, reuse=reuse), progress=progress, store=store
        )
