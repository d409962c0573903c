"""What the query process costs on a server warehouse, and what it holds (issue 17).

Agent SQL on PostgreSQL and MariaDB runs in a memory-watched child process
(``sqlbench.engines.agent_process``). For each server whose URL is set
(SQLBENCH_TEST_POSTGRES_READER_URL / _URL, SQLBENCH_TEST_MARIADB_READER_URL / _URL) this prints:

- **per-query cost**: N trivial agent queries (``SELECT 1``), one after another, in-process
  (``query_process_mb=None``) and through the query process, alternated over several rounds:
  wall time per query, this process's CPU per query, and the query process's CPU per query
  (from ``/proc``);
- **results at the limit**: at the default limits (``max_result_mb`` 128, so an allowance of
  768 MB), results just under the byte limit run through the query process, each ``--repeat``
  times: ``max_rows`` narrow rows of 20 integer columns (counted at 16 bytes a value; as
  Python values they take more), then 126 wide rows of 1 MB text. Printed: whether each passed
  and the query process's peak resident memory above what it held once connected (its
  allowance is what it may add).

Usage: python benchmarks/server_query_process.py [--engines postgres,mariadb] [--queries 200]
[--rounds 3] [--repeat 4]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from sqlbench.engines.limits import server_query_process_mb
from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
from sqlbench.errors import QueryError
from sqlbench.project.files import RunSettings

_URLS = {
    "postgres": ("SQLBENCH_TEST_POSTGRES_READER_URL", "SQLBENCH_TEST_POSTGRES_URL"),
    "mariadb": ("SQLBENCH_TEST_MARIADB_READER_URL", "SQLBENCH_TEST_MARIADB_URL"),
}
_DIALECTS = {"postgres": "postgres", "mariadb": "mysql"}
_AT_LIMIT = {
    "postgres": {
        "narrow (100,000 x 20 int)": "SELECT "
        + ", ".join(f"g + {i} AS c{i}" for i in range(20))
        + " FROM generate_series(1, 100000) g",
        "wide (126 x 1 MB)": "SELECT repeat('x', 1000000) AS v FROM generate_series(1, 126)",
    },
    "mariadb": {
        "narrow (100,000 x 20 int)": "SELECT "
        + ", ".join(f"seq + {i} AS c{i}" for i in range(20))
        + " FROM seq_1_to_100000",
        "wide (126 x 1 MB)": "SELECT repeat('x', 1000000) AS v FROM seq_1_to_126",
    },
}
_TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found += [int(c) for c in listed.read().split()]
        except OSError:
            continue
    return found


def _query_processes() -> list[int]:
    """The query processes: children of the zygote, which is a child of this process."""
    return [child for zygote in _children(os.getpid()) for child in _children(zygote)]


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _status_mb(pid: int, key: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _open(url: str, dialect: str, process_mb: int | None) -> SqlAlchemyEngine:
    return SqlAlchemyEngine(
        url,
        display="benchmark",
        dialect=dialect,
        project_root=Path(tempfile.gettempdir()),
        pool_size=8,
        query_process_mb=process_mb,
    )


def per_query(url: str, dialect: str, queries: int, rounds: int) -> dict[str, list[float]]:
    """Wall, own CPU and query-process CPU per trivial query (ms), per round and mode."""
    allowance = server_query_process_mb(RunSettings())
    found: dict[str, list[float]] = {}
    for _ in range(rounds):
        for mode, process_mb in (("in-process", None), ("query process", allowance)):
            engine = _open(url, dialect, process_mb)
            try:
                engine.run_agent("SELECT 1 AS x", timeout_s=60, max_rows=10)  # started, warm
                children = [max(_query_processes())] if process_mb else []
                child_cpu = sum(_cpu_s(p) for p in children)
                own = _own_cpu_s()
                began = time.perf_counter()
                for i in range(queries):
                    engine.run_agent(f"SELECT {i} AS x", timeout_s=60, max_rows=10)
                wall = time.perf_counter() - began
                own = _own_cpu_s() - own
                child_cpu = sum(_cpu_s(p) for p in children) - child_cpu
            finally:
                engine.close()
            for key, value in (("wall", wall), ("own CPU", own), ("child CPU", child_cpu)):
                found.setdefault(f"{mode}: {key}", []).append(1000 * value / queries)
    return found


def at_limit(url: str, dialect: str, engine_name: str, repeat: int) -> list[str]:
    """Results just under the default byte limit through the query process, each ``repeat``
    times (freed memory the process keeps between results can raise the next one's peak)."""
    run = RunSettings()
    engine = _open(url, dialect, server_query_process_mb(run))
    lines = []
    try:
        engine.run_agent("SELECT 1 AS x", timeout_s=60, max_rows=10)
        child = max(_query_processes())  # the newest (an earlier one may still be ending)
        base = _status_mb(child, "VmRSS")
        lines.append(f"  query process once connected: {base:,.0f} MB")
        for name, sql in _AT_LIMIT[engine_name].items():
            with open(f"/proc/{child}/clear_refs", "w") as refs:
                refs.write("5")  # reset its peak resident size
            try:
                for _ in range(repeat):
                    result = engine.run_agent(
                        sql, timeout_s=120, max_rows=run.max_rows, max_bytes=run.max_result_bytes
                    )
                held = result.table.nbytes / 2**20
                peak = _status_mb(child, "VmHWM") - base
                lines.append(
                    f"  {name}: passed {repeat} times, {result.num_rows:,} rows, {held:,.0f} MB; "
                    f"query process peak +{peak:,.0f} MB over it (allowance "
                    f"{server_query_process_mb(run)} MB)"
                )
            except QueryError as err:
                lines.append(f"  {name}: {err.kind.value}: {err.message}")
                child = max(_query_processes(), default=child)
    finally:
        engine.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="postgres,mariadb")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=4, help="each result at the limit")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for name in args.engines.split(","):
        url = next((os.environ[v] for v in _URLS[name] if os.environ.get(v)), None)
        if url is None:
            print(f"{name}: skipped (server URL not set)")
            continue
        print(f"\n{name}: {args.queries} trivial agent queries, {args.rounds} rounds alternated")
        for key, values in per_query(url, _DIALECTS[name], args.queries, args.rounds).items():
            print(f"  {key:28} " + ", ".join(f"{v:.2f}" for v in values) + " ms/query")
        print(f"{name}: results at the default limits, through the query process")
        for line in at_limit(url, _DIALECTS[name], name, args.repeat):
            print(line)


if __name__ == "__main__":
    main()
