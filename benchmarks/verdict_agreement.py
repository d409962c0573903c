"""Agreement of ``compare_results`` with the official evaluators' verdicts.

Runs the gold SQL and every published prediction of ``../shared/benchmarks`` (Spider dev and
BIRD dev / mini-dev, SQLite databases) through Python's sqlite3 with an interrupting progress
handler, compares the two results with ``sqlbench.compare_results`` and reports how often its
verdict agrees with the official one, and why it disagrees where it does. Every disagreement is
put in a category; ``--json FILE`` writes them all for inspection.

Comparison settings, chosen to match what each benchmark means:
- Spider (test-suite evaluator, ``official_verdict_keep_distinct``): ``order="auto"`` with the
  gold SQL (strict exactly when the gold's outermost query has ORDER BY), rows as a bag.
- BIRD (``set(pred) == set(gold)``): ``rows="set"``, order ignored.
The same two with ``columns="exact"`` (both officials fail extra columns), and the default
profile (order ignore, rows bag, columns superset), are reported too.

Usage: ``python benchmarks/verdict_agreement.py [--root DIR] [--limit N] [--json FILE]``.
Not part of the test suite: it takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sqlbench.compare import Comparison, Finding, NearMissKind, compare_results
from sqlbench.verdicts import Verdict

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
TIMEOUT_S = 60.0
MAX_ROWS = 100_000


@dataclass(frozen=True)
class Outcome:
    """One query's result (object columns, as DB-API rows give them) or why it failed."""

    frame: pd.DataFrame | None
    error: str | None = None


class Runner:
    """Read-only sqlite3 connections with a wall-clock interrupt, results cached by SQL."""

    def __init__(self, root: Path, timeout_s: float) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self._connections: dict[tuple[str, str], sqlite3.Connection] = {}
        self._cache: dict[tuple[str, str, str], Outcome] = {}
        self.seconds = 0.0

    def run(self, corpus: str, db_id: str, sql: str) -> Outcome:
        key = (corpus, db_id, sql)
        if key not in self._cache:
            start = time.perf_counter()
            self._cache[key] = self._execute(self._connection(corpus, db_id), sql)
            self.seconds += time.perf_counter() - start
        return self._cache[key]

    def _connection(self, corpus: str, db_id: str) -> sqlite3.Connection:
        key = (corpus, db_id)
        if key not in self._connections:
            path = self.root / corpus / "databases" / db_id / f"{db_id}.sqlite"
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            conn.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
            self._connections[key] = conn
        return self._connections[key]

    def _execute(self, conn: sqlite3.Connection, sql: str) -> Outcome:
        deadline = time.monotonic() + self.timeout_s
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        try:
            cursor = conn.execute(sql)
            rows = cursor.fetchmany(MAX_ROWS + 1)
            names = [d[0] for d in cursor.description or []]
        except sqlite3.Error as err:  # syntax, runtime, several statements, interrupted
            kind = "timeout" if "interrupted" in str(err) else type(err).__name__
            return Outcome(None, f"{kind}: {err}")
        finally:
            conn.set_progress_handler(None, 0)
        if len(rows) > MAX_ROWS:
            return Outcome(None, f"more than {MAX_ROWS} rows")
        columns = [pd.Series([row[k] for row in rows], dtype=object) for k in range(len(names))]
        frame = (
            pd.concat(columns, axis=1, ignore_index=True)
            if rows and columns
            else pd.DataFrame({k: c for k, c in enumerate(columns)})
        )
        frame.columns = names
        return Outcome(frame)


@dataclass
class Tally:
    """Counts for one corpus and profile."""

    pairs: int = 0
    agree: int = 0
    ours: Counter[str] = field(default_factory=Counter)
    official: Counter[bool] = field(default_factory=Counter)
    cells: Counter[tuple[bool, str]] = field(default_factory=Counter)
    categories: Counter[str] = field(default_factory=Counter)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)


def records(root: Path, corpus: str, limit: int | None) -> Iterator[dict[str, Any]]:
    with open(root / corpus / "predictions.jsonl", encoding="utf-8") as handle:
        for count, line in enumerate(handle):
            if limit is not None and count >= limit:
                return
            yield json.loads(line)


def options_for(corpus: str, gold_sql: str, profile: str) -> dict[str, Any]:
    if profile == "default":
        return {}
    options: dict[str, Any] = (
        {"order": "auto", "expected_sql": gold_sql, "dialect": "sqlite"}
        if corpus == "spider"
        else {"rows": "set"}
    )
    if profile == "exact":
        options["columns"] = "exact"
    return options


def official_verdict(corpus: str, record: dict[str, Any]) -> bool:
    key = "official_verdict_keep_distinct" if corpus == "spider" else "official_verdict"
    return bool(record[key])


def categorize(
    corpus: str,
    record: dict[str, Any],
    gold: Outcome,
    pred: Outcome,
    result: Comparison | None,
    official: bool,
    options: dict[str, Any],
) -> str:
    """Why our verdict differs from the official one (first explanation that applies)."""
    if result is None:
        return "prediction does not run here" if official else "other"
    d = result.details
    if official:  # official pass, ours not
        if d.problem is Finding.EXTRA_COLUMNS:
            if d.expected_rows == 0 and d.actual_rows == 0:
                return "both empty, agent has extra columns: official passes any two empty results"
            return "extra columns under columns: exact, official passes: inspect"
        if d.problem is Finding.NAME_SWAP:
            return "same-named columns swapped: review (sqlbench), official passes"
        if d.near_miss(NearMissKind.DUPLICATES) is not None:
            return "duplicates differ: official ignores them"
        if d.problem is Finding.ORDER_UNDECIDABLE:
            return "order undecidable (ORDER BY key not in output): review"
        if d.problem is Finding.ORDER:
            return "order: official compares unordered (no ORDER BY substring in gold)"
        if d.expected_rows == 0 and d.actual_rows == 0:
            return "both empty, agent has fewer columns: official passes any two empty results"
        return "other: inspect"
    assert gold.frame is not None and pred.frame is not None
    k_e, k_a = gold.frame.shape[1], pred.frame.shape[1]
    if k_a > k_e:
        return "agent returns extra columns: sqlbench ignores them, official fails"
    if corpus == "bird" and d.column_mapping != {i: i for i in range(k_e)}:
        return "columns in another order: BIRD compares by position"
    if corpus == "spider" and "order by" in str(record["gold_sql"]).lower():
        strict = compare_results(gold.frame, pred.frame, order="strict")
        if not strict.passed:
            if "order" not in options:
                return "rows in another order: this profile ignores order, official is strict"
            if d.order == "strict":
                return "rows tied on the ORDER BY keys in another order"
            return "ORDER BY only in a subquery/window: official treats the text as ordered"
    exact = compare_results(
        gold.frame, pred.frame, abs_tol=0.0, rel_tol=0.0, **{k: v for k, v in options.items()}
    )
    if not exact.passed:
        return "numbers equal within tolerance (float noise), official compares exactly"
    if "text" in d.expected_kinds or "text" in d.actual_kinds or "mixed" in d.expected_kinds:
        return "value types: equal by value across types (numeric text, int vs str)"
    return "other: inspect"


def evaluate(root: Path, corpus: str, limit: int | None, runner: Runner) -> dict[str, Tally]:
    tallies = {"matched": Tally(), "exact": Tally(), "default": Tally()}
    compare_s = 0.0
    for record in records(root, corpus, limit):
        gold = runner.run(corpus, record["db_id"], record["gold_sql"])
        if gold.frame is None:
            print(f"warning: gold failed for {record['id']}: {gold.error}", file=sys.stderr)
            continue
        pred = runner.run(corpus, record["db_id"], record["predicted_sql"])
        official = official_verdict(corpus, record)
        for profile, tally in tallies.items():
            options = options_for(corpus, record["gold_sql"], profile)
            result = None
            if pred.frame is not None:
                start = time.perf_counter()
                result = compare_results(gold.frame, pred.frame, **options)
                compare_s += time.perf_counter() - start
            ours = Verdict.FAIL if result is None else result.verdict
            tally.pairs += 1
            tally.ours[ours.value] += 1
            tally.official[official] += 1
            tally.cells[(official, ours.value)] += 1
            if (ours is Verdict.PASS) == official:
                tally.agree += 1
                continue
            category = categorize(corpus, record, gold, pred, result, official, options)
            tally.categories[category] += 1
            entry = {
                "id": record["id"],
                "category": category,
                "official": official,
                "ours": ours.value,
                "gold_sql": record["gold_sql"],
                "predicted_sql": record["predicted_sql"],
                "reason": pred.error if result is None else result.reason,
            }
            tally.disagreements.append(entry)
            tally.examples.setdefault(category, entry)
    print(f"{corpus}: compare_results total {compare_s:.1f} s", file=sys.stderr)
    return tallies


def report(results: dict[str, dict[str, Tally]], runner: Runner, seconds: float) -> str:
    lines = [
        "| corpus | profile | pairs | agree | agreement | official pass -> ours fail "
        "| official pass -> ours review | official fail -> ours pass |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for corpus, tallies in results.items():
        for profile, t in tallies.items():
            name = _profile_name(corpus, profile)
            lines.append(
                f"| {corpus} | {name} | {t.pairs} | {t.agree} | "
                f"{100 * t.agree / max(t.pairs, 1):.2f}% | {t.cells[(True, 'fail')]} | "
                f"{t.cells[(True, 'review')]} | {t.cells[(False, 'pass')]} |"
            )
    lines.append("")
    for corpus, tallies in results.items():
        for profile, t in tallies.items():
            lines.append(f"Disagreements, {corpus}, {_profile_name(corpus, profile)}:")
            lines.append("")
            lines.append("| category | count | example |")
            lines.append("|---|---|---|")
            for category, count in t.categories.most_common():
                ex = t.examples[category]
                lines.append(f"| {category} | {count} | `{ex['id']}` |")
            lines.append("")
    lines.append(f"SQL execution {runner.seconds:.0f} s; total {seconds:.0f} s.")
    return "\n".join(lines)


def _profile_name(corpus: str, profile: str) -> str:
    if profile == "default":
        return "defaults (order ignore, rows bag)"
    name = "order auto (gold SQL), rows bag" if corpus == "spider" else "rows set, order ignore"
    return name + (", columns exact" if profile == "exact" else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--limit", type=int, default=None, help="records per corpus")
    parser.add_argument("--json", type=Path, default=None, help="write every disagreement")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per query")
    args = parser.parse_args()
    start = time.perf_counter()
    runner = Runner(args.root, args.timeout)
    results = {
        corpus: evaluate(args.root, corpus, args.limit, runner) for corpus in ("spider", "bird")
    }
    print(report(results, runner, time.perf_counter() - start))
    if args.json is not None:
        dump = {
            corpus: {profile: t.disagreements for profile, t in tallies.items()}
            for corpus, tallies in results.items()
        }
        args.json.write_text(json.dumps(dump, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
