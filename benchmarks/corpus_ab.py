"""Installs of sqlbench on one corpus project, alternated, with their answers' records compared.

For a change meant to make a run faster without changing what it decides: each install (a Python
interpreter whose environment has that sqlbench, e.g. a venv with a checkout installed in it)
runs ``sqlbench run --agent '*' --format json`` in the project, in turn (A B A B ...), each from
an empty run store. The project is one ``benchmarks/corpus_speed.py --work DIR`` lays out
(``DIR/spider/spider-project``, ``DIR/bird/bird-project``).

It prints, per run: wall seconds and CPU seconds (user + system of the run's process and its
children, from ``wait4``), then each install's median, and whether every answer's record
(verdict, reason, previews, fingerprint, difference: everything but timings and timestamps)
is the same as the first install's, naming the first records that differ. On a shared machine
compare CPU times, and only within one invocation.

Usage: ``python benchmarks/corpus_ab.py --project DIR --python before=/tmp/a/bin/python
--python after=.venv/bin/python [--rounds 3]``. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VOLATILE = frozenset({"latency_ms", "timings_ms", "graded_at"})
"""Fields of an answer's record that differ between two runs of the same code."""


def records(path: Path) -> dict[str, Any]:
    """Each answer's record (by agent, space, question, trial) without its volatile fields,
    and each run's accuracy and counts."""
    data = json.loads(path.read_text(encoding="utf-8"))
    found: dict[str, Any] = {}
    for run in data["runs"]:
        agent = run["run"]["agent"]["name"]
        for result in run["results"]:
            key = f"{agent} {result['space']}/{result['name']} #{result['trial']}"
            found[key] = {k: v for k, v in result.items() if k not in VOLATILE}
        found[f"{agent} accuracy"] = (run["accuracy"], run["counts"])
    return found


def one_run(python: str, project: Path, output: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and exit code of one ``run --agent '*'`` from an empty store."""
    shutil.rmtree(project / ".sqlbench", ignore_errors=True)
    argv = [python, "-m", "sqlbench", "run", "--agent", "*", "--format", "json"]
    argv += ["--output", str(output)]
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument(
        "--python", action="append", required=True, help="NAME=PATH of an interpreter"
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    installs = dict(item.split("=", 1) for item in args.python)
    if len(installs) < 2:
        sys.exit("give at least two --python NAME=PATH")
    project = args.project.resolve()
    if not (project / "sqlbench.yml").is_file():
        sys.exit(f"{project} is not a sqlbench project (no sqlbench.yml)")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in installs}
    kept: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as work:
        for round_number in range(args.rounds):
            for name, python in installs.items():
                output = Path(work) / f"{name}.json"
                wall, cpu, code = one_run(python, project, output)
                times[name].append((wall, cpu))
                load = os.getloadavg()[0]
                print(
                    f"round {round_number} {name}: wall {wall:.1f} s, CPU {cpu:.1f} s, "
                    f"exit {code}, load {load:.1f}",
                    flush=True,
                )
                kept[name] = records(output)  # the last round's records of each install
    first = next(iter(installs))
    for name, pairs in times.items():
        wall = statistics.median(w for w, _ in pairs)
        cpu = statistics.median(c for _, c in pairs)
        print(f"{name}: median wall {wall:.1f} s, median CPU {cpu:.1f} s over {len(pairs)} runs")
    for name in installs:
        if name == first:
            continue
        base, other = kept[first], kept[name]
        differ = sorted(k for k in base.keys() | other.keys() if base.get(k) != other.get(k))
        print(
            f"{name} against {first}: {len(base)} records, {len(differ)} differ"
            + (f" (first: {', '.join(differ[:5])})" if differ else "")
        )


if __name__ == "__main__":
    main()
