"""What the report pages need from the store: the run, the base it is compared with, and the
stored runs for the trend (``sqlbench report`` and ``sqlbench view``)."""

from __future__ import annotations

from typing import NamedTuple

from sqlbench.errors import StoreError
from sqlbench.records.run import RunStatus, RunSummary
from sqlbench.runs.scores import RunResult, gather
from sqlbench.runs.store import RunStore


class ReportInputs(NamedTuple):
    """A run with what its report shows beside it."""

    run: RunResult
    base: RunResult | None
    history: list[RunSummary]


def live_run(store: RunStore, run_ref: str) -> RunResult:
    """A run with its decisions; a run in progress also with the decisions it will carry when
    it finishes (``RunStore.carried_reviews``: same ground truth and agent SQL), so a page
    shows them as the run goes."""
    run = store.load_run(run_ref)
    if run.status is not RunStatus.RUNNING:
        return run
    pending = store.carried_reviews(run.info.id)
    if not pending:
        return run
    own = {(q.space, q.name): q.human for q in run.questions if q.human is not None}
    trials = [trial for question in run.questions for trial in question.trials]
    return gather(run.info, run.status, trials, {**pending, **own})


def report_inputs(
    store: RunStore,
    run_ref: str = "latest",
    *,
    base_ref: str | None = None,
    base_branch: str | None = None,
) -> ReportInputs:
    """Load ``run_ref`` and its base: the run ``base_ref`` names, or the newest other run of
    git ref ``base_branch`` (branch name or commit prefix) with the same agent.

    Raises:
        StoreError: A run or base that is not in the store (the message says how to make it).
    """
    run = live_run(store, run_ref)
    history = store.list_runs()
    base = None
    if base_ref is not None:
        base = store.load_run(base_ref)
    elif base_branch is not None:
        found = next(
            (
                s
                for s in history
                if s.info.id != run.info.id
                and s.info.agent_name == run.info.agent_name
                and s.info.shard is None
                and (
                    s.info.branch == base_branch
                    or (len(base_branch) >= 7 and (s.info.commit or "").startswith(base_branch))
                )
            ),
            None,
        )
        if found is None:
            raise StoreError(
                f"no stored run of {base_branch!r} with agent {run.info.agent_name} to compare "
                f"with; make one with `sqlbench run --branch {base_branch} --agent "
                f"{run.info.agent_name}`, or name a run with --base"
            )
        base = store.load_run(found.info.id)
    return ReportInputs(run, base, history)
