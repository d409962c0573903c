"""CPU of the per-answer work on one result: the code before its speed-up against today's,
alternated in one process (A B A B ...), with the outputs checked identical.

- ``fingerprint``: ``result_fingerprint`` (one ``json.dumps`` per row before; now each column's
  values as JSON text, joined per row).

Shapes: BIRD dev's large results (21,056 x 3 text; 42,112 x 2 int and float; a SQLite column of
mixed int and text, an Arrow dense union) and Spider's small ones (1 x 2, 10 x 3). Prints the
median CPU per call (``time.process_time``) of each side and their ratio.

With ``--project DIR`` (a SQLite corpus project ``corpus_speed.py`` lays out), instead: every
ground truth and agent answer of the project run once in SQLite (those done within 2 s),
fetched as a run fetches them, then the CPU of each step over all of those results (the
garbage collector frozen first: the fetched rows would make its collections dominate):
``fetch.result_bytes``, ``rows_to_table``, ``make_preview``, and ``result_fingerprint`` of the
ground truths (old and new). Run it with each install's interpreter to compare the others.

Usage: ``python benchmarks/result_cpu.py [--rounds 7] [--project DIR]``. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlbench.engines import fetch
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


def project_steps(project: Path) -> None:
    """The CPU of each per-result step over every result of ``project``."""
    import yaml

    urls = yaml.safe_load((project / "sqlbench.yml").read_text(encoding="utf-8"))["warehouses"]
    queries: list[tuple[bool, str, str]] = []  # (ground truth?, warehouse URL, SQL)
    space_url: dict[str, str] = {}
    for spec in sorted((project / "eval_questions").glob("*.yml")):
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        url = space_url[data["space"]] = urls[data["warehouse"]]
        queries += [(True, url, q["sql"]) for q in data["eval_questions"]]
    for answers in sorted((project / "agents").glob("*.jsonl")):
        for line in answers.read_text(encoding="utf-8").splitlines():
            answer = json.loads(line)
            queries.append((False, space_url[answer["space"]], answer["sql"]))
    fetched: list[tuple[bool, list[str], list[list[tuple[Any, ...]]]]] = []
    connections: dict[str, sqlite3.Connection] = {}
    for truth, url, sql in queries:
        path = url.removeprefix("sqlite:///")
        connection = connections.get(path)
        if connection is None:
            connection = connections[path] = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        deadline = time.monotonic() + 2
        connection.set_progress_handler(lambda d=deadline: time.monotonic() > d, 10_000)
        try:
            cursor = connection.execute(sql)
            names = [column[0] for column in cursor.description]
            chunks, size = [], 64  # the sizes fetch_rows asks for, about
            while chunk := cursor.fetchmany(size):
                chunks.append(chunk)
                size = fetch.FETCH_CHUNK_ROWS
        except sqlite3.Error:
            continue
        fetched.append((truth, names, chunks))
    gc.collect()
    gc.freeze()
    spent: dict[str, float] = {}

    def timed(step: str, fn: Callable[..., Any], *args: Any) -> Any:
        start = time.process_time()
        out = fn(*args)
        spent[step] = spent.get(step, 0.0) + time.process_time() - start
        return out

    for truth, names, chunks in fetched:
        for chunk in chunks:
            timed("fetch.result_bytes", fetch.result_bytes, chunk)
        rows = [row for chunk in chunks for row in chunk]
        result = ResultSet(timed("rows_to_table", rows_to_table, names, rows))
        timed("make_preview", previews.make_preview, result)
        if truth:
            old = timed("result_fingerprint (truths, old)", old_fingerprint, result)
            new = timed("result_fingerprint (truths)", previews.result_fingerprint, result)
            if old != new:
                raise SystemExit(f"the fingerprints differ: {old} {new}")
    large = sum(1 for _, _, chunks in fetched if sum(map(len, chunks)) > 1000)
    print(f"{len(fetched)} results ({large} over 1,000 rows) of {len(queries)} queries")
    for step, seconds in spent.items():
        print(f"{step:<36} {seconds:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--project", type=Path)
    args = parser.parse_args()
    if args.project is not None:
        project_steps(args.project)
        return
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
