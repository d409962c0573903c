"""Comparison CPU on a corpus project's answers, with the small-result paths and without.

``sqlbench.compare`` takes Python shortcuts on small results (``arrowcols.SMALL_TEXT``,
``views.SMALL_DICTIONARY``, ``nearmiss.SMALL_COUNTS``, ``rows.SMALL_DISTINCT``,
``rows.SMALL_SET``) and shares distinct rows between the matchers of one comparison
(``ViewSet.distinct_rows``). This runs ``sqlbench run --agent '*'`` in a project laid out by
``benchmarks/corpus_speed.py`` (in this process, one process of grading, from an empty run
store) and keeps every comparison's inputs as grading makes them (``grading.compare_under``: the
two Arrow tables, the compare options, the ground truth's SQL). Then it compares them all again,
alternating: every shortcut on (as shipped), all off (every input down the general Arrow/numpy
path), and each one off alone; it prints the CPU seconds of each (best of ``--rounds``), and
checks that every comparison (verdict, reason, details), both previews and the ground truth's
fingerprint are the same with the shortcuts on and off, naming the first that differs.

Usage: ``python benchmarks/compare_corpus.py --project DIR [--rounds 3]``. Not part of the test
suite; on a shared machine compare the figures of one invocation only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlbench.compare.arrowcols as arrowcols
import sqlbench.compare.nearmiss as nearmiss
import sqlbench.compare.rows as compare_rows
import sqlbench.compare.views as views
import sqlbench.grading as grading
from sqlbench.cli.main import get_cli
from sqlbench.compare.match import Matcher
from sqlbench.engines.base import ResultSet
from sqlbench.runs import batch
from sqlbench.runs.previews import make_preview, result_fingerprint, unmatched_rows

SHORTCUTS: dict[str, list[tuple[Any, str, Any]]] = {
    "text": [(arrowcols, "SMALL_TEXT", -1)],
    "dictionary": [(views, "SMALL_DICTIONARY", -1)],
    "counts": [(nearmiss, "SMALL_COUNTS", -1)],
    "distinct": [(compare_rows, "SMALL_DISTINCT", -1)],
    "set difference": [(compare_rows, "SMALL_SET", -1)],
    "distinct shared": [
        (
            Matcher,
            "_distinct_rows",
            lambda _, views, count: compare_rows._distinct_rows(views, count),
        )
    ],
}
"""Each shortcut, as the attributes that turn it off and their values then: a size threshold
set below every input, or ``Matcher``'s distinct rows found afresh for each match instead of
shared by the matchers on one view set (``ViewSet.distinct_rows``)."""

Call = tuple[Any, Any, Any, str, str]


def capture(project: Path) -> list[Call]:
    """Every comparison grading makes in one ``run --agent '*'`` of ``project``."""
    calls: list[Call] = []
    lock = threading.Lock()
    original = grading.compare_under

    def recording(expected: ResultSet, actual: ResultSet, options: Any, sql: str, dialect: str):  # type: ignore[no-untyped-def]
        with lock:
            calls.append((expected.table, actual.table, options, sql, dialect))
        return original(expected, actual, options, sql, dialect)

    grading.compare_under = recording  # type: ignore[assignment]
    if hasattr(batch.Batch, "_processes"):  # grade in this process, where the calls are kept
        batch.Batch._processes = lambda self: (1, None)  # type: ignore[method-assign]
    shutil.rmtree(project / ".sqlbench", ignore_errors=True)
    here = Path.cwd()
    os.chdir(project)
    try:
        with open(os.devnull, "w") as quiet:
            stdout, stderr = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = quiet
            try:
                get_cli().main(
                    ["run", "--agent", "*", "--format", "json", "--output", os.devnull],
                    standalone_mode=False,
                )
            finally:
                sys.stdout, sys.stderr = stdout, stderr
    finally:
        os.chdir(here)
        grading.compare_under = original
        shutil.rmtree(project / ".sqlbench", ignore_errors=True)
    return calls


@contextmanager
def shortcuts_off(names: list[str]) -> Iterator[None]:
    changes = [change for name in names for change in SHORTCUTS[name]]
    saved = [(target, attribute, getattr(target, attribute)) for target, attribute, _ in changes]
    for target, attribute, off in changes:
        setattr(target, attribute, off)
    try:
        yield
    finally:
        for target, attribute, value in saved:
            setattr(target, attribute, value)


def compare_all(calls: list[Call]) -> float:
    """CPU seconds to compare every call once."""
    start = time.process_time()
    for expected, actual, options, sql, dialect in calls:
        grading.compare_under(ResultSet(expected), ResultSet(actual), options, sql, dialect)
    return time.process_time() - start


def record(call: Call) -> str:
    """What grading stores from one comparison: the comparison, both previews, the
    fingerprint."""
    expected, actual = ResultSet(call[0]), ResultSet(call[1])
    comparison = grading.compare_under(expected, actual, *call[2:])
    unmatched = unmatched_rows(comparison)
    return repr(
        (
            comparison,
            make_preview(expected, unmatched.expected, differing_count=unmatched.expected_count),
            make_preview(actual, unmatched.actual, differing_count=unmatched.actual_count),
            result_fingerprint(expected),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    calls = capture(args.project.resolve())
    rows = sorted(max(c[0].num_rows, c[1].num_rows) for c in calls)
    print(f"{len(calls)} comparisons; median larger side {rows[len(rows) // 2]} rows")
    configs: dict[str, list[str]] = {"shortcuts on": [], "all off": list(SHORTCUTS)}
    configs |= {f"{name} off": [name] for name in SHORTCUTS}
    compare_all(calls)  # warm up (imports, the ground truths' order plans)
    seconds: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(args.rounds):
        for name, off in configs.items():
            with shortcuts_off(off):
                seconds[name].append(compare_all(calls))
    on = min(seconds["shortcuts on"])
    for name, taken in seconds.items():
        best = min(taken)
        print(f"{name:>19}: CPU {best:.3f} s ({best / len(calls) * 1e6:.0f} us a comparison)")
    print(f"all off -> on: {on / min(seconds['all off']):.2f}x the CPU")
    differ = 0
    for index, call in enumerate(calls):
        fast = record(call)
        with shortcuts_off(list(SHORTCUTS)):
            general = record(call)
        if fast != general:
            differ += 1
            if differ <= 3:
                print(f"comparison #{index} differs:\n  on:  {fast[:300]}\n  off: {general[:300]}")
    print(f"shortcuts on against off: {len(calls)} comparisons, {differ} differ")
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
