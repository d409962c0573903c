"""The two sides of a comparison: stored runs, or git refs run (or reused) on demand.

``compare --base REF --head REF`` and ``check`` need one run per side. A side's run is reused
when the store holds a Completed run with the identity this run would have (docs/runs.md:
project commit, question-set hash, agent settings hash, sqlbench version, compare options, the
warehouse; and the same ``--repeat``), so a pull-request check whose base was run before costs
one run. A run against a warehouse sqlbench does not build (a server, whose data changes without
a commit) is reused only within ``check.reuse_max_age``; ``--fresh`` never reuses. A base ref that
holds no sqlbench project yet is an empty side, not an error.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlbench.errors import AgentError, DbtError, GitError, SqlbenchError
from sqlbench.project import gitfs
from sqlbench.project.files import Project, parse_duration
from sqlbench.project.load import close_project
from sqlbench.records.hashes import disputed_keys
from sqlbench.records.run import RunInfo, RunStatus, utc_now
from sqlbench.rundiff.diff import RunSide, side_from_result, side_from_run
from sqlbench.runs.events import ProgressCallback
from sqlbench.runs.store import RunStore

if TYPE_CHECKING:
    from sqlbench.runs.regrade import ReuseAnswers

# Running a ref (planning, identities, regrading, the affected questions) is imported by the
# functions that run one: comparing two stored runs needs none of it, nor the agents, engines,
# sqlglot and pyarrow those modules load.

Notify = Callable[[str], None]
"""Receives one-line notes for the user (which side was reused, an incomplete run...)."""


@dataclass(frozen=True)
class SideOptions:
    """How to obtain a side from a ref."""

    project_dir: Path
    """The checkout (its ``.sqlbench/`` store, its git repository)."""
    agent_name: str | None = None
    """None: each side's own ``default_agent``."""
    repeat: int = 1
    concurrency: int | None = None
    fresh: bool = False
    """Never reuse a stored run (``--fresh``)."""
    affected: bool = False
    """Head: ask only the questions the change can have touched (``check --affected``)."""
    trusted_refs: tuple[str, ...] = ()
    """``--trust-ref``: refs whose agents may run although not in the working tree's history."""


def stored_side(store: RunStore, ref: str, notify: Notify | None = None) -> RunSide:
    """A side from a run already in the store (by name or id).

    A run that is not Completed is still compared (what it graded), with a note saying the
    questions it did not reach appear as added or removed.
    """
    info = store.find_run(ref)
    status = store.effective_status(info)
    if status is not RunStatus.COMPLETED and notify is not None:
        notify(
            f"run {info.name} is {status.label}: questions it did not grade show as added "
            "or removed"
        )
    if info.shard is not None and notify is not None:
        notify(
            f"run {info.name} covers shard {info.shard} only; join the shards with "
            "`sqlbench merge` to compare whole runs"
        )
    return side_from_run(
        info,
        store.trials(info.id),
        reviews=store.reviews(info.id),
        disputes=disputed_keys(store.disputes()),
    )


def ref_side(
    ref: str | None,
    store: RunStore,
    options: SideOptions,
    *,
    role: str,
    allow_empty: bool = False,
    progress: ProgressCallback | None = None,
    notify: Notify | None = None,
) -> RunSide:
    """The side for a git ref (None: the working tree): a stored run reused, else a new run.

    Args:
        ref: A git ref, or None for the working tree (uncommitted edits included).
        store: Where runs are looked up and recorded.
        options: Agent, repeat and concurrency.
        role: ``base`` or ``head``, for messages.
        allow_empty: When the ref holds no sqlbench project, return an empty side instead
            of failing (a base branch from before sqlbench was adopted).
        progress: Live progress of a run, when one is needed.
        notify: One-line notes for the user.

    Raises:
        GitError: The ref is not in this clone (the message says how to fetch it).
        SqlbenchError: The project does not validate at the ref, an unknown agent, a run error.
    """
    loaded = load_side_project(ref, options, role=role, allow_empty=allow_empty, notify=notify)
    if isinstance(loaded, RunSide):
        return loaded
    try:
        return project_side(loaded, store, options, role=role, progress=progress, notify=notify)
    finally:
        close_project(loaded)


def load_side_project(
    ref: str | None,
    options: SideOptions,
    *,
    role: str,
    allow_empty: bool = False,
    notify: Notify | None = None,
) -> Project | RunSide:
    """The project at ``ref`` (None: the working tree), or an empty side when ``allow_empty``
    and the ref has no sqlbench project. Close a returned project with ``close_project``.

    Raises:
        GitError: The ref is not in this clone (the message says how to fetch it).
        SqlbenchError: The project does not validate at the ref.
    """
    if ref is not None:
        if not gitfs.ref_exists(options.project_dir, ref):
            raise missing_ref_error(options.project_dir, ref, role)
        if allow_empty and not gitfs.has_project_at(options.project_dir, ref):
            if notify is not None:
                notify(f"{role} {ref} has no sqlbench project: counted as empty")
            commit = gitfs.resolve_ref(options.project_dir, ref)
            name = gitfs.resolved_name(options.project_dir, ref, commit)
            return RunSide(f"{name} (no sqlbench project)", (), branch=name, commit=commit)
    from sqlbench.validation import load_project

    project = load_project(options.project_dir, branch=ref, trusted_refs=options.trusted_refs)
    if project.source.dev_mode_note and notify is not None:
        notify(project.source.dev_mode_note)
    return project


def project_side(
    project: Project,
    store: RunStore,
    options: SideOptions,
    *,
    role: str,
    progress: ProgressCallback | None = None,
    notify: Notify | None = None,
    reuse: ReuseAnswers | None = None,
) -> RunSide:
    """The side for a loaded project: the stored run with its identity, else a new run
    (affected-only when ``reuse`` is given).

    Raises:
        AgentError: The agent is not defined in this project.
        SqlbenchError: A setup or run error.
    """
    from sqlbench.runs.identity import run_identity, warehouse_identity
    from sqlbench.runs.plan import RunOptions, agent_config, pick_questions

    try:
        config = agent_config(project, options.agent_name or project.settings.default_agent)
    except AgentError as err:
        raise AgentError(f"{role} {project.source.branch}: {err}") from err
    questions = pick_questions(project, (), None, None)
    try:
        warehouse = warehouse_identity(project.settings, project.root, folder=project.folder)
    except DbtError as err:  # its dbt project does not parse: say which side
        raise DbtError(f"{role} {project.source.branch}: {err}") from err
    identity = run_identity(project, config, questions, warehouse)
    found = None
    if not options.fresh:
        # The head side is what the pull request is judged on: never an imported run, which
        # anyone with write access to an artifact could have forged (docs/security.md).
        found = store.find_completed_run(
            identity,
            repeat=options.repeat,
            agent_name=config.name,
            include_imported=role != "head",
        )
    unfinished = None
    if found is not None:
        found, unfinished = _unless_not_asked(store, found, role, notify)
    if found is not None:
        usable, age_note = _within_age(found, project.settings.check.reuse_max_age)
        if usable:
            if notify is not None:
                notify(
                    f"{role}: reusing run {found.name} ({found.source_label}, agent "
                    f"{found.agent_name}){age_note}"
                )
            return side_from_run(
                found,
                store.trials(found.id),
                reused=True,
                reviews=store.reviews(found.id),
                disputes=disputed_keys(store.disputes()),
            )
        if notify is not None:
            notify(f"{role}: not reusing run {found.name}{age_note}; running again")
    # The run loop pulls in engines, comparison and agents: import it on use only.
    from sqlbench.runs.runner import run_benchmark

    stopped = unfinished if reuse is None else None
    if stopped is None and not options.fresh and reuse is None:
        # A check killed mid-run (kill -9, a cancelled CI job) left this run unfinished: the
        # next check finishes it instead of asking every question again.
        stopped = store.find_stopped_run(identity, repeat=options.repeat, agent_name=config.name)
        if stopped is not None and notify is not None:
            notify(f"{role}: resuming run {stopped.name}, which stopped before it finished")
    run_options = RunOptions(
        repeat=None if stopped is not None else options.repeat,
        concurrency=options.concurrency,
        project_dir=options.project_dir.resolve(),
        trusted_refs=options.trusted_refs,
        reuse=reuse,
        resume=None if stopped is None else stopped.id,
    )
    result = run_benchmark(project, config.name, run_options, progress=progress, store=store)
    return side_from_result(result, disputes=disputed_keys(store.disputes()))


def _unless_not_asked(
    store: RunStore, found: RunInfo, role: str, notify: Notify | None
) -> tuple[RunInfo | None, RunInfo | None]:
    """``(found, None)`` when every question of ``found`` was asked; else ``(None, run to
    resume)``: a run holding answers not asked (its agent's endpoint was unreachable) is never
    reused as complete, on either side -- a faulty head would fail again and a faulty base
    would hide regressions. A local run is resumed (only those questions are asked again); an
    imported one is not touched (None: a new run)."""
    missing = sum(1 for trial in store.trials(found.id) if trial.not_asked)
    if not missing:
        return found, None
    resumable = not found.imported and found.shard is None
    if notify is not None:
        then = f"asking them again in run {found.name}" if resumable else "running again"
        notify(
            f"{role}: run {found.name} holds {missing} answer{'s' if missing != 1 else ''} not "
            f"asked (the agent's endpoint was unreachable); {then}"
        )
    return None, found if resumable else None


def affected_reuse(
    head: Project,
    base_ref: str,
    base: RunSide,
    store: RunStore,
    options: SideOptions,
    notify: Notify | None = None,
) -> ReuseAnswers | None:
    """For an affected-only head run: the base run's answers to the questions the change from
    ``base_ref`` cannot have touched (``sqlbench.rundiff.affected``), or None when every question
    must be asked (no base run, another ``--repeat``, everything affected).

    Raises:
        SqlbenchError: The base project does not load.
    """
    from sqlbench.rundiff.affected import select_affected
    from sqlbench.runs.identity import identity_of, run_identity
    from sqlbench.runs.plan import agent_config
    from sqlbench.runs.regrade import ReuseAnswers, regrade_source
    from sqlbench.validation import load_project

    say = notify or (lambda _line: None)
    if base.run_id is None:
        say("affected-only: the base has no run to reuse answers from; asking every question")
        return None
    info = store.find_run(base.run_id)
    if info.repeat != options.repeat:
        say("affected-only: the base run used another --repeat; asking every question")
        return None
    trials = store.trials(info.id)
    config = agent_config(head, options.agent_name or head.settings.default_agent)
    try:
        before, now = identity_of(info), run_identity(head, config)
    except DbtError as err:  # its dbt project does not parse: say which side
        raise DbtError(f"head {head.source.branch}: {err}") from err
    if info.agent_name != config.name or before.agent_settings_hash != now.agent_settings_hash:
        say(
            "affected-only: the base run used another agent or agent settings; asking every "
            "question"
        )
        return None
    loaded = load_project(options.project_dir, branch=base_ref, trusted_refs=options.trusted_refs)
    try:
        if head.settings.dbt is not None:
            # Each ref has its own dbt build (docs/dbt.md): the base run must have read the
            # base's build; what changed between the builds is what select_affected reads.
            from sqlbench.runs.identity import warehouse_identity

            identity = warehouse_identity(loaded.settings, loaded.root, folder=loaded.folder)
            now = now._replace(warehouse_hash=identity.hash)
        if before[3:] != now[3:]:
            say(
                "affected-only: the base run used another sqlbench version, compare options or "
                "warehouse; asking every question"
            )
            return None
        selection = select_affected(loaded, head, trials)
    finally:
        close_project(loaded)
    if selection.everything is not None:
        say(f"affected-only: {selection.everything}; asking every question")
        return None
    if selection.changed_objects:
        where = "the dbt project or setup" if head.settings.dbt is not None else "setup"
        say(f"affected-only: changed in {where}: {', '.join(selection.changed_objects)}")
    if not selection.asked:
        say("affected-only: no question reads what changed; asking none")
    shown = sorted(selection.asked.items())
    for (space, name), why in shown[:_MAX_LISTED]:
        say(f"affected-only: asking {space}/{name}: {why}")
    if len(shown) > _MAX_LISTED:
        say(f"affected-only: ... and {len(shown) - _MAX_LISTED} more asked")
    kept = [t for t in trials if (t.space, t.name) in selection.reused]
    source = regrade_source(info, kept)
    return ReuseAnswers(info, source.answers, asked=len(selection.asked), turns=source.turns)


_MAX_LISTED = 20


def _within_age(found: RunInfo, max_age: str) -> tuple[bool, str]:
    """Whether a stored run may be reused given its warehouse and age, and the words saying
    why (empty for a warehouse the run's identity pins: built by setup, or a fingerprinted
    file)."""
    if found.warehouse_built:
        return True, ""
    limit = parse_duration(max_age)
    age = utc_now() - (found.finished_at or found.updated_at)
    where = f"against {found.warehouse}" if found.warehouse else "against a warehouse"
    if age <= limit:
        return True, (
            f", made {_age_text(age)} ago {where}, which can change without a commit: reused "
            f"within check.reuse_max_age {max_age} (--fresh runs again)"
        )
    return False, f": made {_age_text(age)} ago {where}, over check.reuse_max_age {max_age}"


def _age_text(age: timedelta) -> str:
    """``42s``, ``17m``, ``3h``, ``2d``.

    Example:
        >>> _age_text(timedelta(minutes=75)), _age_text(timedelta(days=2, hours=1))
        ('1h', '2d')
    """
    seconds = int(age.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def missing_ref_error(project_dir: Path, ref: str, role: str) -> SqlbenchError:
    """The error for a ref that is not in this clone, saying how to fetch it.

    CI checkouts are usually shallow and single-branch, so the base branch of a pull request
    is missing until fetched; the message gives the command.
    """
    detail = f"{role} ref {ref!r} could not be read"
    try:
        gitfs.resolve_ref(project_dir, ref)
    except GitError as err:
        detail = str(err)
    remotes = _remotes(project_dir)
    if not remotes:
        return GitError(detail)
    head, _, rest = ref.partition("/")
    if head in remotes and rest:
        fetch = f"git fetch --depth=1 {head} {rest}"
    else:
        fetch = f"git fetch --depth=1 {remotes[0]} {ref}:{ref}"
    return GitError(
        f"{role} ref {ref!r} is not in this clone (CI checkouts are often shallow): fetch it "
        f"with `{fetch}`, or check out with full history (actions/checkout: fetch-depth: 0)"
    )


def _remotes(project_dir: Path) -> list[str]:
    git = shutil.which("git")
    if git is None:
        return []
    proc = subprocess.run(
        [git, "remote"], cwd=project_dir, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return []
    names = proc.stdout.split()
    return sorted(names, key=lambda name: name != "origin")
