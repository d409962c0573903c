"""CPU of the per-answer work on one result: the code before its speed-up against today's,
alternated in one process (A B A B ...), with the outputs checked identical.

- ``fingerprint``: ``result_fingerprint`` (one ``json.dumps`` per row before; now each column's
  values as JSON text, joined per row).

Shapes: BIRD dev's large results (21,056 x 3 text; 42,112 x 2 int and float; a SQLite column of
mixed int and text, an Arrow dense union) and Spider's small ones (1 x 2, 10 x 3). Prints the
median CPU per call (``time.process_time``) of each side and their ratio.

Usage: ``python benchmarks/result_cpu.py [--rounds 7]``. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sqlbench.engines.base import ResultSet
from sqlbench.engines.dbapi_arrow import rows_to_table
from sqlbench.runs import previews


def old_fingerprint(result: ResultSet) -> str:
    """``result_fingerprint`` as it was before its speed-up (one ``json.dumps`` per row)."""
    table = result.table
    as_text: set[int] = set()
    while True:
        try:
            rows = _old_row_texts(table, as_text)
            break
        except previews._NotPython as err:
            as_text.add(err.column)
    rows.sort()
    digest = hashlib.sha256(f"{table.num_columns}:{table.num_rows}\n".encode())
    for row in rows:
        digest.update(row)
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def _old_row_texts(table: pa.Table, as_text: set[int]) -> list[bytes]:
    rows: list[bytes] = []
    for start in range(0, table.num_rows, previews.FINGERPRINT_BATCH_ROWS):
        part = table.slice(start, previews.FINGERPRINT_BATCH_ROWS)
        columns = []
        for index, column in enumerate(part.columns):
            if index in as_text:
                values = column.cast(pa.string()).to_pylist()
            else:
                try:
                    values = column.to_pylist()
                except (OverflowError, ValueError) as err:
                    raise previews._NotPython(index) from err
            columns.append([previews._canonical(v) for v in values])
        rows += (
            json.dumps(list(row), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            for row in zip(*columns, strict=True)
        )
    return rows


def _shapes() -> dict[str, list[tuple[Any, ...]]]:
    def text(n: int) -> list[tuple[Any, ...]]:
        return [
            (f"Customer {i % 997} é", f"{i:06d}", None if i % 9 == 0 else "yes") for i in range(n)
        ]

    return {
        "21,056 x 3 text": text(21_056),
        "42,112 x 2 int, float": [(i, i / 7) for i in range(42_112)],
        "21,056 x 2 int|text, int": [(i if i % 3 else str(i), i) for i in range(21_056)],
        "10 x 3 text": text(10),
        "1 x 2 int, text": [(1, "a")],
    }


def _cpu(fn: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{'work':<13} {'shape':<26} {'before':>10} {'after':>10} {'after/before':>12}")
    for name, rows in _shapes().items():
        calls = max(1, 20_000 // len(rows))
        result = ResultSet(rows_to_table([f"c{i}" for i in range(len(rows[0]))], rows))
        cases = {
            "fingerprint": (
                lambda r=result: old_fingerprint(r),
                lambda r=result: previews.result_fingerprint(r),
            ),
        }
        for work, (before, after) in cases.items():
            if before() != after():
                raise SystemExit(f"{work} on {name}: the outputs differ")
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                times["before"].append(_cpu(before, calls))
                times["after"].append(_cpu(after, calls))
            b, a = (statistics.median(times[k]) for k in ("before", "after"))
            print(f"{work:<13} {name:<26} {_show(b):>10} {_show(a):>10} {a / b:>11.2f}x")


def _show(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


if __name__ == "__main__":
    main()
