"""The SQLite work any correct evaluator of a corpus project must do, and what is left for the rest.

An execution-based evaluator has to run every distinct query of a corpus at least once: each
ground truth and each distinct agent SQL text on its database. This script runs exactly that
with plain ``sqlite3`` (one kept connection a database, opened read-only; ``execute`` and
``fetchall``, errors ignored) in one thread, after one unmeasured pass (pages read, caches
warm), and prints its CPU time. It then prints the floor of a whole run on ``--cores`` cores:
that CPU spread evenly over the cores, plus one Python interpreter's start-up (``python -c
pass``), and how the official evaluators' query count compares (they run every ground truth
once per system's answer, and every answer's SQL, with no sharing).

A corpus project is one ``benchmarks/corpus_speed.py --work DIR`` lays out
(``DIR/spider/spider-project``, ``DIR/bird/bird-project-apart``, ...). Give the official's wall
time of the same answers (printed by ``corpus_speed.py``) with ``--official-s`` to see the
floor as a share of it: what the 0.5x goal leaves for everything that is not SQLite.

Usage: ``python benchmarks/sql_floor.py --project DIR [--cores 2] [--official-s SECONDS]``.
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


def queries(project: Path) -> tuple[list[tuple[str, str]], int, int]:
    """Every distinct (database file, SQL) of the project's ground truths and agents' answers,
    the number of answers, and the number of ground truths."""
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
    for replay in sorted((project / "agents").glob("*.jsonl")):
        for line in replay.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            answer: dict[str, Any] = json.loads(line)
            answers += 1
            if answer.get("sql") and answer.get("space") in space_file:
                found.append((space_file[answer["space"]], answer["sql"]))
    return list(dict.fromkeys(found)), answers, truths


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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--official-s", type=float, default=None)
    args = parser.parse_args()
    distinct, answers, truths = queries(args.project)
    connections: dict[str, sqlite3.Connection] = {}
    run_all(distinct, connections)  # pages read, statement caches warm
    cpu = min(run_all(distinct, connections) for _ in range(2))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    interpreter = time.perf_counter() - start
    floor = cpu / args.cores + interpreter
    print(
        f"{args.project.name}: {answers} answers, {truths} ground truths; "
        f"{len(distinct)} distinct queries (the official runs {2 * answers}: "
        "each answer's SQL and its ground truth)"
    )
    print(f"SQLite CPU, each distinct query once: {cpu:.2f} s")
    print(
        f"floor of a run on {args.cores} cores: {cpu:.2f} / {args.cores} + {interpreter:.2f} s "
        f"(a Python start) = {floor:.2f} s"
    )
    if args.official_s:
        goal = 0.5 * args.official_s
        print(
            f"official {args.official_s:.2f} s: floor = {floor / args.official_s:.2f}x; the 0.5x "
            f"goal ({goal:.2f} s) leaves {goal - floor:.2f} s of wall time for all the rest "
            f"({(goal - floor) * args.cores / max(answers, 1) * 1e3:.2f} ms of CPU an answer "
            f"on {args.cores} cores)"
        )


if __name__ == "__main__":
    main()
