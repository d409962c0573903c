"""``parse_answer`` and ``ask``: every invalid output is an error answer, never a crash."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from sqlbench.agents.base import Answer, Request, ToolCall, Usage
from sqlbench.agents.call import (
    RetryLater,
    ask,
    parse_answer,
    parse_output_text,
    time_left,
)
from sqlbench.errors import AgentError, AgentTransientError
from sqlbench.text import one_line

REQUEST = Request(name="q", space="auto", question="How many?", dialect="duckdb", branch="main")


# --- parse_answer / parse_output_text ---------------------------------------------------------


def test_bare_sql_text_is_the_sql() -> None:
    assert parse_output_text("  SELECT 1\n") == Answer(sql="SELECT 1")


def test_full_json_answer_is_validated_into_its_fields() -> None:
    answer = parse_output_text(
        '{"sql": "SELECT 2", "answer": "two", "tool_calls": [{"name": "run_sql", '
        '"arguments": {"sql": "SELECT 2"}, "output": [[2]]}], '
        '"usage": {"input_tokens": 10, "output_tokens": 3}}'
    )
    assert answer.sql == "SELECT 2"
    assert answer.answer == "two"
    assert answer.tool_calls == [
        ToolCall(name="run_sql", arguments={"sql": "SELECT 2"}, output=[[2]])
    ]
    assert answer.usage == Usage(input_tokens=10, output_tokens=3)


def test_json_string_is_sql() -> None:
    assert parse_output_text('"SELECT 3"').sql == "SELECT 3"


def test_answer_in_words_has_no_sql_and_no_error() -> None:
    answer = parse_output_text('{"answer": "I cannot answer that."}')
    assert answer.sql is None and answer.error is None and answer.answer


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ('{"sql": "SELECT 1",', "not valid JSON"),
        ("[1, 2]", "got list"),
        ('{"sql": 5}', "wrong types: `sql`: input should be a valid string (got 5)"),
        ('{"sql": "SELECT 1", "usage": {"input_tokens": "12"}}', "`usage.input_tokens`"),
        ('{"tool_calls": {"name": "x"}}', "`tool_calls`"),
        ('{"tool_calls": [{"arguments": {}}]}', "`tool_calls.0.name`"),
        ('{"sql": "SELECT 1", "confidence": 0.9}', "unknown field(s) `confidence`"),
        ('{"sql": "SELECT 1", "latency_ms": 3}', "sqlbench measures latency itself"),
        ('{"sql": "  "}', "`sql` is empty"),
        ("", "printed nothing"),
        ("   \n", "printed nothing"),
        ('{"usage": {"input_tokens": -1}}', "negative token count"),
    ],
)
def test_invalid_output_raises_a_clear_agent_error(output: str, reason: str) -> None:
    with pytest.raises(AgentError) as caught:
        parse_output_text(output)
    assert reason in str(caught.value)


@pytest.mark.parametrize(("value", "kind"), [(None, "null"), (42, "int"), (["SELECT 1"], "list")])
def test_values_that_are_neither_text_nor_objects_are_errors(value: Any, kind: str) -> None:
    with pytest.raises(AgentError, match=f"SQL text or an answer object, got {kind}"):
        parse_answer(value)


def test_error_field_is_kept_as_the_answers_error() -> None:
    answer = parse_answer({"error": "warehouse unreachable", "tool_calls": []})
    assert answer.error == "warehouse unreachable"


def test_blank_error_field_means_no_error() -> None:
    assert parse_answer({"sql": "SELECT 1", "error": ""}).error is None


def test_agent_supplied_latency_on_an_answer_object_is_dropped() -> None:
    assert parse_answer(Answer(sql="SELECT 1", latency_ms=5)).latency_ms is None


def test_one_line_collapses_and_cuts() -> None:
    assert one_line("a\n b", 10) == "a b"
    assert one_line("x" * 20, 10) == "x" * 9 + "…"


# --- ask ----------------------------------------------------------------------------------------


class Scripted:
    """A sync agent returning or raising the scripted items in turn."""

    def __init__(self, *items: Any, delay_s: float = 0.0) -> None:
        self.name = "scripted"
        self.items = list(items)
        self.calls = 0
        self.delay_s = delay_s

    def answer(self, request: Request) -> Any:
        self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


def test_ask_returns_the_answer_with_latency() -> None:
    answer = ask(Scripted(Answer(sql="SELECT 1")), REQUEST, timeout_s=5, retries=0)
    assert answer.sql == "SELECT 1" and answer.error is None
    assert answer.latency_ms is not None and answer.latency_ms >= 0


def test_ask_validates_what_a_plugin_agent_returns() -> None:
    answer = ask(Scripted({"sql": "SELECT 1", "bogus": 1}), REQUEST, timeout_s=5, retries=0)
    assert answer.sql is None
    assert answer.error is not None and "unknown field(s) `bogus`" in answer.error


def test_ask_retries_transient_errors_then_succeeds() -> None:
    agent = Scripted(AgentTransientError("HTTP 503"), AgentTransientError("HTTP 502"), "SELECT 1")
    answer = ask(agent, REQUEST, timeout_s=5, retries=2, backoff_s=0.01)
    assert answer.sql == "SELECT 1" and agent.calls == 3


def test_ask_gives_up_after_the_retries_and_says_how_many_attempts() -> None:
    agent = Scripted(*(AgentTransientError("HTTP 503 from x") for _ in range(3)))
    answer = ask(agent, REQUEST, timeout_s=5, retries=2, backoff_s=0.01)
    assert answer.error == "HTTP 503 from x (after 3 attempts)" and agent.calls == 3


def test_ask_does_not_retry_permanent_errors() -> None:
    agent = Scripted(AgentError("HTTP 404 from x"), "SELECT 1")
    answer = ask(agent, REQUEST, timeout_s=5, retries=3, backoff_s=0.01)
    assert answer.error == "HTTP 404 from x" and agent.calls == 1


def test_ask_honours_retry_after_within_the_deadline() -> None:
    agent = Scripted(RetryLater("HTTP 429", 0.3), "SELECT 1")
    start = time.monotonic()
    answer = ask(agent, REQUEST, timeout_s=5, retries=1, backoff_s=0.01)
    assert answer.sql == "SELECT 1" and time.monotonic() - start >= 0.3


def test_ask_does_not_sleep_past_the_deadline() -> None:
    agent = Scripted(RetryLater("HTTP 429", 30.0), "SELECT 1")
    answer = ask(agent, REQUEST, timeout_s=1, retries=1)
    assert answer.error is not None and "no time left to retry" in answer.error
    assert answer.latency_ms is not None and answer.latency_ms < 1000


def test_ask_turns_any_exception_into_a_one_line_error() -> None:
    answer = ask(Scripted(ValueError("bad\nthing")), REQUEST, timeout_s=5, retries=0)
    assert answer.error == "ValueError: bad thing"


def test_ask_survives_sys_exit_in_an_agent() -> None:
    answer = ask(Scripted(SystemExit(3)), REQUEST, timeout_s=5, retries=0)
    assert answer.error == "the agent called sys.exit(3)"


def test_ask_times_out_a_stuck_sync_agent() -> None:
    release = threading.Event()

    class Stuck:
        name = "stuck"

        def answer(self, request: Request) -> Answer:
            release.wait(10)
            return Answer(sql="SELECT 1")

    start = time.monotonic()
    answer = ask(Stuck(), REQUEST, timeout_s=0.2, retries=0)
    release.set()
    assert answer.error == "the agent did not answer within 0.2s"
    assert time.monotonic() - start < 3


def test_ask_cancels_a_stuck_async_agent() -> None:
    cancelled = threading.Event()

    class Sleepy:
        name = "sleepy"

        async def answer(self, request: Request) -> Answer:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return Answer(sql="SELECT 1")

    answer = ask(Sleepy(), REQUEST, timeout_s=0.2, retries=0)
    assert answer.error == "the agent did not answer within 0.2s"
    assert cancelled.wait(3)


def test_async_agents_run_in_their_own_loop_and_see_the_deadline() -> None:
    seen: list[float | None] = []

    class Async:
        name = "async"

        async def answer(self, request: Request) -> Answer:
            await asyncio.sleep(0)
            seen.append(time_left())
            return Answer(sql=f"SELECT '{request.name}'")

    answer = ask(Async(), REQUEST, timeout_s=5, retries=0)
    assert answer.sql == "SELECT 'q'"
    assert seen[0] is not None and 4 < seen[0] <= 5
    assert time_left() is None


def test_ask_from_many_threads_at_once() -> None:
    class Echo:
        name = "echo"

        async def answer(self, request: Request) -> str:
            await asyncio.sleep(0.01)
            return f"SELECT '{request.name}'"

    results: dict[str, str | None] = {}

    def work(i: int) -> None:
        request = REQUEST.model_copy(update={"name": f"q{i}"})
        results[f"q{i}"] = ask(Echo(), request, timeout_s=5, retries=0).sql

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {f"q{i}": f"SELECT 'q{i}'" for i in range(16)}


def test_python_error_text_keeps_the_exception_type_for_non_agent_errors() -> None:
    answer = ask(Scripted(KeyError("col")), REQUEST, timeout_s=5, retries=0)
    assert answer.error == "KeyError: 'col'"
    assert sys.exc_info() == (None, None, None)


def test_broken_sql_printed_bare_stays_sql_and_words_are_words() -> None:
    # Broken SQL fails as a syntax error; only a sentence is an answer in words (review).
    assert parse_output_text("SELEC 1") == Answer(sql="SELEC 1")
    assert parse_output_text("SELEC name FROM t") == Answer(sql="SELEC name FROM t")
    words = parse_output_text("I am not sure which table holds revenue.")
    assert words == Answer(answer="I am not sure which table holds revenue.")
