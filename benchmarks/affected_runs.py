"""What an affected-only run saves on a realistic change (issue 11): one view of the demo.

A copy of the demo project becomes a git repository (``main``); branch ``dev`` changes one view
(``products``: ``is_active`` also requires a list price). The base run is made once and stored,
then the head is run twice, each in a fresh subprocess: in full (``sqlbench run --branch dev``)
and affected-only (``--affected-by main``). The demo's ``recorded`` agent is wrapped in a
``python`` agent that sleeps ``--latency`` seconds per call (an LLM's answer time; default 1 s)
and logs each call, so the figures count the questions really put to the agent.

Usage: ``python benchmarks/affected_runs.py [--latency 1.0]``. Prints questions asked and wall
time of both head runs, and the verdicts of both (they must agree: exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO_PARTS = ("sqlbench.yml", "models", "data", "certified_queries", "eval_questions", "agents")

AGENT = """
import json
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANSWERS = {{}}
for line in (HERE / "agents" / "recorded_answers.jsonl").read_text().splitlines():
    if line.strip():
        record = json.loads(line)
        ANSWERS[(record.get("space"), record["name"])] = record


def answer(request):
    with open({log!r}, "a") as log:
        log.write(request["name"] + "\\n")
    time.sleep({latency})
    record = ANSWERS.get((request["space"], request["name"])) or ANSWERS[(None, request["name"])]
    return {{k: v for k, v in record.items() if k not in ("name", "space")}}
"""
OLD = "       discontinued_on IS NULL AS is_active"
NEW = "       discontinued_on IS NULL AND list_price > 0 AS is_active"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


NOTES: list[str] = []


def _run(root: Path, log: Path, *args: str) -> tuple[float, int, dict[str, str]]:
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sqlbench",
            "run",
            "-C",
            str(root),
            "--agent",
            "timed",
            "--format",
            "json",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"sqlbench run {' '.join(args)} failed:\n{proc.stderr}")
    NOTES[:] = [line for line in proc.stderr.splitlines() if "affected-only" in line]
    results = json.loads(proc.stdout)["results"]
    calls = len(log.read_text().splitlines()) if log.exists() else 0
    return elapsed, calls, {f"{r['space']}/{r['name']}": r["verdict"] for r in results}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    latency = parser.parse_args().latency
    with tempfile.TemporaryDirectory(prefix="sqlbench-affected-") as tmp:
        root = Path(tmp) / "demo"
        root.mkdir()
        for part in DEMO_PARTS:
            source = REPO / part
            if source.is_dir():
                shutil.copytree(source, root / part)
            else:
                shutil.copy2(source, root / part)
        log = Path(tmp) / "calls.log"
        (root / "timed_agent.py").write_text(AGENT.format(log=str(log), latency=latency))
        (root / "agents" / "timed.yml").write_text(
            "agents:\n  - name: timed\n    kind: python\n    function: timed_agent:answer\n"
        )
        _git(root, "init", "-q", "-b", "main")
        _git(root, "-c", "user.email=b@x", "-c", "user.name=b", "add", "-A")
        _git(root, "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "demo")
        _git(root, "checkout", "-qb", "dev")
        view = root / "models" / "core" / "products.sql"
        text = view.read_text()
        assert OLD in text, "the demo's products view changed: update this benchmark"
        view.write_text(text.replace(OLD, NEW))
        _git(root, "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qam", "one view")
        _git(root, "checkout", "-q", "main")
        _run(root, log, "--branch", "main", "--name", "base")
        full_s, full_calls, full = _run(root, log, "--branch", "dev")
        aff_s, aff_calls, affected = _run(root, log, "--branch", "dev", "--affected-by", "main")
    print(f"demo, one view changed (products.is_active), agent latency {latency:g} s per call")
    print(f"{'head run':<16}{'questions asked':>16}{'wall time':>12}")
    print(f"{'full':<16}{f'{full_calls}/{len(full)}':>16}{full_s:>11.1f}s")
    print(f"{'affected-only':<16}{f'{aff_calls}/{len(affected)}':>16}{aff_s:>11.1f}s")
    print(f"time ratio (affected/full): {aff_s / full_s:.2f}")
    print("why each question was asked (the run's notes):")
    for line in NOTES:
        print(f"  {line}")
    same = full == affected
    print(f"verdicts identical: {'yes' if same else 'NO'}")
    if not same:
        for key in sorted(full):
            if full[key] != affected.get(key):
                print(f"  {key}: full {full[key]}, affected {affected.get(key)}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
