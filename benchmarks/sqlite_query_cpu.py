"""CPU per query of small results on SQLite warehouses, two installs of sqlbench alternated.

The queries are a Spider corpus project's (``benchmarks/corpus_speed.py --work DIR`` lays it out
at ``DIR/spider/spider-project``): every agent's answer in the order of the agents' files, kept
when SQLite returns at most 10 rows for it within half a second (most Spider results are a few
rows). Each install (a Python whose environment has that sqlbench) runs them in a fresh process,
in turn (A B A B ...), and prints CPU microseconds per query (``time.process_time``, the whole
process), after one unmeasured pass of ``run_truth`` over them (connections made, pages read),
for:

- ``agent``: ``run_agent_sql`` (size and depth limits, the guard, the query, its fetch and Arrow
  conversion), one thread, every answer in order (SQL repeated across agents as in a run);
- ``truth``: ``run_truth`` of the same SQL, one thread (the query path without the guard);
- ``truth x8``: the same split over 8 threads at once, as a run's workers run them.

Usage: ``python benchmarks/sqlite_query_cpu.py --project DIR --python before=/a/bin/python
--python after=.venv/bin/python [--rounds 3]``. Not part of the test suite. On a shared machine
compare only figures of one invocation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SMALL_ROWS = 10
PHASES = ("agent", "truth", "truth x8")


def small_queries(project: Path) -> list[tuple[str, str]]:
    """(warehouse URL, SQL) of every agent answer whose result has at most SMALL_ROWS rows."""
    import yaml

    settings = yaml.safe_load((project / "sqlbench.yml").read_text(encoding="utf-8"))
    urls: dict[str, str] = settings["warehouses"]
    space_url: dict[str, str] = {}
    for spec in sorted((project / "eval_questions").glob("*.yml")):
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        space_url[data["space"]] = urls[data["warehouse"]]
    connections: dict[str, sqlite3.Connection] = {}
    verdicts: dict[tuple[str, str], bool] = {}
    kept: list[tuple[str, str]] = []
    for answers in sorted((project / "agents").glob("*.jsonl")):
        for line in answers.read_text(encoding="utf-8").splitlines():
            answer = json.loads(line)
            sql = answer.get("sql")
            if not sql:
                continue
            url = space_url[answer["space"]]
            key = (url, sql)
            if key not in verdicts:
                if url not in connections:
                    path = url.split("sqlite:///", 1)[1]
                    connections[url] = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                verdicts[key] = _small(connections[url], sql)
            if verdicts[key]:
                kept.append(key)
    return kept


def _small(db: sqlite3.Connection, sql: str) -> bool:
    deadline = time.monotonic() + 0.5
    db.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cursor = db.execute(sql)
        return cursor.description is not None and len(cursor.fetchmany(SMALL_ROWS + 1)) <= (
            SMALL_ROWS
        )
    except sqlite3.Error:
        return False
    finally:
        db.set_progress_handler(None, 0)


def child(queries_file: Path, project: Path) -> None:
    """Run the queries with this interpreter's sqlbench; print CPU us per query per phase."""
    from sqlbench.engines.limits import run_agent_sql
    from sqlbench.engines.open import open_engine
    from sqlbench.errors import QueryError
    from sqlbench.project.files import RunSettings, Settings

    queries = [tuple(q) for q in json.loads(queries_file.read_text(encoding="utf-8"))]
    engines: dict[str, Any] = {}
    for url, _ in queries:
        if url not in engines:
            engines[url] = open_engine(Settings(warehouse=url), project)
    run = RunSettings()

    def agent(items: list[tuple[str, str]]) -> None:
        for url, sql in items:
            with contextlib.suppress(QueryError):
                run_agent_sql(engines[url], sql, run)

    def truth(items: list[tuple[str, str]]) -> None:
        for url, sql in items:
            with contextlib.suppress(QueryError):
                engines[url].run_truth(
                    sql,
                    timeout_s=run.gold_timeout_s,
                    max_rows=run.max_rows,
                    max_bytes=run.max_result_bytes,
                )

    def threads(items: list[tuple[str, str]]) -> None:
        workers = [threading.Thread(target=truth, args=(items[k::8],)) for k in range(8)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    truth(queries)  # warm: connections made, pages read (the guard has not seen the SQL)
    figures: dict[str, float] = {}
    for phase, work in zip(PHASES, (agent, truth, threads), strict=True):
        started = time.process_time()
        work(queries)  # type: ignore[arg-type]
        figures[phase] = (time.process_time() - started) / len(queries) * 1e6
    for engine in engines.values():
        engine.close()
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--python", action="append", default=[], help="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    project = args.project.resolve()
    if args.child is not None:
        child(args.child, project)
        return
    installs = dict(item.split("=", 1) for item in args.python)
    if len(installs) < 2:
        sys.exit("give at least two --python NAME=PATH")
    queries = small_queries(project)
    print(
        f"{len(queries)} agent answers with at most {SMALL_ROWS} rows "
        f"({len(set(queries))} distinct SQL texts)"
    )
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in installs}
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / "queries.json"
        listed.write_text(json.dumps(queries), encoding="utf-8")
        for round_ in range(args.rounds):
            for name, python in installs.items():
                out = subprocess.run(
                    [python, __file__, "--project", str(project), "--child", str(listed)],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=tmp,
                ).stdout
                got = json.loads(out.strip().splitlines()[-1])
                figures[name].append(got)
                shown = ", ".join(f"{phase} {got[phase]:.1f}" for phase in PHASES)
                print(f"round {round_ + 1} {name}: {shown} us CPU per query")
    for name, runs in figures.items():
        medians = {phase: statistics.median(r[phase] for r in runs) for phase in PHASES}
        shown = ", ".join(f"{phase} {medians[phase]:.1f}" for phase in PHASES)
        print(f"median {name}: {shown} us CPU per query")
    first, *others = installs
    for other in others:
        ratios = [
            statistics.median(r[p] for r in figures[other])
            / statistics.median(r[p] for r in figures[first])
            for p in PHASES
        ]
        shown = ", ".join(f"{p} {ratio:.2f}" for p, ratio in zip(PHASES, ratios, strict=True))
        print(f"{other} / {first}: {shown}")


if __name__ == "__main__":
    main()
