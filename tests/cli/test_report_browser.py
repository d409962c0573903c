"""The report pages in real Chromium: filters, keyboard, SQL diff and marked rows, the
comparison, escaping of agent markup, no network, no console errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hostile_project import IMG, SCRIPT, hostile_project

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = os.environ.get("SQLBENCH_SCREENSHOTS")
"""A folder to save the pages' screenshots in (for people to look at), when set."""
DEMO_PARTS = ("sqlbench.yml", "agents", "certified_queries", "data", "eval_questions", "models")


def _demo_copy(target: Path) -> Path:
    target.mkdir()
    for part in DEMO_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    return target


def _local_only(requests: list[str], prefix: str) -> list[str]:
    return [url for url in requests if not url.startswith(prefix)]


def test_demo_report_filters_to_fail_and_shows_a_failing_question(
    invoke, open_page: Any, tmp_path: Path
) -> None:
    demo = _demo_copy(tmp_path / "demo")
    invoke("run", "-C", str(demo), "--agent", "recorded", "--name", "demo")
    out = tmp_path / "report.html"
    invoke("report", "-C", str(demo), "demo", "-o", str(out))
    watched = open_page(out.as_uri())
    page = watched.page
    assert page.inner_text("#accuracy") == "Accuracy: 75% (30/40)"
    assert page.inner_text("#count") == "41 of 41 questions"

    page.select_option("#f-verdict", "fail")
    assert page.inner_text("#count") == "6 of 41 questions"
    page.click("#list li[data-id='sales/avg_order_value_by_segment_2024']")
    assert page.inner_text("#detail h2") == "sales/avg_order_value_by_segment_2024"
    assert "has no partner" in page.inner_text("#reason")
    # The diff shows what the agent added (ROUND) and removed (the date range).
    assert "ROUND" in " ".join(page.locator("#sql-diff ins").all_inner_texts())
    assert "2024-01-01" in " ".join(page.locator("#sql-diff del").all_inner_texts())
    # Both results side by side; every row differs (rounded averages), and is marked.
    assert page.locator("table.preview tr.differs").count() == 3

    # Keyboard: j moves down the filtered list, k back up; / focuses the search.
    page.keyboard.press("Escape")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("j")
    assert page.inner_text("#detail h2") == "sales/revenue_by_category_2024"
    page.keyboard.press("ArrowDown")
    assert page.inner_text("#detail h2") == "sales/addon_orders_by_region_2024"
    page.keyboard.press("k")
    assert page.inner_text("#detail h2") == "sales/revenue_by_category_2024"
    page.keyboard.press("/")
    page.keyboard.type("revenue_by_category")
    assert page.inner_text("#count") == "1 of 41 questions"

    assert _local_only(watched.requests, "file://") == []
    assert watched.problems() == []


def test_a_conversation_shows_as_a_thread(invoke, open_page: Any, tmp_path: Path) -> None:
    """The demo's conversation that fails on turn 2: each turn's question, both SQL texts,
    both results side by side and its verdict, in order (docs/conversations.md)."""
    demo = _demo_copy(tmp_path / "demo")
    invoke("run", "-C", str(demo), "--agent", "recorded", "--name", "demo")
    out = tmp_path / "report.html"
    invoke("report", "-C", str(demo), "demo", "-o", str(out))
    watched = open_page(out.as_uri() + "#q=sales%2Fchannel_orders_followup_2024")
    page = watched.page
    page.wait_for_selector("#thread")
    assert page.inner_text("#detail h2") == "sales/channel_orders_followup_2024"
    assert page.inner_text("#reason").startswith("turn 2 of 2 fail: 4 of 4 rows differ")
    assert page.inner_text("#turn-accuracy") == "Per-turn accuracy: 77% (33/43)"
    assert "reliability 0.63 (decline_penalty 1)" in page.inner_text("#abstention")
    turns = page.locator("#thread .turn")
    assert turns.count() == 2
    first, second = page.locator("#turn-1"), page.locator("#turn-2")
    assert "Turn 1: How many orders came in through each sales channel in 2024?" in (
        first.inner_text()
    )
    assert "pass" in first.locator(".v").inner_text()
    assert "Turn 2: Only the completed ones, please." in second.inner_text()
    assert "fail" in second.locator(".v").inner_text()
    # Both SQL texts of turn 2: the agent's lost turn 1's 2024.
    sqls = second.locator(".sqls pre").all_inner_texts()
    assert "DATE '2024-01-01'" in sqls[0] and "2024" not in sqls[1]
    # Its results side by side, every row marked (other years' orders counted).
    assert second.locator("table.preview tr.differs").count() == 4
    assert first.locator("table.preview tr.differs").count() == 0
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / "report-conversation.png"), full_page=True)

    # A question that should be declined, answered with SQL.
    page.goto(out.as_uri() + "#q=sales%2Fbest_sales_rep")
    page.reload()
    assert page.inner_text("#reason").startswith("answered a question that should be declined")
    assert "(none: a decline is expected)" in page.inner_text("#detail")
    assert watched.problems() == []
    assert _local_only(watched.requests, "file://") == []


def test_comparison_report_shows_a_regression_and_an_answer_change(
    invoke, open_page: Any, tmp_path: Path
) -> None:
    project = hostile_project(tmp_path / "project")
    invoke("run", "-C", str(project), "--name", "base")
    scripted = project / "agents" / "scripted.py"
    scripted.write_text(
        scripted.read_text(encoding="utf-8").replace(
            "SELECT count(*) AS how_many FROM customers", "SELECT 7 AS how_many"
        ),
        encoding="utf-8",
    )
    # The data model changes ops/region_count's answer; its verdict (error) does not move.
    questions = project / "eval_questions" / "ops.yml"
    text = questions.read_text(encoding="utf-8")
    questions.write_text(text.replace("count(DISTINCT region)", "count(region)"), encoding="utf-8")
    invoke("run", "-C", str(project), "--name", "head")
    out = tmp_path / "compare.html"
    invoke("report", "-C", str(project), "head", "--base", "base", "-o", str(out))
    watched = open_page(out.as_uri())
    page = watched.page
    regressions = page.locator("#comparison tr.change-regression a")
    assert regressions.all_inner_texts() == ["sales/count_customers"]
    answers = page.locator("#comparison tr.change-answer a")
    assert answers.all_inner_texts() == ["ops/region_count"]
    from playwright.sync_api import expect

    # The detail is drawn after the click: wait for it as a person's eyes do (reading it at once
    # raced the drawing and found the previous question's detail in CI).
    answers.first.click()
    expect(page.locator("#detail h2")).to_have_text("ops/region_count")
    change = page.inner_text("#answer-change")
    assert "Answer change" in change and "Base" in change and "This run" in change
    regressions.first.click()
    expect(page.locator("#detail h2")).to_have_text("sales/count_customers")
    assert "regression vs base" in page.inner_text("#detail")
    assert _local_only(watched.requests, "file://") == []
    assert watched.problems() == []


def test_agent_markup_renders_as_text_and_runs_nothing(
    invoke, open_page: Any, tmp_path: Path
) -> None:
    project = hostile_project(tmp_path / "project")
    invoke("run", "-C", str(project), "--name", "r1")
    out = tmp_path / "r.html"
    invoke("report", "-C", str(project), "r1", "-o", str(out))
    watched = open_page(out.as_uri() + "#q=sales%2Fwords")
    page = watched.page
    assert page.inner_text("#agent-answer") == f"There are {SCRIPT} customers {IMG}"
    page.click("#list li[data-id='sales/emea_names']")
    headers = page.locator("table.preview th").all_inner_texts()
    assert IMG in headers
    assert SCRIPT in page.locator("table.preview td").all_inner_texts()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    assert _local_only(watched.requests, "file://") == []
    assert watched.problems() == []
