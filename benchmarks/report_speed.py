"""Size and first paint of the HTML report of a 2,000-question run; prints its figures.

Builds a realistic run in a temporary store (2,000 questions over 8 spaces, every verdict,
SQL of a few hundred characters, 20-row previews on both sides with differing rows marked, a
3-call trace and a metric on each question), writes its report with ``sqlbench.report.html``
as ``sqlbench report`` does, then opens it from ``file://`` in headless Chromium and reads
the page's own timings: first paint, first contentful paint, and ``sqlbench-ready`` (the
question list and the first question drawn). Targets (issue 14): the file under 10 MB, first
paint within 2 s. Best of ``--repeat`` page loads (the machine is shared).

Usage: ``python benchmarks/report_speed.py [--questions N] [--repeat K]`` (needs Playwright
and a Chromium binary: ``pip install -e '.[browser]'``, ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from sqlbench.records.run import (
    MetricResult,
    Preview,
    RunInfo,
    RunStatus,
    ToolCallRecord,
    TrialResult,
    utc_now,
)
from sqlbench.report import html
from sqlbench.runs.store import RunStore
from sqlbench.verdicts import Verdict

_VERDICTS = [Verdict.PASS] * 7 + [Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR]


def _preview(i: int, rows: int, offset: int) -> Preview:
    return Preview(
        columns=["region", "segment", "month", "revenue", "orders"],
        types=["string", "string", "date32[day]", "decimal128(18, 2)", "int64"],
        rows=[
            [
                f"region_{r % 7}",
                f"segment_{(i + r) % 5}",
                f"2024-{r % 12 + 1:02d}-01",
                f"{(i * 37 + r * 101 + offset) % 100000}.25",
                r * 3 + offset,
            ]
            for r in range(rows)
        ],
        row_numbers=list(range(rows)),
        differs=[offset != 0 and r % 4 == 0 for r in range(rows)],
        total_rows=rows * 40,
        differing_rows=rows * 10 if offset else 0,
    )


def _trial(i: int) -> TrialResult:
    verdict = _VERDICTS[i % len(_VERDICTS)]
    sql = (
        f"SELECT c.region, c.segment, date_trunc('month', o.order_date) AS month,\n"
        f"       SUM(oi.net_amount) AS revenue, COUNT(DISTINCT o.order_id) AS orders\n"
        f"FROM orders o JOIN customers c ON c.customer_id = o.customer_id\n"
        f"JOIN order_items oi ON oi.order_id = o.order_id\n"
        f"WHERE o.status = 'completed' AND o.order_date >= DATE '2024-01-01' -- q{i}\n"
        f"GROUP BY 1, 2, 3"
    )
    agent_sql = sql.replace("'completed'", "'shipped'") if verdict is Verdict.FAIL else sql
    return TrialResult(
        space=f"space_{i % 8}",
        name=f"question_{i:04d}",
        position=i,
        verdict=verdict,
        reason=f"{verdict.value}: 10 of 800 rows differ, e.g. expected ('region_1', {i})",
        question=f"What was the monthly revenue and order count per region and segment ({i})?",
        tags=[f"tag_{i % 13}", "revenue"],
        truth_sql=sql,
        agent_sql=None if verdict is Verdict.REVIEW else agent_sql,
        expected_preview=_preview(i, 20, 0),
        actual_preview=None
        if verdict is Verdict.ERROR
        else _preview(i, 20, int(verdict is Verdict.FAIL)),
        answer="The revenue grew by 12% in the quarter." if verdict is Verdict.REVIEW else None,
        tool_calls=[
            ToolCallRecord(
                name="list_tables", arguments={}, output="orders, customers, order_items"
            ),
            ToolCallRecord(name="describe", arguments={"table": "orders"}, output="order_id, ..."),
            ToolCallRecord(name="run_sql", arguments={"sql": agent_sql}, output="800 rows"),
        ],
        metrics={"tool_call_success": MetricResult(score=1.0, detail={"calls": 3, "failed": []})},
        latency_ms=800.0 + i % 900,
        input_tokens=1800 + i % 500,
        output_tokens=150 + i % 60,
    )


def build_run(store: RunStore, questions: int) -> str:
    now = utc_now()
    info = RunInfo(
        id=uuid.uuid4().hex,
        name="bench-2000",
        status=RunStatus.COMPLETED,
        created_at=now - timedelta(minutes=30),
        updated_at=now,
        finished_at=now,
        created_by="bench",
        branch="main",
        commit="a" * 40,
        environment="prod",
        question_set_hash="q" * 16,
        question_count=questions,
        agent_name="agent",
        agent_kind="http",
        agent_settings_hash="s" * 16,
        sqlbench_version="bench",
        compare_hash="c" * 16,
    )
    store.save_run(info, [_trial(i) for i in range(questions)])
    return info.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise SystemExit("no Chromium binary: apt-get install chromium")
    folder = Path(tempfile.mkdtemp(prefix="sqlbench-report-bench-"))
    try:
        with RunStore(f"sqlite:///{folder / 'runs.db'}") as store:
            run_id = build_run(store, args.questions)
            started = time.perf_counter()
            run = store.load_run(run_id)
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            page_text = html.render(run, history=store.list_runs())
            render_s = time.perf_counter() - started
        out = folder / "report.html"
        out.write_text(page_text, encoding="utf-8")
        size_mb = out.stat().st_size / 1_000_000
        timings = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=binary, args=["--no-sandbox"])
            for _ in range(args.repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                started = time.perf_counter()
                page.goto(out.as_uri(), wait_until="load")
                page.wait_for_selector("#detail h2")
                wall_s = time.perf_counter() - started
                paint = page.evaluate(
                    "() => Object.fromEntries(performance.getEntriesByType('paint')"
                    ".map(e => [e.name, e.startTime]))"
                )
                ready = page.evaluate(
                    "() => performance.getEntriesByName('sqlbench-ready')[0].startTime"
                )
                rows = page.locator("#list li").count()
                if errors or rows != args.questions:
                    raise SystemExit(f"page problems: {errors} rows={rows}")
                timings.append(
                    (paint["first-paint"], paint["first-contentful-paint"], ready, wall_s)
                )
                page.close()
            browser.close()
        first_paint, fcp, ready, wall = min(timings)
        print(f"HTML report of a {args.questions}-question run (best of {args.repeat} loads)")
        print(f"  load run from store        {load_s:8.3f} s")
        print(f"  render HTML                {render_s:8.3f} s")
        print(
            f"  file size                  {size_mb:8.2f} MB  (target < 10 MB: "
            f"{'met' if size_mb < 10 else 'MISSED'})"
        )
        print(
            f"  first paint                {first_paint / 1000:8.3f} s  (target <= 2 s: "
            f"{'met' if first_paint <= 2000 else 'MISSED'})"
        )
        print(f"  first contentful paint     {fcp / 1000:8.3f} s")
        print(f"  list + first question drawn{ready / 1000:8.3f} s")
        print(f"  goto -> detail shown (wall){wall:8.3f} s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
