"""The built-in ``llm`` agent against a local OpenAI-compatible server over a real DuckDB."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_servers import Received, Reply, ScriptedServer

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext, LlmEndpoint, resolve_llm
from sqlbench.agents.llm import endpoint_warnings
from sqlbench.agents.registry import build_agent, validate_agent_config
from sqlbench.engines import open_engine, setup_files
from sqlbench.engines.base import Engine
from sqlbench.errors import AgentError, Severity
from sqlbench.project.files import (
    AgentConfig,
    CertifiedQuery,
    LlmSettings,
    RunSettings,
    Settings,
)
from sqlbench.testing import write_project

SETUP_SQL = """
CREATE TABLE orders AS
SELECT i AS order_id, 1 + i % 3 AS customer_id, (i * 10.5)::DECIMAL(10, 2) AS amount
FROM range(1, 8) t(i);
CREATE VIEW customer_totals AS
SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id;
"""
CERTIFIED = {
    "order_count": CertifiedQuery(
        name="order_count", question="Number of orders", sql="SELECT count(*) FROM orders"
    ),
}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """The project's default warehouse (embedded DuckDB), set up from a setup file."""
    root = write_project(tmp_path / "warehouse", {"setup.sql": SETUP_SQL})
    settings = Settings(setup=["setup.sql"])
    opened = open_engine(settings, root)
    opened.setup(root, setup_files(settings, root))
    yield opened
    opened.close()


def llm_context(
    tmp_path: Path, engine: Engine | None, server: ScriptedServer, **env: str
) -> AgentContext:
    return AgentContext(
        project_root=tmp_path,
        certified_queries=CERTIFIED,
        engine=engine,
        llm=LlmSettings(
            base_url=server.url + "/v1", model="test-model", api_key_env="TEST_LLM_KEY"
        ),
        env={"TEST_LLM_KEY": "sk-test", **env},
        run=RunSettings(max_rows=1000, query_timeout_s=5),
        dialect="duckdb",
    )


def completion(message: dict[str, Any], prompt_tokens: int, completion_tokens: int) -> Reply:
    return Reply(
        200,
        {
            "id": "cmpl",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        },
    )


def tool_call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        ],
    }


def llm_agent(**options: object) -> AgentConfig:
    return AgentConfig(name="gen", kind="llm", options=options, path="agents/gen.yml", line=1)


def test_run_sql_then_submit_over_a_real_engine(
    tmp_path: Path, engine: Engine, server: ScriptedServer, request_for: Callable[..., Request]
) -> None:
    def respond(request: Received) -> Reply:
        messages = request.body["messages"]
        if messages[-1]["role"] == "user":
            return completion(
                tool_call(
                    "run_sql",
                    {"sql": "SELECT customer_id, total FROM customer_totals ORDER BY customer_id"},
                ),
                300,
                25,
            )
        result = json.loads(messages[-1]["content"])
        best = max(result["rows"], key=lambda row: float(row[1]))[0]
        return completion(
            tool_call(
                "submit_sql",
                {
                    "sql": f"SELECT customer_id FROM customer_totals WHERE customer_id = {best}",
                    "explanation": "The customer with the largest total.",
                },
                "call_2",
            ),
            420,
            30,
        )

    server.respond = respond
    agent = build_agent(llm_agent(temperature=0.2), llm_context(tmp_path, engine, server))
    answer = ask(
        agent,
        request_for("top", question="Which customer spent the most?"),
        timeout_s=20,
        retries=0,
    )

    assert answer.error is None
    # The fake model picked customer 2 from the rows the real engine returned.
    assert answer.sql == "SELECT customer_id FROM customer_totals WHERE customer_id = 2"
    assert answer.answer == "The customer with the largest total."
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (720, 55)
    run_sql, submit = answer.tool_calls
    assert run_sql.name == "run_sql"
    assert run_sql.arguments == {
        "sql": "SELECT customer_id, total FROM customer_totals ORDER BY customer_id"
    }
    assert run_sql.output == {
        "columns": ["customer_id", "total"],
        "row_count": 3,
        "rows": [[1, "94.50"], [2, "126.00"], [3, "73.50"]],
    }
    assert submit.name == "submit_sql" and submit.output == "submitted"
    assert run_sql.error is None  # the trace's timings and errors (docs/agent-behaviour.md)
    assert run_sql.started_ms is not None and run_sql.started_ms >= 0
    assert run_sql.duration_ms is not None and run_sql.duration_ms >= 0

    first = server.received[0]
    assert first.path == "/v1/chat/completions"
    assert first.headers["Authorization"] == "Bearer sk-test"
    assert first.body["model"] == "test-model" and first.body["temperature"] == 0.2
    assert [tool["function"]["name"] for tool in first.body["tools"]] == ["run_sql", "submit_sql"]
    system, user = first.body["messages"]
    assert user == {"role": "user", "content": "Which customer spent the most?"}
    assert "Write one duckdb SQL query" in system["content"]
    assert (
        "- main.orders(order_id BIGINT, customer_id BIGINT, amount DECIMAL(10,2))"
        in (system["content"])
    )
    assert "- main.customer_totals(customer_id BIGINT, total DECIMAL(38,2))" in system["content"]
    assert "-- order_count: Number of orders\nSELECT count(*) FROM orders" in system["content"]
    second = server.received[1].body["messages"]
    assert second[2]["tool_calls"][0]["id"] == "call_1"
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_1"


def test_guard_refusals_and_errors_go_back_to_the_model(
    tmp_path: Path, engine: Engine, server: ScriptedServer, request_for: Callable[..., Request]
) -> None:
    server.replies += [
        completion(tool_call("run_sql", {"sql": "DROP TABLE orders"}), 10, 1),
        completion(tool_call("run_sql", {"sql": "SELECT nope FROM orders"}, "c2"), 10, 1),
        completion(tool_call("run_sql", "not json", "c3"), 10, 1),
        completion(tool_call("lookup_docs", {}, "c4"), 10, 1),
        completion({"content": "Final:\n```sql\nSELECT count(*) FROM orders\n```"}, 10, 1),
    ]
    agent = build_agent(llm_agent(), llm_context(tmp_path, engine, server))
    answer = ask(agent, request_for(), timeout_s=20, retries=0)
    assert answer.error is None
    assert answer.sql == "SELECT count(*) FROM orders"
    outputs = [call.output for call in answer.tool_calls]
    assert outputs[0]["error"].startswith("not_read_only: not a read-only query")
    assert outputs[1]["error"].startswith("runtime: ")
    assert outputs[2] == {"error": "run_sql needs a non-empty `sql` argument"}
    assert answer.tool_calls[2].arguments == "not json"
    assert outputs[3]["error"].startswith("unknown tool 'lookup_docs'")
    errors = [call.error for call in answer.tool_calls]
    assert all(errors[:4]) and errors[0] is not None and errors[0].startswith("not_read_only")
    # The refused DROP never reached the database.
    assert engine.run_truth(
        "SELECT count(*) AS n FROM orders", timeout_s=5, max_rows=10
    ).table.to_pylist() == [{"n": 7}]


def test_answer_in_words_has_no_sql(
    tmp_path: Path, engine: Engine, server: ScriptedServer, request_for: Callable[..., Request]
) -> None:
    server.replies.append(completion({"content": "The warehouse has no marketing data."}, 5, 5))
    answer = ask(
        build_agent(llm_agent(), llm_context(tmp_path, engine, server)),
        request_for(),
        timeout_s=20,
        retries=0,
    )
    assert (answer.sql, answer.error) == (None, None)
    assert answer.answer == "The warehouse has no marketing data."


def test_tool_budget_is_enforced(
    tmp_path: Path, engine: Engine, server: ScriptedServer, request_for: Callable[..., Request]
) -> None:
    server.respond = lambda request: completion(tool_call("run_sql", {"sql": "SELECT 1"}), 1, 1)
    agent = build_agent(llm_agent(max_tool_calls=2), llm_context(tmp_path, engine, server))
    answer = ask(agent, request_for(), timeout_s=20, retries=0)
    assert answer.sql is None
    assert answer.error == "the model did not submit SQL within 4 tool calls (2 run_sql)"
    assert len(server.received) == 4
    assert answer.tool_calls[2].output == {
        "error": "the limit of 2 run_sql calls is reached; call submit_sql with your final "
        "query now"
    }
    assert answer.usage is not None and answer.usage.input_tokens == 4


def test_server_errors_are_retried_and_bad_replies_reported(
    tmp_path: Path, engine: Engine, server: ScriptedServer, request_for: Callable[..., Request]
) -> None:
    agent = build_agent(llm_agent(), llm_context(tmp_path, engine, server))
    server.replies += [
        Reply(503, {"error": {"message": "overloaded"}}),
        completion({"content": "SELECT 1;"}, 1, 1),
    ]
    answer = ask(agent, request_for(), timeout_s=20, retries=1, backoff_s=0.01)
    assert (answer.sql, answer.error) == ("SELECT 1", None)

    server.replies.append(Reply(200, {"object": "list", "data": []}))
    answer = ask(agent, request_for(), timeout_s=20, retries=0)
    assert answer.error is not None and "no choices[0].message" in answer.error

    server.replies.append(Reply(401, {"error": {"message": "invalid api key sk-test"}}))
    answer = ask(agent, request_for(), timeout_s=20, retries=3, backoff_s=0.01)
    assert answer.error is not None and answer.error.startswith("HTTP 401 from ")
    assert "sk-test" not in answer.error


def test_build_needs_an_endpoint_a_model_and_an_engine(
    tmp_path: Path, engine: Engine, server: ScriptedServer
) -> None:
    bare = AgentContext(project_root=tmp_path, env={}, engine=engine)
    with pytest.raises(AgentError, match="has no endpoint: set `base_url` on the agent"):
        build_agent(llm_agent(), bare)
    with pytest.raises(AgentError, match=r"no model: set `llm\.model`"):
        build_agent(llm_agent(base_url=server.url), bare)
    with pytest.raises(AgentError, match="needs the warehouse"):
        build_agent(llm_agent(), llm_context(tmp_path, None, server))
    with pytest.raises(AgentError, match=r"llm\.api_key_env in sqlbench\.yml names TEST_LLM_KEY"):
        build_agent(
            llm_agent(),
            AgentContext(
                project_root=tmp_path,
                env={},
                engine=engine,
                llm=LlmSettings(base_url=server.url, model="m", api_key_env="TEST_LLM_KEY"),
            ),
        )


def test_llm_settings_merge_with_the_environment() -> None:
    settings = LlmSettings(
        base_url="http://file-host/v1", model="file-model", api_key_env="TEAM_KEY"
    )
    assert resolve_llm(LlmSettings(), {}) is None
    assert resolve_llm(settings, {"TEAM_KEY": "k1"}) == LlmEndpoint(
        "http://file-host/v1", "file-model", "k1"
    )
    env = {
        "SQLBENCH_LLM_BASE_URL": "http://env-host/v1",
        "SQLBENCH_LLM_MODEL": "env-model",
        "SQLBENCH_LLM_API_KEY": "k2",
    }
    assert resolve_llm(settings, env) == LlmEndpoint("http://env-host/v1", "env-model", "k2")
    assert resolve_llm(
        settings, {**env, "MINE": "k3"}, model="agent-model", api_key_env="MINE"
    ) == LlmEndpoint("http://env-host/v1", "agent-model", "k3")
    templated = LlmSettings(base_url="http://${LLM_HOST}/v1", model="m")
    assert resolve_llm(templated, {"LLM_HOST": "gpu-box:8000"}) == LlmEndpoint(
        "http://gpu-box:8000/v1", "m", None
    )
    assert "k1" not in repr(resolve_llm(settings, {"TEAM_KEY": "k1"}))


def test_validation_of_llm_keys() -> None:
    assert validate_agent_config(llm_agent(model="m", temperature=0.5, max_tool_calls=3)) == []
    assert [p.message for p in validate_agent_config(llm_agent(temperature=3))] == [
        "agent 'gen': key 'temperature': must be a finite number at least 0 and at most 2 (got 3)"
    ]
    assert [p.message for p in validate_agent_config(llm_agent(max_tools=3))] == [
        "agent 'gen': unknown key 'max_tools' for kind llm; did you mean 'max_tool_calls'? "
        "(keys: base_url, model, api_key_env, temperature, max_tool_calls)"
    ]


def test_endpoint_warnings_predict_what_run_would_stop_on() -> None:
    def warned(config: AgentConfig, llm: LlmSettings, env: dict[str, str]) -> list[str]:
        found = endpoint_warnings([config], llm, env)
        assert all(p.severity is Severity.WARNING and p.path == "agents/gen.yml" for p in found)
        return [p.message for p in found]

    none = LlmSettings()
    assert warned(llm_agent(), none, {}) == [
        "agent 'gen': no LLM base_url or model is configured: set `base_url` and `model` on "
        "the agent, `llm.base_url` and `llm.model` in sqlbench.yml, or SQLBENCH_LLM_BASE_URL "
        "and SQLBENCH_LLM_MODEL (not set in this environment); `sqlbench run` stops without them"
    ]
    # Any one source of each key is enough: the agent's keys, sqlbench.yml, the variables.
    assert warned(llm_agent(base_url="http://h/v1", model="m"), none, {}) == []
    assert warned(llm_agent(), LlmSettings(base_url="http://h/v1", model="m"), {}) == []
    env = {"SQLBENCH_LLM_BASE_URL": "http://h/v1", "SQLBENCH_LLM_MODEL": "m"}
    assert warned(llm_agent(), none, env) == []
    assert warned(llm_agent(model="m"), none, {"SQLBENCH_LLM_BASE_URL": " "})[0].startswith(
        "agent 'gen': no LLM base_url is configured: set `base_url` on the agent, "
    )
    # What resolving the endpoint would refuse at run time, in this environment.
    templated = LlmSettings(base_url="http://${LLM_HOST}/v1", model="m")
    assert warned(llm_agent(), templated, {}) == [
        "agent 'gen': in this environment `sqlbench run` would stop: environment variable "
        "LLM_HOST is not set (in llm.base_url); set it, or write ${LLM_HOST:-default}"
    ]
    assert warned(llm_agent(), templated, {"LLM_HOST": "gpu-box"}) == []
    keyed = llm_agent(base_url="http://h/v1", model="m", api_key_env="TEAM_KEY")
    assert warned(keyed, none, {}) == [
        "agent 'gen': in this environment `sqlbench run` would stop: the agent's api_key_env "
        "names TEAM_KEY, which is not set"
    ]
    # Other kinds, and options the kind's own validation already reports, are not looked at.
    other = AgentConfig(name="c", kind="command", options={"command": "x"}, path="a.yml", line=1)
    assert endpoint_warnings([other, llm_agent(temperature=9)], none, {}) == []


def test_run_sql_preview_shows_dates_past_pythons_range() -> None:
    import pyarrow as pa

    from sqlbench.agents.llm_prompt import preview

    shown = preview(pa.table({"d": pa.array([3_650_000], pa.date32())}))
    assert shown == {"columns": ["d"], "row_count": 1, "rows": [["11963-05-13"]]}


def test_each_question_sees_its_own_warehouse(tmp_path: Path, server: ScriptedServer) -> None:
    """In a project with ``warehouses:``, the llm agent's prompt carries the schema of the
    question's own warehouse, and its run_sql runs there (a SQLite file and a DuckDB)."""
    import sqlite3

    from sqlbench.runs.runner import run_benchmark
    from sqlbench.validation import load_project

    db = tmp_path / "concert.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE singer (name TEXT); INSERT INTO singer VALUES ('a'), ('b');")
    conn.commit()
    conn.close()
    tool_sql = {"count": "SELECT count(*) AS n FROM singer", "fish": "SELECT sum(n) AS n FROM fish"}
    prompts: dict[str, str] = {}
    outputs: dict[str, Any] = {}

    def respond(request: Received) -> Reply:
        messages = request.body["messages"]
        name = "count" if "singers" in messages[1]["content"] else "fish"
        if messages[-1]["role"] == "user":
            prompts[name] = messages[0]["content"]
            return completion(tool_call("run_sql", {"sql": tool_sql[name]}), 10, 1)
        outputs[name] = json.loads(messages[-1]["content"])
        return completion(tool_call("submit_sql", {"sql": tool_sql[name]}, "c2"), 10, 1)

    server.respond = respond
    root = write_project(
        tmp_path / "project",
        {
            "sqlbench.yml": {
                "warehouses": {"concert": f"sqlite:///{db}", "lake": {"setup": ["lake.sql"]}},
                "llm": {"base_url": server.url + "/v1", "model": "m"},
            },
            "lake.sql": "CREATE VIEW fish AS SELECT * FROM (VALUES ('cod', 3), ('eel', 5)) "
            "t(kind, n);\n",
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "count",
                        "question": "How many singers?",
                        "warehouse": "concert",
                        "sql": "SELECT count(*) FROM singer",
                    },
                    {
                        "name": "fish",
                        "question": "How many fish?",
                        "warehouse": "lake",
                        "sql": "SELECT sum(n) FROM fish",
                    },
                ]
            },
            "agents/gen.yml": {"agents": [{"name": "gen", "kind": "llm"}]},
        },
    )
    run = run_benchmark(load_project(root), "gen")
    assert {q.name: q.verdict.value for q in run.questions} == {"count": "pass", "fish": "pass"}
    assert "singer" in prompts["count"] and "fish" not in prompts["count"]
    assert "fish" in prompts["fish"] and "singer" not in prompts["fish"]
    # run_sql ran on each question's own warehouse (DuckDB's HUGEINT sum is shown as text)
    assert outputs["count"]["rows"] == [[2]] and outputs["fish"]["rows"] == [["8"]]
