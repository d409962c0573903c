"""What an answer stores beside its verdict: its partial credit (docs/verdicts.md, "Partial
credit") and the warehouse work of its ground truth and SQL (docs/cost.md)."""

from __future__ import annotations

from sqlbench.compare import Comparison
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.work import ratio
from sqlbench.errors import QueryError
from sqlbench.grading import AgentOutcome, TruthOutcome
from sqlbench.records.run import PartialCreditRecord, WorkRecord
from sqlbench.truth import transpile_truth

NO_CREDIT = PartialCreditRecord(precision=0.0, recall=0.0, f1=0.0)
"""The credit of an answer with no result to compare (no SQL, SQL that did not run, an agent
error): it holds none of the expected cells, as BIRD's Soft-F1 scores it."""


def credit_of(comparison: Comparison | None, truth_result: bool) -> PartialCreditRecord | None:
    """The stored credit of a graded answer: its comparison's, else none of the cells when
    there was a ground-truth result to hold (``truth_result``), else None (nothing to hold)."""
    if comparison is not None:
        found = comparison.details.partial_credit
        if found is None:
            return None
        return PartialCreditRecord(
            precision=round(found.precision, 6),
            recall=round(found.recall, 6),
            f1=round(found.f1, 6),
        )
    return NO_CREDIT if truth_result else None


def work_record(
    engine: Engine,
    truth: TruthOutcome | None,
    truth_dialect: str,
    outcome: AgentOutcome,
    agent_sql: str | None,
) -> WorkRecord | None:
    """What the ground truth and the agent's SQL read, as the engine reports it (from their
    runs, or its planner: ``Engine.work_of``), and their ratio; None unless both produced a
    result; a record with every field None where the engine reports nothing."""
    if truth is None or truth.result is None or not isinstance(outcome, ResultSet):
        return None
    try:
        truth_sql = transpile_truth(truth.sql, truth_dialect, engine.dialect)
    except QueryError:
        truth_work = None
    else:
        truth_work = engine.work_of(truth_sql, truth.result)
    agent_work = engine.work_of(agent_sql, outcome) if agent_sql is not None else None
    reported = truth_work if truth_work is not None else agent_work
    unit = reported.unit if reported is not None else None
    return WorkRecord(
        truth=truth_work.amount if truth_work is not None else None,
        agent=agent_work.amount if agent_work is not None else None,
        ratio=ratio(truth_work, agent_work),
        unit=unit,
    )
