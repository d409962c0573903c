"""The CPU of recording one graded answer in a SQLite run store (``RunStore.record``); prints
figures.

Records the same results, alternating in one process, through:

- ``sqlalchemy``: what ``record`` did before (an engine connection per row:
  ``RunStore._write`` then ``conn.execute(insert, _result_row(...))``, every row committed on
  its own);
- ``record``: ``RunStore.record`` as it is now;
- ``row only``: ``_result_row`` alone (the scrubbed JSON and the column values, no database).

Each round records every result into a new run of a fresh store file, in each mode (order
rotated), and takes the CPU time of this thread (``time.thread_time``); the figures are the
median per record over the rounds. The stored rows of the two writing modes are checked to be
identical (but for the run id). Results: ``--project DIR`` takes the newest run of a project's
store (the Spider corpus, ``corpus_speed.py``); without it, ``report_speed.py``'s realistic
results (SQL, 20-row previews on both sides, tool calls).

With ``--in-run DIR``, instead: one ``sqlbench run --agent '*'`` of that project (its store
emptied first), in this process, with the thread CPU of every ``RunStore.record`` call added up
(in the forked children too), and the CPU of the run's processes. Run it with each install's
interpreter in turn to compare them.

Usage: ``python benchmarks/store_write.py [--project DIR] [--results N] [--rounds K]``, or
``python benchmarks/store_write.py --in-run DIR``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from report_speed import _trial

from sqlbench.records.run import RunInfo, RunStatus, TrialResult, utc_now
from sqlbench.runs.store import RunStore, _result_row


def project_results(project: Path, count: int) -> list[TrialResult]:
    store = RunStore.for_project(project, None)
    try:
        newest = store.list_runs(limit=1)
        if not newest:
            raise SystemExit(f"no run in the store of {project}")
        return store.trials(newest[0].info.id)[:count]
    finally:
        store.close()


def new_run(store: RunStore, n: int) -> str:
    now = utc_now()
    info = RunInfo(
        id=uuid.uuid4().hex,
        name=f"bench-{n:04d}",
        status=RunStatus.RUNNING,
        created_at=now,
        updated_at=now,
        created_by="bench",
        branch="main",
        environment="dev",
        question_set_hash="q" * 16,
        question_count=0,
        agent_name="agent",
        agent_kind="replay",
        agent_settings_hash="s" * 16,
        sqlbench_version="bench",
        compare_hash="c" * 16,
    )
    store.create_run(info)
    return info.id


def through_sqlalchemy(store: RunStore, run_id: str, result: TrialResult) -> None:
    with store._write() as conn:
        conn.execute(store._insert_result, _result_row(run_id, result))


def row_only(store: RunStore, run_id: str, result: TrialResult) -> None:
    _result_row(run_id, result)


MODES: dict[str, Callable[[RunStore, str, TrialResult], None]] = {
    "sqlalchemy": through_sqlalchemy,
    "record": RunStore.record,
    "row only": row_only,
}


def stored_rows(path: Path, run_id: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT space, name, trial, position, verdict, reason, latency_ms, input_tokens,"
            " output_tokens, graded_at, data, typeof(latency_ms), typeof(graded_at)"
            " FROM sqlbench_results WHERE run_id = ? ORDER BY space, name, trial",
            (run_id,),
        ).fetchall()


def in_run(project: Path) -> None:
    """One ``run --agent '*'`` of ``project`` here, timing ``RunStore.record``."""
    from sqlbench.cli.main import main as sqlbench_main

    # In shared memory: the forked batch (runs/forked.py) records in its child processes.
    spent = multiprocessing.RawArray("d", 2)  # seconds, calls
    lock = multiprocessing.Lock()
    original = RunStore.record

    def timed(self: RunStore, run_id: str, result: TrialResult) -> None:
        started = time.thread_time()
        try:
            original(self, run_id, result)
        finally:
            with lock:
                spent[0] += time.thread_time() - started
                spent[1] += 1

    RunStore.record = timed  # type: ignore[method-assign]
    shutil.rmtree(project / ".sqlbench", ignore_errors=True)
    output = Path(tempfile.mkdtemp(prefix="store-write-")) / "runs.json"
    os.chdir(project)
    sys.argv = ["sqlbench", "run", "--agent", "*", "--format", "json", "--output", str(output)]
    try:
        sqlbench_main()
    except SystemExit as stop:
        if stop.code:
            raise
    finally:
        shutil.rmtree(output.parent)
    times = os.times()
    cpu = times.user + times.system + times.children_user + times.children_system
    each = spent[0] / max(spent[1], 1)
    print(
        f"{sys.executable}: record {spent[1]:.0f} calls, {spent[0]:.3f} s thread CPU "
        f"({each * 1e6:.0f} us each); CPU of the run's processes {cpu:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, help="take the newest run of this project")
    parser.add_argument("--results", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-run", type=Path, help="time record in a run of this project")
    args = parser.parse_args()
    if args.in_run:
        in_run(args.in_run.resolve())
        return
    if args.project:
        results = project_results(args.project, args.results)
        origin = f"the newest run of {args.project}"
    else:
        results = [_trial(i) for i in range(args.results)]
        origin = "report_speed.py's realistic results"
    print(f"{len(results)} results ({origin}), {args.rounds} rounds")
    per_record: dict[str, list[float]] = {mode: [] for mode in MODES}
    folder = Path(tempfile.mkdtemp(prefix="store-write-"))
    try:
        for round_ in range(args.rounds):
            path = folder / f"runs-{round_}.db"
            store = RunStore(f"sqlite:///{path}")
            try:
                order = list(MODES)
                order = order[round_ % len(order) :] + order[: round_ % len(order)]
                run_ids = {}
                for mode in order:
                    run_id = new_run(store, len(run_ids) + 10 * round_)
                    run_ids[mode] = run_id
                    write = MODES[mode]
                    started = time.thread_time()
                    for result in results:
                        write(store, run_id, result)
                    spent = time.thread_time() - started
                    per_record[mode].append(spent / len(results))
            finally:
                store.close()
            if round_ == 0:
                same = stored_rows(path, run_ids["sqlalchemy"]) == stored_rows(
                    path, run_ids["record"]
                )
                print(f"stored rows identical (sqlalchemy vs record): {same}")
                if not same:
                    raise SystemExit("the two ways of writing stored different rows")
    finally:
        shutil.rmtree(folder)
    base = statistics.median(per_record["sqlalchemy"])
    print(f"{'mode':<12} {'CPU per record':>15} {'vs sqlalchemy':>14}   rounds (us)")
    for mode, values in per_record.items():
        median = statistics.median(values)
        spread = " ".join(f"{v * 1e6:.0f}" for v in values)
        print(f"{mode:<12} {median * 1e6:>12.0f} us {median / base:>13.2f}x   {spread}")


if __name__ == "__main__":
    main()
