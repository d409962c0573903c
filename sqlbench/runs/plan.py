"""What a run will do before it starts: the agent, the questions, and its record in the store.

A new run gets a record (status Running) at once; ``--resume RUN`` reopens a stopped run after
checking that it is still the same run: same question set (selection included), same agent
settings, compare options and sqlbench version.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlbench.agents.registry import AUTO, named_agent
from sqlbench.errors import AgentError, SqlbenchError
from sqlbench.project.files import MAX_VARIANTS, AgentConfig, Project, Question
from sqlbench.project.select import select_questions
from sqlbench.records.hashes import stable_hash
from sqlbench.records.run import RunInfo, RunStatus
from sqlbench.runs.identity import (
    identity_fields,
    identity_of,
    run_identity,
    source_key,
    warehouse_identity,
)
from sqlbench.runs.liveness import this_host
from sqlbench.runs.new_run import new_run_fields
from sqlbench.runs.regrade import Regrade, ReuseAnswers
from sqlbench.runs.store import RunStore

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """One of ``count`` disjoint parts of the question set (``--shard I/N``, 1-based)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> ``Shard(2, 4)``.

        Raises:
            SqlbenchError: Not ``I/N`` with 1 <= I <= N.

        Example:
            >>> Shard.parse("2/4")
            Shard(index=2, count=4)
        """
        match = _SHARD.match(text)
        if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)):
            raise SqlbenchError(f"--shard must be I/N with 1 <= I <= N (like 1/4), got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def contains(self, question: Question) -> bool:
        """Whether the question falls in this shard: a hash of ``space/name``, so the split is
        the same on every machine and does not move when other questions are added."""
        digest = hashlib.sha256(question.full_name.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


@dataclass(frozen=True)
class RunOptions:
    """How to run (the ``sqlbench run`` options, minus rendering)."""

    select: tuple[str, ...] = ()
    """``--select`` patterns; empty: every question (a resumed run: its own selection)."""
    space: str | None = None
    concurrency: int | None = None
    """Questions in flight at once; None: ``run.concurrency`` from sqlbench.yml."""
    repeat: int | None = None
    """Answers per question; None: 1 (a resumed run: its own)."""
    name: str | None = None
    """Run name; None: creation time plus a short unique suffix."""
    resume: str | None = None
    """Name or id of a stopped run to finish."""
    shard: Shard | None = None
    project_dir: Path | None = None
    """The checkout whose ``.sqlbench/`` holds the default store; None: ``project.root``."""
    variants: int | None = None
    """``--variants N``: grade on N data variants (overrides ``compare: variants``)."""
    heartbeat_s: float = 5.0
    """Seconds between heartbeats of a running run."""
    env: dict[str, str] | None = field(default=None, repr=False)
    """Environment for agents and ``${ENV}`` in ``store:``; None: ``os.environ``."""
    trusted_refs: tuple[str, ...] = ()
    """``--trust-ref REF``: refs whose ``command``/``python`` agents may run although they are
    not in the working tree's history (``sqlbench.project.reftrust``)."""
    regrade: Regrade | None = field(default=None, repr=False)
    """``sqlbench regrade``: replay this run's stored answers instead of asking the agent."""
    reuse: ReuseAnswers | None = field(default=None, repr=False)
    """Affected-only run: these questions take the base run's stored answers (labelled
    ``unaffected (reused)``); the agent is asked the rest."""

    def __post_init__(self) -> None:
        if self.repeat is not None and self.repeat < 1:
            raise SqlbenchError(f"--repeat must be at least 1, got {self.repeat}")
        if self.concurrency is not None and self.concurrency < 1:
            raise SqlbenchError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.variants is not None and not 0 <= self.variants <= MAX_VARIANTS:
            raise SqlbenchError(f"--variants must be from 0 to {MAX_VARIANTS}, got {self.variants}")


def with_variants(project: Project, variants: int | None) -> Project:
    """``project`` with ``compare: variants`` set to ``variants`` (unchanged for None), so the
    run records it with its compare settings."""
    if variants is None:
        return project
    compare = project.settings.compare.model_copy(update={"variants": variants})
    settings = project.settings.model_copy(update={"compare": compare})
    return project.model_copy(update={"settings": settings})


@dataclass(frozen=True)
class RunPlan:
    """A run ready to execute."""

    info: RunInfo
    agent: AgentConfig
    questions: list[Question]
    done: set[tuple[str, str, int]]
    """Answers already stored (resume)."""
    resumed: bool
    notices: list[str]


def agent_config(project: Project, name: str) -> AgentConfig:
    """The project's agent called ``name`` (``auto`` always exists).

    Raises:
        AgentError: No such agent; the closest name is suggested.
    """
    return named_agent(project.agents, name, project.root)


def expand_agents(project: Project, spec: str) -> list[str]:
    """The agent names ``--agent`` gives: a name, or several separated by commas, each of
    which may be a glob over the project's agents (a glob never picks the built-in ``auto``;
    name it). In order, each once.

    Raises:
        AgentError: An empty name, or a name or glob that picks no agent.

    Example:
        >>> from types import SimpleNamespace
        >>> p = SimpleNamespace(agents={"auto": 0, "gpt4": 0, "gpt4o": 0, "llama": 0})
        >>> expand_agents(p, "gpt4*,llama,gpt4")
        ['gpt4', 'gpt4o', 'llama']
    """
    names: list[str] = []
    defined = sorted(name for name in project.agents if name != AUTO)
    for part in (piece.strip() for piece in spec.split(",")):
        if not part:
            raise AgentError(f"--agent {spec!r} has an empty name; separate names with commas")
        if any(char in part for char in "*?["):
            picked = fnmatch.filter(defined, part)
            if not picked:
                listing = ", ".join(defined) or "none besides auto"
                raise AgentError(f"--agent {part!r} matches no agent; agents: {listing}")
        else:
            picked = [part]
        names.extend(name for name in picked if name not in names)
    return names


def pick_questions(
    project: Project, select: tuple[str, ...] | list[str], space: str | None, shard: Shard | None
) -> list[Question]:
    """The questions a run covers: ``--select``/``--space``, then the shard."""
    questions = select_questions(project.questions, select=list(select) or None, space=space)
    if shard is not None:
        questions = [q for q in questions if shard.contains(q)]
    return questions


def plan_run(
    project: Project, agent_name: str | None, options: RunOptions, store: RunStore
) -> RunPlan:
    """Create the run's record, or reopen the run to resume; see the module docstring.

    Raises:
        SqlbenchError: Unknown agent, a selection that picks nothing, a name already taken, or
            a run that cannot be resumed (still running, or not the same run any more).
    """
    if options.resume is not None:
        return _resume(project, agent_name, options, store)
    if options.regrade is not None:
        return _regrade_plan(project, options, options.regrade, store)
    config = agent_config(project, agent_name or project.settings.default_agent)
    questions = pick_questions(project, options.select, options.space, options.shard)
    notices: list[str] = []
    if not questions and options.shard is None:
        raise SqlbenchError("no questions to run: add eval_questions/*.yml files")
    if not questions:
        # A CI matrix with more shards than questions must not fail one of its jobs: the
        # shard is a valid empty run, and `sqlbench merge` accepts it.
        notices.append(
            f"shard {options.shard} holds none of the selected questions: an empty run "
            "(merge accepts it)"
        )
    warehouse = warehouse_identity(
        project.settings, project.root, options.env, folder=project.folder
    )
    fields = identity_fields(project, config, questions, warehouse)
    if options.reuse is not None:
        source = options.reuse.source
        # Never the identity of a full run of the agent: part of its answers are the base's.
        fields["agent_settings_hash"] = stable_hash(
            {"affected_from": source.id, "agent": fields["agent_settings_hash"]}
        )
        notices.append(
            f"affected-only run: asking the agent {options.reuse.asked} question(s); "
            f"{len(options.reuse.answers)} unaffected take run {source.name}'s answers "
            "(unaffected (reused))"
        )
    info = RunInfo(
        **new_run_fields(options.name),
        **fields,
        status=RunStatus.RUNNING,
        question_count=len(questions),
        repeat=options.repeat or 1,
        shard=str(options.shard) if options.shard else None,
        select=list(options.select),
        spaces=[options.space] if options.space else [],
    )
    store.create_run(info)
    return RunPlan(info, config, questions, set(), resumed=False, notices=notices)


def _regrade_plan(
    project: Project, options: RunOptions, regrade: Regrade, store: RunStore
) -> RunPlan:
    """A new run that replays ``regrade``'s answers on the project's questions it covers."""
    source = regrade.source
    config = AgentConfig(
        name=source.agent_name,
        kind=source.agent_kind,
        options=dict(source.agent_settings.get("options", {})),
        base_dir=project.root,
    )
    covered = [q for q in project.questions if (q.space, q.name) in regrade.answers]
    if not covered:
        raise SqlbenchError(
            f"no question of run '{source.name}' with an agent answer is in the project at "
            f"{project.source.branch}: nothing to regrade"
        )
    notices = [f"regrading run {source.name}: its stored answers, no agent call"]
    gone = len(regrade.answers) - len(covered)
    if gone:
        notices.append(f"{gone} question(s) of run {source.name} are not in the project any more")
    if regrade.left_out:
        notices.append(
            f"{regrade.left_out} question(s) of run {source.name} were never put to the agent "
            "(failing ground truth, or skipped): not regraded; `sqlbench run` asks them"
        )
    warehouse = warehouse_identity(
        project.settings, project.root, options.env, folder=project.folder
    )
    fields = identity_fields(project, config, covered, warehouse)
    fields.update(
        agent_settings=dict(source.agent_settings),
        # Never the identity of a run of the agent: these answers were asked for another run.
        agent_settings_hash=stable_hash({"regraded_from": source.id}),
    )
    info = RunInfo(
        **new_run_fields(options.name, prefix="regrade-"),
        **fields,
        status=RunStatus.RUNNING,
        question_count=len(covered),
        repeat=source.repeat,
        regraded_from=source.name,
    )
    store.create_run(info)
    return RunPlan(info, config, covered, set(), resumed=False, notices=notices)


def _resume(
    project: Project, agent_name: str | None, options: RunOptions, store: RunStore
) -> RunPlan:
    assert options.resume is not None
    info = store.find_run(options.resume)
    why = f"cannot resume run '{info.name}'"
    status = store.effective_status(info)
    if status is RunStatus.RUNNING:
        raise SqlbenchError(
            f"{why}: it is still running (pid {info.pid} on {info.host}); "
            "wait for it, or stop it first"
        )
    if options.name is not None and options.name != info.name:
        raise SqlbenchError(f"{why} under another name: --name and --resume do not mix")
    if options.repeat is not None and options.repeat != info.repeat:
        raise SqlbenchError(
            f"{why} with --repeat {options.repeat}: it was started with --repeat {info.repeat}"
        )
    select = options.select or tuple(info.select)
    space = options.space or (info.spaces[0] if info.spaces else None)
    shard = options.shard or (Shard.parse(info.shard) if info.shard else None)
    config = agent_config(project, agent_name or info.agent_name)
    questions = pick_questions(project, select, space, shard)
    identity = run_identity(
        project,
        config,
        questions,
        warehouse_identity(project.settings, project.root, options.env, folder=project.folder),
    )
    stored = identity_of(info)
    if identity.question_set_hash != stored.question_set_hash:
        raise SqlbenchError(
            f"{why}: its question set changed since it started (questions, ground truth, "
            "compare overrides, or the --select/--space/--shard picking them); start a new run"
        )
    if config.name != info.agent_name or identity.agent_settings_hash != (
        stored.agent_settings_hash
    ):
        raise SqlbenchError(
            f"{why}: the agent's settings changed since it started (agent '{info.agent_name}' "
            f"then, '{config.name}' now); start a new run"
        )
    if identity.compare_hash != stored.compare_hash:
        raise SqlbenchError(
            f"{why}: the compare options in sqlbench.yml changed since it started; start a new run"
        )
    if stored.warehouse_hash is not None and identity.warehouse_hash != stored.warehouse_hash:
        raise SqlbenchError(
            f"{why}: it started against another warehouse ({info.warehouse}, as resolved "
            "then); its answers would be graded on two databases; start a new run"
        )
    if identity.sqlbench_version != stored.sqlbench_version:
        raise SqlbenchError(
            f"{why}: it was started by sqlbench {stored.sqlbench_version}, this "
            f"is {identity.sqlbench_version}; start a new run"
        )
    notices = []
    if source_key(project.source) != stored.source:
        notices.append(
            f"resuming run '{info.name}' on a project version other than the one it "
            "started on (the questions and agent are the same; other files, such as "
            "setup SQL, may differ)"
        )
    store.reopen(info.id, host=this_host(), pid=os.getpid())
    reopened = store.find_run(info.id)
    # Answers not asked (the agent's endpoint was unreachable) are asked again.
    again = store.forget_not_asked(info.id)
    if again:
        count = f"{len(again)} question{'s' if len(again) != 1 else ''}"
        notices.append(f"asking {count} not asked before (the agent's endpoint was unreachable)")
    return RunPlan(
        reopened, config, questions, store.done_keys(info.id), resumed=True, notices=notices
    )
