"""The statement guard's CPU and outcomes on corpus agent SQL, two installs of sqlbench alternated.

The texts are every distinct agent SQL text of the given corpus projects (``--project``, any
number; ``benchmarks/corpus_speed.py --work DIR`` lays them out). Each install (a Python whose
environment has that sqlbench) checks them in a fresh process, in turn (A B A B ...), with
nothing remembered (``check_read_only`` after ``_REMEMBERED.clear()`` for each text), and prints
the CPU (``time.process_time``) of:

- ``unparseable``: the texts sqlglot cannot parse in sqlite (the syntax-error path, which
  looks at the text's words to tell a broken query from a hidden statement);
- ``all``: every text, in sqlite.

Each install also writes every outcome (kind and message, or the exception another error
raises) of every text in sqlite, duckdb, postgres and mysql, and the script counts the outcomes
that differ from the first install's. The children run with ``PYTHONHASHSEED=0``: for a few
texts sqlglot's error message lists missing arguments in the order of a set of strings, which
changes with the hash seed (``SELECT i FROM range(`` in duckdb names 'start' or 'end' first);
sqlbench lists them by name since session 7 (``sqlstatements.error_text``), but an install from
before that still varies.

Usage: ``python benchmarks/guard_cpu.py --project DIR [--project DIR ...] --python
before=/a/bin/python --python after=.venv/bin/python [--rounds 3]``. Not part of the test
suite. On a shared machine compare only figures of one invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ("unparseable", "all")
DIALECTS = ("sqlite", "duckdb", "postgres", "mysql")


def agent_texts(projects: list[Path]) -> list[str]:
    """Every distinct agent SQL text of the projects, in the order first met."""
    texts: dict[str, None] = {}
    for project in projects:
        for answers in sorted((project / "agents").glob("*.jsonl")):
            for line in answers.read_text(encoding="utf-8").splitlines():
                sql = json.loads(line).get("sql")
                if sql:
                    texts[sql] = None
    return list(texts)


def child(texts_file: Path, outcomes_file: Path) -> None:
    """Check the texts with this interpreter's sqlbench; print CPU per phase, write outcomes."""
    from sqlglot.errors import SqlglotError

    from sqlbench.engines import guard
    from sqlbench.errors import QueryError

    texts: list[str] = json.loads(texts_file.read_text(encoding="utf-8"))

    def outcome(sql: str, dialect: str) -> list[str] | None:
        guard._REMEMBERED.clear()
        try:
            guard.check_read_only(sql, dialect)
        except QueryError as err:
            return [err.kind.value, err.message]
        except Exception as err:  # a sqlglot bug raises TypeError on a few texts: compared too
            return ["raised", type(err).__name__, str(err)]
        return None

    unparseable = []
    dialect = guard._dialect("sqlite")
    for sql in texts:
        try:
            dialect.parse(sql)
        except SqlglotError:
            unparseable.append(sql)
        except Exception:  # the sqlglot bug above: not the syntax-error path
            continue
    figures: dict[str, float] = {"unparseable texts": len(unparseable), "texts": len(texts)}
    for phase, items in zip(PHASES, (unparseable, texts), strict=True):
        started = time.process_time()
        for sql in items:
            outcome(sql, "sqlite")
        figures[phase] = time.process_time() - started
    with outcomes_file.open("w", encoding="utf-8") as out:
        for name in DIALECTS:
            for sql in texts:
                out.write(json.dumps([name, sql, outcome(sql, name)]) + "\n")
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", type=Path, action="append", default=[])
    parser.add_argument("--python", action="append", default=[], help="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(*args.child)
        return
    installs = {
        name: os.path.abspath(path) for name, path in (item.split("=", 1) for item in args.python)
    }
    if len(installs) < 2 or not args.project:
        sys.exit("give at least one --project and two --python NAME=PATH")
    texts = agent_texts([project.resolve() for project in args.project])
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in installs}
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / "texts.json"
        listed.write_text(json.dumps(texts), encoding="utf-8")
        for round_ in range(args.rounds):
            for name, python in installs.items():
                outcomes = Path(tmp) / f"{name}.jsonl"
                out = subprocess.run(
                    [python, __file__, "--child", str(listed), str(outcomes)],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=tmp,
                    env={**os.environ, "PYTHONHASHSEED": "0"},
                ).stdout
                got = json.loads(out.strip().splitlines()[-1])
                figures[name].append(got)
                print(
                    f"round {round_ + 1} {name}: {got['unparseable texts']:.0f} unparseable "
                    f"{got['unparseable']:.3f} s, {got['texts']:.0f} texts {got['all']:.3f} s CPU"
                )
        first, *others = installs
        expected = (Path(tmp) / f"{first}.jsonl").read_text(encoding="utf-8").splitlines()
        for name, runs in figures.items():
            medians = {phase: statistics.median(r[phase] for r in runs) for phase in PHASES}
            per_text = medians["unparseable"] / max(runs[0]["unparseable texts"], 1) * 1e6
            print(
                f"median {name}: unparseable {medians['unparseable']:.3f} s "
                f"({per_text:.0f} us a text), all {medians['all']:.3f} s CPU"
            )
        for other in others:
            got_lines = (Path(tmp) / f"{other}.jsonl").read_text(encoding="utf-8").splitlines()
            differ = sum(a != b for a, b in zip(expected, got_lines, strict=True))
            ratios = ", ".join(
                f"{phase} {statistics.median(r[phase] for r in figures[other]) / statistics.median(r[phase] for r in figures[first]):.2f}"  # noqa: E501
                for phase in PHASES
            )
            print(f"{other} / {first}: {ratios}")
            print(
                f"{other} against {first}: {len(expected)} outcomes (4 dialects), {differ} differ"
            )


if __name__ == "__main__":
    main()
