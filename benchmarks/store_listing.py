"""What finding unreadable result rows costs ``sqlbench runs`` on a SQLite store; prints figures.

Builds a store of ``--runs`` runs x ``--questions`` results (the realistic results of
``report_speed.py``: SQL, 20-row previews on both sides, a trace), then times
``RunStore.list_runs`` with and without ``find_damaged`` (``sqlbench runs`` looks for result
rows whose bytes are not UTF-8), that look on its own, and what SQLite's ``json_valid`` over
every result would add (why ``runs`` does not look for broken JSON). Best of ``--repeat``,
all in one process (compare the ratios).

Usage: ``python benchmarks/store_listing.py [--runs N] [--questions M] [--repeat K]``
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from report_speed import _trial

from sqlbench.records.run import RunInfo, RunStatus, utc_now
from sqlbench.runs.store import RunStore


def build(store: RunStore, runs: int, questions: int) -> None:
    trials = [_trial(i) for i in range(questions)]
    now = utc_now()
    for n in range(runs):
        info = RunInfo(
            id=uuid.uuid4().hex,
            name=f"run-{n:03d}",
            status=RunStatus.COMPLETED,
            created_at=now - timedelta(minutes=runs - n),
            updated_at=now,
            finished_at=now,
            created_by="bench",
            branch="main",
            environment="prod",
            question_set_hash="q" * 16,
            question_count=questions,
            agent_name="agent",
            agent_kind="http",
            agent_settings_hash="s" * 16,
            sqlbench_version="bench",
            compare_hash="c" * 16,
        )
        store.save_run(info, trials)


def best(repeat: int, call: object) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sqlbench-listing-bench-"))
    try:
        with RunStore(f"sqlite:///{folder / 'runs.db'}") as store:
            build(store, args.runs, args.questions)
            size_mb = (folder / "runs.db").stat().st_size / 1_000_000
            plain = best(args.repeat, store.list_runs)
            listed = best(args.repeat, lambda: store.list_runs(find_damaged=True))
            checks = store._unreadable_results  # the look alone, over every run

            def look() -> None:
                with store._read() as conn:
                    assert checks(conn, None) == {}

            looked = best(args.repeat, look)

            def json_look() -> None:
                with store._read() as conn:
                    conn.exec_driver_sql(
                        "SELECT count(*) FROM sqlbench_results WHERE json_valid(data) = 0"
                    ).all()

            json_looked = best(args.repeat, json_look)
        print(
            f"sqlbench runs on {args.runs} runs x {args.questions} results "
            f"({size_mb:.0f} MB store), best of {args.repeat}"
        )
        print(f"  list_runs (report history, view)  {plain:8.3f} s")
        print(f"  list_runs(find_damaged=True)      {listed:8.3f} s  (sqlbench runs)")
        print(f"  the look for non-UTF-8 results    {looked:8.3f} s")
        print(f"  json_valid over every result      {json_looked:8.3f} s (not done)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
