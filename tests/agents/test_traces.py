"""trace_format: openai_messages on real-shaped OpenAI and Azure AI Foundry message arrays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sqlbench.agents.call import parse_answer
from sqlbench.agents.traces import TraceFormat
from sqlbench.errors import AgentError

OPENAI = TraceFormat.OPENAI_MESSAGES

# As the Chat Completions API returns them: arguments are JSON text, replies name the call.
OPENAI_MESSAGES = [
    {"role": "system", "content": "You answer questions with SQL."},
    {"role": "user", "content": "Revenue by region in 2023?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "list_tables", "arguments": "{}"},
            },
            {
                "id": "call_def",
                "type": "function",
                "function": {
                    "name": "run_sql",
                    "arguments": '{"sql": "SELECT region, SUM(amount) FROM revenue GROUP BY 1"}',
                },
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_abc", "content": "revenue, customers"},
    {"role": "tool", "tool_call_id": "call_def", "content": '{"error": "no such table"}'},
    {
        "role": "assistant",
        "content": "Here it is:\n```sql\nSELECT region, SUM(amount) FROM revenue GROUP BY 1\n```",
    },
]

# Azure AI Foundry's agent message schema: content items tool_call / tool_result / text.
AZURE_MESSAGES = [
    {
        "createdAt": "2025-03-26T17:27:35Z",
        "run_id": "run_1",
        "role": "assistant",
        "content": [
            {
                "type": "tool_call",
                "tool_call_id": "call_1",
                "name": "run_sql",
                "arguments": {"sql": "SELECT 1"},
            }
        ],
    },
    {
        "createdAt": "2025-03-26T17:27:37Z",
        "run_id": "run_1",
        "tool_call_id": "call_1",
        "role": "tool",
        "content": [{"type": "tool_result", "tool_result": {"rows": [[1]]}}],
    },
    {
        "createdAt": "2025-03-26T17:27:40Z",
        "run_id": "run_1",
        "role": "assistant",
        "content": [{"type": "text", "text": "The answer is 1."}],
    },
]


def test_openai_messages_become_tool_calls_answer_and_sql() -> None:
    answer = parse_answer(OPENAI_MESSAGES, OPENAI)
    assert [call.name for call in answer.tool_calls] == ["list_tables", "run_sql"]
    assert answer.tool_calls[1].arguments == {
        "sql": "SELECT region, SUM(amount) FROM revenue GROUP BY 1"
    }
    assert answer.tool_calls[0].output == "revenue, customers"
    assert answer.tool_calls[0].error is None
    assert answer.tool_calls[1].error == "no such table"
    assert answer.sql == "SELECT region, SUM(amount) FROM revenue GROUP BY 1"
    assert answer.answer is not None and answer.answer.startswith("Here it is")


def test_azure_content_items_become_tool_calls() -> None:
    answer = parse_answer(AZURE_MESSAGES, OPENAI)
    assert len(answer.tool_calls) == 1
    call = answer.tool_calls[0]
    assert (call.name, call.arguments, call.output) == (
        "run_sql",
        {"sql": "SELECT 1"},
        {"rows": [[1]]},
    )
    assert answer.answer == "The answer is 1."
    assert answer.sql is None  # answered in words


def test_an_object_with_messages_keeps_its_sql_and_usage() -> None:
    answer = parse_answer(
        {
            "messages": AZURE_MESSAGES,
            "sql": "SELECT 2",
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
        OPENAI,
    )
    assert answer.sql == "SELECT 2"
    assert answer.usage is not None and answer.usage.input_tokens == 5


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"role": "assistant"}, "needs a `messages` list"),
        ("not json", None),  # bare text stays SQL text, the format does not apply
        ({"messages": "x"}, "must be a list of chat messages, got str"),
        ([{"content": "hi"}], "message #1 is not an object with a role"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}],
            "message #1 has a tool call without function.name",
        ),
        (
            [{"role": "tool", "tool_call_id": "nope", "content": "x"}],
            "tool reply in message #1 has tool_call_id 'nope', which matches no earlier tool call",
        ),
        ({"messages": [], "trace": 1}, "unknown field(s) trace"),
    ],
)
def test_a_trace_that_does_not_fit_is_one_sentence(raw: object, message: str | None) -> None:
    if message is None:
        assert parse_answer(raw, OPENAI).sql == "not json"
        return
    with pytest.raises(AgentError) as info:
        parse_answer(raw, OPENAI)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_replay_agent_reads_openai_messages(tmp_path: Path) -> None:
    from sqlbench.agents.base import Request
    from sqlbench.agents.replay import ReplayAgent, load_records

    file = tmp_path / "answers.jsonl"
    file.write_text(json.dumps({"name": "q", "messages": OPENAI_MESSAGES}) + "\n")
    agent = ReplayAgent("r", load_records(file, "answers.jsonl"), "answers.jsonl", OPENAI)
    request = Request(name="q", space="auto", question="?", dialect="duckdb", branch="main")
    answer = agent.answer(request)
    assert isinstance(answer, type(parse_answer("SELECT 1")))
    assert [call.name for call in answer.tool_calls] == ["list_tables", "run_sql"]
