"""Answers that do not read the data (docs/verdicts.md): on every warehouse kind, a constant
``SELECT`` and a ``VALUES`` list that reproduce the ground truth's result run for real, match
it, and are still not a pass; SQL that reads the table passes with no flag."""

from __future__ import annotations

import pytest
from engine_warehouses import Warehouse

from sqlbench.agents.base import Answer
from sqlbench.engines.limits import run_agent_sql
from sqlbench.errors import QueryError
from sqlbench.grading import CONSTANT_REASON, TruthOutcome, grade
from sqlbench.project.files import CompareOptions, Question, RunSettings
from sqlbench.verdicts import ResultFlag, Verdict

TOTAL = "120.74"  # SUM(amount) of engine_warehouses.ROWS

CONSTANTS = {
    "a literal": f"SELECT {TOTAL} AS total",
    "VALUES": f"VALUES ({TOTAL})",
    "VALUES in FROM": f"SELECT * FROM (VALUES ({TOTAL})) AS v",
    "literals whatever FROM reads": "SELECT {total} AS total FROM {table} WHERE id = 1",
}


def _grade(warehouse: Warehouse, agent_sql: str, constant_answers: str = "review") -> object:
    engine = warehouse.engine
    truth_sql = f"SELECT SUM(amount) FROM {warehouse.table}"
    truth = TruthOutcome(
        truth_sql, engine.run_truth(truth_sql, timeout_s=warehouse.timeout_s, max_rows=10)
    )
    question = Question.build(
        {"name": "total", "question": "Total amount?", "sql": truth_sql},
        space="s",
        path="eval_questions/q.yml",
        line=1,
    ).with_truth_sql(truth_sql)
    settings = RunSettings.model_validate({"query_timeout_s": warehouse.timeout_s})
    try:
        outcome: object = run_agent_sql(engine, agent_sql, settings)
    except QueryError as err:
        outcome = err
    options = CompareOptions.model_validate({"constant_answers": constant_answers})
    return grade(
        question,
        [truth],
        Answer(sql=agent_sql),
        outcome,  # type: ignore[arg-type]
        options=options,
        dialect=warehouse.dialect,
    )


@pytest.mark.parametrize("shape", sorted(CONSTANTS))
def test_a_constant_matching_the_ground_truth_is_review_on_every_engine(
    warehouse: Warehouse, shape: str
) -> None:
    sql = CONSTANTS[shape].format(total=TOTAL, table=warehouse.table)
    graded = _grade(warehouse, sql)
    if warehouse.kind == "mariadb" and shape == "VALUES":
        # sqlglot reads MySQL's bare VALUES as a function call: the guard refuses it, a fail.
        assert graded.verdict is Verdict.FAIL  # type: ignore[attr-defined]
        assert "not a read-only query" in graded.reason  # type: ignore[attr-defined]
        return
    assert graded.verdict is Verdict.REVIEW, graded.reason  # type: ignore[attr-defined]
    assert graded.reason == CONSTANT_REASON  # type: ignore[attr-defined]
    assert ResultFlag.CONSTANT_ANSWER in graded.flags  # type: ignore[attr-defined]


def test_constant_answers_fail_and_allow(warehouse: Warehouse) -> None:
    sql = f"SELECT {TOTAL} AS total"
    failed = _grade(warehouse, sql, "fail")
    assert failed.verdict is Verdict.FAIL  # type: ignore[attr-defined]
    allowed = _grade(warehouse, sql, "allow")
    assert allowed.verdict is Verdict.PASS  # type: ignore[attr-defined]
    assert ResultFlag.CONSTANT_ANSWER in allowed.flags  # type: ignore[attr-defined]


def test_sql_that_reads_the_table_passes_unflagged(warehouse: Warehouse) -> None:
    graded = _grade(warehouse, f"SELECT SUM(amount) + 0 AS total FROM {warehouse.table}")
    assert graded.verdict is Verdict.PASS  # type: ignore[attr-defined]
    assert graded.flags == ()  # type: ignore[attr-defined]
