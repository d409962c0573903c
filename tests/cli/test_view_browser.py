"""``sqlbench view`` in real Chromium: the run list follows a run made by another process, and
a decision made in a run's page is stored as ``sqlbench review`` stores it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sqlbench.runs.locate import open_project_store
from sqlbench.view import ViewServer

pytestmark = pytest.mark.browser

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"
SCREENSHOTS = os.environ.get("SQLBENCH_SCREENSHOTS")
"""A folder to save the pages' screenshots in (for people to look at), when set."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, ViewServer]]:
    project = Path(shutil.copytree(RUN_LOOP, tmp_path / "project"))
    with open_project_store(project) as store:
        server = ViewServer(store)
        server.start()
        try:
            yield project, server
        finally:
            server.shutdown()


def _shot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


@pytest.mark.slow
def test_run_list_follows_a_run_from_another_process(
    served: tuple[Path, ViewServer], open_page: Any
) -> None:
    from playwright.sync_api import expect

    project, server = served
    watched = open_page(server.url)
    page = watched.page
    page.wait_for_selector("#empty:not([hidden])")
    page.evaluate("window.__samePage = true")
    # A run started from another terminal, 0.4 s per question.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqlbench",
            "run",
            "-C",
            str(project),
            "--agent",
            "slow",
            "--concurrency",
            "1",
            "--name",
            "live",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        status = page.locator("tr[data-run='live'] td.status")
        expect(status).to_have_text(re.compile(r"^Running [1-9]\d*/11$"), timeout=30_000)
        _shot(page, "viewer-live-run.png")
        assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    expect(status).to_have_text("Completed", timeout=10_000)
    assert page.inner_text("tr[data-run='live'] td.acc") == "20% (2/10)"
    assert page.evaluate("window.__samePage") is True  # no reload
    origin = server.url.rstrip("/")
    assert [u for u in watched.requests if not u.startswith(origin)] == []
    assert watched.problems() == []


@pytest.mark.slow
def test_a_run_page_follows_its_run_with_the_decisions_it_carries(
    served: tuple[Path, ViewServer], open_page: Any, invoke: Any
) -> None:
    from playwright.sync_api import expect

    project, server = served
    invoke("run", "-C", str(project), "--agent", "slow", "--name", "r0")
    invoke("review", "-C", str(project), "r0", "sales/emea_names", "pass", "--note", "fine")
    (project / "asked.log").unlink()
    # The next run answers four questions (emea_names the fourth), then waits for the test.
    hold = project / "hold_after"
    hold.write_text("4", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "sqlbench", "run", "-C", str(project), "--agent", "slow",
         "--concurrency", "1", "--name", "live"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        watched = open_page(server.url)
        page = watched.page
        page.locator("tr[data-run='live'] a").click(timeout=30_000)
        page.wait_for_selector("#count")
        page.evaluate("window.__samePage = true")
        carried = page.locator("#list li[data-id='sales/emea_names'] .chip.human")
        expect(carried).to_have_text("person (carried)", timeout=30_000)
        expect(page.locator("#run-status")).to_have_text("Running 4/11")
        expect(page.locator("#count")).to_have_text("4 of 4 questions")
        assert "1 decided by a person" in page.inner_text("#accuracy")
        expect(page.locator("#by-space")).to_contain_text("sales")  # drawn again, too
        page.click("#list li[data-id='sales/emea_names']")
        assert "carried from run r0" in page.inner_text("#detail")
        _shot(page, "viewer-run-page-live.png")
        hold.unlink()  # the run goes on to the end
        expect(page.locator("#count")).to_have_text("11 of 11 questions", timeout=30_000)
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    finally:
        hold.unlink(missing_ok=True)
        if process.poll() is None:
            process.kill()
    assert page.evaluate("window.__samePage") is True  # no reload
    with open_project_store(project) as store:
        final = store.load_run("live").accuracy.label()
    expect(page.locator("#accuracy")).to_have_text(f"Accuracy: {final}")
    assert "1 decided by a person" in final
    origin = server.url.rstrip("/")
    assert [u for u in watched.requests if not u.startswith(origin)] == []
    assert watched.problems() == []


def test_a_decision_made_in_the_viewer_counts(
    served: tuple[Path, ViewServer], open_page: Any, invoke: Any
) -> None:
    from playwright.sync_api import expect

    project, server = served
    invoke("run", "-C", str(project), "--name", "r1")
    watched = open_page(server.url)
    page = watched.page
    page.click("tr[data-run='r1'] a")
    page.wait_for_selector("#detail h2")
    page.goto(page.url + "#q=sales%2Fno_truth")
    page.reload()
    assert page.inner_text("#detail h2") == "sales/no_truth"
    page.fill("input[aria-label='review note']", "the names are right")
    page.click("#review-pass")
    expect(page.locator("#accuracy")).to_contain_text("person", timeout=10_000)
    assert page.inner_text("#accuracy") == "Accuracy: 40% (4/10, 1 decided by a person)"
    assert "Decided by a person: pass, decided by" in page.inner_text("#detail")
    assert "the names are right" in page.inner_text("#detail")
    _shot(page, "viewer-review.png")
    with open_project_store(project) as store:
        assert store.load_run("r1").accuracy.human == 1
    origin = server.url.rstrip("/")
    assert [u for u in watched.requests if not u.startswith(origin)] == []
    assert watched.problems() == []


def test_viewer_refuses_other_hosts_and_tokenless_decisions(
    served: tuple[Path, ViewServer],
) -> None:
    import json
    import urllib.error
    import urllib.request

    _, server = served
    request = urllib.request.Request(server.url + "api/runs", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 421
    post = urllib.request.Request(
        server.url + "api/review",
        data=json.dumps({"run": "x", "question": "y", "verdict": "pass"}).encode(),
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=10)
    assert refused.value.code == 403
    assert server.url.startswith("http://127.0.0.1:")


def test_the_viewer_shows_a_conversation_as_a_thread(
    tmp_path: Path, open_page: Any, invoke: Any
) -> None:
    """The run page ``sqlbench view`` serves shows each turn (docs/conversations.md)."""
    from sqlbench.testing import write_project

    project = write_project(
        tmp_path / "talk",
        {
            "eval_questions/q.yml": {
                "space": "sales",
                "eval_questions": [
                    {
                        "name": "drilldown",
                        "turns": [
                            {"question": "How many orders?", "sql": "SELECT 3 AS n"},
                            {"question": "Only the big ones?", "sql": "SELECT 2 AS n"},
                            {"question": "And next year?", "expect": "decline"},
                        ],
                    }
                ],
            },
            "agents/rec.yml": {"agents": [{"name": "rec", "kind": "replay", "path": "a.jsonl"}]},
            "agents/a.jsonl": (
                '{"name": "drilldown", "turn": 1, "sql": "SELECT 3"}\n'
                '{"name": "drilldown", "turn": 2, "sql": "SELECT 5"}\n'
                '{"name": "drilldown", "turn": 3, "answer": "I cannot forecast."}\n'
            ),
        },
    )
    invoke("run", "-C", str(project), "--agent", "rec", "--name", "talk")
    with open_project_store(project) as store:
        server = ViewServer(store)
        server.start()
        try:
            watched = open_page(server.url)
            page = watched.page
            page.click("tr[data-run='talk'] a")
            page.wait_for_selector("#thread")
            assert page.inner_text("#reason").startswith("turn 2 of 3 fail")
            assert page.locator("#thread .turn").count() == 3
            assert "Turn 3: And next year?" in page.inner_text("#turn-3")
            assert "declined as expected: I cannot forecast." in page.inner_text("#turn-3")
            assert page.locator("#turn-2 table.preview tr.differs").count() == 1
            _shot(page, "viewer-conversation.png")
            assert watched.problems() == []
        finally:
            server.shutdown()


@pytest.mark.slow
def test_the_run_list_plots_accuracy_against_cost_as_runs_arrive(
    tmp_path: Path, open_page: Any, invoke: Any
) -> None:
    """The report's chart of accuracy against cost, in the live run list: one dot per run
    priced in full, a new run's dot added without a reload, each dot a link to its run."""
    from cost_project import ANSWERS, make_project, write_replay
    from playwright.sync_api import expect

    root = make_project(tmp_path / "p", "pricing:\n  m1: {input: 2.0, output: 8.0}\n")
    usage = {"input_tokens": 1000, "output_tokens": 200, "model": "m1"}  # $0.0036 an answer
    agents = "agents:\n" + write_replay(root, "dear", usage)
    agents += write_replay(root, "cheap", {**usage, "input_tokens": 100, "output_tokens": 50})
    agents += write_replay(root, "right", usage)
    (root / "agents" / "agents.yml").write_text(agents, encoding="utf-8")
    truths = {
        "by_region": "SELECT region, revenue FROM sales",
        "top": "SELECT region FROM sales ORDER BY revenue DESC LIMIT 1",
    }
    lines = [{"name": q, "sql": truths.get(q, sql), "usage": usage} for q, sql in ANSWERS.items()]
    (root / "agents" / "right.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    invoke("run", "-C", str(root), "--agent", "dear", "--name", "dear")
    invoke("run", "-C", str(root), "--agent", "cheap", "--name", "cheap")
    with open_project_store(root) as store:
        server = ViewServer(store)
        server.start()
        try:
            watched = open_page(server.url)
            page = watched.page
            dots = page.locator("#cost-chart circle")
            expect(dots).to_have_count(2, timeout=10_000)
            page.evaluate("window.__samePage = true")
            titles = sorted(d.text_content() or "" for d in dots.all())
            assert titles == [
                "cheap (cheap): 33% (1/3), $0.0018",
                "dear (dear): 33% (1/3), $0.0108",
            ]
            assert page.inner_text("tr[data-run='dear'] td.cost") == "$0.0108"
            invoke("run", "-C", str(root), "--agent", "right", "--name", "right")
            expect(dots).to_have_count(3, timeout=10_000)
            assert page.evaluate("window.__samePage") is True  # no reload
            by_title = {
                (d.text_content() or "").split(" ")[0]: (
                    float(d.get_attribute("cx") or 0),
                    float(d.get_attribute("cy") or 0),
                )
                for d in dots.all()
            }
            assert by_title["right"][1] < by_title["dear"][1]  # more accurate: higher
            assert by_title["cheap"][0] < by_title["dear"][0] == by_title["right"][0]
            expect(page.locator("#cost-right")).to_have_text("$0.0108")
            _shot(page, "viewer-cost-chart.png")
            page.locator("#cost-chart a").first.click()
            page.wait_for_selector("#count")
            assert "/runs/" in page.url
            origin = server.url.rstrip("/")
            assert [u for u in watched.requests if not u.startswith(origin)] == []
            assert watched.problems() == []
        finally:
            server.shutdown()
