"""Run renderers: the text table, the run list, one question in full, JSON, Markdown, JUnit."""

from __future__ import annotations

import json
import os
import uuid
import xml.etree.ElementTree as ET
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from sqlbench.engines.base import ResultSet
from sqlbench.records.run import (
    RunInfo,
    RunStatus,
    RunSummary,
    ToolCallRecord,
    TrialResult,
    utc_now,
)
from sqlbench.report import run_json, run_junit, run_markdown, run_text
from sqlbench.runs.previews import make_preview
from sqlbench.runs.scores import RunResult, gather
from sqlbench.verdicts import Verdict

P, F, R, E, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR, Verdict.SKIPPED


def info(**overrides: Any) -> RunInfo:
    now = utc_now()
    fields: dict[str, Any] = dict(
        id=uuid.uuid4().hex,
        name="nightly",
        status=RunStatus.COMPLETED,
        created_at=now,
        updated_at=now,
        created_by="ana",
        host="h",
        pid=os.getpid(),
        branch="main",
        commit="0123456789abcdef" * 2 + "01234567",
        environment="prod",
        question_set_hash="q",
        question_count=5,
        agent_name="recorded",
        agent_kind="replay",
        agent_settings={
            "name": "recorded",
            "kind": "replay",
            "options": {"headers": {"Authorization": "Bearer ${TOKEN}"}},
        },
        agent_settings_hash="s",
        sqlbench_version="0.1.0",
        compare={"order": "ignore"},
        compare_hash="c",
    )
    fields.update(overrides)
    return RunInfo(**fields)


def trial(
    name: str, verdict: Verdict, reason: str = "", space: str = "sales", n: int = 0, **extra: Any
) -> TrialResult:
    return TrialResult(
        space=space,
        name=name,
        trial=n,
        verdict=verdict,
        reason=reason or f"{verdict.value} reason",
        latency_ms=850.0,
        truth_sql="SELECT 1",
        agent_sql="SELECT 1",
        **extra,
    )


def five() -> RunResult:
    trials = [
        trial("revenue", P, "results match", position=0),
        trial("orders | by rep", F, "row counts differ: expected 3, got 4", position=1),
        trial(
            "words", R, "the answer is not SQL (the agent answered in words): about 12", position=2
        ),
        trial("crash", E, "agent error: boom", position=3),
        trial("later", S, "skipped: not ready", position=4),
    ]
    return gather(info(), RunStatus.COMPLETED, trials)


def test_text_table_ends_with_accuracy() -> None:
    text = run_text.render_run(five(), width=140)
    lines = text.splitlines()
    assert any("sales/revenue" in ln and "pass" in ln and "850 ms" in ln for ln in lines)
    assert any("row counts differ: expected 3, got 4" in ln for ln in lines)
    assert "Accuracy: 25% (1/4)" in text
    assert "pass 1 · fail 1 · review 1 · error 1 · skipped 1" in text
    assert "Run nightly · prod · main@0123456 · agent recorded (replay)" in text
    assert "\x1b[" not in text  # no colour codes unless asked


def test_text_table_with_repeats_shows_rates_and_interval() -> None:
    trials = [trial("a", v, n=i) for i, v in enumerate([P, P, F])]
    trials += [trial("b", P, n=i) for i in range(3)]
    run = gather(info(repeat=3), RunStatus.COMPLETED, trials)
    text = run_text.render_run(run, width=160)
    assert "flaky 2/3" in text and "67%" in text and "pass 3/3" in text
    assert "Accuracy: 83% (5/6 trials); mean pass rate over 2 questions, 95% interval" in text
    # A flaky question counts once (as flaky, not also as fail): 1 + 1 = 2 questions.
    assert "pass 1 · flaky 1 · pass@3 100% · pass^3 50%" in text
    one = gather(info(repeat=3), RunStatus.COMPLETED, trials[3:])
    assert "mean pass rate over 1 question, 95%" in run_text.render_run(one, width=160)


def test_run_list() -> None:
    now = utc_now()
    runs = [
        RunSummary(
            info=info(name="live", status=RunStatus.RUNNING, question_count=10),
            status=RunStatus.RUNNING,
            passed=3,
            total=4,
            graded=4,
        ),
        RunSummary(
            info=info(name="old", updated_at=now - timedelta(minutes=5), dirty=True),
            status=RunStatus.COMPLETED,
            passed=8,
            total=10,
            graded=11,
        ),
    ]
    text = run_text.render_runs(runs, width=160)
    header = text.splitlines()[0].split()
    assert header[:5] == ["Name", "Environment", "Branch", "Agent", "Status"]
    assert "Running 4/10" in text and "75% (3/4)" in text
    assert "main@0123456+dirty" in text and "5 min ago" in text and "ana" in text
    assert run_text.render_runs([]).startswith("No runs yet")


def test_run_list_off_a_terminal_never_wraps_a_row() -> None:
    long = info(name="20261122-011530-9624-a-long-run-name-for-the-nightly-benchmark")
    summary = RunSummary(info=long, status=RunStatus.COMPLETED, passed=1, total=2, graded=2)
    lines = run_text.render_runs([summary]).splitlines()
    assert len(lines) == 3  # header, rule, one row: nothing folded onto a second line
    assert "main@0123456" in lines[2] and long.name in lines[2]


def test_question_in_full_marks_differing_rows() -> None:
    expected = ResultSet(
        pa.table(
            {
                "rep": ["ann", "bob", "cy"],
                "total": pa.array([Decimal("10.50"), Decimal("3"), Decimal("7")]),
            }
        )
    )
    actual = ResultSet(pa.table({"name": ["ann", "bob", "cy", "cy"], "sum": [10.5, 3.0, 7.0, 7.0]}))
    failing = trial(
        "by_rep",
        F,
        "row counts differ: expected 3, got 4",
        question="Total by rep?",
        also_accept=["SELECT 2"],
        expected_preview=make_preview(expected, []),
        actual_preview=make_preview(actual, [3]),
        tool_calls=[ToolCallRecord(name="run_sql", arguments={"sql": "SELECT 1"}, output="1 row")],
        answer="Here you go",
        input_tokens=120,
        output_tokens=45,
        timings_ms={"compare": 1.5},
    )
    run = gather(info(), RunStatus.COMPLETED, [failing])
    text = run_text.render_question(run, run.questions[0], width=120)
    assert "sales/by_rep  fail" in text
    assert "Reason: row counts differ: expected 3, got 4" in text
    assert "Ground truth SQL:" in text and "Agent SQL:" in text and "also_accept #1" in text
    assert "Expected result (3 rows):" in text and "10.50" in text
    assert "Agent result (4 rows; 1 with no partner, marked ✗):" in text
    marked = [ln for ln in text.splitlines() if "✗" in ln and "cy" in ln]
    assert len(marked) == 1 and " 4 " in marked[0]
    assert '1. run_sql({"sql": "SELECT 1"})' in text and "→ 1 row" in text
    assert (
        "latency 850 ms (the agent's answer, its start included) · tokens 120 in / 45 out · "
        "compare 2 ms (comparing the two results)"
    ) in " ".join(text.split())


def test_json_shape() -> None:
    data = json.loads(run_json.render(five()))
    assert data["schema_version"] == 1
    assert data["accuracy"]["passed"] == 1 and data["accuracy"]["total"] == 4
    assert data["run"]["name"] == "nightly" and data["run"]["status"] == "completed"
    assert data["run"]["agent"]["settings"]["options"]["headers"]["Authorization"] == (
        "Bearer ${TOKEN}"
    )
    first = data["results"][0]
    assert {k: first[k] for k in ("space", "name", "verdict", "reason")} == {
        "space": "sales",
        "name": "revenue",
        "verdict": "pass",
        "reason": "results match",
    }
    assert [r["verdict"] for r in data["results"]] == ["pass", "fail", "review", "error", "skipped"]
    assert first["agent_sql"] == "SELECT 1" and first["latency_ms"] == 850.0
    assert data["counts"] == {"pass": 1, "fail": 1, "review": 1, "error": 1, "skipped": 1}


def test_json_with_repeats_has_rates_and_trials() -> None:
    run = gather(info(repeat=2), RunStatus.COMPLETED, [trial("a", P), trial("a", F, n=1)])
    result = json.loads(run_json.render(run))["results"][0]
    assert result["verdict"] == "fail" and result["pass_rate"] == 0.5 and result["flaky"]
    assert result["pass_at_k"] == 1.0 and result["pass_hat_k"] == 0.0
    assert [t["verdict"] for t in result["trials"]] == ["pass", "fail"]
    assert json.loads(run_json.render(run))["accuracy"]["interval"] == [0.5, 0.5]


def test_markdown_escapes_table_cells() -> None:
    text = run_markdown.render(five())
    assert text.startswith("## sqlbench run `nightly`")
    assert "**Accuracy: 25% (1/4)**" in text
    assert "| ❌ | `sales/orders \\| by rep` | fail | row counts differ: expected 3, got 4 |" in (
        text
    )
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert len(rows) == 1 + 5  # header + one per question


@pytest.mark.parametrize("status", [RunStatus.INTERRUPTED])
def test_markdown_says_when_a_run_is_not_complete(status: RunStatus) -> None:
    run = gather(info(status=status), status, [trial("a", P)])
    assert "— **Interrupted**" in run_markdown.render(run).splitlines()[0]


def test_junit_maps_verdicts() -> None:
    root = ET.fromstring(run_junit.render(five()).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5",
        "failures": "1",
        "errors": "1",
        "skipped": "2",
    }
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["revenue"].get("classname") == "sales"
    assert cases["revenue"].find("failure") is None and cases["revenue"].get("time") == "0.850"
    failure = cases["orders | by rep"].find("failure")
    assert failure is not None and failure.get("message") == "row counts differ: expected 3, got 4"
    assert "agent SQL:" in (failure.text or "")
    error = cases["crash"].find("error")
    assert error is not None and error.get("message") == "agent error: boom"
    review = cases["words"].find("skipped")
    assert review is not None and review.get("message", "").startswith(
        "review: the answer is not SQL"
    )
    skipped = cases["later"].find("skipped")
    assert skipped is not None and skipped.get("message") == "skipped: skipped: not ready"


def test_the_live_progress_bar_shows_a_rate_and_an_eta() -> None:
    import io
    import time

    from sqlbench.report.run_progress import RunProgress
    from sqlbench.runs.events import QuestionGraded, RunStarted

    stream = io.StringIO()
    with RunProgress(stream, live=True) as progress:
        progress(RunStarted(info(), 20, 0, {}, False))
        for done in range(1, 6):
            time.sleep(0.05)
            progress(QuestionGraded(trial(f"q{done}", P, "ok"), done, 20, {Verdict.PASS: done}))
    text = stream.getvalue()
    assert "/min · ETA 0:0" in text


def test_plain_progress_lines_are_written_together_and_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a terminal, graded lines are held and written together (one write per batch);
    a notice, a pause (RunWaiting) or the end writes what is held first, so order is kept."""
    import io

    from sqlbench.report import run_progress
    from sqlbench.report.run_progress import RunProgress
    from sqlbench.runs.events import QuestionGraded, RunNotice, RunStarted, RunWaiting

    monkeypatch.setattr(run_progress, "_HELD_S", 3600.0)  # a slow machine must not flush early

    stream = io.StringIO()
    progress = RunProgress(stream, live=False)
    progress(RunStarted(info(), 4, 0, {}, False))
    progress(QuestionGraded(trial("q1", P, "ok"), 1, 4, {Verdict.PASS: 1}))
    progress(QuestionGraded(trial("q2", P, "ok"), 2, 4, {Verdict.PASS: 2}))
    held = stream.getvalue()
    assert "q1" not in held and "q2" not in held  # held back, not one write per answer
    progress(RunWaiting())
    assert "q1" in stream.getvalue() and "q2" in stream.getvalue()
    progress(QuestionGraded(trial("q3", P, "ok"), 3, 4, {Verdict.PASS: 3}))
    progress(RunNotice("a note"))
    progress(QuestionGraded(trial("q4", P, "ok"), 4, 4, {Verdict.PASS: 4}))
    progress.close()
    lines = stream.getvalue().splitlines()
    order = [
        next(i for i, line in enumerate(lines) if key in line) for key in ("q3", "a note", "q4")
    ]
    assert order == sorted(order)


@pytest.mark.parametrize(
    "line",
    [
        "[ 3/972] agent_a fail    db/q3 (0 ms): 2 columns expected, 1 returned",
        "[ 4/972] agent_a fail    db/q4 (12.3 s): expected 'São Paulo' got '名前' → cut…",
        "[ 5/972] agent_a fail    db/q5: a tab\there",
        "[ 6/972] agent_a error   db/q6: escape \x1b[2K and bell \x07",
        "[ 6/972] agent_a error   db/q6: bidi \u202eflip",
        "[ 7/972] agent_a fail    db/q7: two\nlines",
        "",
    ],
)
def test_plain_progress_lines_read_as_rich_prints_them(line: str) -> None:
    """A plain line that needs no treatment skips rich; every line reads as rich prints it
    (control codes dropped or shown, tabs expanded)."""
    import io

    from sqlbench.hygiene import SafeConsole
    from sqlbench.report.run_progress import RunProgress

    stream = io.StringIO()
    progress = RunProgress(stream, live=False)
    progress._hold(line)
    progress.close()
    expected = io.StringIO()
    SafeConsole(
        file=expected, force_terminal=False, no_color=True, highlight=False, soft_wrap=True
    ).print(line, markup=False)
    assert stream.getvalue() == expected.getvalue()
