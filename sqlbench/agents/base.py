"""The agent interface: a request in, an answer (trace) out (docs/project-files.md, Agents).

A kind implements ``answer(request)`` (sync, or ``async def``). Timeouts, retries, latency and
turning failures into verdicts belong to the caller (``sqlbench.agents.call.ask``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Request(BaseModel):
    """What an agent is asked, sent as JSON to command/http agents."""

    model_config = ConfigDict(frozen=True)

    name: str
    space: str
    question: str
    dialect: str
    """sqlglot dialect name the agent's SQL must be written in (the warehouse's)."""
    branch: str
    turn: int = 1
    """Which turn of a conversation this is (1-based); 1 for a single question."""
    messages: list[dict[str, str]] = Field(default_factory=list)
    """The conversation so far in the OpenAI chat schema: earlier questions as ``user``
    messages, the agent's earlier answers as ``assistant`` messages, then this turn's question;
    a single question is one ``user`` message (docs/conversations.md). Filled from
    ``question`` when not given."""

    @model_validator(mode="before")
    @classmethod
    def _one_user_message(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("messages") and "question" in data:
            return {**data, "messages": [{"role": "user", "content": data["question"]}]}
        return data


class ToolCall(BaseModel):
    """One tool call in the agent's trace."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: Any = None
    output: Any = None
    error: str | None = None
    """Why the call failed (None: it succeeded); counted by tool call success."""
    started_ms: float | None = None
    """When the call started, in milliseconds from the start of the answer."""
    duration_ms: float | None = None
    """How long the call took, in milliseconds."""


class Usage(BaseModel):
    """Tokens the agent spent."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Of ``input_tokens``, those the endpoint served from its prompt cache (priced as
    ``cached`` in ``pricing:``)."""
    model: str | None = None
    """The model that answered, as the endpoint names it (the key into ``pricing:``)."""


class Answer(BaseModel):
    """The agent's answer and trace. Every field optional; unknown fields are an agent error."""

    model_config = ConfigDict(extra="forbid")

    sql: str | None = None
    answer: str | None = None
    """A text answer, when the agent answered in words."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    error: str | None = None
    declined: str | None = None
    """Why a built-in kind gave no SQL on purpose (``auto`` with no certified query fitting and
    no LLM endpoint); never read from an agent's reply."""
    latency_ms: float | None = None
    """Filled by sqlbench, never by the agent."""
    unreachable: str | None = None
    """What the agent's endpoint did when the answer could not be obtained after the retries
    (``answered 429``, ``refused or reset the connection``): the question was not asked, which
    is no failure of the agent (docs/verdicts.md). Set by ``agents.call``, never read from an
    agent."""
    retries: int = 0
    """How many times the agent was asked again after a transient failure (HTTP 429/5xx, a
    refused or reset connection); set by ``agents.call``, never read from an agent."""
    replaced_chars: int = 0
    """How many characters of the answer were not valid text (lone surrogates, NUL) and were
    replaced with U+FFFD before it was used (``agents.call``); never read from an agent."""


@runtime_checkable
class Agent(Protocol):
    """What every agent kind provides.

    A kind whose answers are looked up in memory, never waited for (``replay``), may set the
    class attribute ``answers_at_once = True``: ``ask`` then calls ``answer`` on the caller's
    thread, without the thread that times out slow agents.
    """

    name: str

    def answer(self, request: Request) -> Answer | Awaitable[Answer]:
        """Answer one question."""
        ...
