"""What running agent SQL on DuckDB data variants in the query process costs, on the public corpus.

The corpus's databases are SQLite files, whose variants are SQLite files read in sqlbench's own
process. To measure the DuckDB path, this script copies a few Spider dev databases into DuckDB
files (each column typed by its SQLite affinity, values cast with ``TRY_CAST``; no declared
keys), makes the project ``sqlbench init --from spider`` makes for the 9 published systems,
points its warehouses at the DuckDB files, and runs ``sqlbench run --agent '*' --variants N``
with two checkouts of sqlbench, alternated (A B A B ...): ``--before`` (a checkout where agent SQL
on a variant runs in sqlbench's process) and this one (in the warehouse engine's query process).

It prints, per run: wall seconds, CPU seconds of sqlbench and of every process it started
(read from ``/proc`` every 50 ms, so a process's last 50 ms can be missed), and the verdicts
per system; then whether both checkouts gave the same verdict and reason to every answer.

Usage: ``python benchmarks/variants_duckdb_cost.py --before DIR [--databases a,b,c]
[--variants 5] [--rounds 2] [--work DIR]``. Not part of the test suite; skipped (exit 0 with a
message) when the corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_speed import SQLBENCH, spider_layout  # a sibling script, not a package

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))
from corpus import descendants  # the red-team tests' process walk

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
HERE = Path(__file__).resolve().parents[1]
_TICKS = os.sysconf("SC_CLK_TCK")


def _affinity(declared: str) -> str:
    """SQLite's column affinity rules, as a DuckDB type."""
    upper = declared.upper()
    if "INT" in upper:
        return "BIGINT"
    if any(word in upper for word in ("REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL")):
        return "DOUBLE"
    return "VARCHAR"


def to_duckdb(source: Path, target: Path) -> None:
    """Copy every table of the SQLite file ``source`` into the DuckDB file ``target``."""
    lite = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    lite.text_factory = lambda b: b.decode("utf-8", "replace")
    con = duckdb.connect(str(target))
    try:
        names = [
            str(r[0])
            for r in lite.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for name in names:
            info = lite.execute(f'PRAGMA table_info("{name}")').fetchall()
            columns = [(str(c[1]), _affinity(str(c[2] or ""))) for c in info]
            rows = lite.execute(f'SELECT * FROM "{name}"').fetchall()
            text = pa.table(
                {
                    f"c{i}": pa.array(
                        [None if r[i] is None else str(r[i]) for r in rows], pa.string()
                    )
                    for i in range(len(columns))
                }
            )
            con.register("_rows", text)
            select = ", ".join(
                f'TRY_CAST(c{i} AS {kind}) AS "{column}"'
                for i, (column, kind) in enumerate(columns)
            )
            con.execute(f'CREATE TABLE "{name}" AS SELECT {select} FROM _rows')
            con.unregister("_rows")
    finally:
        con.close()
        lite.close()


def make_project(root: Path, work: Path, databases: list[str]) -> Path:
    layout, systems = spider_layout(root, work)
    project = work / "project"
    pairs = [a for path, name, _ in systems for a in ("--predictions", str(path), "--agent", name)]
    subprocess.run(
        [*SQLBENCH, "init", str(project), "--from", "spider", str(layout), *pairs],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    settings = yaml.safe_load((project / "sqlbench.yml").read_text(encoding="utf-8"))
    folder = work / "duckdb"
    folder.mkdir()
    warehouses = {}
    for db in databases:
        target = folder / f"{db}.duckdb"
        to_duckdb(root / "spider/databases" / db / f"{db}.sqlite", target)
        warehouses[db] = str(target)
    settings["warehouses"] = warehouses
    (project / "sqlbench.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    for questions in (project / "eval_questions").glob("*.yml"):
        if questions.stem not in databases:
            questions.unlink()
    return project


def _cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def timed_run(
    checkout: Path, project: Path, out: Path, variants: int
) -> tuple[float, float, float]:
    """Wall seconds, sqlbench's CPU seconds and its children's (sampled), of one run."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "SQLBENCH_NO_COLOR": "1"}
    argv = [*SQLBENCH, "run", "-C", str(project), "--agent", "*", "--format", "json",
            "--output", str(out), "--variants", str(variants)]  # fmt: skip
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for pid in [process.pid, *descendants(process.pid)]:
                seen = _cpu_s(pid)
                if seen is not None:
                    cpu[pid] = max(cpu.get(pid, 0.0), seen)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode not in (0, 1, 2) or not out.is_file():
        raise SystemExit(f"sqlbench run exited {process.returncode}:\n{stderr.decode()[-2000:]}")
    own = cpu.pop(process.pid, 0.0)
    return wall, own, sum(cpu.values())


def verdicts(out: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, question) -> (verdict, reason), over every system's run."""
    found = {}
    for run in json.loads(out.read_text(encoding="utf-8"))["runs"]:
        agent = str(run["run"]["agent"]["name"])
        for result in run["results"]:
            found[(agent, str(result["name"]))] = (str(result["verdict"]), str(result["reason"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--databases", default="concert_singer,pets_1,employee_hire_evaluation")
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not (args.root / "spider").is_dir():
        print(f"skipped: the corpus is not in {args.root}")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="sqlbench-variants-duckdb-"))
    project = make_project(args.root, work, args.databases.split(","))
    checkouts = {"before": args.before.resolve(), "after": HERE}
    results: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in checkouts}
    for round_ in range(args.rounds):
        for name, checkout in checkouts.items():
            out = work / f"{name}-{round_}.json"
            measured = timed_run(checkout, project, out, args.variants)
            times[name].append(measured)
            got = verdicts(out)
            if name in results and results[name] != got:
                print(f"note: {name} gave other verdicts in round {round_ + 1} than in round 1")
            results.setdefault(name, got)
            wall, own, children = measured
            print(
                f"{name:6} round {round_ + 1}: wall {wall:6.1f} s, CPU sqlbench {own:6.1f} s "
                f"+ children {children:6.1f} s, {len(got)} answers, "
                + ", ".join(
                    f"{v} {n}" for v, n in sorted(Counter(x[0] for x in got.values()).items())
                )
            )
    for name, measured in times.items():
        wall = sum(m[0] for m in measured) / len(measured)
        cpu = sum(m[1] + m[2] for m in measured) / len(measured)
        print(f"{name:6} mean: wall {wall:.1f} s, CPU (all processes) {cpu:.1f} s")
    before, after = results["before"], results["after"]
    differ = [key for key in before if before[key] != after.get(key)]
    print(f"answers: {len(before)}; same verdict and reason: {len(before) - len(differ)}")
    for key in differ[:20]:
        print(f"  {key}: before {before[key]} / after {after.get(key)}")
    print(f"(runs in {work})")


if __name__ == "__main__":
    main()
