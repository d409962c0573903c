"""Peak RSS of the sqlbench process running the hostile corpus at concurrency 8 (issue 17).

For each engine (embedded DuckDB over a DuckDB file and in memory, a SQLite file, PostgreSQL
and MariaDB as the least-privilege reader when SQLBENCH_TEST_*_READER_URL (else the admin URL)
are set) it writes a project whose replay agent answers with the red-team corpus
(tests/hostile/corpus.py) plus two good answers, runs ``sqlbench run --concurrency 8`` at the
default limits (max_result_mb 128, max_sql_kb 64), and prints the peak resident memory, the wall
time and each hostile question's verdict. The peak is that of the sqlbench process and every
process it starts (on DuckDB, PostgreSQL and MariaDB, the query process agent SQL runs in and
the process that forks it) together: the sqlbench process's own peak from the kernel when it
ends (what ``/usr/bin/time -v`` reports) plus the largest sum of the others' resident memory
sampled every 20 ms; each process's own peak (``VmHWM``) is printed too. ``--full`` adds the
issue's full-size reproductions: on DuckDB a 2 GB single value and a 2,000,000-item IN list; on
PostgreSQL a 1 GB single value (its largest); on SQLite a 1 GB single value (its default
largest); on MariaDB 64 values of 16 MB (each within its ``max_allowed_packet``).
``--at-limit`` runs, instead, two questions whose ground truth and answer both come just under
``max_result_mb`` (1 MB strings; 2,800,000 narrow rows), so the comparison of a pair at the byte
limit is measured with everything else.

Usage: python benchmarks/hostile_rss.py [--full | --at-limit] [--engines duckdb,sqlite,...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))
from corpus import ENGINES, GOOD, Attack, attacks, file_warehouse, run_measured, write_project

from sqlbench.project.files import RunSettings

CEILING_MB = 2048
"""docs/project-files.md: with the default limits the process stays under 2 GB peak RSS."""

BIG_ROWS = {  # 3,000 rows of 1 MB: 3 GB if nothing stopped it (max_result_mb 256 does)
    "duckdb": "SELECT repeat('x', 1000000) AS v FROM range(3000)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000) "
    "SELECT printf('%.*c', 1000000, 'x') AS v FROM r",
    "postgres": "SELECT repeat('x', 1000000) AS v FROM generate_series(1, 3000)",
    "mariadb": "SELECT repeat('x', 1000000) AS v FROM seq_1_to_3000",
}
"""At the default limits, the byte limit's attack at full size on every engine (on DuckDB this
is also the issue's Arrow string-size reproduction)."""

FULL = [
    Attack("issue_one_2gb_value", "SELECT repeat('x', 2000000000) AS v", ""),
    Attack(
        "issue_in_list_2m",
        "SELECT 1 AS x WHERE 1 IN (" + ",".join(map(str, range(2_000_000))) + ")",
        "",
    ),
]

FULL_SINGLE = {
    "postgres": Attack("issue_one_1gb_value", "SELECT repeat('x', 1000000000) AS v", ""),
    "sqlite": Attack("issue_one_1gb_value", "SELECT hex(zeroblob(500000000)) AS v", ""),
    "mariadb": Attack(
        "issue_64_values_of_16mb", "SELECT repeat('x', 16000000) AS v FROM seq_1_to_64", ""
    ),
}
"""``--full`` on the other engines: the largest single value each returns by default (on
MariaDB, a first chunk of rows each within ``max_allowed_packet``)."""

_DEFAULT_MB = int(RunSettings().max_result_mb)
_WIDE = _DEFAULT_MB * 250 // 256  # distinct 1 MB strings
_NARROW = _DEFAULT_MB * 2_800_000 // 256  # rows of (int, float, 64-character text)
AT_LIMIT = {  # (ground truth, agent): each result just under the default max_result_mb
    "wide_at_limit": (  # the agent's rows in reverse
        f"SELECT lpad(range::VARCHAR, 7, '0') || repeat('x', 999993) AS v FROM range({_WIDE})",
        f"SELECT lpad(range::VARCHAR, 7, '0') || repeat('x', 999993) AS w "
        f"FROM range({_WIDE - 1}, -1, -1)",
    ),
    "narrow_at_limit": (
        f"SELECT range AS i, range * 0.5 AS f, lpad(range::VARCHAR, 64, '0') AS s "
        f"FROM range({_NARROW})",
        f"SELECT lpad(range::VARCHAR, 64, '0') AS c, range * 0.5 AS b, range AS a "
        f"FROM range({_NARROW - 1}, -1, -1)",
    ),
}
"""``--at-limit``: a question whose ground truth and answer both come just under the default
``max_result_mb``, so both are fetched and compared (``max_rows`` raised to 5,000,000 for the
narrow rows)."""


def _measured_run(root: Path, concurrency: int, questions: int) -> dict[str, object]:
    """``sqlbench run --agent hostile`` on the project in ``root``, measured: exit code, peak
    RSS (sqlbench and its processes), wall time and each question's verdict."""
    started = time.monotonic()
    args = ["run", "-C", str(root), "--agent", "hostile", "--format", "json"]
    done = run_measured([*args, "--concurrency", str(concurrency)], root)
    wall = time.monotonic() - started
    verdicts: dict[str, str] = {}
    if done.stdout.strip().startswith("{"):
        for result in json.loads(done.stdout)["results"]:
            verdicts[result["name"]] = f"{result['verdict']}: {result['reason'][:90]}"
    return {
        "exit": done.returncode,
        "peak_mb": done.peak_mb,
        "processes": done.processes,
        "wall_s": wall,
        "verdicts": verdicts,
        "questions": questions,
    }


def measure_at_limit(concurrency: int) -> dict[str, object]:
    """Run the two at-the-limit questions (and the good ones) on DuckDB in memory."""
    with tempfile.TemporaryDirectory(prefix="sqlbench-rss-") as folder:
        root = Path(folder)
        write_project(root, "duckdb", None, low_limits=False)
        settings = (root / "sqlbench.yml").read_text()
        (root / "sqlbench.yml").write_text(settings + "  max_rows: 5000000\n")
        questions = [{"name": n, "question": n, "sql": s} for n, s in GOOD.items()] + [
            {"name": n, "question": n, "sql": truth} for n, (truth, _) in AT_LIMIT.items()
        ]
        (root / "eval_questions" / "q.yml").write_text(json.dumps({"eval_questions": questions}))
        answers = [{"name": n, "sql": s} for n, s in GOOD.items()] + [
            {"name": n, "sql": agent} for n, (_, agent) in AT_LIMIT.items()
        ]
        (root / "agents" / "answers.jsonl").write_text(
            "".join(json.dumps(a) + "\n" for a in answers)
        )
        return _measured_run(root, concurrency, len(questions))


ENGINE_NAMES = ("duckdb", "duckdb_memory", *ENGINES[1:])
"""``duckdb``: over a DuckDB file; ``duckdb_memory``: no warehouse, DuckDB in memory."""


def _warehouse(engine: str, root: Path) -> str | None:
    if engine in ("duckdb", "sqlite"):
        return file_warehouse(root, engine).name
    variable = {"postgres": "SQLBENCH_TEST_POSTGRES", "mariadb": "SQLBENCH_TEST_MARIADB"}
    base = variable[engine]
    return os.environ.get(base + "_READER_URL") or os.environ.get(base + "_URL")


def measure(engine: str, extra: list[Attack]) -> dict[str, object] | None:
    """Run the corpus on ``engine``; None when its server is not configured."""
    with tempfile.TemporaryDirectory(prefix="sqlbench-rss-") as folder:
        root = Path(folder)
        kind = "duckdb" if engine == "duckdb_memory" else engine
        warehouse = None if engine == "duckdb_memory" else _warehouse(engine, root)
        if warehouse is None and engine != "duckdb_memory":
            return None
        corpus = attacks(kind) + extra
        write_project(root, kind, warehouse, low_limits=False)
        if extra:  # the agent's answers and questions: corpus + extra
            questions = [{"name": n, "question": n, "sql": s} for n, s in GOOD.items()] + [
                {"name": a.name, "question": a.name, "sql": "SELECT 1 AS x"} for a in corpus
            ]
            (root / "eval_questions" / "q.yml").write_text(
                json.dumps({"eval_questions": questions})
            )
            answers = [{"name": n, "sql": s} for n, s in GOOD.items()] + [
                {"name": a.name, "sql": a.sql} for a in corpus
            ]
            (root / "agents" / "answers.jsonl").write_text(
                "".join(json.dumps(a) + "\n" for a in answers)
            )
        return _measured_run(root, 8, len(corpus) + len(GOOD))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add the issue's full-size cases")
    parser.add_argument("--engines", default=",".join(ENGINE_NAMES))
    parser.add_argument(
        "--at-limit",
        action="store_true",
        help="only the questions whose two results are both just under max_result_mb",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="with --at-limit")
    args = parser.parse_args()
    rows = []
    if args.at_limit:
        rows.append(
            (
                f"duckdb_memory (results at the limit, concurrency {args.concurrency})",
                measure_at_limit(args.concurrency),
            )
        )
    for engine in [] if args.at_limit else args.engines.split(","):
        kind = "duckdb" if engine == "duckdb_memory" else engine
        extra = [Attack("big_rows", BIG_ROWS[kind], "")]
        if args.full and kind == "duckdb":
            extra += FULL
        if args.full and kind in FULL_SINGLE:
            extra.append(FULL_SINGLE[kind])
        found = measure(engine, extra)
        if found is None:
            print(f"{engine}: skipped (server URL not set)")
            continue
        rows.append((engine, found))
        print(f"\n{engine}: exit {found['exit']}, {found['questions']} questions")
        peaks = dict(found["processes"])  # type: ignore[call-overload]
        print("  peak RSS by process: " + ", ".join(f"{p} {mb:,.0f} MB" for p, mb in peaks.items()))
        for name, verdict in dict(found["verdicts"]).items():  # type: ignore[call-overload]
            print(f"  {name:22} {verdict}")
    for engine, found in rows[:1] if args.at_limit else []:
        print(f"\n{engine}: exit {found['exit']}, {found['questions']} questions")
        peaks = dict(found["processes"])  # type: ignore[call-overload]
        print("  peak RSS by process: " + ", ".join(f"{p} {mb:,.0f} MB" for p, mb in peaks.items()))
        for name, verdict in dict(found["verdicts"]).items():  # type: ignore[call-overload]
            print(f"  {name:22} {verdict}")
    print(
        "\nPeak RSS of the sqlbench process, hostile corpus, concurrency 8 "
        f"(ceiling {CEILING_MB} MB)"
    )
    print(f"| engine | questions | peak RSS (MB) | wall (s) | under {CEILING_MB} MB |")
    print("|---|---|---|---|---|")
    for engine, found in rows:
        peak = float(found["peak_mb"])  # type: ignore[arg-type]
        wall = float(found["wall_s"])  # type: ignore[arg-type]
        ok = "yes" if peak < CEILING_MB else "NO"
        print(f"| {engine} | {found['questions']} | {peak:,.0f} | {wall:.1f} | {ok} |")


if __name__ == "__main__":
    main()
