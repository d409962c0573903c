"""The built-in ``llm`` agent: text-to-SQL over any OpenAI-compatible chat-completions endpoint.

The prompt carries the dialect, the warehouse schema (``engine.tables()``, after setup) and the
certified queries as examples. The model may call ``run_sql`` (through ``engine.run_agent``: the
statement guard, read-only, ``max_rows`` and ``query_timeout_s``) and ends with ``submit_sql``
(see ``llm_prompt`` for the protocol). Every tool call goes into the trace with its arguments
and output; token usage is summed over all requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError

from sqlbench.agents.base import Answer, Request, ToolCall, Usage
from sqlbench.agents.call import time_left
from sqlbench.agents.context import (
    ENV_BASE_URL,
    ENV_MODEL,
    AgentContext,
    LlmEndpoint,
    resolve_llm,
)
from sqlbench.agents.kinds import AgentKind, KindOptions, problem
from sqlbench.agents.llm_prompt import (
    RUN_SQL,
    SUBMIT_SQL,
    TOOLS,
    examples_text,
    final_sql,
    preview,
    schema_text,
    system_prompt,
)
from sqlbench.engines.limits import run_agent_sql
from sqlbench.errors import AgentError, Problem, QueryError, Severity
from sqlbench.project.files import AgentConfig, CertifiedQuery, LlmSettings, RunSettings
from sqlbench.text import one_line

if TYPE_CHECKING:
    from sqlbench.engines.base import Engine

_EXTRA_TURNS = 2
"""Model turns allowed beyond ``max_tool_calls`` (the submit, and one after a refused call)."""


class LlmOptions(KindOptions):
    """Keys of an ``llm`` agent; unset endpoint keys come from ``llm:`` / ``SQLBENCH_LLM_*``."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key."""
    temperature: float = Field(0.0, ge=0, le=2)
    max_tool_calls: int = Field(6, ge=0, le=50)
    """``run_sql`` calls allowed per question (0: no tool, answer directly)."""


class LlmAgent:
    """A text-to-SQL agent over a chat-completions endpoint; see the module docstring."""

    notice: str | None = None

    def __init__(
        self,
        name: str,
        endpoint: LlmEndpoint,
        *,
        engine: Engine,
        certified_queries: Mapping[str, CertifiedQuery],
        run: RunSettings,
        env: Mapping[str, str],
        temperature: float = 0.0,
        max_tool_calls: int = 6,
        warehouse_for: Callable[[str, str], tuple[Engine, RunSettings]] | None = None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.engine = engine
        self.warehouse_for = warehouse_for
        """The question's own warehouse and settings (``warehouses:``); None: ``engine``."""
        self.certified_queries = certified_queries
        self.run = run
        self.env = env
        self.temperature = temperature
        self.max_tool_calls = max_tool_calls
        self._schemas: dict[int, str] = {}
        """Schema text by engine (``id``): each warehouse's is read once."""
        self._schema_lock = threading.Lock()

    def _warehouse(self, request: Request) -> tuple[Engine, RunSettings]:
        """The engine and ``run:`` settings of the request's question."""
        if self.warehouse_for is None:
            return self.engine, self.run
        return self.warehouse_for(request.space, request.name)

    def answer(self, request: Request) -> Answer:
        """Converse with the model until it submits SQL, answers in words, or runs out."""
        engine, run = self._warehouse(request)
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": system_prompt(
                    dialect=request.dialect,
                    schema=self._schema_text(engine),
                    examples=examples_text(self.certified_queries),
                    max_tool_calls=self.max_tool_calls,
                ),
            },
            # The conversation so far (earlier questions and answers, then this turn's
            # question) as chat history: docs/conversations.md.
            *({"role": m["role"], "content": m["content"]} for m in request.messages),
        ]
        trace: list[ToolCall] = []
        began = time.monotonic()
        usage: Usage | None = None
        sql_calls = 0
        for _ in range(self.max_tool_calls + _EXTRA_TURNS):
            reply = self._chat(messages)
            usage = _add_usage(usage, reply.get("usage"), reply.get("model"))
            message = _message(reply)
            content = message.get("content") or ""
            if not isinstance(content, str):
                raise AgentError("the LLM reply's message content is not text")
            calls = message.get("tool_calls") or []
            if not calls:
                return Answer(
                    sql=final_sql(content),
                    answer=content.strip() or None,
                    tool_calls=trace,
                    usage=usage,
                )
            messages.append({"role": "assistant", "content": content or None, "tool_calls": calls})
            for call in calls:
                call_id, name, arguments = _parse_call(call)
                if (
                    name == SUBMIT_SQL
                    and isinstance(arguments, dict)
                    and _text(arguments.get("sql"))
                ):
                    trace.append(ToolCall(name=name, arguments=arguments, output="submitted"))
                    explanation = _text(arguments.get("explanation")) or content.strip()
                    return Answer(
                        sql=arguments["sql"].strip(),
                        answer=explanation or None,
                        tool_calls=trace,
                        usage=usage,
                    )
                started = (time.monotonic() - began) * 1000.0
                if name == RUN_SQL and sql_calls < self.max_tool_calls:
                    sql_calls += 1
                    output = self._run_sql(arguments, engine, run)
                elif name == RUN_SQL:
                    output = {
                        "error": f"the limit of {self.max_tool_calls} {RUN_SQL} calls is "
                        f"reached; call {SUBMIT_SQL} with your final query now"
                    }
                elif name == SUBMIT_SQL:
                    output = {"error": "submit_sql needs a non-empty `sql` argument"}
                else:
                    output = {"error": f"unknown tool {name!r}; tools: {RUN_SQL}, {SUBMIT_SQL}"}
                error = output.get("error") if isinstance(output, dict) else None
                trace.append(
                    ToolCall(
                        name=name,
                        arguments=arguments,
                        output=output,
                        error=str(error) if error else None,
                        started_ms=round(started, 3),
                        duration_ms=round((time.monotonic() - began) * 1000.0 - started, 3),
                    )
                )
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": json.dumps(output, default=str),
                    }
                )
        return Answer(
            error=f"the model did not submit SQL within {len(trace)} tool calls "
            f"({sql_calls} {RUN_SQL})",
            tool_calls=trace,
            usage=usage,
        )

    def _schema_text(self, engine: Engine) -> str:
        with self._schema_lock:
            if id(engine) not in self._schemas:
                self._schemas[id(engine)] = schema_text(engine.tables())
            return self._schemas[id(engine)]

    def _chat(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        tools = TOOLS if self.max_tool_calls > 0 else TOOLS[1:]
        payload = {
            "model": self.endpoint.model,
            "messages": messages,
            "temperature": self.temperature,
            "tools": tools,
        }
        headers = (
            {"Authorization": f"Bearer {self.endpoint.api_key}"} if self.endpoint.api_key else {}
        )
        left = time_left()
        # httpx (0.1-0.2 s to import) loads with the first request, not with the agent kinds.
        from sqlbench.agents.transport import post_json

        try:
            reply = post_json(
                self.endpoint.chat_url,
                payload,
                headers=headers,
                timeout_s=self.run.agent_timeout_s if left is None else left,
                env=self.env,
            )
        except AgentError as err:
            # A proxy or server may echo the request back: never show the key.
            if self.endpoint.api_key:
                err.args = (str(err).replace(self.endpoint.api_key, "<api key>"),)
            raise
        if not isinstance(reply, dict):
            raise AgentError(
                f"the LLM endpoint replied with {type(reply).__name__}, not a JSON object"
            )
        if reply.get("error"):
            raise AgentError(
                f"the LLM endpoint reported an error: "
                f"{one_line(json.dumps(reply['error'], default=str), 300)}"
            )
        return reply

    def _run_sql(self, arguments: Any, engine: Engine, run: RunSettings) -> dict[str, Any]:
        sql = _text(arguments.get("sql")) if isinstance(arguments, dict) else None
        if sql is None:
            return {"error": "run_sql needs a non-empty `sql` argument"}
        left = time_left()
        timeout_s = (
            run.query_timeout_s if left is None else min(run.query_timeout_s, max(left, 0.001))
        )
        try:
            limits = run.model_copy(update={"query_timeout_s": timeout_s})
            result = run_agent_sql(engine, sql, limits)
        except QueryError as err:
            return {"error": f"{err.kind.value}: {one_line(err.message, 300)}"}
        return preview(result.table)


def _message(reply: Mapping[str, Any]) -> dict[str, Any]:
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    raise AgentError(
        "the LLM reply has no choices[0].message; is base_url an OpenAI-compatible "
        "chat-completions endpoint?"
    )


def _parse_call(call: Any) -> tuple[str, str, Any]:
    """``(id, tool name, arguments)``; arguments stay text when they are not JSON."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise AgentError("the LLM reply has a tool call without a function name")
    raw = function.get("arguments")
    arguments: Any = raw
    if isinstance(raw, str):
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            arguments = raw
    return str(call.get("id", "")), function["name"], arguments


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _add_usage(total: Usage | None, reported: Any, model: Any = None) -> Usage | None:
    if not isinstance(reported, dict):
        return total
    prompt, completion = reported.get("prompt_tokens"), reported.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return total
    details = reported.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    base = total or Usage()
    return Usage(
        input_tokens=base.input_tokens + (prompt if isinstance(prompt, int) else 0),
        output_tokens=base.output_tokens + (completion if isinstance(completion, int) else 0),
        cached_tokens=base.cached_tokens + (cached if isinstance(cached, int) else 0),
        model=model if isinstance(model, str) and model else base.model,
    )


def build_llm_agent(name: str, options: LlmOptions, context: AgentContext) -> LlmAgent | None:
    """The llm agent for ``options`` and ``context``, or None when no endpoint is configured.

    Raises:
        AgentError: An endpoint without a model, a missing key variable, or no engine.
    """
    endpoint = resolve_llm(
        context.llm,
        context.env,
        base_url=options.base_url,
        model=options.model,
        api_key_env=options.api_key_env,
    )
    if endpoint is None:
        return None
    if context.engine is None:
        raise AgentError(
            f"agent '{name}' generates SQL with an LLM and needs the warehouse "
            "(an engine) for its schema and run_sql tool"
        )
    return LlmAgent(
        name,
        endpoint,
        engine=context.engine,
        certified_queries=context.certified_queries,
        run=context.run,
        env=context.env,
        temperature=options.temperature,
        max_tool_calls=options.max_tool_calls,
        warehouse_for=context.warehouse_for,
    )


def endpoint_warnings(
    agents: Iterable[AgentConfig], llm: LlmSettings, env: Mapping[str, str]
) -> list[Problem]:
    """A warning for each ``llm`` agent whose endpoint cannot be resolved in ``env``.

    ``sqlbench run`` stops (exit 2) when an ``llm`` agent has no base URL or no model in its
    own keys, in ``llm:`` of sqlbench.yml or in the ``SQLBENCH_LLM_*`` variables, or when a
    ``${VAR}`` or ``api_key_env`` it needs is not set. Validation says so early, as a warning at
    the agent's file and line, since the variables may well be set where the run happens. The
    caller passes the environment (the CLI: ``os.environ``); nothing here reads it.

    Args:
        agents: The project's agent configurations (other kinds are skipped).
        llm: ``llm:`` from sqlbench.yml.
        env: The environment the run is expected to see.

    Example:
        >>> gen = AgentConfig(name="gen", kind="llm", path="agents/gen.yml", line=2)
        >>> [(p.severity.value, p.line) for p in endpoint_warnings([gen], LlmSettings(), {})]
        [('warning', 2)]
        >>> endpoint_warnings([gen], LlmSettings(model="m"), {ENV_BASE_URL: "http://h/v1"})
        []
    """
    problems: list[Problem] = []
    for config in agents:
        if config.kind != KIND.name:
            continue
        try:
            options = LlmOptions.model_validate(config.options)
        except ValidationError:
            continue  # reported as an error by the kind's own validation
        message = _endpoint_message(options, llm, env)
        if message is not None:
            problems.append(problem(config, message, Severity.WARNING))
    return problems


def _endpoint_message(options: LlmOptions, llm: LlmSettings, env: Mapping[str, str]) -> str | None:
    variables = {"base_url": ENV_BASE_URL, "model": ENV_MODEL}
    given = {
        "base_url": (options.base_url, env.get(ENV_BASE_URL), llm.base_url),
        "model": (options.model, env.get(ENV_MODEL), llm.model),
    }
    missing = [key for key, values in given.items() if not any(v and v.strip() for v in values)]
    if not missing:
        try:
            endpoint = resolve_llm(
                llm,
                env,
                base_url=options.base_url,
                model=options.model,
                api_key_env=options.api_key_env,
            )
        except AgentError as err:
            return f"in this environment `sqlbench run` would stop: {err}"
        if endpoint is not None:
            return None
        missing = ["base_url"]  # every base_url given resolved to an empty string
    agent_keys = " and ".join(f"`{key}`" for key in missing)
    llm_keys = " and ".join(f"`llm.{key}`" for key in missing)
    names = " and ".join(variables[key] for key in missing)
    return (
        f"no LLM {' or '.join(missing)} is configured: set {agent_keys} on the agent, "
        f"{llm_keys} in sqlbench.yml, or {names} (not set in this environment); "
        f"`sqlbench run` stops without {'it' if len(missing) == 1 else 'them'}"
    )


def _build(config: AgentConfig, options: LlmOptions, context: AgentContext) -> LlmAgent:
    agent = build_llm_agent(config.name, options, context)
    if agent is None:
        raise AgentError(
            f"agent '{config.name}' (kind llm) has no endpoint: set `base_url` on "
            "the agent, `llm.base_url` in sqlbench.yml, or SQLBENCH_LLM_BASE_URL"
        )
    return agent


KIND = AgentKind(
    "llm",
    LlmOptions,
    _build,
    None,
    "built-in text-to-SQL over an OpenAI-compatible chat-completions endpoint",
)
