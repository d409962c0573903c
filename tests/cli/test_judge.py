"""Judged metrics through a real HTTP judge on 127.0.0.1: scripted, malformed, 429 then
success, slow past the timeout; the cache proven by the server's request count; custom
metrics; ``sqlbench judge RUN`` on a stored run."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agents"))
from agent_servers import Received, Reply, ScriptedServer

from sqlbench.metrics.judge import Judge, JudgeEndpoint
from sqlbench.metrics.judged import judged_metrics, pair_calls, parse_reply
from sqlbench.project.files import ExpectedTool, Question
from sqlbench.records.run import ToolCallRecord, TrialResult
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

Invoke = Callable[..., Result]


def chat(content: str, tokens: int = 42) -> Reply:
    return Reply(
        200,
        {"choices": [{"message": {"role": "assistant", "content": content}}],
         "usage": {"total_tokens": tokens}},
    )  # fmt: skip


def by_prompt(request: Received) -> Reply:
    """A judge that scores by what it is asked."""
    prompt = request.body["messages"][-1]["content"]
    if "Expected answer" in prompt:
        return chat('{"score": 0.9, "explanation": "Same totals, other wording."}')
    if "logical consistency" in prompt:
        return chat('```json\n{"score": 0.5, "explanation": "A redundant lookup."}\n```')
    if "polite" in prompt:
        return chat('{"score": 4, "explanation": "Polite enough."}')
    if "expected input" in prompt:
        return chat('{"score": 1, "explanation": "Same query."}')
    return chat('{"score": 0, "explanation": "?"}')


@pytest.fixture
def judge_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        server.respond = by_prompt
        yield server


QUESTIONS = """eval_questions:
  - name: revenue
    question: Total revenue?
    sql: SELECT 10 AS total
    ground_truth_output: Total revenue is 10.
    expected_tools:
      - {tool_name: run_sql, tool_input: {sql: SELECT 10 AS total}}
  - name: plain
    question: One?
    sql: SELECT 1
"""
ANSWERS = [
    {
        "name": "revenue",
        "sql": "SELECT 10 AS total",
        "answer": "Revenue was 10 in total.",
        "tool_calls": [
            {"name": "list_tables", "output": "t"},
            {"name": "run_sql", "arguments": {"sql": "SELECT 10 AS total"}, "output": "10"},
        ],
    },
    {"name": "plain", "sql": "SELECT 1"},
]
CUSTOM = """
metrics:
  - name: politeness
    prompt: "Is this answer polite? {{input}} -> {{output}} ({{status}}, {{sql}})"
    score_ranges: {min_score: [1, 2], median_score: [2, 4], max_score: [4, 5]}
"""


def project(tmp_path: Path, settings: str = "") -> Path:
    return write_project(
        tmp_path / "p",
        {
            "sqlbench.yml": settings or "{}\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": "".join(json.dumps(a) + "\n" for a in ANSWERS),
        },
    )


def judge_env(server: ScriptedServer) -> dict[str, str]:
    return {"SQLBENCH_JUDGE_BASE_URL": server.url + "/v1", "SQLBENCH_JUDGE_MODEL": "judge-1"}


def test_a_run_with_a_judge_stores_judged_metrics_and_caches_every_call(
    tmp_path: Path, judge_server: ScriptedServer
) -> None:
    root = project(tmp_path, CUSTOM)
    options = RunOptions(env=judge_env(judge_server))
    run = run_benchmark(load_project(root), "rec", options)
    revenue = run.question("auto/revenue")
    assert revenue is not None and revenue.verdict is Verdict.PASS
    metrics = revenue.first.metrics
    correct = metrics["answer_correctness"]
    assert (correct.score, correct.band, correct.judge_model) == (0.9, "high", "judge-1")
    assert correct.explanation == "Same totals, other wording."
    assert correct.judge_tokens == 42 and correct.prompt_hash
    assert metrics["logical_consistency"].score == 0.5
    assert metrics["logical_consistency"].band == "medium"
    execution = metrics["tool_execution_accuracy"]
    assert execution.score == 1.0
    assert (
        execution.detail["pairs"][0]["call"] == 1
        and execution.detail["pairs"][0]["output_score"] is None
    )  # NA: no tool_output expected
    polite = metrics["politeness"]
    assert (polite.score, polite.band) == (0.75, "medium")  # 4 on 1..5: median_score [2, 4]
    assert judge_server.received[0].path == "/v1/chat/completions"
    first = len(judge_server.received)
    assert first > 0
    # The same run again: every judge call is answered from the store's cache.
    again = run_benchmark(load_project(root), "rec", RunOptions(env=judge_env(judge_server)))
    assert len(judge_server.received) == first
    same = again.question("auto/revenue")
    assert same is not None and same.first.metrics["answer_correctness"].score == 0.9


def test_malformed_reply_is_a_metric_error_with_its_first_line(
    tmp_path: Path, judge_server: ScriptedServer
) -> None:
    judge_server.respond = lambda request: chat("I think it is fine.\nScore: high")
    run = run_benchmark(
        load_project(project(tmp_path)), "rec", RunOptions(env=judge_env(judge_server))
    )
    revenue = run.question("auto/revenue")
    assert revenue is not None and revenue.verdict is Verdict.PASS  # never changes a verdict
    metric = revenue.first.metrics["answer_correctness"]
    assert metric.score is None
    assert metric.error == (
        "the judge's reply did not parse (no numeric score): I think it is fine."
    )
    # A reply that did not parse is not cached: the next run asks again.
    before = len(judge_server.received)
    run_benchmark(load_project(project(tmp_path)), "rec", RunOptions(env=judge_env(judge_server)))
    assert len(judge_server.received) > before


def endpoint(server: ScriptedServer, **overrides: object) -> JudgeEndpoint:
    fields: dict[str, object] = {"base_url": server.url, "model": "m", "retries": 2}
    fields.update(overrides)
    return JudgeEndpoint(**fields)  # type: ignore[arg-type]


def trial() -> TrialResult:
    return TrialResult(
        space="auto", name="q", verdict=Verdict.PASS, reason="", question="Q?", answer="10"
    )


def question() -> Question:
    return Question(name="q", question="Q?", ground_truth_output="10")


def test_429_then_success_is_retried() -> None:
    with ScriptedServer() as server:
        server.replies = [
            Reply(429, {"error": "slow down"}, headers={"Retry-After": "0"}),
            chat('{"score": 1, "explanation": "ok"}'),
            chat('{"score": 1, "explanation": "ok"}'),
        ]
        metrics = judged_metrics(question(), trial(), Judge(endpoint(server), None))
        assert metrics["answer_correctness"].score == 1.0
        assert len(server.received) == 3  # the 429, its retry, logical consistency


def test_a_judge_answering_429_always_leaves_the_metric_not_judged() -> None:
    with ScriptedServer() as server:
        server.respond = lambda request: Reply(
            429, {"error": "slow down"}, headers={"Retry-After": "0"}
        )
        metrics = judged_metrics(question(), trial(), Judge(endpoint(server, retries=1), None))
        result = metrics["answer_correctness"]
        assert result.score is None and result.band is None  # never a low score
        assert result.error is not None
        assert result.error.startswith("not judged: the judge's endpoint answered 429")


def test_a_slow_judge_past_its_timeout_is_a_metric_error() -> None:
    with ScriptedServer() as server:
        server.respond = lambda request: Reply(200, {}, delay_s=2.0)
        judge = Judge(endpoint(server, timeout_s=0.3, retries=0), None)
        metrics = judged_metrics(question(), trial(), judge)
        error = metrics["answer_correctness"].error
        assert error is not None and "no reply from" in error and "within 0.3s" in error


def test_placeholders_take_the_answer_record() -> None:
    from sqlbench.metrics.judged import fill, placeholder_values

    record = trial().model_copy(update={"latency_ms": 1234.4, "agent_error": None})
    values = placeholder_values(question(), record)
    text = fill(
        "{{input}}|{{output}}|{{ground_truth}}|{{duration}}|{{status}}|{{tool_info}}", values
    )
    assert text == "Q?|10|10|1234 ms|pass|(no tool calls)"


def test_parse_reply_rules() -> None:
    assert parse_reply('{"score": 1, "explanation": "x"}') == (1.0, "x")
    with pytest.raises(Exception, match="outside 0-1"):
        parse_reply('{"score": 7}')
    with pytest.raises(Exception, match="no numeric score"):
        parse_reply('{"score": "high"}')


def test_pairing_takes_the_closest_call_of_the_tool_once() -> None:
    calls = [
        ToolCallRecord(name="run_sql", arguments={"sql": "SELECT a FROM t"}),
        ToolCallRecord(name="run_sql", arguments={"sql": "SELECT b FROM u"}),
    ]
    expected = [
        ExpectedTool(tool_name="run_sql", tool_input={"sql": "SELECT b FROM u"}),
        ExpectedTool(tool_name="run_sql", tool_input={"sql": "SELECT b FROM u"}),
        ExpectedTool(tool_name="run_sql", tool_input={"sql": "SELECT c"}),
        ExpectedTool(tool_name="search"),  # nothing to judge: NA
    ]
    assert [index for _, index in pair_calls(expected, calls)] == [1, 0, None]


def test_judge_command_on_a_stored_run(
    tmp_path: Path, judge_server: ScriptedServer, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    ran = invoke("run", "-C", str(root), "--agent", "rec", "--name", "first")
    assert "judged metrics are not computed: no judge is configured" in ran.stderr + ran.stdout
    assert judge_server.received == []
    refused = invoke("judge", "-C", str(root), "first", exit_code=2)
    assert "cannot judge: no judge is configured" in refused.stderr
    for key, value in judge_env(judge_server).items():
        monkeypatch.setenv(key, value)
    result = invoke("judge", "-C", str(root), "first")
    assert "Judged 2 answers of run first (3 judge requests" in result.stdout
    assert "answer_correctness: mean 90% · high 1 · medium 0 · low 0 (1 answer)" in result.stdout
    again = invoke("judge", "-C", str(root), "first")
    assert "(0 judge requests, the rest from the cache)" in again.stdout
    shown = invoke("show", "-C", str(root), "first", "auto/revenue")
    assert "answer_correctness: 0.90 (high)" in shown.stdout
    assert "judge (judge-1): Same totals, other wording." in shown.stdout


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (
            "  - name: x\n    prompt: 'Rate {{answer}}'\n"
            "    score_ranges: {min_score: [0, 1], median_score: [1, 2], max_score: [2, 3]}\n",
            "sqlbench.yml:3: error: metrics.0.prompt: Value error, unknown placeholder(s) "
            "{{answer}}",
        ),
        (
            "  - name: x\n    prompt: 'Rate {{output}}'\n"
            "    score_ranges: {min_score: [0, 2], median_score: [1, 2], max_score: [2, 3]}\n",
            "sqlbench.yml:4: error: metrics.0.score_ranges: Value error, min_score [.., 2) "
            "overlaps median_score [1, ..]",
        ),
        (
            "  - name: answer_correctness\n    prompt: 'Rate {{output}}'\n"
            "    score_ranges: {min_score: [0, 1], median_score: [1, 2], max_score: [2, 3]}\n",
            "sqlbench.yml:2: error: metrics: 'answer_correctness' is a built-in metric",
        ),
    ],
)
def test_custom_metric_problems_name_the_line(tmp_path: Path, metrics: str, message: str) -> None:
    from sqlbench.validation import validate_project

    root = project(tmp_path, "metrics:\n" + metrics)
    problems = [str(p) for p in validate_project(root).problems]
    assert any(p.startswith(message) for p in problems), problems


def test_the_key_and_a_templated_url_never_reach_a_stored_error(tmp_path: Path) -> None:
    from sqlbench.metrics.judge import resolve_judge
    from sqlbench.project.files import JudgeSettings

    with ScriptedServer() as server:
        # A server that echoes the request's headers and path back in its error body.
        server.respond = lambda request: Reply(
            401, {"error": f"bad key {request.headers.get('Authorization')} at {server.url}"}
        )
        settings = JudgeSettings(base_url="${JUDGE_URL}", model="m", api_key_env="JUDGE_KEY")
        env = {"JUDGE_URL": server.url + "/v1", "JUDGE_KEY": "sk-very-secret"}
        endpoint, _ = resolve_judge(settings, env)
        assert endpoint is not None
        metrics = judged_metrics(question(), trial(), Judge(endpoint, None))
        error = metrics["answer_correctness"].error
        assert error is not None and "HTTP 401 from ${JUDGE_URL}/chat/completions" in error
        assert "sk-very-secret" not in error and "***" in error


def test_judge_run_judges_a_conversation_turn_by_turn(
    tmp_path: Path, judge_server: ScriptedServer, invoke: Invoke
) -> None:
    """Each turn is judged against its own question (docs/conversations.md)."""
    root = write_project(
        tmp_path / "talk",
        {
            "sqlbench.yml": "{}\n",
            "eval_questions/q.yml": (
                "eval_questions:\n"
                "  - name: talk\n"
                "    ground_truth_output: The totals.\n"
                "    turns:\n"
                "      - {question: Total revenue?, sql: SELECT 10 AS total}\n"
                "      - {question: And next year?, expect: decline}\n"
            ),
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": (
                '{"name": "talk", "turn": 1, "sql": "SELECT 10", "answer": "10."}\n'
                '{"name": "talk", "turn": 2, "answer": "I cannot forecast."}\n'
            ),
        },
    )
    invoke("run", "-C", str(root), "--agent", "rec", "--name", "first")
    invoke("judge", "-C", str(root), "first", env=judge_env(judge_server))
    asked = [r.body["messages"][-1]["content"] for r in judge_server.received]
    assert any("Total revenue?" in prompt for prompt in asked)
    assert any("And next year?" in prompt for prompt in asked)
    from sqlbench.runs.locate import open_project_store

    with open_project_store(root) as store:
        trial = store.load_run("first").questions[0].first
    assert trial.metrics == {}
    assert trial.turns is not None
    assert [t.metrics["answer_correctness"].score for t in trial.turns] == [0.9, 0.9]
