"""Trace formats: answers in a common shape turned into sqlbench's own (docs/project-files.md).

``command``, ``http`` and ``replay`` agents name their output's shape with ``trace_format:``:

- ``sqlbench`` (the default): the answer object itself (``sql``, ``answer``, ``tool_calls``,
  ``usage``, ``error``).
- ``openai_messages``: chat messages, as a list or as ``{"messages": [...]}`` beside any of
  the answer fields ``sql``, ``usage`` and ``error``. Assistant messages carry tool calls in
  OpenAI's form (``tool_calls: [{id, function: {name, arguments}}]``, arguments as JSON text)
  or as content items ``{"type": "tool_call", "tool_call_id", "name", "arguments"}`` (Azure AI
  Foundry's agent message schema); replies are ``role: tool`` messages naming the call by
  ``tool_call_id``, their content text or ``{"type": "tool_result", "tool_result": ...}``
  items. The last assistant text is the answer; the SQL is the object's ``sql`` if given,
  else the last fenced ```sql block (or a bare query) of that text. A tool reply marked
  ``"is_error": true`` (or whose result is an object with an ``error`` key) records the
  call as failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sqlbench.agents.llm_prompt import final_sql
from sqlbench.errors import AgentError


class TraceFormat(StrEnum):
    """The shapes an agent's answer may come in."""

    SQLBENCH = "sqlbench"
    OPENAI_MESSAGES = "openai_messages"


_MESSAGE_FIELDS = ("messages", "sql", "usage", "error")


def adapt(raw: Any, trace_format: TraceFormat | str) -> Any:
    """``raw`` as a sqlbench answer (mapping or text); unchanged for ``sqlbench``.

    Raises:
        AgentError: One sentence saying what does not fit the named format.

    Example:
        >>> adapt([{"role": "assistant", "content": "```sql\\nSELECT 1\\n```"}],
        ...       "openai_messages")["sql"]
        'SELECT 1'
    """
    if TraceFormat(trace_format) is TraceFormat.SQLBENCH:
        return raw
    return from_openai_messages(raw)


def from_openai_messages(raw: Any) -> dict[str, Any]:
    """An answer mapping from chat messages (see the module docstring).

    Raises:
        AgentError: The value is not a message list (or an object holding one), a message is
            not an object or lacks ``role``, a tool call has no name, or a tool reply names a
            call that was never made.
    """
    extra: dict[str, Any] = {}
    if isinstance(raw, Mapping):
        if "messages" not in raw:
            single = " (this looks like one message, not a list)" if "role" in raw else ""
            raise AgentError(f"an openai_messages answer object needs a `messages` list{single}")
        unknown = sorted(str(key) for key in raw if key not in _MESSAGE_FIELDS)
        if unknown:
            raise AgentError(
                f"an openai_messages answer has unknown field(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(_MESSAGE_FIELDS)}"
            )
        extra = {key: raw[key] for key in ("sql", "usage", "error") if key in raw}
        messages = raw["messages"]
    else:
        messages = raw
    if not isinstance(messages, list):
        kind = "null" if messages is None else type(messages).__name__
        raise AgentError(f"openai_messages must be a list of chat messages, got {kind}")
    calls: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    answer: str | None = None
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise AgentError(f"openai_messages: message #{number} is not an object with a role")
        role = message["role"]
        if role == "assistant":
            for call_id, call in _assistant_calls(message, number):
                calls.append(call)
                if call_id is not None:
                    by_id[call_id] = call
            text = _text(message.get("content"))
            if text:
                answer = text
        elif role == "tool":
            _attach_reply(message, number, by_id)
    result: dict[str, Any] = {"tool_calls": calls}
    if answer is not None:
        result["answer"] = answer
    result.update(extra)
    if "sql" not in result and answer is not None:
        sql = final_sql(answer)
        if sql is not None:
            result["sql"] = sql
    return result


def _assistant_calls(
    message: Mapping[str, Any], number: int
) -> list[tuple[str | None, dict[str, Any]]]:
    found: list[tuple[str | None, dict[str, Any]]] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not name:
            raise AgentError(
                f"openai_messages: message #{number} has a tool call without function.name"
            )
        assert isinstance(function, Mapping)
        found.append(
            (
                _id(call.get("id")),
                {"name": name, "arguments": _arguments(function.get("arguments"))},
            )
        )
    content = message.get("content")
    if isinstance(content, list):
        for item in content:
            if isinstance(item, Mapping) and item.get("type") in ("tool_call", "function_call"):
                name = item.get("name")
                if not isinstance(name, str) or not name:
                    raise AgentError(
                        f"openai_messages: message #{number} has a tool_call item without a name"
                    )
                call_id = _id(item.get("tool_call_id", item.get("id")))
                found.append(
                    (call_id, {"name": name, "arguments": _arguments(item.get("arguments"))})
                )
    return found


def _attach_reply(
    message: Mapping[str, Any], number: int, by_id: dict[str, dict[str, Any]]
) -> None:
    content = message.get("content")
    call_id = _id(message.get("tool_call_id"))
    outputs: list[tuple[str | None, Any]] = []
    if isinstance(content, list) and any(
        isinstance(item, Mapping) and item.get("type") == "tool_result" for item in content
    ):
        for item in content:
            if isinstance(item, Mapping) and item.get("type") == "tool_result":
                outputs.append((_id(item.get("tool_call_id")) or call_id, item.get("tool_result")))
    else:
        outputs.append((call_id, _decoded(content)))
    for reply_id, output in outputs:
        if reply_id is None or reply_id not in by_id:
            shown = "no tool_call_id" if reply_id is None else f"tool_call_id {reply_id!r}"
            raise AgentError(
                f"openai_messages: tool reply in message #{number} has {shown}, "
                "which matches no earlier tool call"
            )
        call = by_id[reply_id]
        call["output"] = output
        error = _reply_error(message, output)
        if error is not None:
            call["error"] = error


def _reply_error(message: Mapping[str, Any], output: Any) -> str | None:
    if isinstance(output, Mapping) and output.get("error"):
        return str(output["error"])
    if message.get("is_error") is True:
        return output if isinstance(output, str) and output else "the tool reported an error"
    return None


def _arguments(value: Any) -> Any:
    # OpenAI sends arguments as JSON text; text that is not JSON is kept as the model wrote it.
    return _decoded(value)


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, Mapping) and item.get("type") in ("text", "output_text"):
                text = item.get("text")
                if isinstance(text, Mapping):  # Azure: {"type": "text", "text": {"value": ...}}
                    text = text.get("value")
                if isinstance(text, str) and text.strip():
                    parts.append(text.strip())
        return "\n".join(parts) or None
    return None


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
