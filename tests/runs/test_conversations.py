"""Questions that should be declined, and conversations asked turn by turn
(docs/conversations.md), on a real temporary project (embedded DuckDB, a FakeAgent kind)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqlbench.agents.base import Answer
from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.registry import register_kind, unregister_kind
from sqlbench.report.run_json import run_to_json
from sqlbench.report.run_markdown import render as render_markdown
from sqlbench.report.run_text import render_run
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import FakeAgent, write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

P, F, R, E = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR


class _FakeOptions(KindOptions):
    pass


@pytest.fixture
def fake_agent() -> Iterator[Callable[[FakeAgent], None]]:
    holder: dict[str, FakeAgent] = {}
    register_kind(
        AgentKind(
            name="fake",
            options=_FakeOptions,
            build=lambda config, options, context: holder["agent"],
        ),
        replace=True,
    )
    yield lambda agent: holder.__setitem__("agent", agent)
    unregister_kind("fake")


def _project(
    root: Path, questions: list[dict[str, Any]], compare: dict[str, Any] | None = None
) -> Path:
    files: dict[str, Any] = {
        "eval_questions/q.yml": {"space": "sales", "eval_questions": questions},
        "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
    }
    if compare is not None:
        files["sqlbench.yml"] = {"compare": compare}
    return write_project(root, files)


DECLINE_QUESTIONS = [
    {"name": "forecast", "question": "What will revenue be next year?", "expect": "decline"},
    {"name": "weather", "question": "Will it rain tomorrow?", "expect": "decline"},
    {"name": "words_ok", "question": "Which planet is largest?", "expect": "decline"},
    {"name": "two", "question": "One plus one?", "sql": "SELECT 2 AS n"},
    {"name": "three", "question": "One plus two?", "sql": "SELECT 3 AS n"},
    {"name": "ordinary_decline", "question": "Four?", "sql": "SELECT 4 AS n"},
]


def test_a_decline_where_one_is_expected_passes_and_sql_there_fails(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(tmp_path, DECLINE_QUESTIONS)
    fake_agent(
        FakeAgent(
            {
                "forecast": Answer(declined="forecasts are not in the data"),
                "weather": "SELECT 1 AS n",
                "words_ok": Answer(answer="I can only answer questions about sales."),
                "two": "SELECT 1 + 1",
                "three": "SELECT 4",
                "ordinary_decline": Answer(declined="not sure"),
            }
        )
    )
    run = run_benchmark(load_project(root), "fake")
    got = {q.name: (q.verdict, q.reason) for q in run.questions}
    assert got["forecast"] == (P, "declined as expected: forecasts are not in the data")
    assert got["weather"][0] is F
    assert got["weather"][1] == "answered a question that should be declined: SELECT 1 AS n"
    assert got["words_ok"] == (
        P,
        "declined as expected: I can only answer questions about sales.",
    )
    assert got["two"][0] is P and got["three"][0] is F
    # On an ordinary question a decline stays review.
    assert got["ordinary_decline"] == (R, "the agent declined: not sure")

    # Hand-counted: 6 graded; SQL in weather, two, three (3 answered); forecast, words_ok,
    # ordinary_decline without SQL (3 declined); 3 expected declines, 2 of them correct;
    # wrong answers: weather and three (SQL graded fail) = 2; correct: forecast, words_ok,
    # two = 3. Reliability = (3 - 1 * 2) / 6.
    abstention = run.abstention()
    assert (abstention.answered, abstention.declined) == (3, 3)
    assert (abstention.expected_declines, abstention.correct_declines) == (3, 2)
    assert (abstention.wrong_answers, abstention.correct, abstention.total) == (2, 3, 6)
    assert abstention.reliability == pytest.approx(1 / 6)

    data = run_to_json(run)["abstention"]
    assert data["reliability"] == pytest.approx(1 / 6) and data["wrong_answers"] == 2
    line = "Answered 3 · declined 3 (2/3 expected declines correct) · wrong answers 2"
    assert line + " · reliability 0.17 (decline_penalty 1)" in render_run(run, width=200)
    assert line in render_markdown(run)


def test_the_decline_penalty_comes_from_compare(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(
        tmp_path, DECLINE_QUESTIONS[:2] + DECLINE_QUESTIONS[3:5], {"decline_penalty": 2}
    )
    fake_agent(
        FakeAgent(
            {
                "forecast": Answer(declined="no"),
                "weather": "SELECT 1",
                "two": "SELECT 2",
                "three": "SELECT 2",
            }
        )
    )
    run = run_benchmark(load_project(root), "fake")
    # correct: forecast, two = 2; wrong: weather, three = 2; (2 - 2 * 2) / 4.
    assert run.abstention().reliability == pytest.approx(-0.5)
    assert "reliability -0.50 (decline_penalty 2)" in render_run(run, width=200)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"name": "x", "question": "?", "expect": "decline", "sql": "SELECT 1"},
            "expect: decline means no SQL is the right answer; remove sql",
        ),
        ({"name": "x", "question": "?", "expect": "refuse"}, "expect"),
    ],
)
def test_expect_decline_is_checked(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    from sqlbench.project.load import check_project

    root = _project(tmp_path, [entry])
    problems = [p for p in check_project(root).problems if p.severity.value == "error"]
    assert problems and message in problems[0].message
    assert problems[0].path.endswith("q.yml") and problems[0].line is not None
