"""Speed and memory of ``compare_results`` on large results; prints its figures.

Main case (issue 3): two 1,000,000-row x 4-column results (int, float, text, int) built in
DuckDB and fetched with ``.df()``; the agent's rows are shuffled and its columns renamed and
reordered. Reported, best of a few runs in this same process:
- ``compare_results`` against a set-of-tuples comparison of the same frames (target: <= 1/4);
- ``compare_results`` against fetching the result from DuckDB with ``.df()`` (target: <= 2x);
- peak RSS of a child process comparing the two frames (read from Arrow files), above the RSS
  it had before loading them, against the two inputs' size (target: <= 3x the inputs).
Also: twelve identical columns of zeros, float noise in every row (tolerance stage), and a
failing comparison (reason and near misses included).

Fail as fast as pass (issue 15): the main case's two results, then the agent's with one cell
changed; the failing comparison (reason, differing rows and near misses included) against the
passing one, same frames, same process (target: <= 3x).

Usage: ``python benchmarks/compare_speed.py [--rows N] [--only fail]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import duckdb
import numpy as np
import pandas as pd

from sqlbench.compare import compare_results

_MAIN_SQL = (
    "SELECT i::BIGINT AS id, (hash(i) % 100000) / 7.0 AS amount, "
    "'customer_' || (i % 50000)::VARCHAR AS name, (i * 7) % 1000 AS bucket FROM range({n}) t(i)"
)


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Fastest of ``repeat`` runs (the machine is shared) and the last result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def build_tables(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    con.execute(f"CREATE TABLE expected AS {_MAIN_SQL.format(n=rows)}")
    con.execute(
        "CREATE TABLE actual AS SELECT bucket AS b, name AS who, amount AS value, "
        "id AS key FROM expected ORDER BY hash(id + 17)"
    )


def set_of_tuples(expected: pd.DataFrame, actual: pd.DataFrame) -> bool:
    """What a naive evaluator does: rows as tuples in a set (column order given for free)."""
    aligned = actual[["key", "value", "who", "b"]]
    return set(expected.itertuples(index=False, name=None)) == set(
        aligned.itertuples(index=False, name=None)
    )


def main_case(rows: int) -> dict[str, float]:
    con = duckdb.connect()
    build_tables(con, rows)
    fetch_s, expected = best(lambda: con.sql("SELECT * FROM expected").df(), 3)
    fetch_a_s, actual = best(lambda: con.sql("SELECT * FROM actual").df(), 3)
    assert isinstance(expected, pd.DataFrame) and isinstance(actual, pd.DataFrame)
    compare_s, result = best(lambda: compare_results(expected, actual), 3)
    assert result.passed, result.reason  # type: ignore[attr-defined]
    naive_s, same = best(lambda: set_of_tuples(expected, actual), 2)
    assert same
    return {
        "fetch_expected_s": fetch_s,
        "fetch_actual_s": fetch_a_s,
        "compare_s": compare_s,
        "set_of_tuples_s": naive_s,
    }


def side_cases(rows: int) -> dict[str, float]:
    out: dict[str, float] = {}
    zeros = pd.DataFrame(np.zeros((rows // 10, 12), dtype=np.int64))
    renamed = zeros.set_axis([f"z{k}" for k in range(12)], axis=1)
    out["twelve_zero_columns_s"], result = best(lambda: compare_results(zeros, renamed), 3)
    assert result.passed  # type: ignore[attr-defined]
    rng = np.random.default_rng(5)
    values = rng.normal(1000, 300, rows)
    expected = pd.DataFrame({"k": np.arange(rows) % 97, "v": values})
    noisy = expected.assign(v=values * (1 + rng.uniform(-1e-12, 1e-12, rows)))
    noisy = noisy.iloc[rng.permutation(rows)]
    out["float_noise_every_row_s"], result = best(lambda: compare_results(expected, noisy), 2)
    assert result.passed  # type: ignore[attr-defined]
    wrong = noisy.copy()
    wrong.iloc[0, 1] = 1e9
    out["failing_with_reason_s"], result = best(lambda: compare_results(expected, wrong), 1)
    assert not result.passed  # type: ignore[attr-defined]
    print(f"  failing reason: {result.reason}")  # type: ignore[attr-defined]
    return out


def fail_vs_pass(rows: int) -> dict[str, float]:
    """One differing cell: the fail (with its reason) against the pass, on the same frames."""
    con = duckdb.connect()
    build_tables(con, rows)
    expected = con.sql("SELECT * FROM expected").df()
    actual = con.sql("SELECT * FROM actual").df()
    wrong = actual.copy()
    wrong.iloc[rows // 2, 2] = wrong.iloc[rows // 2, 2] + 1.0  # one amount, off by 1
    pass_s, passed = best(lambda: compare_results(expected, actual), 2)
    assert passed.passed  # type: ignore[attr-defined]
    fail_s, failed = best(lambda: compare_results(expected, wrong), 2)
    assert not failed.passed  # type: ignore[attr-defined]
    print(f"  failing reason: {failed.reason}")  # type: ignore[attr-defined]
    return {"pass_s": pass_s, "fail_one_cell_s": fail_s}


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(path: str) -> None:
    """Runs in a subprocess: RSS before loading the inputs, with them, and at the peak of the
    comparison (the kernel's high-water mark, reset just before comparing)."""
    small = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [0.5, 1.5]})
    compare_results(small, small.iloc[::-1])  # load everything lazily imported first
    gc.collect()
    before = _status_kb("VmRSS")
    expected = pd.read_feather(f"{path}/expected.arrow")
    actual = pd.read_feather(f"{path}/actual.arrow")
    gc.collect()
    inputs = int(expected.memory_usage(deep=True).sum() + actual.memory_usage(deep=True).sum())
    loaded = _status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")  # reset the peak-RSS high-water mark (VmHWM)
    result = compare_results(expected, actual)
    peak = _status_kb("VmHWM")
    print(
        json.dumps(
            {
                "passed": result.passed,
                "inputs": inputs,
                "rss_before": before * 1024,
                "rss_loaded": loaded * 1024,
                "peak": peak * 1024,
            }
        )
    )


def memory_case(rows: int) -> dict[str, float]:
    con = duckdb.connect()
    build_tables(con, rows)
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("expected", "actual"):
            con.sql(f"SELECT * FROM {name}").df().to_feather(f"{tmp}/{name}.arrow")
        con.close()
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", tmp],
            check=True,
            capture_output=True,
            text=True,
        )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["passed"]
    return {
        "inputs_mb": data["inputs"] / 2**20,
        "rss_before_inputs_mb": data["rss_before"] / 2**20,
        "rss_with_inputs_mb": data["rss_loaded"] / 2**20,
        "peak_rss_comparing_mb": data["peak"] / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=["fail"], default=None, help="only fail vs pass")
    args = parser.parse_args()
    if args.memory_child is not None:
        memory_child(args.memory_child)
        return
    rows = args.rows
    if args.only == "fail":
        fp = fail_vs_pass(rows)
        ratio = fp["fail_one_cell_s"] / fp["pass_s"]
        print(f"{rows:,} rows x 4 columns: pass {fp['pass_s']:.3f} s, fail (one cell) "
              f"{fp['fail_one_cell_s']:.3f} s, fail / pass {ratio:.2f} (target <= 3: "
              f"{'met' if ratio <= 3 else 'NOT met'})")  # fmt: skip
        return
    print(f"compare_results speed, {rows:,} rows x 4 columns (best of runs, seconds)")
    m = main_case(rows)
    for key, value in m.items():
        print(f"  {key:28s} {value:8.3f}")
    ratio_naive = m["compare_s"] / m["set_of_tuples_s"]
    ratio_fetch = m["compare_s"] / m["fetch_expected_s"]
    print(
        f"  compare / set-of-tuples      {ratio_naive:8.3f}  (target <= 0.25: "
        f"{'met' if ratio_naive <= 0.25 else 'NOT met'})"
    )
    print(
        f"  compare / DuckDB .df() fetch {ratio_fetch:8.3f}  (target <= 2: "
        f"{'met' if ratio_fetch <= 2 else 'NOT met'})"
    )
    mem = memory_case(rows)
    for key, value in mem.items():
        print(f"  {key:28s} {value:8.1f}")
    used = mem["peak_rss_comparing_mb"] - mem["rss_before_inputs_mb"]
    ratio_mem = used / mem["inputs_mb"]
    print(
        f"  (peak RSS - RSS before inputs) / inputs {ratio_mem:6.2f}  (target <= 3: "
        f"{'met' if ratio_mem <= 3 else 'NOT met'})"
    )
    print("fail as fast as pass (seconds)")
    fp = fail_vs_pass(rows)
    for key, value in fp.items():
        print(f"  {key:28s} {value:8.3f}")
    ratio_fail = fp["fail_one_cell_s"] / fp["pass_s"]
    print(
        f"  fail / pass                  {ratio_fail:8.3f}  (target <= 3: "
        f"{'met' if ratio_fail <= 3 else 'NOT met'})"
    )
    print("other cases (seconds)")
    for key, value in side_cases(rows).items():
        print(f"  {key:28s} {value:8.3f}")


if __name__ == "__main__":
    main()
