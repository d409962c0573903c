"""A fault while handling one answer is that answer's verdict: a failure injected at each stage
(ground truth, agent, parse, guard, execute, fetch, convert, compare, preview, store) gives the
poisoned question a one-line reason naming the stage, and every other question keeps its
verdict."""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.registry import register_kind, unregister_kind
from sqlbench.records.run import RunStatus
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import FakeAgent, write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

POISON = "SELECT 42 AS poison"
POISON_TRUTH = "SELECT 42 AS truth"


class _Options(KindOptions):
    pass


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Three questions: ``good1``/``good2`` pass, ``bad`` gets POISON (its truth: 42). Agent
    SQL runs in this process (not DuckDB's query process), where the failures are injected."""
    monkeypatch.setattr("sqlbench.engines.duckdb.duckdb_query_process_mb", lambda run: None)
    register_kind(
        AgentKind(
            name="fake",
            options=_Options,
            build=lambda config, options, context: FakeAgent(
                {"good1": "SELECT 1 AS x", "good2": "SELECT 2 AS x", "bad": POISON}
            ),
        ),
        replace=True,
    )
    questions = [
        {"name": "good1", "question": "?", "sql": "SELECT 1 AS x"},
        {"name": "bad", "question": "?", "sql": POISON_TRUTH},
        {"name": "good2", "question": "?", "sql": "SELECT 2 AS x"},
    ]
    yield write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {"eval_questions": questions},
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
            "sqlbench.yml": {"run": {"concurrency": 2}},
        },
    )
    unregister_kind("fake")


def _raising(original: Callable[..., Any], error: BaseException, *, when: str) -> Any:
    """``original``, except that a call with ``when`` in any text argument raises ``error``."""

    def patched(*args: Any, **kwargs: Any) -> Any:
        texts = [a for a in (*args, *kwargs.values()) if isinstance(a, str)]
        if any(when in text for text in texts):
            raise error
        return original(*args, **kwargs)

    return patched


def _run(root: Path) -> dict[str, tuple[Verdict, str]]:
    run = run_benchmark(load_project(root), "fake")
    assert run.status is RunStatus.COMPLETED
    return {q.name: (q.first.verdict, q.first.reason) for q in run.questions}


def _assert_others_pass(found: dict[str, tuple[Verdict, str]]) -> None:
    assert found["good1"][0] is Verdict.PASS and found["good2"][0] is Verdict.PASS


@pytest.mark.parametrize(
    ("target", "error", "verdict", "reason"),
    [
        # parse: the guard's sqlglot overflowing on nesting the depth check does not count
        (
            "sqlbench.engines.guard._sqlglot_parse",
            RecursionError("maximum recursion depth exceeded"),
            Verdict.FAIL,
            "nested too deeply for sqlbench's SQL parser",
        ),
        # guard: anything else the guard raises
        (
            "sqlbench.engines.agent_sql.check_read_only",
            KeyError("boom"),
            Verdict.FAIL,
            "sqlbench failed running it: KeyError",
        ),
        # execute: DuckDB's own statement check
        (
            "sqlbench.engines.duckdb._check_one_select",
            RuntimeError("engine exploded"),
            Verdict.FAIL,
            "sqlbench failed running it: RuntimeError: engine exploded",
        ),
        # fetch: the Arrow export (DuckDB's string-size OSError)
        (
            "sqlbench.engines.duckdb.DuckDBEngine._run",
            OSError("Invalid Input Error: Arrow Appender: The maximum total string size"),
            Verdict.FAIL,
            "too large",
        ),
        # memory running out anywhere while running it
        (
            "sqlbench.engines.duckdb.DuckDBEngine._run",
            MemoryError(),
            Verdict.FAIL,
            "sqlbench ran out of memory running it",
        ),
    ],
)
def test_a_fault_running_the_agents_sql_fails_that_question_only(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    error: BaseException,
    verdict: Verdict,
    reason: str,
) -> None:
    monkeypatch.setattr(target, _raising(pkgutil.resolve_name(target), error, when="poison"))
    found = _run(project)
    _assert_others_pass(found)
    assert found["bad"][0] is verdict
    assert reason in found["bad"][1]


def test_a_fault_converting_the_result_fails_that_question_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.engines.duckdb as duckdb_engine

    original = duckdb_engine.concat_batches

    def convert(batches: Any, schema: Any) -> Any:
        if "poison" in schema.names:
            raise TypeError("no converter for this value")
        return original(batches, schema)

    monkeypatch.setattr(duckdb_engine, "concat_batches", convert)
    found = _run(project)
    _assert_others_pass(found)
    assert found["bad"][0] is Verdict.FAIL
    assert "sqlbench failed running it: TypeError: no converter" in found["bad"][1]


def test_a_fault_comparing_is_an_error_for_that_question_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.grading as grading

    original = grading.compare_results

    def compare(expected: Any, actual: Any, **options: Any) -> Any:
        if "poison" in actual.column_names:
            raise RecursionError("maximum recursion depth exceeded")
        return original(expected, actual, **options)

    monkeypatch.setattr(grading, "compare_results", compare)
    found = _run(project)
    _assert_others_pass(found)
    assert found["bad"] == (
        Verdict.ERROR,
        "sqlbench failed comparing the results (the result is nested too deeply); "
        "the other questions were not affected",
    )


def test_a_fault_building_previews_keeps_the_verdict(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.runs.answers as answers
    import sqlbench.runs.shared_sql as shared_sql

    original = answers.make_preview

    def preview(result: Any, *args: Any, **kwargs: Any) -> Any:
        if "poison" in result.table.column_names:
            raise ValueError("cannot show this value")
        return original(result, *args, **kwargs)

    monkeypatch.setattr(answers, "make_preview", preview)
    monkeypatch.setattr(shared_sql, "make_preview", preview)  # the answers of a question share
    found = _run(project)
    _assert_others_pass(found)
    verdict, reason = found["bad"]
    assert verdict is Verdict.PASS  # column names do not count: 42 is 42
    assert "sqlbench failed building the previews (ValueError: cannot show this value)" in reason


def test_a_fault_asking_the_agent_is_an_agent_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.runs.answers as answers

    original = answers.ask

    def ask(agent: Any, request: Any, **kwargs: Any) -> Any:
        if request.name == "bad":
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return original(agent, request, **kwargs)

    monkeypatch.setattr(answers, "ask", ask)
    found = _run(project)
    _assert_others_pass(found)
    assert found["bad"][0] is Verdict.ERROR
    assert "sqlbench failed reading the agent's answer (UnicodeDecodeError" in found["bad"][1]


def test_a_fault_running_the_ground_truth_is_an_error_for_that_question_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.runs.truth_cache as truth_cache

    monkeypatch.setattr(
        truth_cache,
        "transpile_truth",
        _raising(truth_cache.transpile_truth, ValueError("bad truth"), when=POISON_TRUTH),
    )
    found = _run(project)
    _assert_others_pass(found)
    assert found["bad"][0] is Verdict.ERROR
    assert "the ground truth failed: sqlbench failed running it: ValueError" in found["bad"][1]


def test_a_result_the_store_cannot_hold_is_stored_as_an_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlbench.runs.store import RunStore

    original = RunStore.record

    def record(self: RunStore, run_id: str, result: Any) -> Any:
        if result.name == "bad" and result.verdict is not Verdict.ERROR:
            raise ValueError("Out of range float values are not JSON compliant")
        return original(self, run_id, result)

    monkeypatch.setattr(RunStore, "record", record)
    found = _run(project)
    _assert_others_pass(found)
    verdict, reason = found["bad"]
    assert verdict is Verdict.ERROR
    assert reason.startswith("sqlbench failed storing this answer (ValueError: Out of range")
    assert "was pass: " in reason
