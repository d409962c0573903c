"""The ground-truth cache: each distinct SQL runs once per run, and is dropped after last use."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from sqlbench.engines.base import ResultSet
from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.errors import QueryErrorKind
from sqlbench.grading import TruthOutcome
from sqlbench.runs.previews import result_fingerprint
from sqlbench.runs.truth_cache import TruthCache


class CountingEngine(DuckDBEngine):
    """The real embedded DuckDB engine, counting ground-truth executions."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self._count_lock = threading.Lock()

    def run_truth(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        with self._count_lock:
            self.calls.append(sql)
        return super().run_truth(sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)


def test_each_distinct_sql_runs_once_across_threads() -> None:
    engine = CountingEngine()
    shared, other = "SELECT 42 AS answer", "SELECT 'x' AS y"
    cache = TruthCache(engine, timeout_s=10, max_rows=100, uses=[shared] * 8 + [other])
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: cache.get([shared])[0][0], range(8)))
    assert engine.calls == [shared] and cache.executed == 1
    assert all(r.result is results[0].result for r in results)
    assert results[0].result is not None
    assert results[0].result.table.column(0).to_pylist() == [42]
    cache.get([other])
    assert engine.calls == [shared, other]
    engine.close()


def test_results_are_dropped_after_their_last_use() -> None:
    engine = CountingEngine()
    sql = "SELECT 1 AS one"
    cache = TruthCache(engine, timeout_s=10, max_rows=100, uses=[sql, sql])
    cache.get([sql])
    cache.release([sql])
    assert cache.cached() == 1  # one more answer needs it
    cache.get([sql])
    cache.release([sql])
    assert cache.cached() == 0 and engine.calls == [sql]
    engine.close()


def test_failures_are_outcomes_not_exceptions() -> None:
    engine = CountingEngine()
    cache = TruthCache(engine, timeout_s=10, max_rows=2, uses=[])
    (missing,), _ = cache.get(["SELECT * FROM nowhere"])
    (big,), _ = cache.get(["SELECT * FROM range(10)"])
    assert missing.error is not None and missing.result is None
    assert big.error is not None and big.error.kind is QueryErrorKind.TOO_MANY_ROWS
    engine.close()


def test_prefetch_runs_ahead_once_and_never_after_the_last_use() -> None:
    engine = CountingEngine()
    sql = "SELECT 7 AS seven"
    cache = TruthCache(engine, timeout_s=10, max_rows=100, uses=[sql])
    cache.prefetch([sql])
    (outcome,), spent = cache.get([sql])
    assert outcome.result is not None and spent == 0.0  # already there
    cache.release([sql])
    cache.prefetch([sql, "SELECT 'never needed'"])
    assert engine.calls == [sql] and cache.cached() == 0
    engine.close()


def test_ground_truth_in_another_dialect_is_transpiled_or_an_error() -> None:
    engine = CountingEngine()
    month = "SELECT to_char(DATE '2024-01-31', 'YYYY-MM') AS m"
    cache = TruthCache(engine, timeout_s=10, max_rows=100, uses=[], dialect="postgres")
    (outcome,), _ = cache.get([month])
    assert outcome.result is not None and outcome.result.table.column(0).to_pylist() == ["2024-01"]
    assert outcome.sql == month  # kept as written (ORDER BY detection reads it)
    (broken,), _ = cache.get(["SELECT FROM WHERE"])
    assert broken.error is not None and broken.error.kind is QueryErrorKind.SYNTAX
    engine.close()


def test_a_held_ground_truth_is_fingerprinted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every answer's record carries its ground truth's fingerprint: one ground truth shared by
    # nine agents' answers is fingerprinted once, the same as fingerprinting it each time.
    import sqlbench.runs.truth_cache as module

    fingerprinted: list[ResultSet] = []

    def counting(result: ResultSet) -> str:
        fingerprinted.append(result)
        return result_fingerprint(result)

    monkeypatch.setattr(module, "result_fingerprint", counting)
    engine = CountingEngine()
    sql = "SELECT 42 AS answer UNION ALL SELECT 7"
    cache = TruthCache(engine, timeout_s=10, max_rows=100, uses=[sql] * 3)
    outcome = cache.get([sql])[0][0]
    assert outcome.result is not None
    prints = {cache.fingerprint(cache.get([sql])[0][0]) for _ in range(3)}
    assert prints == {result_fingerprint(outcome.result)} and len(fingerprinted) == 1
    for _ in range(3):
        cache.release([sql])
    # Released (or never held here): computed afresh, never a stale value.
    assert cache.fingerprint(outcome) == result_fingerprint(outcome.result)
    assert len(fingerprinted) == 2
    with pytest.raises(ValueError, match="no result"):
        cache.fingerprint(TruthOutcome(sql="SELECT nothing"))
    engine.close()
