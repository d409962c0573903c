"""How fast the run loop grades, and whether its memory stays flat (issue 6).

Scenarios, each in a fresh subprocess (clean timings and RSS), on a copy of the demo project's
warehouse with N generated questions (the demo's ground truths, each made a distinct text so
every one really runs once) and a ``python`` agent that answers with the right SQL:

- ``instant``: the agent answers at once; the harness must grade >= 100 questions/s on this
  2-core machine (its overhead per question under 10 ms).
- ``sleepy``: the agent sleeps 1 s per question; 200 questions at concurrency 20 must finish
  within 12 s (ideal: 10 s).
- ``memory``: 2,000 instant questions; RSS sampled every 10% of the run must stay flat
  (results are committed to the store and only capped previews are kept).

Usage: ``python benchmarks/run_speed.py [--scenario instant|sleepy|memory|all]``. Prints a
table and exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEMO_PARTS = ("sqlbench.yml", "models", "data", "certified_queries")

AGENT = """
import json
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANSWERS = json.loads((HERE / "answers.json").read_text())
DELAY_S = float((HERE / "delay.txt").read_text())


def answer(request):
    if DELAY_S:
        time.sleep(DELAY_S)
    return ANSWERS[request["space"] + "/" + request["name"]]
"""


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_project(
    root: Path, questions: int, delay_s: float, concurrency: int, distinct: bool
) -> int:
    """The demo warehouse with ``questions`` questions (the demo's, cycled; with ``distinct``
    each ground truth gets its own text so every one really runs) and the ``bench`` agent."""
    import yaml

    from sqlbench.project.load import load_project

    demo = load_project(REPO)
    usable = [q for q in demo.questions if q.truth_sql is not None and q.skip is None]
    questions = questions or len(usable)
    for part in DEMO_PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, root / part)
        else:
            shutil.copy2(source, root / part)
    settings = yaml.safe_load((root / "sqlbench.yml").read_text())
    settings["default_agent"] = "bench"
    settings.setdefault("run", {})["concurrency"] = concurrency
    (root / "sqlbench.yml").write_text(yaml.safe_dump(settings))
    entries, answers = [], {}
    for i in range(questions):
        source = usable[i % len(usable)]
        name = f"{source.name}_{i}"
        truth = f"{source.truth_sql.rstrip()}\n-- copy {i}\n" if distinct else source.truth_sql
        entry: dict[str, Any] = {"name": name, "question": source.question, "sql": truth}
        if source.compare is not None:
            entry["compare"] = source.compare.model_dump(exclude_none=True)
        entries.append(entry)
        answers[f"bench/{name}"] = f"{source.truth_sql.rstrip()}\n-- answer {i}\n"
    questions_dir = root / "eval_questions"
    questions_dir.mkdir()
    (questions_dir / "bench.yml").write_text(
        yaml.safe_dump({"space": "bench", "eval_questions": entries}, sort_keys=False)
    )
    agents = root / "agents"
    agents.mkdir(exist_ok=True)
    (agents / "bench.yml").write_text(
        yaml.safe_dump(
            {"agents": [{"name": "bench", "kind": "python", "function": "bench_agent:answer"}]}
        )
    )
    (root / "bench_agent.py").write_text(AGENT)
    (root / "answers.json").write_text(json.dumps(answers))
    (root / "delay.txt").write_text(str(delay_s))
    return questions


def engine_baseline(questions: int, concurrency: int) -> list[tuple[int, float]]:
    """RSS while the engine alone runs the same agent SQL the memory scenario runs (same
    texts, same concurrency, no harness): the warehouse's own growth, for comparison."""
    from concurrent.futures import ThreadPoolExecutor

    from sqlbench.engines.open import open_project_engine
    from sqlbench.project.load import load_project

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        build_project(root, questions, 0.0, concurrency, True)
        answers = json.loads((root / "answers.json").read_text())
        sqls = list(answers.values())
        engine = open_project_engine(load_project(root))
        samples = [(0, round(_rss_mb(), 1))]
        step = max(1, questions // 10)
        with ThreadPoolExecutor(concurrency) as pool:
            for start in range(0, questions, step):
                batch = sqls[start : start + step]
                list(
                    pool.map(
                        lambda sql: engine.run_agent(sql, timeout_s=30, max_rows=100_000), batch
                    )
                )
                samples.append((start + len(batch), round(_rss_mb(), 1)))
        engine.close()
    return samples


def child(
    scenario: str, questions: int, delay_s: float, concurrency: int, distinct: bool, repeat: int
) -> dict[str, Any]:
    """Run one scenario in this process and return its figures."""
    from sqlbench.project.load import load_project
    from sqlbench.runs.events import ProgressEvent, QuestionGraded, RunStarted
    from sqlbench.runs.plan import RunOptions
    from sqlbench.runs.runner import run_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        questions = build_project(root, questions, delay_s, concurrency, distinct)
        marks: dict[str, float] = {}
        samples: list[tuple[int, float, int]] = []
        answers = questions * repeat
        step = max(1, answers // 10)

        def progress(event: ProgressEvent) -> None:
            if isinstance(event, RunStarted):
                marks["started"] = time.perf_counter()
                marks["cpu_started"] = time.process_time()
                samples.append((0, _rss_mb(), sys.getallocatedblocks()))
            elif isinstance(event, QuestionGraded) and event.done % step == 0:
                samples.append((event.done, _rss_mb(), sys.getallocatedblocks()))

        start = time.perf_counter()
        project = load_project(root)
        run = run_benchmark(project, "bench", RunOptions(repeat=repeat), progress=progress)
        end = time.perf_counter()
        cpu = time.process_time() - marks["cpu_started"]
    graded = end - marks["started"]
    timings = [t.timings_ms for q in run.questions for t in q.trials]

    def mean(key: str) -> float:
        return sum(t.get(key, 0.0) for t in timings) / len(timings)

    return {
        "scenario": scenario,
        "questions": questions,
        "repeat": repeat,
        "answers": answers,
        "distinct": distinct,
        "concurrency": concurrency,
        "delay_s": delay_s,
        "accuracy": run.accuracy.label(),
        "status": run.status.value,
        "total_s": round(end - start, 2),
        "setup_s": round(marks["started"] - start, 2),
        "graded_s": round(graded, 2),
        "per_s": round(answers / graded, 1),
        "ms_per_question": round(graded / answers * 1000, 2),
        "cpu_ms_per_question": round(cpu / answers * 1000, 2),
        "truth_ms": round(mean("truth"), 2),
        "agent_sql_ms": round(mean("agent_sql"), 2),
        "compare_ms": round(mean("compare"), 2),
        "rss_mb": [(done, round(mb, 1)) for done, mb, _ in samples],
        "py_blocks": [(done, blocks) for done, _, blocks in samples],
        "engine_rss_mb": engine_baseline(questions, concurrency) if scenario == "memory" else [],
    }


SCENARIOS: dict[str, dict[str, Any]] = {
    # The demo's questions asked 15 times each (--repeat 15): ground truth runs once per
    # distinct SQL, as in any run; every answer's SQL runs and is compared.
    "instant": {"questions": 0, "repeat": 15, "distinct": False, "delay_s": 0.0, "concurrency": 4},
    # The same at concurrency 1: wall time minus SQL execution is the harness's own overhead.
    "overhead": {"questions": 0, "repeat": 5, "distinct": False, "delay_s": 0.0, "concurrency": 1},
    # Worst case, for the record: 500 questions that each have their own ground truth.
    "distinct": {"questions": 500, "repeat": 1, "distinct": True, "delay_s": 0.0, "concurrency": 4},
    "sleepy": {"questions": 200, "repeat": 1, "distinct": True, "delay_s": 1.0, "concurrency": 20},
    # 2,000 questions with distinct ground truths: results and truths must not pile up.
    "memory": {"questions": 2000, "repeat": 1, "distinct": True, "delay_s": 0.0, "concurrency": 4},
}


def check(result: dict[str, Any]) -> tuple[str, bool | None]:
    """The scenario's target and whether it was met (None: figures only, no target)."""
    name = result["scenario"]
    if name == "instant":
        return ">= 100 answers/s", result["per_s"] >= 100
    if name == "overhead":
        own = result["ms_per_question"] - result["truth_ms"] - result["agent_sql_ms"]
        return f"harness overhead {own:.1f} ms/answer < 10 ms", own < 10
    if name == "sleepy":
        return "<= 12 s for 200 x 1 s at concurrency 20", result["graded_s"] <= 12
    if name == "memory":
        fifth = result["answers"] // 5

        def growth(samples: list[tuple[int, float]]) -> float:
            return samples[-1][1] - next(v for done, v in samples if done >= fifth)

        rss, engine_rss = growth(result["rss_mb"]), growth(result["engine_rss_mb"])
        blocks = result["py_blocks"]
        early = next(n for done, n in blocks if done >= fifth)
        block_growth = (blocks[-1][1] - early) / early
        return (
            f"flat from 20% to 100% of the run: Python heap blocks {block_growth:+.1%}; RSS "
            f"{rss:+.1f} MB vs {engine_rss:+.1f} MB for the engine alone running the same SQL"
        ), block_growth <= 0.05 and rss <= engine_rss + 15
    return "figures only", None


def _report(result: dict[str, Any]) -> bool:
    target, ok = check(result)
    verdict = {True: "OK", False: "MISSED", None: "info"}[ok]
    truths = "one ground truth per question" if result["distinct"] else "demo ground truths"
    print(
        f"== {result['scenario']}: {result['answers']} answers ({result['questions']} "
        f"questions x {result['repeat']}, {truths}), concurrency {result['concurrency']}, "
        f"agent delay {result['delay_s']} s -> {verdict} ({target})"
    )
    print(
        f"   graded in {result['graded_s']} s = {result['per_s']} answers/s: "
        f"{result['ms_per_question']} ms wall and {result['cpu_ms_per_question']} ms CPU "
        f"per answer; setup {result['setup_s']} s; {result['accuracy']}"
    )
    print(
        f"   mean per answer: ground truth {result['truth_ms']} ms, agent SQL (guard "
        f"included) {result['agent_sql_ms']} ms, compare {result['compare_ms']} ms"
    )
    print(
        "   RSS MB at answers graded: " + ", ".join(f"{done}:{mb}" for done, mb in result["rss_mb"])
    )
    if result["engine_rss_mb"]:
        print(
            "   engine alone, RSS MB at queries run: "
            + ", ".join(f"{done}:{mb}" for done, mb in result["engine_rss_mb"])
        )
    print(
        "   Python heap blocks (thousands): "
        + ", ".join(f"{done}:{blocks // 1000}" for done, blocks in result["py_blocks"])
    )
    return ok is not False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.scenario, **SCENARIOS[args.scenario])))
        return 0
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    ok = True
    for name in names:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", "--scenario", name],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"== {name}: the scenario crashed\n{proc.stderr}")
            return 1
        ok &= _report(json.loads(proc.stdout.strip().splitlines()[-1]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
