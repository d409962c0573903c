"""Agents: every kind in docs/project-files.md behind one interface, and ``ask`` to call any of
them.

Typical use::

    context = AgentContext(project_root=root, certified_queries=project.certified_queries,
                           llm=settings.llm, env=os.environ, engine=engine, run=settings.run,
                           dialect=engine.dialect, agents=project.agents)
    agent = build_agent("auto", context)
    answer = ask(agent, request, timeout_s=120, retries=2)   # never raises for agent failures
"""

from __future__ import annotations

from sqlbench.agents.base import Agent, Answer, Request, ToolCall, Usage
from sqlbench.agents.call import RetryLater, ask, parse_answer, parse_output_text, time_left
from sqlbench.agents.context import AgentContext, LlmEndpoint, resolve_llm
from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.registry import (
    agent_notice,
    build_agent,
    get_kind,
    kind_names,
    register_kind,
    validate_agent_config,
)

__all__ = [
    "Agent",
    "AgentContext",
    "AgentKind",
    "Answer",
    "KindOptions",
    "LlmEndpoint",
    "Request",
    "RetryLater",
    "ToolCall",
    "Usage",
    "agent_notice",
    "ask",
    "build_agent",
    "get_kind",
    "kind_names",
    "parse_answer",
    "parse_output_text",
    "register_kind",
    "resolve_llm",
    "time_left",
    "validate_agent_config",
]
