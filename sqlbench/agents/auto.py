"""The ``auto`` agent: route a question to the most similar certified query, else generate.

A question is compared with every certified query's name and description (``similarity``);
when the best score reaches the threshold, the answer is that query's SQL and the routing
(matched name, score, runner-up) is recorded in the trace as a ``route`` tool call. Below the
threshold, the ``llm`` agent generates SQL when an endpoint is configured; with none, the answer
has no SQL (verdict ``review``) and says why, and the agent's ``notice`` says once how to
configure generation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import Field

from sqlbench.agents.base import Answer, Request, ToolCall
from sqlbench.agents.context import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, AgentContext
from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.llm import LlmAgent, LlmOptions, build_llm_agent
from sqlbench.agents.similarity import TfidfIndex
from sqlbench.project.files import AgentConfig, CertifiedQuery

ROUTE_TOOL = "route"
DEFAULT_THRESHOLD = 0.62
"""Chosen on the demo project's questions: see docs/performance.md for the numbers."""

NO_ENDPOINT_NOTICE = (
    "auto answers only the questions a certified query fits; no LLM endpoint is configured, so "
    "the other questions get no SQL (verdict review). To generate SQL for them, set "
    "`llm.base_url` and `llm.model` in sqlbench.yml (or the variables "
    f"{ENV_BASE_URL} and {ENV_MODEL}), with the key in {ENV_API_KEY} or in the variable named "
    "by `llm.api_key_env`."
)


class AutoOptions(KindOptions):
    """Keys of ``kind: auto`` (the implicit ``auto`` agent uses the defaults)."""

    threshold: float = Field(DEFAULT_THRESHOLD, ge=0, le=1)
    """Lowest similarity at which a question is answered with a certified query."""


class Route(NamedTuple):
    """Where a question was routed."""

    certified_query: str | None
    """The best-matching certified query (None when there are none)."""
    score: float
    runner_up: str | None
    runner_up_score: float | None
    matched: bool
    """True when ``score`` reaches the threshold."""


def certified_query_text(query: CertifiedQuery) -> str:
    """What a question is compared with: the query's name (words) and its description.

    Example:
        >>> certified_query_text(CertifiedQuery(name="revenue_by_quarter", sql="SELECT 1",
        ...                                     question="Revenue by calendar quarter"))
        'revenue by quarter. Revenue by calendar quarter'
    """
    name = query.name.replace("_", " ").replace("-", " ")
    return f"{name}. {query.question}" if query.question else name


class Router:
    """Ranks certified queries for a question."""

    def __init__(self, certified_queries: Mapping[str, CertifiedQuery], threshold: float) -> None:
        self.queries = list(certified_queries.values())
        self.threshold = threshold
        self.index = TfidfIndex([certified_query_text(query) for query in self.queries])

    def route(self, question: str) -> Route:
        """The best certified query for ``question`` and whether it clears the threshold."""
        ranked = self.index.rank(question) if self.queries else []
        if not ranked:
            return Route(None, 0.0, None, None, False)
        best = ranked[0]
        second = ranked[1] if len(ranked) > 1 else None
        return Route(
            self.queries[best.position].name,
            best.score,
            self.queries[second.position].name if second else None,
            second.score if second else None,
            best.score >= self.threshold,
        )


class AutoAgent:
    """Routes to certified queries, generating with ``delegate`` below the threshold."""

    def __init__(
        self,
        name: str,
        certified_queries: Mapping[str, CertifiedQuery],
        threshold: float,
        delegate: LlmAgent | None,
    ) -> None:
        self.name = name
        self.certified_queries = certified_queries
        self.router = Router(certified_queries, threshold)
        self.delegate = delegate
        self.notice: str | None = None if delegate is not None else NO_ENDPOINT_NOTICE

    def answer(self, request: Request) -> Answer:
        """The certified query's SQL, the delegate's answer, or no SQL with the reason."""
        route = self.router.route(request.question)
        call = ToolCall(
            name=ROUTE_TOOL,
            arguments={"question": request.question},
            output=self._route_output(route),
        )
        if route.matched and route.certified_query is not None:
            query = self.certified_queries[route.certified_query]
            return Answer(sql=query.sql, tool_calls=[call])
        if self.delegate is not None:
            generated = self.delegate.answer(request)
            return generated.model_copy(update={"tool_calls": [call, *generated.tool_calls]})
        return Answer(declined=self._no_fit_reason(route), tool_calls=[call])

    def _route_output(self, route: Route) -> dict[str, Any]:
        output: dict[str, Any] = {
            "certified_query": route.certified_query,
            "score": round(route.score, 4),
            "threshold": self.router.threshold,
            "matched": route.matched,
        }
        if route.runner_up is not None and route.runner_up_score is not None:
            output["runner_up"] = {
                "certified_query": route.runner_up,
                "score": round(route.runner_up_score, 4),
            }
        return output

    def _no_fit_reason(self, route: Route) -> str:
        if route.certified_query is None:
            closest = "the project has no certified queries"
        else:
            closest = (
                f"the closest, '{route.certified_query}', scored {route.score:.2f}, "
                f"below the threshold {self.router.threshold:g}"
            )
        return (
            f"No certified query fits this question ({closest}) and no LLM endpoint is "
            "configured to generate SQL."
        )


def _build(config: AgentConfig, options: AutoOptions, context: AgentContext) -> AutoAgent:
    generation = LlmOptions.model_validate({})
    delegate = build_llm_agent(f"{config.name} (generation)", generation, context)
    return AutoAgent(config.name, context.certified_queries, options.threshold, delegate)


KIND = AgentKind(
    "auto",
    AutoOptions,
    _build,
    None,
    "routes to the most similar certified query; generates with the llm endpoint",
)
