"""Peak RSS of the sqlbench process running the hostile corpus at concurrency 8 (issue 17).

For each engine (embedded DuckDB over a DuckDB file, a SQLite file, PostgreSQL and MariaDB when
SQLBENCH_TEST_POSTGRES_URL / SQLBENCH_TEST_MARIADB_URL are set) it writes a project whose replay
agent answers with the red-team corpus (tests/hostile/corpus.py) plus two good answers, runs
``sqlbench run`` at the default limits (max_result_mb 256, max_sql_kb 64) under
``/usr/bin/time -v``, and prints the peak resident set size, the wall time and each hostile
question's verdict. ``--full`` adds the issue's full-size reproductions (a 1 MB x 3,000-row
string result, a 2 GB single value, a 2,000,000-item IN list) on DuckDB.

Usage: python benchmarks/hostile_rss.py [--full] [--engines duckdb,sqlite,...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))
from corpus import ENGINES, GOOD, Attack, attacks, file_warehouse, write_project

CEILING_MB = 2048
"""SPEC section 1: with the default limits the process stays under 2 GB peak RSS."""

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


def _warehouse(engine: str, root: Path) -> str | None:
    if engine in ("duckdb", "sqlite"):
        return file_warehouse(root, engine).name
    variable = {"postgres": "SQLBENCH_TEST_POSTGRES_URL", "mariadb": "SQLBENCH_TEST_MARIADB_URL"}
    return os.environ.get(variable[engine])


def measure(engine: str, extra: list[Attack]) -> dict[str, object] | None:
    """Run the corpus on ``engine``; None when its server is not configured."""
    with tempfile.TemporaryDirectory(prefix="sqlbench-rss-") as folder:
        root = Path(folder)
        warehouse = _warehouse(engine, root)
        if warehouse is None:
            return None
        corpus = attacks(engine) + extra
        write_project(root, engine, warehouse, low_limits=False)
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
        started = time.monotonic()
        done = subprocess.run(
            [
                "/usr/bin/time",
                "-v",
                sys.executable,
                "-m",
                "sqlbench",
                "run",
                "-C",
                str(root),
                "--agent",
                "hostile",
                "--concurrency",
                "8",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        wall = time.monotonic() - started
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        verdicts: dict[str, str] = {}
        if done.stdout.strip().startswith("{"):
            for result in json.loads(done.stdout)["results"]:
                verdicts[result["name"]] = f"{result['verdict']}: {result['reason'][:90]}"
        return {
            "exit": done.returncode,
            "peak_mb": int(peak.group(1)) / 1024 if peak else float("nan"),
            "wall_s": wall,
            "verdicts": verdicts,
            "questions": len(corpus) + len(GOOD),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add the issue's full-size cases")
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    rows = []
    for engine in args.engines.split(","):
        extra = [Attack("big_rows", BIG_ROWS[engine], "")]
        if args.full and engine == "duckdb":
            extra += FULL
        found = measure(engine, extra)
        if found is None:
            print(f"{engine}: skipped (server URL not set)")
            continue
        rows.append((engine, found))
        print(f"\n{engine}: exit {found['exit']}, {found['questions']} questions")
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
