"""Each agent kind receives a conversation's thread (docs/conversations.md): ``http`` in the
body, ``llm`` as chat history (both against a real HTTP server on 127.0.0.1), ``python`` in the
request mapping, ``replay`` keyed by turn. ``command`` agents are covered end to end in
tests/runs/test_conversations.py."""

from __future__ import annotations

from pathlib import Path

from agent_servers import Reply, ScriptedServer

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent
from sqlbench.engines import open_engine
from sqlbench.project.files import AgentConfig, LlmSettings, RunSettings, Settings
from sqlbench.testing import write_project

THREAD = [
    {"role": "user", "content": "Revenue by region in 2024?"},
    {"role": "assistant", "content": "SELECT region, sum(amount) FROM orders GROUP BY 1"},
    {"role": "user", "content": "Now only EMEA."},
]


def second_turn() -> Request:
    return Request(
        name="drilldown",
        space="sales",
        question="Now only EMEA.",
        dialect="duckdb",
        branch="main",
        turn=2,
        messages=THREAD,
    )


def test_http_sends_the_turn_and_messages_in_the_body(
    server: ScriptedServer, context: AgentContext
) -> None:
    server.replies.append(Reply(200, {"sql": "SELECT 1"}))
    config = AgentConfig(name="api", kind="http", options={"url": server.url + "/ask"})
    answer = ask(build_agent(config, context), second_turn(), timeout_s=10, retries=0)
    assert answer.error is None
    body = server.received[0].body
    assert (body["turn"], body["messages"]) == (2, THREAD)


def test_llm_carries_the_thread_as_chat_history(tmp_path: Path, server: ScriptedServer) -> None:
    engine = open_engine(Settings(), tmp_path)
    server.replies.append(
        Reply(
            200,
            {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "I cannot."}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            },
        )
    )
    context = AgentContext(
        project_root=tmp_path,
        llm=LlmSettings(base_url=server.url + "/v1", model="m", api_key_env="TEST_LLM_KEY"),
        env={"TEST_LLM_KEY": "sk-test"},
        run=RunSettings(max_rows=10, query_timeout_s=5),
        dialect="duckdb",
        engine=engine,
    )
    config = AgentConfig(name="gen", kind="llm", options={})
    try:
        answer = ask(build_agent(config, context), second_turn(), timeout_s=10, retries=0)
    finally:
        engine.close()
    assert answer.error is None and answer.answer == "I cannot."
    sent = server.received[0].body["messages"]
    assert sent[0]["role"] == "system"
    assert sent[1:] == THREAD


def test_python_gets_the_thread_in_the_request_mapping(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "threaded.py": """
        def answer(request):
            said = request["messages"][1]["content"]
            return f"SELECT {request['turn']} AS turn, '{said}' AS before"
    """
        },
    )
    context = AgentContext(project_root=tmp_path, env={})
    config = AgentConfig(
        name="py", kind="python", options={"function": "threaded:answer"}, base_dir=tmp_path
    )
    answer = ask(build_agent(config, context), second_turn(), timeout_s=10, retries=0)
    assert answer.error is None
    assert answer.sql == f"SELECT 2 AS turn, '{THREAD[1]['content']}' AS before"


def test_replay_keys_records_by_turn(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "agents/answers.jsonl": (
                '{"name": "drilldown", "sql": "SELECT 1"}\n'
                '{"name": "drilldown", "turn": 2, "sql": "SELECT 2"}\n'
            )
        },
    )
    config = AgentConfig(
        name="rec",
        kind="replay",
        options={"path": "answers.jsonl"},
        path="agents/rec.yml",
        line=1,
        base_dir=tmp_path / "agents",
    )
    agent = build_agent(config, AgentContext(project_root=tmp_path, env={}))
    assert ask(agent, second_turn(), timeout_s=5, retries=0).sql == "SELECT 2"
    first = second_turn().model_copy(update={"turn": 1})
    assert ask(agent, first, timeout_s=5, retries=0).sql == "SELECT 1"
    third = second_turn().model_copy(update={"turn": 3})
    assert ask(agent, third, timeout_s=5, retries=0).error == (
        "no recorded answer for sales/drilldown turn 3 in agents/answers.jsonl"
    )
