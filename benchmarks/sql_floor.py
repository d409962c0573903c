"""The SQLite work any correct evaluator of a corpus project must do, and what is left for the rest.

An execution-based evaluator has to run every distinct query of a corpus at least once: each
ground truth and each distinct agent SQL text on its database. This script runs exactly that
with plain ``sqlite3`` (one kept connection a database, opened read-only; ``execute`` and
``fetchall``, errors ignored) in one thread, after one unmeasured pass (pages read, caches
warm), and prints its CPU time. It then runs the same queries in ``--cores`` processes at once, each
taking the next query when it is free, as a run on that many cores does (after one such pass
unmeasured), and prints the floor of a whole run on those cores: that pass's wall time (the
processes slow each other down, and a long query near the end leaves a core idle: more than
the one process's CPU divided by the cores), plus one Python interpreter's start-up (``python
-c pass``), and how the official evaluators' query count compares (they run every ground truth
once per system's answer, and every answer's SQL, with no sharing).

sqlbench must also check every agent SQL text before it reaches the database (the statement
guard, docs/engines.md), and that check parses it with sqlglot. So the script prints a
second floor that adds sqlglot's parse of each distinct agent text (``sqlglot.parse`` in the
SQLite dialect, errors ignored, after one unmeasured pass) and the import of sqlglot in a
fresh interpreter. A third floor adds the import of what holding a typed result and reading
a project takes besides sqlglot (pyarrow with its compute module, numpy, pandas, which
pyarrow loads on its first conversion of Python values, pydantic, PyYAML, click), measured
as a fresh interpreter's extra start time: a grader built on these libraries pays it before
its first answer, with the other core idle. Nothing else sqlbench does (comparing, storing,
reporting, loading the project) is in any floor.

A corpus project is one ``benchmarks/corpus_speed.py --work DIR`` lays out
(``DIR/spider/spider-project``, ``DIR/bird/bird-project-apart``, ...). Give the official's wall
time of the same answers (printed by ``corpus_speed.py``) with ``--official-s`` to see the
floor as a share of it: what the 0.5x goal leaves for everything that is not SQLite.

With ``--lower``, the script also tries two ways to lower the floor itself, and prints what
each would take off the one-process CPU: SQLite connection settings (``PRAGMA mmap_size``, a
larger ``cache_size``, both, and the ``immutable=1`` open that skips locking and change checks,
which is only sound for a file nobody writes during the run), and running once each group of
queries whose texts differ only in whitespace, or only in whitespace and comments and keyword
case (the same tokens in sqlglot's SQLite tokenizer): such texts compile to the same program, so
their result could be shared like that of identical texts.

Usage: ``python benchmarks/sql_floor.py --project DIR [--cores 2] [--official-s SECONDS]
[--lower | --json]``; ``--json`` prints only ``{"floor_s", "guarded_s", "typed_s"}``, the three
floors' seconds, which ``corpus_speed.py --rounds`` measures after each pair of its BIRD rounds.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml


def queries(project: Path) -> tuple[list[tuple[str, str]], int, int, list[str]]:
    """Every distinct (database file, SQL) of the project's ground truths and agents' answers,
    the number of answers, the number of ground truths, and every distinct agent SQL text."""
    settings = yaml.safe_load((project / "sqlbench.yml").read_text(encoding="utf-8"))
    urls: dict[str, str] = settings.get("warehouses") or {}
    default = settings.get("warehouse")
    space_file: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    truths = 0
    for spec in sorted((project / "eval_questions").glob("*.yml")):
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        url = urls.get(data.get("warehouse"), default) if data.get("warehouse") else default
        path = str(url).removeprefix("sqlite:///")
        space_file[data["space"]] = path
        for question in data["eval_questions"]:
            if question.get("sql"):
                found.append((path, question["sql"]))
                truths += 1
    answers = 0
    agent_texts: list[str] = []
    for replay in sorted((project / "agents").glob("*.jsonl")):
        for line in replay.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            answer: dict[str, Any] = json.loads(line)
            answers += 1
            if answer.get("sql") and answer.get("space") in space_file:
                found.append((space_file[answer["space"]], answer["sql"]))
                agent_texts.append(answer["sql"])
    return list(dict.fromkeys(found)), answers, truths, list(dict.fromkeys(agent_texts))


def run_all(distinct: list[tuple[str, str]], connections: dict[str, sqlite3.Connection]) -> float:
    """CPU seconds of one pass over ``distinct``."""
    start = time.process_time()
    for path, sql in distinct:
        conn = connections.get(path)
        if conn is None:
            conn = connections[path] = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        with contextlib.suppress(sqlite3.Error, sqlite3.Warning, ValueError):
            conn.execute(sql).fetchall()
    return time.process_time() - start


def _share(
    distinct: list[tuple[str, str]], counter: Any, barrier: Any, times: Any, index: int
) -> None:
    """One of ``parallel_pass``'s processes: two passes over ``distinct``, each query taken by
    whichever process comes to it first (the shared ``counter``), the second one timed."""
    connections: dict[str, sqlite3.Connection] = {}
    for _ in range(2):
        barrier.wait()
        start, cpu = time.perf_counter(), time.process_time()
        while True:
            with counter.get_lock():
                taken = counter.value
                counter.value += 1
            if taken >= len(distinct):
                break
            path, sql = distinct[taken]
            conn = connections.get(path)
            if conn is None:
                conn = connections[path] = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            with contextlib.suppress(sqlite3.Error, sqlite3.Warning, ValueError):
                conn.execute(sql).fetchall()
        times[2 * index] = time.perf_counter() - start
        times[2 * index + 1] = time.process_time() - cpu
        barrier.wait()  # every process past its share before the counter starts again
        counter.value = 0


def parallel_pass(distinct: list[tuple[str, str]], cores: int) -> tuple[float, float]:
    """Wall and CPU seconds (the slowest process's wall, all processes' CPU) of ``distinct``
    run once by ``cores`` processes at once, each taking the next query when it is free, as a
    run on that many cores does, after one such pass unmeasured. Two SQLite processes on two
    cores are slower each than one alone (they share caches and, on a virtual machine, often a
    physical core): this is the wall time the SQLite work takes on those cores."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    counter = context.Value("q", 0)
    barrier = context.Barrier(cores)
    times = context.Array("d", 2 * cores)
    workers = [
        context.Process(target=_share, args=(distinct, counter, barrier, times, index))
        for index in range(cores)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return max(times[0::2]), sum(times[1::2])


_SETTINGS: dict[str, tuple[str, list[str]]] = {
    "as a run opens them (mode=ro)": ("mode=ro", []),
    "PRAGMA mmap_size=2 GiB": ("mode=ro", ["PRAGMA mmap_size=2147483648"]),
    "PRAGMA cache_size=256 MiB": ("mode=ro", ["PRAGMA cache_size=-262144"]),
    "both pragmas": ("mode=ro", ["PRAGMA mmap_size=2147483648", "PRAGMA cache_size=-262144"]),
    "immutable=1": ("mode=ro&immutable=1", []),
}


def timed_pass(distinct: list[tuple[str, str]], setting: str) -> tuple[float, dict[int, float]]:
    """CPU seconds of one pass over ``distinct`` on connections opened with ``setting`` (one of
    ``_SETTINGS``), after one unmeasured pass, and each query's CPU seconds by its index."""
    options, pragmas = _SETTINGS[setting]
    connections: dict[str, sqlite3.Connection] = {}
    each: dict[int, float] = {}
    total = 0.0
    for _ in range(2):
        start = time.process_time()
        for index, (path, sql) in enumerate(distinct):
            conn = connections.get(path)
            if conn is None:
                conn = connections[path] = sqlite3.connect(f"file:{path}?{options}", uri=True)
                for pragma in pragmas:
                    conn.execute(pragma)
            began = time.process_time()
            with contextlib.suppress(sqlite3.Error, sqlite3.Warning, ValueError):
                conn.execute(sql).fetchall()
            each[index] = time.process_time() - began
        total = time.process_time() - start
    for conn in connections.values():
        conn.close()
    return total, each


def _tokens(sql: str) -> tuple[Any, ...]:
    """``sql``'s tokens in sqlglot's SQLite tokenizer, keywords upper-cased (names and strings
    as written), without a final semicolon (the text itself where it does not tokenize)."""
    from sqlglot.dialects.sqlite import SQLite
    from sqlglot.errors import SqlglotError
    from sqlglot.tokenizer_core import TokenType

    as_written = (TokenType.VAR, TokenType.STRING, TokenType.IDENTIFIER)
    try:
        found = SQLite().tokenize(sql)
    except SqlglotError:
        return (sql,)
    return tuple(
        (t.token_type, t.text if t.token_type in as_written else t.text.upper())
        for t in found
        if t.token_type is not TokenType.SEMICOLON
    )


def lower_floor(distinct: list[tuple[str, str]]) -> None:
    """Print what each of ``_SETTINGS`` and each way of sharing near-identical texts would take
    off the one-process CPU of ``distinct`` (each setting measured twice, alternated; the least)."""
    import re

    best: dict[str, float] = {}
    each: dict[int, float] = {}
    for _ in range(2):
        for setting in _SETTINGS:
            total, costs = timed_pass(distinct, setting)
            if setting not in best or total < best[setting]:
                best[setting] = total
                if setting == next(iter(_SETTINGS)):
                    each = costs
    baseline = best[next(iter(_SETTINGS))]
    for setting, total in best.items():
        print(f"SQLite CPU, one process, {setting}: {total:.2f} s ({total / baseline:.2f}x)")
    keys = {
        "whitespace": lambda sql: re.sub(r"\s+", " ", sql).strip().rstrip(";").strip(),
        "tokens (whitespace, comments, keyword case)": _tokens,
    }
    for label, key in keys.items():
        seen: set[tuple[str, Any]] = set()
        shared, saved = 0, 0.0
        for index, (path, sql) in enumerate(distinct):
            found = (path, key(sql))
            if found in seen:
                shared += 1
                saved += each[index]
            seen.add(found)
        print(
            f"queries equal to an earlier one up to {label}: {shared}; running them once would "
            f"save {saved:.2f} s of {baseline:.2f} s CPU"
        )


def parse_all(texts: list[str]) -> float:
    """CPU seconds of one sqlglot parse of each of ``texts`` in the SQLite dialect."""
    import sqlglot
    from sqlglot.errors import SqlglotError

    dialect = sqlglot.Dialect.get_or_raise("sqlite")
    start = time.process_time()
    for sql in texts:
        with contextlib.suppress(SqlglotError, RecursionError):
            dialect.parse(sql)
    return time.process_time() - start


def started(code: str) -> float:
    """Least wall seconds of three fresh interpreters running ``code``."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--official-s", type=float, default=None)
    printed = parser.add_mutually_exclusive_group()
    printed.add_argument("--lower", action="store_true", help="also try to lower the floor")
    printed.add_argument(
        "--json",
        action="store_true",
        help="print only one JSON object of the three floors' seconds (for corpus_speed.py)",
    )
    args = parser.parse_args()
    # With --json the figures are measured alike and only the object is printed.
    say = (lambda *_: None) if args.json else print
    distinct, answers, truths, agent_texts = queries(args.project)
    connections: dict[str, sqlite3.Connection] = {}
    run_all(distinct, connections)  # pages read, statement caches warm
    cpu = min(run_all(distinct, connections) for _ in range(2))
    interpreter = started("pass")
    together = min((parallel_pass(distinct, args.cores) for _ in range(2)), key=lambda t: t[0])
    floor = together[0] + interpreter
    say(
        f"{args.project.name}: {answers} answers, {truths} ground truths; "
        f"{len(distinct)} distinct queries (the official runs {2 * answers}: "
        "each answer's SQL and its ground truth)"
    )
    say(f"SQLite CPU, each distinct query once, one process: {cpu:.2f} s")
    say(
        f"the same in {args.cores} processes at once: {together[0]:.2f} s wall, "
        f"{together[1]:.2f} s CPU ({together[1] / cpu:.2f}x one process's; "
        f"{cpu / args.cores:.2f} s if they did not slow each other)"
    )
    say(
        f"floor of a run on {args.cores} cores: {together[0]:.2f} + {interpreter:.2f} s "
        f"(a Python start) = {floor:.2f} s"
    )
    parse_all(agent_texts)  # sqlglot's caches warm
    parsing = min(parse_all(agent_texts) for _ in range(2))
    importing = max(0.0, started("import sqlglot") - interpreter)
    # The parse on the cores at once is assumed to slow down as SQLite did (same ratio).
    slowed = together[1] / cpu if cpu else 1.0
    guarded = together[0] + parsing * slowed / args.cores + interpreter + importing
    say(
        f"the guard's sqlglot parse of each of the {len(agent_texts)} distinct agent SQL texts: "
        f"{parsing:.2f} s CPU; importing sqlglot: {importing:.2f} s"
    )
    say(
        f"floor with the guard: {together[0]:.2f} + {parsing:.2f} x {slowed:.2f} / {args.cores} + "
        f"{interpreter:.2f} + {importing:.2f} s = {guarded:.2f} s"
    )
    # A typed grader also needs its libraries loaded before its first answer: Arrow and numpy for
    # typed results (converting Python rows to Arrow loads pandas, through pyarrow's pandas
    # shim), pydantic for the project's files, YAML and click. This is serial time at the start.
    typed_code = (
        "import click, numpy, pydantic, yaml, sqlglot, pyarrow as pa, pyarrow.compute; "
        "pa.array([1])"
    )
    libraries = max(0.0, started(typed_code) - interpreter - importing)
    typed = guarded + libraries
    say(
        f"importing what a typed comparison needs besides sqlglot (pyarrow, numpy, pandas through "
        f"pyarrow, pydantic, yaml, click): {libraries:.2f} s"
    )
    say(
        f"floor with the guard and those imports: {guarded:.2f} + {libraries:.2f} s = {typed:.2f} s"
    )
    if args.official_s:
        goal = 0.5 * args.official_s
        for label, least in (
            ("floor", floor),
            ("floor with the guard", guarded),
            ("floor with the guard and the imports", typed),
        ):
            say(
                f"official {args.official_s:.2f} s: {label} = {least / args.official_s:.2f}x; the "
                f"0.5x goal ({goal:.2f} s) leaves {goal - least:.2f} s of wall time for all the "
                f"rest ({(goal - least) * args.cores / max(answers, 1) * 1e3:.2f} ms of CPU an "
                f"answer on {args.cores} cores)"
            )
    if args.json:
        print(json.dumps({"floor_s": floor, "guarded_s": guarded, "typed_s": typed}))
    if args.lower:
        lower_floor(distinct)


if __name__ == "__main__":
    main()
