"""Grading on data variants, measured on the public corpus: how many official passes are luck.

For Spider dev (9 systems) and BIRD (13 mini-dev systems and 4 dev systems) in
``../shared/benchmarks``, this script lays each benchmark out as its authors publish it (the
same layouts as ``benchmarks/corpus_speed.py``; BIRD dev's ``dev.json`` is rebuilt from
``examples.jsonl`` the same way), runs ``sqlbench init --from spider|bird``, then one
``sqlbench run --agent '*'`` without variants and one with ``--variants N`` (fresh processes,
wall time of each), and prints per system:

- official EX (the corpus's official verdicts over the same questions),
- sqlbench's EX on the original data, and with variants,
- new fails: answers the official evaluator passes that fail (or go to review) only on a
  variant, and the cost (time with variants / time without).

Every new fail is written to ``WORK/new_fails.jsonl`` (question, gold SQL, predicted SQL, the
reason and the variant's previews). ``--sample K`` draws K of them at random (``--seed``) and
writes those not yet judged to ``WORK/sample_to_judge.jsonl``; the judgements live in
``benchmarks/variants_precision_sample.csv``, one row per sampled new fail, by a rubric that
keeps the variant's fairness apart from the gold's quality:

- ``variant_fair`` (yes/no): the variant that failed the answer is a database the schema and
  the real data's own invariants allow (keys and references kept, no twin a real table could
  not hold, no value a column never holds, undeclared invariants the data keeps, such as a
  symmetric relation, kept), judged from the variant's rows the reason shows;
- ``differs_from_gold`` (yes/no): on such databases the prediction and the gold SQL compute
  different things (a careful reading of both SQL texts);
- ``wrong_for_question`` (prediction/gold/both): read against the question (and BIRD's
  evidence), the prediction is wrong, the gold is wrong and the prediction right, or both
  readings are defensible;
- ``real_error`` (yes/no, the earlier column): the prediction is wrong for the question.

It prints two precisions over the judged sample: against the ground truth (fair and differs)
and against the question (fair, differs and the prediction wrong).

Usage: ``python benchmarks/variants_corpus.py [--root DIR] [--work DIR] [--variants 5]
[--corpus spider,bird] [--sample 60] [--seed 0]``. Not part of the test suite; skipped (exit 0
with a message) when the corpus is absent. Takes tens of minutes on a shared machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_speed import (  # a sibling script, not a package
    SQLBENCH,
    bird_dev_layout,
    bird_layout,
    jsonl,
    official_verdicts,
    spider_layout,
)

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SAMPLE_FILE = Path(__file__).resolve().parent / "variants_precision_sample.csv"


def official(root: Path) -> dict[tuple[str, str, str], bool]:
    """(corpus part, agent, question name) -> the official verdict (corpus_speed.py's, with
    the same agent names)."""
    return {
        (part, agent, name): verdict
        for part, corpus in (("spider", "spider"), ("bird-mini", "bird"), ("bird-dev", "bird-dev"))
        for (agent, name), verdict in official_verdicts(root, corpus).items()
    }


def questions_of(root: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(corpus part, question name) -> question text and gold SQL."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for e in jsonl(root / "spider/examples.jsonl"):
        name = f"dev_{e['dev_index']:04d}"
        found[("spider", name)] = {"question": e["question"], "gold": e["gold_sql"]}
    for e in jsonl(root / "bird/examples.jsonl"):
        name = f"q{e['question_id']}"
        found[("bird-dev", name)] = {
            "question": e["question"],
            "evidence": e.get("evidence", ""),
            "gold": e["gold_sql"],
        }
        if e.get("in_mini_dev"):
            found[("bird-mini", name)] = {
                "question": e.get("mini_dev_question") or e["question"],
                "evidence": e.get("mini_dev_evidence") or e.get("evidence", ""),
                "gold": e.get("mini_dev_gold_sql") or e["gold_sql"],
            }
    return found


def timed_run(project: Path, out: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    argv = [*SQLBENCH, "run", "-C", str(project), "--agent", "*", "--format", "json",
            "--output", str(out), *extra]  # fmt: skip
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Exit codes 1/2 mean failing questions, not a broken run.
    if proc.returncode not in (0, 1, 2) or not out.is_file():
        raise SystemExit(f"{' '.join(argv[:8])} ... exited {proc.returncode}:\n{proc.stderr}")
    return time.perf_counter() - start


def measure(
    part: str,
    root: Path,
    work: Path,
    variants: int,
    *,
    analyze_only: bool = False,
    questions: int | None = None,
    seed: int = 0,
) -> tuple[list[str], list[dict]]:
    times = work / f"{part}-times.json"
    if analyze_only:
        plain_s, varied_s = (
            json.loads(times.read_text(encoding="utf-8")) if times.is_file() else (0, 0)
        )
        return analyze(part, root, work, variants, plain_s, varied_s)
    if part == "spider":
        layout, systems = spider_layout(root, work)
        kind = "spider"
    elif part == "bird-mini":
        layout, systems = bird_layout(root, work)
        kind = "bird"
    else:
        layout, systems = bird_dev_layout(root, work)
        kind = "bird"
    project = work / f"{part}-project"
    pairs = [a for path, name, _ in systems for a in ("--predictions", str(path), "--agent", name)]
    subprocess.run(
        [*SQLBENCH, "init", str(project), "--from", kind, str(layout), *pairs],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    select: list[str] = []
    if questions is not None:
        names = sorted(
            str(q["name"])
            for f in sorted((project / "eval_questions").glob("*.yml"))
            for q in yaml.safe_load(f.read_text(encoding="utf-8"))["eval_questions"]
        )
        picked = random.Random(seed).sample(names, min(questions, len(names)))
        select = [a for name in sorted(picked) for a in ("--select", name)]
    plain_s = timed_run(project, work / f"{part}-plain.json", select)
    varied_s = timed_run(
        project, work / f"{part}-variants.json", [*select, "--variants", str(variants)]
    )
    times.write_text(json.dumps([plain_s, varied_s]), encoding="utf-8")
    return analyze(part, root, work, variants, plain_s, varied_s)


def analyze(
    part: str, root: Path, work: Path, variants: int, plain_s: float, varied_s: float
) -> tuple[list[str], list[dict]]:
    """The table of one corpus part from its two runs' JSON, and its new fails."""
    plain = json.loads((work / f"{part}-plain.json").read_text(encoding="utf-8"))["runs"]
    varied = json.loads((work / f"{part}-variants.json").read_text(encoding="utf-8"))["runs"]
    verdicts = official(root)
    texts = questions_of(root)
    lines = [
        f"## {part}: {len(plain)} systems, {sum(len(r['results']) for r in plain)} answers, "
        f"--variants {variants}",
        "",
        "| system | official EX | sqlbench EX | EX with variants | official passes failing on "
        "variants |",
        "|---|---|---|---|---|",
    ]
    new_fails: list[dict] = []
    by_agent = {r["run"]["agent"]["name"]: r for r in varied}
    for r in plain:
        agent = r["run"]["agent"]["name"]
        ours = {x["name"]: x for x in r["results"]}
        with_v = {x["name"]: x for x in by_agent[agent]["results"]}
        names = [n for n in ours if (part, agent, n) in verdicts]
        off = [n for n in names if verdicts[(part, agent, n)]]
        ex = [n for n in names if ours[n]["verdict"] == "pass"]
        ex_v = [n for n in names if with_v[n]["verdict"] == "pass"]
        lost = [n for n in off if ours[n]["verdict"] == "pass" and with_v[n]["verdict"] != "pass"]
        total = max(len(names), 1)
        lines.append(
            f"| {agent} | {100 * len(off) / total:.1f}% | {100 * len(ex) / total:.1f}% | "
            f"{100 * len(ex_v) / total:.1f}% | {len(lost)} of {len(off)} |"
        )
        for n in lost:
            x = with_v[n]
            new_fails.append(
                {
                    "corpus": part,
                    "system": agent,
                    "question": n,
                    **{f"{k}_text": v for k, v in texts.get((part, n), {}).items()},
                    "predicted": x.get("agent_sql"),
                    "verdict": x["verdict"],
                    "reason": x.get("reason"),
                    "expected_preview": x.get("expected_preview"),
                    "actual_preview": x.get("actual_preview"),
                }
            )
    if plain_s:
        lines += [
            "",
            f"time: without variants {plain_s:.1f} s, with --variants {variants} {varied_s:.1f} s "
            f"(cost {varied_s / plain_s:.2f}x)",
        ]
    return lines, new_fails


def judged() -> dict[tuple[str, str, str], dict[str, str]]:
    """The judged sample rows by (corpus, system, question); rows missing a rubric column
    count as not judged."""
    if not SAMPLE_FILE.is_file():
        return {}
    rubric = ("variant_fair", "differs_from_gold", "wrong_for_question")
    with open(SAMPLE_FILE, encoding="utf-8", newline="") as handle:
        return {
            (row["corpus"], row["system"], row["question"]): row
            for row in csv.DictReader(handle)
            if all(row.get(c) for c in rubric)
        }


def precision_lines(label: str, marks: list[dict[str, str]]) -> list[str]:
    """The two precisions of judged sample rows."""
    if not marks:
        return [f"{label}: nothing judged"]
    n = len(marks)
    fair = sum(m["variant_fair"] == "yes" for m in marks)
    truth = sum(m["variant_fair"] == "yes" and m["differs_from_gold"] == "yes" for m in marks)
    question = sum(
        m["variant_fair"] == "yes"
        and m["differs_from_gold"] == "yes"
        and m["wrong_for_question"] == "prediction"
        for m in marks
    )
    gold = sum(m["wrong_for_question"] == "gold" for m in marks)
    both = sum(m["wrong_for_question"] == "both" for m in marks)

    def share(k: int) -> str:
        return f"{k}/{n} = {100 * k / n:.0f}%"

    return [
        f"{label}: {n} judged; fair variant {fair}/{n}; precision against the ground truth "
        f"(fair and differs) {share(truth)}; against the question (and the prediction wrong) "
        f"{share(question)} (gold wrong {gold}, both readings defensible {both})"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--corpus", default="spider,bird-mini,bird-dev")
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--questions",
        default="",
        help="part=K,...: measure K questions of that part, picked at random (--seed), e.g. "
        "spider=400 (every system answers each); default: every question",
    )
    parser.add_argument(
        "--analyze-only", action="store_true", help="read the runs an earlier call left in --work"
    )
    args = parser.parse_args()
    if not (args.root / "spider").is_dir():
        print(f"skipped: no corpus at {args.root} (pass --root DIR)")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="sqlbench-variants-corpus-"))
    work.mkdir(parents=True, exist_ok=True)
    subsets = {k: int(v) for k, v in (x.split("=") for x in args.questions.split(",") if x)}
    lines: list[str] = []
    fails: list[dict] = []
    for part in args.corpus.split(","):
        name = part.strip()
        part_lines, part_fails = measure(
            name,
            args.root,
            work / name,
            args.variants,
            analyze_only=args.analyze_only,
            questions=subsets.get(name),
            seed=args.seed,
        )
        lines += [*part_lines, ""]
        fails += part_fails
        print("\n".join(part_lines) + "\n", flush=True)
    with open(work / "new_fails.jsonl", "w", encoding="utf-8") as handle:
        for fail in fails:
            handle.write(json.dumps(fail) + "\n")
    sample = random.Random(args.seed).sample(fails, min(args.sample, len(fails)))
    known = judged()
    todo = [f for f in sample if (f["corpus"], f["system"], f["question"]) not in known]
    with open(work / "sample_to_judge.jsonl", "w", encoding="utf-8") as handle:
        for fail in todo:
            handle.write(json.dumps(fail) + "\n")
    marks = [known[k] for f in sample if (k := (f["corpus"], f["system"], f["question"])) in known]
    print(f"new fails: {len(fails)} (written to {work / 'new_fails.jsonl'})")
    print(
        f"sample of {len(sample)} (seed {args.seed})"
        + (f"; {len(todo)} to judge in {work / 'sample_to_judge.jsonl'}" if todo else "")
    )
    for line in precision_lines("sample", marks):
        print(line)
    parts = sorted({m["corpus"] for m in marks})
    if len(parts) > 1:
        for part in parts:
            for line in precision_lines(
                f"  of which {part}", [m for m in marks if m["corpus"] == part]
            ):
                print(line)


if __name__ == "__main__":
    main()
