"""Join shard runs (``sqlbench run --shard I/N``) into one run (``sqlbench merge``).

The shards must be the N parts of one run: Completed, the same project version, agent
settings, compare options, sqlbench version, ``--repeat`` and selection, and disjoint
questions that together are the whole selection. The merged run gets the identity a single
run of the whole question set would have, so ``compare`` and ``check`` reuse it. Checking that
needs the project as it was at the shards' commit (read from git, the checkout untouched).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import Project
from sqlbench.project.load import close_project
from sqlbench.records.run import RunInfo, RunStatus, TrialResult
from sqlbench.runs.identity import identity_of, question_set_hash, source_key
from sqlbench.runs.new_run import new_run_fields
from sqlbench.runs.plan import Shard, pick_questions
from sqlbench.runs.store import RunStore
from sqlbench.validation import load_project

_SAME = (
    ("commit", "project commit"),
    ("dirty", "uncommitted edits"),
    ("working_tree_hash", "uncommitted edits"),
    ("agent_name", "agent"),
    ("agent_settings_hash", "agent settings"),
    ("compare_hash", "compare options"),
    ("warehouse_hash", "warehouse"),
    ("sqlbench_version", "sqlbench version"),
    ("repeat", "--repeat"),
    ("select", "--select"),
    ("spaces", "--space"),
)
"""Fields every shard must share, with how to name them in an error."""


def merge_shards(
    store: RunStore, refs: Sequence[str], *, project_dir: Path, name: str | None = None
) -> RunInfo:
    """Merge the shard runs named by ``refs`` into a new stored run and return its record.

    Args:
        store: Where the shards are and the merged run goes.
        refs: Names or ids of the shard runs, any order.
        project_dir: The project's folder (a git checkout holding the shards' commit).
        name: The merged run's name; default ``merged-<time>-<suffix>``.

    Raises:
        SqlbenchError: Not shards of one run, a shard missing, incomplete or overlapping,
            or a run name already taken.
    """
    if len(set(refs)) != len(refs):
        raise SqlbenchError("the same run is given twice")
    infos = [store.find_run(ref) for ref in refs]
    shards = _shards(infos)
    for info in infos:
        status = store.effective_status(info)
        if status is not RunStatus.COMPLETED:
            raise SqlbenchError(
                f"shard run {info.name} is {status.label}: finish it with "
                f"`sqlbench run --resume {info.name}` first"
            )
    first = infos[0]
    for info in infos[1:]:
        for field, label in _SAME:
            if getattr(info, field) != getattr(first, field):
                raise SqlbenchError(
                    f"runs {first.name} and {info.name} differ in {label}: they "
                    "are not shards of one run"
                )
    trials: list[TrialResult] = []
    owner: dict[tuple[str, str], str] = {}
    for info in infos:
        for trial in store.trials(info.id):
            key = (trial.space, trial.name)
            if owner.setdefault(key, info.name) != info.name:
                raise SqlbenchError(
                    f"{trial.space}/{trial.name} is in both {owner[key]} and "
                    f"{info.name}: shards must not overlap"
                )
            trials.append(trial)
    project = _project_at(project_dir, first)
    try:
        selected = pick_questions(
            project, first.select, first.spaces[0] if first.spaces else None, None
        )
        for info, shard in zip(infos, shards, strict=True):
            part = [q for q in selected if shard.contains(q)]
            if question_set_hash(part) != info.question_set_hash:
                raise SqlbenchError(
                    f"shard run {info.name} was made on other questions than "
                    f"the project has at {first.source_label}"
                )
        full_hash = question_set_hash(selected)
    finally:
        close_project(project)
    order = {(q.space, q.name): position for position, q in enumerate(selected)}
    missing = [f"{space}/{name}" for (space, name) in order if (space, name) not in owner]
    if missing:
        raise SqlbenchError(
            f"the shards do not cover {missing[0]} ({len(missing)} question(s) missing)"
        )
    merged = [t.model_copy(update={"position": order[(t.space, t.name)]}) for t in trials]
    fields = new_run_fields(name, prefix="merged-")
    now = fields["created_at"]
    update: dict[str, Any] = {
        **fields,
        "status": RunStatus.COMPLETED,
        # The oldest shard's: a server warehouse's run is reusable only within
        # check.reuse_max_age of when its data was read.
        "finished_at": min((i.finished_at or now for i in infos), default=now),
        "question_set_hash": full_hash,
        "question_count": len(selected),
        "shard": None,
        "error": None,
        "imported": False,
    }
    return store.save_run(first.model_copy(update=update), merged)


def _shards(infos: list[RunInfo]) -> list[Shard]:
    shards = []
    for info in infos:
        if info.shard is None:
            raise SqlbenchError(f"run {info.name} is not a shard run (made without --shard)")
        shards.append(Shard.parse(info.shard))
    counts = {shard.count for shard in shards}
    if len(counts) != 1:
        raise SqlbenchError(
            "the runs split the questions into different numbers of shards "
            f"({', '.join(str(s) for s in shards)})"
        )
    count = counts.pop()
    seen: dict[int, str] = {}
    for info, shard in zip(infos, shards, strict=True):
        if shard.index in seen:
            raise SqlbenchError(f"runs {seen[shard.index]} and {info.name} are both shard {shard}")
        seen[shard.index] = info.name
    absent = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if absent:
        raise SqlbenchError(f"shard {absent[0]} is missing: give all {count} shard runs")
    return shards


def _project_at(project_dir: Path, info: RunInfo) -> Project:
    if info.commit is None:
        raise SqlbenchError(
            f"run {info.name} was made outside git, so its question set cannot "
            "be checked against a project version"
        )
    if not info.dirty:
        return load_project(project_dir, branch=info.commit)
    project = load_project(project_dir)
    if source_key(project.source) != identity_of(info).source:
        close_project(project)
        raise SqlbenchError(
            f"run {info.name} was made on uncommitted edits that the working "
            "tree no longer has; merge where the shards ran"
        )
    return project
