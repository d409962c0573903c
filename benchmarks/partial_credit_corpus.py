"""Partial credit (docs/verdicts.md) and warehouse work (docs/cost.md) on ../shared/benchmarks.

``--bird``: for every BIRD system with published predictions, the mean of sqlbench's partial
credit F1 (``compare_results(..., rows="set")``, with ``columns`` superset and exact: BIRD's
evaluator fails extra columns) beside BIRD's Soft-F1 as its
definition states it (an implementation of that definition written here from the description
in docs/verdicts.md: rows deduplicated in order, paired by position, a value of a row counted
when the other row holds it anywhere, errors 0), both over the BIRD questions of this corpus,
and the published mini-dev Soft-F1 (all 500 questions) where one exists.

``--spider SYSTEM``: the agent-to-ground-truth work ratio over that Spider system's predictions
that both ran on DuckDB, and its distribution: the Spider databases copied into DuckDB files
(once, under ``--copies``), both SQL texts transpiled from SQLite and run (the prediction as
agent SQL), each one's rows scanned as DuckDB's profiler counted them (``ResultSet.work``).

Usage: ``python benchmarks/partial_credit_corpus.py --bird`` or ``--spider "DAIL-SQL + GPT-4"``.
Not part of the test suite: it takes minutes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verdict_agreement import DEFAULT_ROOT, Runner, records

from sqlbench.compare import compare_results

PUBLISHED_SOFT_F1 = {
    # bird-bench/mini_dev README, "Soft F1-Score Evaluation", SQLite column (500 questions).
    "mistralai-mixtral-8x7b-instru-4 (baseline prompt with knowledge evidence)": 22.95,
    "meta-llama-3-8b-instruct-2 (baseline prompt with knowledge evidence)": 27.87,
    "phi-3-medium-128k-instruct-1 (baseline prompt with knowledge evidence)": 35.33,
    "gpt-35-turbo-instruct (baseline prompt with knowledge evidence)": 36.34,
    "gpt-35-turbo (baseline prompt with knowledge evidence)": 41.84,
    "gpt-35-turbo (TA-SQL CoT prompt)": 44.25,
    "meta-llama-3-70b-instruct-2 (baseline prompt with knowledge evidence)": 44.38,
    "meta-llama-3-70b-instruct2 (TA-SQL CoT prompt)": 46.66,
    "gpt-4-turbo (baseline prompt with knowledge evidence)": 50.08,
    "gpt-4-32k (baseline prompt with knowledge evidence)": 51.92,
    "gpt-4 (baseline prompt with knowledge evidence)": 52.69,
    "gpt-4-turbo (TA-SQL CoT prompt)": 62.40,
    "gpt-4-o (TA-SQL CoT prompt)": 66.97,
}


def bird_soft_f1(predicted: Sequence[tuple[Any, ...]], gold: Sequence[tuple[Any, ...]]) -> float:
    """BIRD's Soft-F1 of one prediction, from its stated definition."""
    if not predicted and not gold:
        return 1.0
    pred = list(dict.fromkeys(predicted))
    truth = list(dict.fromkeys(gold))
    tp = fp = fn = 0.0
    for i, gold_row in enumerate(truth):
        width = len(gold_row)
        if i >= len(pred):
            fn += 1
            continue
        row = pred[i]
        tp += sum(1 for v in row if v in gold_row) / width
        fp += sum(1 for v in row if v not in gold_row) / width
        fn += sum(1 for v in gold_row if v not in row) / width
    fp += max(0, len(pred) - len(truth))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def bird(root: Path) -> None:
    runner = Runner(root, 30.0)
    ours: dict[str, list[float]] = defaultdict(list)
    exact: dict[str, list[float]] = defaultdict(list)
    theirs: dict[str, list[float]] = defaultdict(list)
    ex: dict[str, list[bool]] = defaultdict(list)
    for record in records(root, "bird", None):
        model = record["model"]
        gold = runner.run("bird", record["db_id"], record["gold_sql"])
        pred = runner.run("bird", record["db_id"], record["predicted_sql"])
        ex[model].append(bool(record["official_verdict"]))
        if gold.frame is None:
            continue
        if pred.frame is None:
            ours[model].append(0.0)
            exact[model].append(0.0)
            theirs[model].append(0.0)
            continue
        for columns, scores in (("superset", ours), ("exact", exact)):
            comparison = compare_results(gold.frame, pred.frame, rows="set", columns=columns)
            credit = comparison.details.partial_credit
            scores[model].append(credit.f1 if credit is not None else 0.0)
        rows_p = [tuple(r) for r in pred.frame.itertuples(index=False, name=None)]
        rows_g = [tuple(r) for r in gold.frame.itertuples(index=False, name=None)]
        theirs[model].append(bird_soft_f1(rows_p, rows_g))
    print(
        "| system | split | questions | EX (official) | Soft-F1, BIRD's definition | "
        "sqlbench F1, columns: superset | sqlbench F1, columns: exact | "
        "published Soft-F1 (500 mini-dev questions) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for model in sorted(ours, key=lambda m: statistics.fmean(ours[m])):
        split = "mini_dev" if model in PUBLISHED_SOFT_F1 or "prompt" in model else "dev"
        published = PUBLISHED_SOFT_F1.get(model)
        print(
            f"| {model} | {split} | {len(ours[model])} | {100 * statistics.fmean(ex[model]):.1f} | "
            f"{100 * statistics.fmean(theirs[model]):.1f} | "
            f"{100 * statistics.fmean(ours[model]):.1f} | "
            f"{100 * statistics.fmean(exact[model]):.1f} | "
            f"{'none published' if published is None else f'{published:.2f}'} |"
        )


def duckdb_copy(sqlite_path: Path, folder: Path) -> Path:
    """The SQLite database's tables copied into a DuckDB file of ``folder`` (made once)."""
    import sqlite3

    import duckdb
    import pandas as pd

    target = folder / f"{sqlite_path.stem}.duckdb"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    source.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
    names = [r[0] for r in source.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    con = duckdb.connect(str(target))
    for name in names:
        frame = pd.read_sql(f'SELECT * FROM "{name}"', source)
        for column in frame.columns:
            if frame[column].dtype == object:
                frame[column] = frame[column].map(lambda v: None if v is None else str(v))
        con.register("frame", frame)
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM frame')
        con.unregister("frame")
    con.close()
    source.close()
    return target


def spider(root: Path, system: str, folder: Path) -> None:
    from sqlbench.engines.open import open_engine
    from sqlbench.errors import QueryError
    from sqlbench.project.files import Settings
    from sqlbench.truth import transpile_truth

    engines: dict[str, Any] = {}
    ratios: list[float] = []
    unknown = 0
    unit = ""
    for record in records(root, "spider", None):
        if record["model"] != system:
            continue
        db = record["db_id"]
        if db not in engines:
            path = duckdb_copy(root / "spider" / "databases" / db / f"{db}.sqlite", folder)
            engines[db] = open_engine(Settings(warehouse=str(path)), root)
        engine = engines[db]
        try:
            truth_sql = transpile_truth(record["gold_sql"], "sqlite", "duckdb")
            agent_sql = transpile_truth(record["predicted_sql"], "sqlite", "duckdb")
        except QueryError:
            unknown += 1
            continue
        try:
            truth_run = engine.run_truth(truth_sql, timeout_s=30, max_rows=100_000)
            agent_run = engine.run_agent(agent_sql, timeout_s=30, max_rows=100_000)
        except QueryError:
            unknown += 1
            continue
        truth = engine.work_of(truth_sql, truth_run)
        agent = engine.work_of(agent_sql, agent_run)
        if truth is None or agent is None or truth.amount <= 0:
            unknown += 1
            continue
        unit = truth.unit
        ratios.append(agent.amount / truth.amount)
    for engine in engines.values():
        engine.close()
    ordered = sorted(ratios)
    print(
        f"{system} ({unit}, DuckDB's profiler): {len(ratios)} predictions with a ratio, "
        f"{unknown} without"
    )
    print(
        f"median {statistics.median(ordered):.2f}x, mean {statistics.fmean(ordered):.2f}x, "
        f"p90 {ordered[int(0.9 * (len(ordered) - 1))]:.2f}x, max {ordered[-1]:.2f}x"
    )
    buckets = (
        ("below 1x", lambda r: r < 1),
        ("exactly 1x", lambda r: r == 1),
        ("over 1x, up to 2x", lambda r: 1 < r <= 2),
        ("over 2x, up to 10x", lambda r: 2 < r <= 10),
        ("over 10x", lambda r: r > 10),
    )
    for label, test in buckets:
        n = sum(1 for r in ordered if test(r))
        print(f"  {label}: {n} ({100 * n / len(ordered):.1f}%)")
    print("  largest:", [round(r, 1) for r in ordered[-5:]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--bird", action="store_true")
    parser.add_argument("--spider", metavar="SYSTEM")
    parser.add_argument(
        "--copies",
        type=Path,
        default=Path("/tmp/sqlbench-spider-duckdb"),
        help="where the Spider databases are copied into DuckDB files",
    )
    args = parser.parse_args()
    if args.bird:
        bird(args.root)
    if args.spider:
        spider(args.root, args.spider, args.copies)


if __name__ == "__main__":
    main()
