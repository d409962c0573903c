"""Questions that should be declined, and conversations asked turn by turn
(docs/conversations.md), on a real temporary project (embedded DuckDB, a FakeAgent kind)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqlbench.agents.base import Answer
from sqlbench.report.run_json import run_to_json
from sqlbench.report.run_markdown import render as render_markdown
from sqlbench.report.run_text import render_run
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import FakeAgent, write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

P, F, R, E = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR


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


CONVERSATION = {
    "name": "drilldown",
    "turns": [
        {"question": "How many orders?", "sql": "SELECT 3 AS n"},
        {"question": "Only the big ones?", "sql": "SELECT 2 AS n"},
        {"question": "And next year?", "expect": "decline"},
    ],
}


def test_a_conversation_whose_second_turn_is_wrong_fails_naming_turn_2(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(
        tmp_path, [CONVERSATION, {"name": "single", "question": "?", "sql": "SELECT 1"}]
    )
    agent = FakeAgent(
        {
            "drilldown": ["SELECT 3", "SELECT 5", Answer(declined="no forecasts")],
            "single": "SELECT 1",
        }
    )
    fake_agent(agent)
    run = run_benchmark(load_project(root), "fake")
    drilldown = run.question("sales/drilldown")
    assert drilldown is not None
    assert drilldown.verdict is F
    assert drilldown.reason.startswith("turn 2 of 3 fail: ")
    turns = drilldown.first.turns
    assert turns is not None
    assert [(t.turn, t.verdict) for t in turns] == [(1, P), (2, F), (3, P)]
    assert turns[2].reason == "declined as expected: no forecasts"

    # The agent was asked turn by turn, each request carrying the thread so far.
    asked = [r for r in agent.requests if r.name == "drilldown"]
    assert [r.turn for r in asked] == [1, 2, 3]
    assert asked[2].messages == [
        {"role": "user", "content": "How many orders?"},
        {"role": "assistant", "content": "SELECT 3"},
        {"role": "user", "content": "Only the big ones?"},
        {"role": "assistant", "content": "SELECT 5"},
        {"role": "user", "content": "And next year?"},
    ]
    single = next(r for r in agent.requests if r.name == "single")
    assert (single.turn, single.messages) == (1, [{"role": "user", "content": "?"}])

    # Accuracy counts conversations (1 of 2); per-turn accuracy every turn (3 of 4).
    assert (run.accuracy.passed, run.accuracy.total) == (1, 2)
    text = render_run(run, width=200)
    assert "Accuracy: 50% (1/2)" in text and "Per-turn accuracy: 75% (3/4)" in text
    data = run_to_json(run)
    assert data["turn_accuracy"] == {"passed": 3, "total": 4, "value": 0.75}
    result = next(r for r in data["results"] if r["name"] == "drilldown")
    assert result["verdict"] == "fail"
    assert [{k: t[k] for k in ("turn", "question", "verdict", "sql")} for t in result["turns"]] == [
        {"turn": 1, "question": "How many orders?", "verdict": "pass", "sql": "SELECT 3"},
        {"turn": 2, "question": "Only the big ones?", "verdict": "fail", "sql": "SELECT 5"},
        {"turn": 3, "question": "And next year?", "verdict": "pass", "sql": None},
    ]
    assert all(t["reason"] for t in result["turns"])

    # `sqlbench show RUN QUESTION` prints each turn under its verdict.
    from sqlbench.report.run_text import render_question

    shown = render_question(run, drilldown, width=200)
    assert "Turn 2 fail: Only the big ones?" in shown
    assert "Turn 3 pass: And next year?" in shown
    assert "Ground truth SQL: (none: a decline is expected)" in shown
    # And so do the Markdown details of a check's summary.
    from sqlbench.report.markdown_details import details_blocks

    markdown = "\n".join(details_blocks([("fail", drilldown.first)]))
    assert "**Turn 2** (fail): Only the big ones?" in markdown
    # JUnit: the counts as the suite's properties, each turn in the failure's detail.
    import xml.etree.ElementTree as ET

    from sqlbench.report.run_junit import render as render_junit

    suite = ET.fromstring(render_junit(run)).find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["sqlbench.correct_declines"] == "1"
    assert properties["sqlbench.reliability"] == "0.5"  # (3 - 1) / 4
    failure = next(c for c in suite.iter("testcase") if c.get("name") == "drilldown")
    assert "turn 2 fail: Only the big ones?" in (failure.find("failure").text or "")


def test_an_agent_error_ends_the_conversation(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(tmp_path, [CONVERSATION])
    fake_agent(FakeAgent({"drilldown": ["SELECT 3", RuntimeError("overloaded")]}))
    run = run_benchmark(load_project(root), "fake")
    question = run.questions[0]
    assert question.verdict is E
    assert question.reason == (
        "turn 2 of 3 error: agent error: RuntimeError: overloaded (turn 3 not asked)"
    )
    assert question.first.turns is not None and len(question.first.turns) == 2


def test_an_unreachable_endpoint_mid_conversation_leaves_it_not_asked(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.agents.call import AgentTransientError
    from sqlbench.runs.scores import not_asked_summary
    from sqlbench.verdicts import NOT_ASKED, ErrorKind

    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {"space": "sales", "eval_questions": [CONVERSATION]},
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
            "sqlbench.yml": {"run": {"retries": 0}},
        },
    )
    down = AgentTransientError("cannot reach the agent: refused")
    fake_agent(FakeAgent({"drilldown": ["SELECT 3", down]}))
    run = run_benchmark(load_project(root), "fake")
    trial = run.questions[0].first
    assert trial.verdict is E and trial.error_kind is ErrorKind.UNREACHABLE
    assert trial.reason.startswith(NOT_ASKED) and "(at turn 2 of 3)" in trial.reason
    # Counted apart, as any question whose endpoint was unreachable: outside the accuracy
    # and the answered/declined counts.
    assert (run.accuracy.total, run.accuracy.not_asked) == (0, 1)
    assert run.abstention().total == 0
    assert not_asked_summary(run) is not None


COMMAND_AGENT = """#!/usr/bin/env python3
# Answers from the thread it is sent: checks that each request carries the conversation so far.
import json, sys

request = json.load(sys.stdin)
messages = request["messages"]
turn = request["turn"]
roles = [m["role"] for m in messages]
expected_roles = ["user", "assistant"] * (turn - 1) + ["user"]
if roles != expected_roles or messages[-1]["content"] != request["question"]:
    print(json.dumps({"error": f"bad thread at turn {turn}: {messages}"}))
    sys.exit(0)
if turn == 2 and messages[1]["content"] != "SELECT 3":
    print(json.dumps({"error": "turn 2 did not get my first answer"}))
    sys.exit(0)
answers = {1: {"sql": "SELECT 3"}, 2: {"sql": "SELECT 2"}, 3: {"answer": "I cannot forecast."}}
print(json.dumps(answers[turn]))
"""


def test_a_command_agent_gets_the_thread_on_stdin(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {"space": "sales", "eval_questions": [CONVERSATION]},
            "agents/threaded.py": COMMAND_AGENT,
            "agents/cmd.yml": {
                "agents": [
                    {"name": "cmd", "kind": "command", "command": ["python3", "agents/threaded.py"]}
                ]
            },
        },
    )
    run = run_benchmark(load_project(root), "cmd")
    question = run.questions[0]
    assert (question.reason, question.verdict) == ("all 3 turns pass", P)


@pytest.mark.parametrize(
    ("turns_yaml", "message", "line"),
    [
        (
            "      - question: a?\n        sql: SELECT 1\n        expect: decline\n",
            "question 'talk': turn 1: needs exactly one of sql, certifiedQuery or expect: "
            "decline (it has sql and expect)",
            4,
        ),
        (
            "      - question: a?\n        sql: SELECT 1\n      - question: b?\n",
            "question 'talk': turn 2: needs exactly one of sql, certifiedQuery or expect: decline",
            6,
        ),
        (
            "      - question: a?\n        certifiedQuery: nowhere\n",
            "question 'talk' turn 1: certifiedQuery 'nowhere' is not defined",
            5,
        ),
        (
            "      - question: a?\n        sql: SELECT 1\n        sqll: SELECT 2\n",
            "sqll",
            6,
        ),
    ],
)
def test_turns_are_checked_with_file_and_line(
    tmp_path: Path, turns_yaml: str, message: str, line: int
) -> None:
    from sqlbench.project.load import check_project

    text = "eval_questions:\n  - name: talk\n    turns:\n" + turns_yaml
    (tmp_path / "eval_questions").mkdir()
    (tmp_path / "eval_questions/q.yml").write_text(text)
    errors = [p for p in check_project(tmp_path).problems if p.severity.value == "error"]
    assert errors, "expected a problem"
    assert message in errors[0].message
    assert (errors[0].path, errors[0].line) == ("eval_questions/q.yml", line)


def test_a_conversation_keeps_its_truth_in_its_turns(tmp_path: Path) -> None:
    from sqlbench.project.load import check_project

    text = (
        "eval_questions:\n  - name: talk\n    sql: SELECT 1\n    turns:\n"
        "      - question: a?\n        sql: SELECT 1\n"
    )
    (tmp_path / "eval_questions").mkdir()
    (tmp_path / "eval_questions/q.yml").write_text(text)
    errors = [p for p in check_project(tmp_path).problems if p.severity.value == "error"]
    assert [(e.message, e.line) for e in errors] == [
        ("question 'talk': a conversation (turns:) keeps its sql in each turn, not beside turns", 3)
    ]


def _conversation_project(root: Path, second_truth: str) -> Path:
    conversation = {
        "name": "drilldown",
        "turns": [
            {"question": "How many orders?", "sql": "SELECT 3 AS n"},
            {"question": "Only the big ones?", "sql": second_truth},
            {"question": "And next year?", "expect": "decline"},
        ],
    }
    single = {"name": "single", "question": "?", "sql": "SELECT 1 AS n"}
    return _project(root, [conversation, single])


def test_regrade_replays_each_turn_its_own_answer(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.runs.runner import open_store, regrade_run

    root = _conversation_project(tmp_path, "SELECT 2 AS n")
    fake_agent(
        FakeAgent(
            {
                "drilldown": ["SELECT 3", "SELECT 5", Answer(answer="No forecasts.")],
                "single": "SELECT 1",
            }
        )
    )
    first = run_benchmark(load_project(root), "fake", RunOptions(name="before"))
    assert first.questions[0].reason.startswith("turn 2 of 3 fail")
    # The ground truth of turn 2 is fixed; the agent is not asked again (it has no answers).
    _conversation_project(tmp_path, "SELECT 5 AS n")
    fake_agent(FakeAgent({}))
    project = load_project(root)
    with open_store(project) as store:
        again = regrade_run(project, store, "before", name="after")
    drilldown = again.questions[0]
    assert (drilldown.verdict, drilldown.reason) == (P, "all 3 turns pass")
    assert drilldown.first.turns is not None
    assert [t.sql for t in drilldown.first.turns] == ["SELECT 3", "SELECT 5", None]


def test_compare_names_the_turn_whose_expected_answer_changed(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.report.rundiff_text import render as render_diff
    from sqlbench.rundiff.diff import diff_runs, side_from_run

    def run_with(folder: str, second_truth: str) -> Any:
        root = _conversation_project(tmp_path / folder, second_truth)
        fake = FakeAgent({"drilldown": ["SELECT 3", "SELECT 5", Answer(answer="No.")]})
        fake.default = "SELECT 1"
        fake_agent(fake)
        run = run_benchmark(load_project(root), "fake")
        return side_from_run(run.info, [t for q in run.questions for t in q.trials])

    diff = diff_runs(run_with("base", "SELECT 2 AS n"), run_with("head", "SELECT 5 AS n"))
    assert [(c.full_name, c.turn) for c in diff.answer_changes] == [("sales/drilldown", 2)]
    assert diff.answer_changes[0].summary().startswith("turn 2: 1 row → 1 row")
    text = render_diff(diff)
    assert "turn 2: 1 row → 1 row; base only: [2]; head only: [5]" in text
    assert "Reliability: base 0.50 → head 1.00" in text


def test_resume_asks_an_unfinished_conversation_from_turn_1(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.runs.events import ProgressEvent, QuestionGraded

    second = {**CONVERSATION, "name": "second"}
    root = _project(tmp_path, [CONVERSATION, second])
    answers = ["SELECT 3", "SELECT 2", Answer(answer="No.")]
    fake_agent(FakeAgent({"drilldown": answers, "second": answers}))

    def stop(event: ProgressEvent) -> None:
        if isinstance(event, QuestionGraded):
            raise KeyboardInterrupt

    project = load_project(root)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(project, "fake", RunOptions(name="half", concurrency=1), progress=stop)
    again = FakeAgent({"drilldown": answers, "second": answers})
    fake_agent(again)
    run = run_benchmark(project, None, RunOptions(resume="half"))
    asked = [(r.name, r.turn) for r in again.requests]
    assert len(asked) == 3 and [turn for _, turn in asked] == [1, 2, 3]
    assert len({name for name, _ in asked}) == 1
    assert [q.verdict for q in run.questions] == [P, P]
    assert run.accuracy.label() == "100% (2/2)"


def test_a_decision_on_a_conversation_is_tied_to_every_turn(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.records.hashes import review_hashes
    from sqlbench.runs.reviews import also_accept_proposal, decide
    from sqlbench.runs.runner import open_store

    def graded(folder: str, second_truth: str, second_sql: str) -> Any:
        root = _conversation_project(tmp_path / folder, second_truth)
        fake = FakeAgent({"drilldown": ["SELECT 3", second_sql, Answer(answer="No.")]})
        fake.default = "SELECT 1"
        fake_agent(fake)
        return root, run_benchmark(load_project(root), "fake")

    root, run = graded("a", "SELECT 2 AS n", "SELECT 2")
    same = graded("b", "SELECT 2 AS n", "SELECT 2")[1].questions[0].trials
    truth_moved = graded("c", "SELECT 4 AS n", "SELECT 2")[1].questions[0].trials
    answer_moved = graded("d", "SELECT 2 AS n", "SELECT 1 + 1")[1].questions[0].trials
    base = review_hashes(run.questions[0].trials)
    assert review_hashes(same) == base
    assert review_hashes(truth_moved).truth != base.truth  # turn 2's ground truth changed
    assert review_hashes(answer_moved).sql != base.sql  # turn 2's answer changed

    with open_store(load_project(root)) as store:
        decided = decide(store, run, run.questions[0], Verdict.PASS, decided_by="ana")
    assert decided.review.truth_hash == base.truth
    assert (
        also_accept_proposal(run.questions[0].model_copy(update={"human": decided.review})) is None
    )


def test_a_turn_whose_ground_truth_fails_is_flagged_before_and_during_a_run(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.engines.preflight import preflight

    broken = {
        "name": "drilldown",
        "turns": [
            {"question": "How many orders?", "sql": "SELECT 3 AS n"},
            {"question": "Only the big ones?", "sql": "SELECT n FROM missing_table"},
            {"question": "And next year?", "expect": "decline"},
        ],
    }
    root = _project(tmp_path, [broken])
    project = load_project(root)
    problems = [p for p in preflight(project) if "missing_table" in p.message]
    assert problems and problems[0].path == "eval_questions/q.yml"
    agent = FakeAgent({"drilldown": ["SELECT 3", "SELECT 1", Answer(answer="No.")]})
    fake_agent(agent)
    question = run_benchmark(project, "fake").questions[0]
    assert question.verdict is E
    assert question.reason.startswith("turn 2 of 3 error: the ground truth failed: ")
    assert question.reason.endswith("(turn 3 not asked)")
    assert [r.turn for r in agent.requests] == [1]  # turn 2's agent was not asked either


def test_the_question_list_names_conversations_and_declines(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    import json

    from sqlbench.report.questions import render_json, render_table

    root = _project(tmp_path, [CONVERSATION, DECLINE_QUESTIONS[0], DECLINE_QUESTIONS[3]])
    questions = load_project(root).questions
    table = render_table(questions)
    assert "conversation (3 turns)" in table and "expect: decline" in table
    assert table.endswith("3 questions in 1 space")  # none counted as without ground truth
    data = json.loads(render_json(questions))["questions"]
    assert data[0]["turns"][2] == {"question": "And next year?", "expect": "decline"}
    assert data[1]["expect"] == "decline" and "expect" not in data[2]


def test_behaviour_metrics_and_assertions_are_per_turn(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.agents.base import ToolCall
    from sqlbench.report.metric_format import metric_lines

    conversation = {
        **CONVERSATION,
        "expected_tools": [{"tool_name": "run_sql"}],
        "assertions": [
            {
                "label": "uses run_sql",
                "actual": "$.tool_calls[*].name",
                "operator": "contains",
                "expected": "run_sql",
                "type": "string",
            }
        ],
    }
    root = _project(tmp_path, [conversation])
    ran = [ToolCall(name="run_sql", arguments={"sql": "SELECT 3"})]
    fake_agent(
        FakeAgent(
            {
                "drilldown": [
                    Answer(sql="SELECT 3", tool_calls=ran),
                    Answer(sql="SELECT 2", tool_calls=[ToolCall(name="list_tables")]),
                    Answer(answer="No."),
                ]
            }
        )
    )
    run = run_benchmark(load_project(root), "fake")
    question = run.questions[0]
    turns = question.first.turns
    assert turns is not None
    # Turn 2 has the right result but never ran SQL: its assertion fails it.
    assert [t.verdict for t in turns] == [P, F, F]
    assert turns[1].reason == (
        "assertion 'uses run_sql' failed: 'list_tables' does not contain 'run_sql'; "
        "the result set matched"
    )
    assert [t.metrics["tool_selection_accuracy"].score for t in turns] == [1.0, 0.0, 0.0]
    assert question.reason.startswith("turn 2 of 3 fail")
    lines = metric_lines(question.trials)
    assert lines[0].startswith("tool_selection_accuracy: mean 33%")
    assert lines[-1] == "assertions: 1/3 passed"


def test_malformed_turns_get_one_clear_error_each(tmp_path: Path) -> None:
    from sqlbench.project.load import check_project

    text = (
        "eval_questions:\n"
        "  - name: a\n    turns: oops\n"
        "  - name: b\n    turns:\n      - just text\n"
        "  - name: c\n    turns: []\n"
    )
    (tmp_path / "eval_questions").mkdir()
    (tmp_path / "eval_questions/q.yml").write_text(text)
    errors = [(p.line, p.message) for p in check_project(tmp_path).problems]
    assert errors == [
        (3, "question 'a': turns: Input should be a valid list (got 'oops')"),
        (
            6,
            "question 'b': turns.0: Input should be a valid dictionary or instance of Turn "
            "(got 'just text')",
        ),
        (8, "question 'c': turns is empty: a conversation needs at least one turn"),
    ]


def test_a_person_decides_one_turn_and_the_conversation_follows(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    from sqlbench.errors import SqlbenchError
    from sqlbench.report.run_format import human_line
    from sqlbench.runs.reviews import decide
    from sqlbench.runs.runner import open_store

    root = _project(
        tmp_path, [CONVERSATION, {"name": "single", "question": "?", "sql": "SELECT 1"}]
    )
    words = Answer(answer="Two of them: orders 7 and 9.")
    fake_agent(
        FakeAgent({"drilldown": ["SELECT 3", words, Answer(answer="No.")], "single": "SELECT 1"})
    )
    project = load_project(root)
    run = run_benchmark(project, "fake", RunOptions(name="talk"))
    drilldown = run.question("sales/drilldown")
    assert drilldown is not None and drilldown.verdict is R
    assert drilldown.reason.startswith("turn 2 of 3 review: the answer is not SQL")
    with open_store(project) as store:
        with pytest.raises(SqlbenchError, match="there is no turn 4 to decide"):
            decide(store, run, drilldown, Verdict.PASS, turn=4, decided_by="ana")
        single = run.question("sales/single")
        assert single is not None
        with pytest.raises(SqlbenchError, match="is not a conversation"):
            decide(store, run, single, Verdict.PASS, turn=1, decided_by="ana")
        done = decide(store, run, drilldown, Verdict.PASS, turn=2, decided_by="ana")
        assert (done.review.verdict, done.review.turns) == (P, {2: P})
        again = store.load_run("talk")
    decided = again.question("sales/drilldown")
    assert decided is not None and decided.human is not None
    assert decided.verdict is R and decided.decided_verdict is P  # the automatic one is kept
    assert again.accuracy.label() == "100% (2/2, 1 decided by a person)"
    assert human_line(decided.human).startswith(
        "turn 2 pass (the conversation: pass), decided by ana"
    )
    # A later decision on turn 3 keeps the one on turn 2.
    with open_store(project) as store:
        done = decide(store, again, decided, Verdict.FAIL, turn=3, decided_by="bo")
    assert (done.review.verdict, done.review.turns) == (F, {2: P, 3: F})
