"""The ``http`` kind against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_servers import Reply, ScriptedServer

from sqlbench.agents import transport
from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent, validate_agent_config
from sqlbench.project.files import AgentConfig


def http_agent(**options: object) -> AgentConfig:
    return AgentConfig(name="api", kind="http", options=options, path="agents/api.yml", line=1)


def test_posts_the_request_and_reads_the_answer(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies.append(
        Reply(200, {"sql": "SELECT 1", "usage": {"input_tokens": 3, "output_tokens": 1}})
    )
    agent = build_agent(http_agent(url=server.url + "/ask"), context)
    answer = ask(agent, request_for("revenue", space="sales"), timeout_s=10, retries=0)
    assert answer.error is None and answer.sql == "SELECT 1"
    assert answer.usage is not None and answer.usage.input_tokens == 3
    sent = server.received[0]
    assert sent.path == "/ask"
    assert sent.body == {
        "name": "revenue",
        "space": "sales",
        "question": "How many orders?",
        "dialect": "duckdb",
        "branch": "main",
        "turn": 1,
        "messages": [{"role": "user", "content": "How many orders?"}],
    }
    assert sent.headers["Content-Type"] == "application/json"


def test_headers_resolve_env_at_call_time_and_never_leak(
    server: ScriptedServer, tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    env = {"AGENT_TOKEN": "s3cret-token"}
    context = AgentContext(project_root=tmp_path, env=env)
    agent = build_agent(
        http_agent(url=server.url, headers={"Authorization": "Bearer ${AGENT_TOKEN}"}), context
    )
    env["AGENT_TOKEN"] = "rotated-token"  # read when the request is sent, not when built
    server.replies.append(Reply(200, {"sql": "SELECT 1"}))
    assert ask(agent, request_for(), timeout_s=10, retries=0).sql == "SELECT 1"
    assert server.received[0].headers["Authorization"] == "Bearer rotated-token"

    # A server echoing the header back in an error: the message shows ${AGENT_TOKEN}.
    server.replies.append(Reply(401, {"detail": "bad token Bearer rotated-token"}))
    answer = ask(agent, request_for(), timeout_s=10, retries=0)
    assert answer.error is not None
    assert "rotated-token" not in answer.error and "${AGENT_TOKEN}" in answer.error
    assert answer.error.startswith(f"HTTP 401 from {server.url}: ")


def test_a_reply_echoing_a_secret_is_stored_in_its_env_form(
    server: ScriptedServer, tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    # Regression: only error messages were redacted; an answer or trace quoting the resolved
    # header (or URL) reached the run store, JSON, Markdown and JUnit outputs.
    env = {"AGENT_TOKEN": "s3cret-token", "API_KEY": "k3y"}
    context = AgentContext(project_root=tmp_path, env=env)
    agent = build_agent(
        http_agent(
            url=server.url + "/ask?key=${API_KEY}",
            headers={"Authorization": "Bearer ${AGENT_TOKEN}"},
            response={"sql": "$.sql", "answer": "$.echo", "tool_calls": "$.calls"},
        ),
        context,
    )
    echo = "called /ask?key=k3y with Bearer s3cret-token"
    calls = [{"name": "auth", "arguments": {"token": "s3cret-token"}, "output": echo}]
    server.replies.append(
        Reply(200, {"sql": "SELECT 's3cret-token'", "echo": echo, "calls": calls})
    )
    answer = ask(agent, request_for(), timeout_s=10, retries=0)
    assert answer.error is None
    dumped = answer.model_dump_json()
    assert "s3cret-token" not in dumped and "k3y" not in dumped
    assert answer.answer == "called /ask?key=${API_KEY} with Bearer ${AGENT_TOKEN}"
    assert answer.sql == "SELECT '${AGENT_TOKEN}'"


def test_a_reply_over_the_size_limit_is_an_agent_error(
    server: ScriptedServer,
    context: AgentContext,
    request_for: Callable[..., Request],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transport, "MAX_REPLY_BYTES", 2**20)
    server.replies.append(Reply(200, {"sql": "SELECT " + "1, " * 400_000 + "1"}))
    answer = ask(
        build_agent(http_agent(url=server.url), context), request_for(), timeout_s=10, retries=0
    )
    assert answer.error == (
        f"the reply from {server.url} is over 1 MB; an answer is SQL text or a JSON answer object"
    )


def test_a_missing_header_variable_is_an_agent_error(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    agent = build_agent(
        http_agent(url=server.url, headers={"X-Key": "${NOT_SET_ANYWHERE}"}), context
    )
    answer = ask(agent, request_for(), timeout_s=10, retries=0)
    assert answer.error is not None and "NOT_SET_ANYWHERE is not set" in answer.error
    assert server.received == []


def test_retries_429_then_succeeds_with_backoff(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies += [
        Reply(429, {"error": "slow down"}, headers={"Retry-After": "0.2"}),
        Reply(503, {"error": "overloaded"}),
        Reply(200, {"sql": "SELECT 2"}),
    ]
    agent = build_agent(http_agent(url=server.url), context)
    start = time.monotonic()
    answer = ask(agent, request_for(), timeout_s=10, retries=2, backoff_s=0.05)
    assert answer.error is None and answer.sql == "SELECT 2"
    assert len(server.received) == 3
    assert time.monotonic() - start >= 0.2  # Retry-After was honoured
    assert answer.latency_ms is not None and answer.latency_ms >= 200


def test_5xx_after_all_retries_is_an_error_with_the_body(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.respond = lambda request: Reply(500, {"error": "database is down"})
    agent = build_agent(http_agent(url=server.url), context)
    answer = ask(agent, request_for(), timeout_s=10, retries=1, backoff_s=0.01)
    assert answer.error == (
        f'HTTP 500 from {server.url}: {{"error": "database is down"}} (after 2 attempts)'
    )
    assert answer.unreachable == "answered 500" and answer.retries == 1  # not asked


def test_the_agents_own_error_reply_is_not_unreachable(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies += [Reply(400, {"error": "bad request"}), Reply(200, {"error": "no idea"})]
    agent = build_agent(http_agent(url=server.url), context)
    for _ in range(2):
        answer = ask(agent, request_for(), timeout_s=10, retries=2, backoff_s=0.01)
        assert answer.error is not None and answer.unreachable is None


def test_4xx_is_not_retried(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.respond = lambda request: Reply(404, {"error": "no such route"})
    answer = ask(
        build_agent(http_agent(url=server.url), context),
        request_for(),
        timeout_s=10,
        retries=3,
        backoff_s=0.01,
    )
    assert answer.error is not None and answer.error.startswith("HTTP 404")
    assert len(server.received) == 1


def test_connection_refused_is_retried_then_reported(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = build_agent(http_agent(url=f"http://127.0.0.1:{port}/ask"), context)
    answer = ask(agent, request_for(), timeout_s=10, retries=2, backoff_s=0.01)
    assert answer.error is not None
    assert answer.error.startswith(f"cannot reach http://127.0.0.1:{port}/ask: ")
    assert answer.error.endswith("(after 3 attempts)")


def test_slow_server_times_out(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies.append(Reply(200, {"sql": "SELECT 1"}, delay_s=3))
    agent = build_agent(http_agent(url=server.url, timeout_s=0.3), context)
    answer = ask(agent, request_for(), timeout_s=10, retries=2)
    assert answer.error == f"no reply from {server.url} within 0.3s"
    assert len(server.received) == 1


def test_jsonpath_response_mapping(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    # A Cortex-Analyst-shaped reply: the SQL and the text live in typed content blocks.
    server.respond = lambda request: Reply(
        200,
        {
            "message": {
                "role": "analyst",
                "content": [
                    {"type": "text", "text": f"Interpreting: {request.body['question']}"},
                    {"type": "sql", "statement": "SELECT count(*) FROM orders"},
                ],
            },
            "meta": {"tokens": {"in": 120, "out": 30}},
        },
    )
    agent = build_agent(
        http_agent(
            url=server.url,
            response={
                "sql": "$.message.content[?(@.type=='sql')].statement",
                "answer": "$.message.content[?(@.type=='text')].text",
                "error": "$.failure.reason",
            },
        ),
        context,
    )
    answer = ask(agent, request_for(question="How many orders?"), timeout_s=10, retries=0)
    assert answer.error is None
    assert answer.sql == "SELECT count(*) FROM orders"
    assert answer.answer == "Interpreting: How many orders?"


def test_jsonpath_mapping_errors(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    agent = build_agent(
        http_agent(url=server.url, response={"sql": "$.blocks[*].sql", "error": "$.failure"}),
        context,
    )
    cases = [
        (
            {"blocks": [{"sql": "SELECT 1"}, {"sql": "SELECT 2"}]},
            "the JSONPath $.blocks[*].sql for `sql` matched 2 values",
        ),
        ({"blocks": [{"sql": 7}]}, "wrong types: `sql`"),
        ({"blocks": [], "failure": "no table named orders"}, "no table named orders"),
    ]
    for body, reason in cases:
        server.replies.append(Reply(200, body))
        answer = ask(agent, request_for(), timeout_s=10, retries=0)
        assert answer.sql is None
        assert answer.error is not None and reason in answer.error, answer.error
    # A path that matches a null is a decline (no error); see also the test below.
    server.replies.append(Reply(200, {"blocks": [{"sql": None}]}))
    declined = ask(agent, request_for(), timeout_s=10, retries=0)
    assert (declined.sql, declined.error) == (None, None)


def test_a_reply_no_response_path_matches_is_an_agent_error(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    # Regression: a reply in another shape than the paths expect (the API changed, a typo in a
    # path) was read as "declined" on every question, giving review with no hint.
    agent = build_agent(
        http_agent(url=server.url, response={"sql": "$.message.sql", "answer": "$.text"}),
        context,
    )
    server.replies.append(Reply(200, {"msg": {"query": "SELECT 1"}, "note": "x" * 200}))
    answer = ask(agent, request_for(), timeout_s=10, retries=0)
    assert answer.sql is None
    assert answer.error is not None
    assert answer.error.startswith(
        "the reply matched none of the response paths (sql: $.message.sql, answer: $.text); "
        'reply starts: {"msg": {"query": "SELECT 1"}, "note": "xxx'
    )
    assert answer.error.endswith("…") and len(answer.error) < 200

    # A path that matches a null stays null: sql null beside an answer is a legitimate decline.
    server.replies.append(Reply(200, {"message": {"sql": None}, "text": "No such data."}))
    worded = ask(agent, request_for(), timeout_s=10, retries=0)
    assert (worded.sql, worded.answer, worded.error) == (None, "No such data.", None)
    server.replies.append(Reply(200, {"message": {"sql": None}}))
    declined = ask(agent, request_for(), timeout_s=10, retries=0)
    assert (declined.sql, declined.answer, declined.error) == (None, None, None)


def test_reply_that_is_not_json(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies.append(Reply(200, raw=b"<html>Gateway</html>"))
    answer = ask(
        build_agent(http_agent(url=server.url), context), request_for(), timeout_s=10, retries=0
    )
    assert answer.error is not None
    assert answer.error.startswith(f"the reply from {server.url} is not valid JSON")
    assert "'<html>Gateway</html>'" in answer.error


def test_reply_with_unknown_fields_without_a_mapping(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    server.replies.append(Reply(200, {"query": "SELECT 1"}))
    answer = ask(
        build_agent(http_agent(url=server.url), context), request_for(), timeout_s=10, retries=0
    )
    assert answer.error is not None and "unknown field(s) `query`" in answer.error


def test_requests_from_the_environment_proxy_settings_bypass(
    server: ScriptedServer, tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    # A proxy that does not exist, bypassed for 127.0.0.1 by no_proxy from the context env.
    env = {"http_proxy": "http://127.0.0.1:9", "no_proxy": "localhost,127.0.0.1"}
    context = AgentContext(project_root=tmp_path, env=env)
    server.replies.append(Reply(200, {"sql": "SELECT 1"}))
    answer = ask(
        build_agent(http_agent(url=server.url), context), request_for(), timeout_s=10, retries=0
    )
    assert answer.sql == "SELECT 1"
    assert len(server.received) == 1


def test_validation_of_http_keys() -> None:
    def problems(**options: object) -> list[str]:
        return [p.message for p in validate_agent_config(http_agent(**options))]

    assert (
        problems(
            url="https://agent.internal/ask", headers={"A": "${TOKEN}"}, response={"sql": "$.sql"}
        )
        == []
    )
    assert problems(url="ftp://x") == [
        "agent 'api': `url` must start with http:// or https:// (got 'ftp://x')"
    ]
    assert problems(url="https://x", response={"sq": "$.sql"}) == [
        "agent 'api': `response` key 'sq' is not an answer field; did you mean 'sql'? "
        "(fields: sql, answer, tool_calls, usage, error)"
    ]
    assert problems(url="https://x", response={"sql": "$.a["})[0].startswith(
        "agent 'api': `response.sql` is not a valid JSONPath ('$.a[')"
    )
    assert problems(url="https://x", headers={"A": "${BAD NAME}"}) == [
        "agent 'api': header A: '${BAD NAME}' is not a valid variable reference (use ${NAME}, "
        "NAME of letters, digits and _)"
    ]
    assert problems(url="https://x", timeout_s=0)[0].startswith(
        "agent 'api': key 'timeout_s': must be a finite number above 0 and at most 86400"
    )
    assert problems(url="https://x", timeout_s=float("inf")) == [
        "agent 'api': key 'timeout_s': must be a finite number above 0 and at most 86400 (got inf)"
    ]
    assert problems(url="https://x", header={}) == [
        "agent 'api': unknown key 'header' for kind http; did you mean 'headers'? "
        "(keys: url, headers, timeout_s, response, trace_format)"
    ]


def test_openai_messages_trace_mapped_by_jsonpath(
    server: ScriptedServer, context: AgentContext, request_for: Callable[..., Request]
) -> None:
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "1 row"},
        {"role": "assistant", "content": "Done."},
    ]
    server.replies.append(Reply(200, {"result": {"thread": messages, "query": "SELECT 1"}}))
    config = http_agent(
        url=server.url,
        trace_format="openai_messages",
        response={"messages": "$.result.thread", "sql": "$.result.query"},
    )
    assert validate_agent_config(config) == []
    answer = ask(build_agent(config, context), request_for(), timeout_s=10, retries=0)
    assert answer.error is None
    assert answer.sql == "SELECT 1" and answer.answer == "Done."
    assert [(c.name, c.output) for c in answer.tool_calls] == [("run_sql", "1 row")]


def test_messages_path_needs_the_openai_messages_format() -> None:
    problems = validate_agent_config(
        http_agent(url="http://127.0.0.1:1", response={"messages": "$.thread"})
    )
    assert len(problems) == 1 and "not an answer field" in problems[0].message
