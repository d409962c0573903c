"""Which runs ``sqlbench audit`` reads when none is named: the latest completed run of each
agent on the project's current ref."""

from __future__ import annotations

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import Project, SourceInfo
from sqlbench.records.hashes import dispute_hash
from sqlbench.records.run import Dispute, RunStatus
from sqlbench.runs.store import RunStore

__all__ = ["disputes_in_force", "latest_per_agent"]


def latest_per_agent(store: RunStore, source: SourceInfo) -> list[str]:
    """The ids of the newest completed run of each agent made on ``source``'s commit (outside
    git: made outside git), oldest agent first.

    Raises:
        SqlbenchError: There is none.
    """
    picked: dict[str, str] = {}
    for summary in store.list_runs():
        info = summary.info
        if summary.status is not RunStatus.COMPLETED or info.commit != source.commit:
            continue
        picked.setdefault(info.agent_name, info.id)
    if not picked:
        where = f"commit {source.commit[:12]}" if source.commit else "this project"
        raise SqlbenchError(
            f"no completed run on {where} to audit: run the agents first (sqlbench run "
            "--agent '*'), or name runs: sqlbench audit RUN [RUN ...]"
        )
    return list(reversed(picked.values()))


def disputes_in_force(project: Project, disputes: list[Dispute]) -> list[Dispute]:
    """The disputes of the ground truths ``project`` holds now (a dispute of a key that has
    changed since no longer applies), oldest first."""
    current = {
        (q.space, q.name, dispute_hash(q.question, q.truth_sql, list(q.also_accept)))
        for q in project.questions
        if q.truth_sql is not None
    }
    return [d for d in disputes if (d.space, d.name, d.truth_hash) in current]
