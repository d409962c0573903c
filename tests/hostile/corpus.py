"""The hostile corpus (issue 17): one answer per attack class per engine, each small enough to
run in a second under the low limits a red-team project sets, and each one that would cross
those limits if they were not enforced. Shared by the red-team tests and
``benchmarks/hostile_rss.py`` (which runs it at the default limits)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import duckdb

ENGINES = ("duckdb", "sqlite", "postgres", "mariadb")

_WIDE = {  # 2,000 rows of 10 KB: 20 MB
    "duckdb": "SELECT repeat('x', 10000) AS v FROM range(2000)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 2000) "
    "SELECT printf('%.*c', 10000, 'x') AS v FROM r",
    "postgres": "SELECT repeat('x', 10000) AS v FROM generate_series(1, 2000)",
    "mariadb": "SELECT repeat('x', 10000) AS v FROM seq_1_to_2000",
    "spark": "SELECT repeat('x', 10000) AS v FROM range(2000)",
}


@dataclass(frozen=True)
class Attack:
    """One hostile answer and what it must give."""

    name: str
    sql: str
    reason: str
    """A part of the reason the question must get (its verdict is always fail)."""


def attacks(engine: str) -> list[Attack]:
    """The attack classes that apply to ``engine``."""
    found = [
        Attack(
            "deep_parens",
            "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " AS x",
            "nests parentheses 3000 deep, over sqlbench's limit of 30",
        ),
        Attack(
            "not_chain",
            "SELECT " + "NOT " * 500 + "1 = 1 AS x",
            "nested too deeply for sqlbench's SQL parser",
        ),
        Attack(
            "in_list",  # the 2,000,000-item IN list of issue 12, scaled to the low limit
            "SELECT 1 AS x WHERE 1 IN (" + ",".join(map(str, range(20_000))) + ")",
            "over run.max_sql_kb=8; it was not parsed or run",
        ),
        Attack("wide_rows", _WIDE[engine], "over run.max_result_mb=1;"),
    ]
    if engine == "duckdb":
        found += [
            Attack("list_bomb", "SELECT list(range) AS v FROM range(100000000)", "Out of Memory"),
            Attack(
                "string_agg_bomb",
                "SELECT string_agg(repeat('x', 100), ',') AS v FROM range(50000000)",
                "Out of Memory",
            ),
            Attack(  # past Arrow's 2 GB string batch at the default limits; at the test's
                # low limits the byte count or the query process's DuckDB memory limit stops
                # it, whichever the batch DuckDB builds reaches first (both seen in CI)
                "arrow_strings",
                "SELECT repeat('x', 100000) AS v FROM range(3000)",
                "the agent's SQL result is too large: ",
            ),
            Attack(  # built whole inside DuckDB, outside its memory_limit
                "huge_value",
                "SELECT repeat('x', 1000000000) AS v",
                "took sqlbench's DuckDB query process past the memory it may use",
            ),
        ]
    if engine == "sqlite":
        found.append(
            Attack("huge_value", "SELECT hex(zeroblob(33554432)) AS v", "string or blob too big")
        )
    if engine == "postgres":
        found.append(
            Attack(  # received whole by libpq before sqlbench sees it, held ~3x in-process
                "huge_value",
                "SELECT repeat('x', 400000000) AS v",
                "took sqlbench's PostgreSQL query process past the memory it may use",
            )
        )
    if engine == "mariadb":
        found.append(
            Attack(  # each value within max_allowed_packet (16 MB); the first chunk is 64 rows
                "big_values",
                "SELECT repeat('x', 15000000) AS v FROM seq_1_to_64",
                "took sqlbench's MariaDB query process past the memory it may use",
            )
        )
    if engine == "spark":
        found.append(Attack("huge_value", "SELECT repeat('x', 67108864) AS v", "over run."))
    return found


GOOD = {"good_one": "SELECT 1 AS x", "good_two": "SELECT 2 AS x"}


def write_project(root: Path, engine: str, warehouse: str | None, *, low_limits: bool) -> None:
    """A project whose replay agent gives the hostile answers and two good ones."""
    (root / "eval_questions").mkdir(parents=True, exist_ok=True)
    (root / "agents").mkdir(exist_ok=True)
    settings = []
    if warehouse is not None:
        settings.append(f"warehouse: {json.dumps(warehouse)}")
    settings.append("run:\n  concurrency: 8\n  query_timeout_s: 60")
    if low_limits:
        settings.append("  max_result_mb: 1\n  max_sql_kb: 8")
    (root / "sqlbench.yml").write_text("\n".join(settings) + "\n")
    questions = [{"name": n, "question": n, "sql": s} for n, s in GOOD.items()]
    questions += [
        {"name": a.name, "question": a.name, "sql": "SELECT 1 AS x"} for a in attacks(engine)
    ]
    (root / "eval_questions" / "q.yml").write_text(json.dumps({"eval_questions": questions}))
    answers = [{"name": n, "sql": s} for n, s in GOOD.items()]
    answers += [{"name": a.name, "sql": a.sql} for a in attacks(engine)]
    (root / "agents" / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (root / "agents" / "hostile.yml").write_text(
        "agents:\n  - name: hostile\n    kind: replay\n    path: answers.jsonl\n"
    )


def file_warehouse(root: Path, engine: str) -> Path:
    """A DuckDB or SQLite file holding a small ``orders`` table."""
    path = root / f"warehouse.{'duckdb' if engine == 'duckdb' else 'sqlite'}"
    if engine == "duckdb":
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(10)")
        con.close()
    else:
        lite = sqlite3.connect(path)
        lite.execute("CREATE TABLE orders AS SELECT 1 AS id")
        lite.commit()
        lite.close()
    return path


def sha256(path: Path) -> str:
    """The file's hash (the warehouse must not change)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Measured:
    """A finished ``sqlbench`` process: exit code, output, and the peak resident memory of it
    and every process it started (the DuckDB query process and the one that forks it)."""

    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    """The sqlbench process's own peak RSS (exact) plus the largest sum of the RSS of the
    processes it started, sampled together every 20 ms (growth between two samples can be
    missed; the DuckDB query process stops itself within 10 ms of passing its limit)."""
    processes: dict[str, float]
    """Each process's own peak RSS in MB, by its command name and process id."""


def descendants(pid: int) -> list[int]:
    """Every process started by ``pid``, its children's children included (from /proc)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as listed:
                    children = [int(c) for c in listed.read().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


_SAME_MEMORY = ("VmSize", "VmRSS", "VmData", "VmStk", "VmPTE")
"""Counters of a process's address space: a child started with ``vfork``/``CLONE_VM`` (a JVM
starting ``jspawnhelper``, Python's ``subprocess``) shares its parent's until it execs, and
reports exactly the parent's figures meanwhile."""


class Status(NamedTuple):
    """What ``run_measured`` reads of a process in ``/proc/PID/status``."""

    name: str
    parent: int
    now_kb: int
    """``VmRSS``."""
    peak_kb: int
    """``VmHWM``."""
    memory: tuple[str, ...]
    """Its address space's counters (``_SAME_MEMORY``)."""


def _status(pid: int) -> Status | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except OSError:
        return None
    now, peak = (int(fields.get(key, "0 kB").split()[0]) for key in ("VmRSS", "VmHWM"))
    return Status(
        fields.get("Name", "?").strip(),
        int(fields.get("PPid", "0").strip() or 0),
        now,
        peak,
        tuple(fields.get(key, "").strip() for key in _SAME_MEMORY),
    )


def resident_kb(statuses: dict[int, Status]) -> int:
    """The resident memory of ``statuses``' processes together, a child that reports exactly
    its parent's address space (``_SAME_MEMORY``: a ``vfork`` child before its exec, or a fork
    whose pages are all still shared) counted once, with its parent. Counted twice, a JVM
    starting a helper process showed as 1,185 MB twice (a Spark red-team run measured at
    2,584 MB)."""
    total = 0
    for status in statuses.values():
        parent = statuses.get(status.parent)
        if parent is not None and parent.memory == status.memory and all(status.memory):
            continue
        total += status.now_kb
    return total


def run_measured(args: list[str], scratch: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``python -m sqlbench ARGS`` and measure the peak RSS of it and its descendants,
    every 20 ms: the process's own high-water mark (``VmHWM``), the descendants' ``VmRSS``
    added up (``VmHWM`` each for ``processes``).

    Not ``wait4``'s ``ru_maxrss``: a child started from a large process (a pytest-xdist worker)
    reports that process's peak, since Linux carries the high-water mark across fork and exec;
    it is used only when the process ended before its first sample (it can only overstate)."""
    import subprocess
    import sys
    import threading
    import time

    out, err = scratch / "stdout.txt", scratch / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "sqlbench", *args], stdout=stdout, stderr=stderr, env=env
        )
    peaks: dict[int, tuple[str, int]] = {}
    together = [0]  # the largest sum of the descendants' resident memory at one sample
    own_kb = [0]  # the sqlbench process's own high-water mark, as last read
    finished = threading.Event()

    def sample() -> None:
        while not finished.is_set():
            mine = _status(process.pid)
            if mine is not None:
                own_kb[0] = max(own_kb[0], mine.peak_kb)
            found: dict[int, Status] = {}
            for pid in descendants(process.pid):
                got = _status(pid)
                if got is None:
                    continue
                found[pid] = got
                if got.peak_kb >= peaks.get(pid, ("", 0))[1]:
                    peaks[pid] = (got.name, got.peak_kb)
            # The sqlbench process's own memory is its high-water mark; a child sharing it
            # (``resident_kb``) is not counted again.
            alive = resident_kb({process.pid: mine, **found} if mine else found)
            together[0] = max(together[0], alive - (mine.now_kb if mine else 0))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > 600:
            process.kill()
        time.sleep(0.02)
    finished.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    own_peak_kb = own_kb[0] or usage.ru_maxrss
    own = {f"sqlbench ({process.pid})": own_peak_kb / 1024}
    own.update({f"{name} ({pid})": kb / 1024 for pid, (name, kb) in peaks.items()})
    peak = (own_peak_kb + together[0]) / 1024
    return Measured(process.returncode, out.read_text(), err.read_text(), peak, own)
