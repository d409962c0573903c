"""Ground truth for a run: each distinct ground-truth SQL executed once, shared by questions.

The cache counts how many pending answers still need each SQL and drops a result once the
last one is graded, so a long run holds only the ground truths still in use.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence

from sqlbench.engines.base import Engine
from sqlbench.errors import QueryError, QueryProcessError
from sqlbench.grading import TruthOutcome
from sqlbench.runs.faults import stage_error
from sqlbench.runs.previews import result_fingerprint
from sqlbench.truth import transpile_truth


class _Entry:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outcome: TruthOutcome | None = None
        self.fingerprint: str | None = None


class TruthCache:
    """Runs ground-truth SQL on demand, once per distinct text, from many threads.

    Args:
        engine: The run's engine.
        dialect: The dialect ground truth is written in (default: the engine's); other
            dialects are transpiled (a ground truth that cannot be is an error outcome).
        timeout_s: ``gold_timeout_s``.
        max_rows: ``max_rows``.
        max_bytes: ``max_result_mb`` in bytes (None: no byte limit).
        uses: For each SQL text, how many answers will ask for it.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        timeout_s: float,
        max_rows: int,
        uses: Iterable[str],
        dialect: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self._engine = engine
        self._dialect = dialect or engine.dialect
        self._timeout_s = timeout_s
        self._max_rows = max_rows
        self._max_bytes = max_bytes
        self._pending: Counter[str] = Counter(uses)
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self.executed = 0
        """How many ground-truth queries actually ran."""

    def get(self, sqls: Sequence[str]) -> tuple[list[TruthOutcome], float]:
        """The outcomes of ``sqls`` and the milliseconds this call spent running them."""
        spent = 0.0
        outcomes = []
        for sql in sqls:
            outcome, ms = self._one(sql, ahead=False)
            assert outcome is not None  # only prefetching may skip
            outcomes.append(outcome)
            spent += ms
        return outcomes, spent

    def prefetch(self, sqls: Sequence[str]) -> None:
        """Run ``sqls`` ahead of the answers that need them (while agents think); SQL that no
        pending answer needs any more is left alone."""
        for sql in sqls:
            self._one(sql, ahead=True)

    def failed_ahead(self, sqls: Sequence[str], error: QueryError) -> None:
        """Running ``sqls`` ahead (``prefetch``) failed outside their queries: ``error`` is the
        outcome of each one still needed and not run yet, so its questions are graded with it
        (an ``error`` verdict and its reason)."""
        for sql in sqls:
            with self._lock:
                if self._pending.get(sql, 0) <= 0:
                    continue
                entry = self._entries.setdefault(sql, _Entry())
            with entry.lock:
                if entry.outcome is None:
                    entry.outcome = TruthOutcome(sql=sql, error=error)

    def expect(self, sqls: Sequence[str]) -> None:
        """One more answer will need ``sqls`` (a forked process taking a group of work whose
        ground truths it had released)."""
        with self._lock:
            for sql in sqls:
                self._pending[sql] += 1

    def release(self, sqls: Sequence[str]) -> None:
        """One answer that needed ``sqls`` is graded; forget results nobody needs any more."""
        with self._lock:
            for sql in sqls:
                self._pending[sql] -= 1
                if self._pending[sql] <= 0:
                    self._pending.pop(sql, None)
                    self._entries.pop(sql, None)

    def fingerprint(self, outcome: TruthOutcome) -> str:
        """``result_fingerprint`` of a ground truth's result (``outcome`` from ``get``),
        computed once for all the answers that share it while it is held.

        Raises:
            ValueError: ``outcome`` holds no result.
        """
        if outcome.result is None:
            raise ValueError(f"the ground truth {outcome.sql!r} has no result to fingerprint")
        with self._lock:
            entry = self._entries.get(outcome.sql)
        if entry is None or entry.outcome is not outcome:
            return result_fingerprint(outcome.result)  # not (or no longer) held here
        with entry.lock:
            if entry.fingerprint is None:
                entry.fingerprint = result_fingerprint(outcome.result)
            return entry.fingerprint

    def cached(self) -> int:
        """Results held right now."""
        with self._lock:
            return sum(1 for e in self._entries.values() if e.outcome is not None)

    def _one(self, sql: str, *, ahead: bool) -> tuple[TruthOutcome | None, float]:
        with self._lock:
            if ahead and self._pending.get(sql, 0) <= 0:
                return None, 0.0  # every answer needing it is graded already
            entry = self._entries.setdefault(sql, _Entry())
        with entry.lock:
            if entry.outcome is not None:
                return entry.outcome, 0.0
            if ahead:
                with self._lock:
                    if self._entries.get(sql) is not entry:
                        return None, 0.0  # released while we waited: nobody needs it
            start = time.perf_counter()
            try:
                runnable = transpile_truth(sql, self._dialect, self._engine.dialect)
                result = self._engine.run_truth(
                    runnable,
                    timeout_s=self._timeout_s,
                    max_rows=self._max_rows,
                    max_bytes=self._max_bytes,
                )
                outcome = TruthOutcome(sql=sql, result=result)
            except QueryError as err:
                outcome = TruthOutcome(sql=sql, error=err)
            except QueryProcessError:
                raise  # no query can run (the query process cannot start): the run's fault
            except Exception as err:  # one ground truth's fault is its question's
                outcome = TruthOutcome(sql=sql, error=stage_error("running it", err))
            entry.outcome = outcome
            with self._lock:
                self.executed += 1
            return outcome, (time.perf_counter() - start) * 1000.0
