"""The ``http`` kind: POST the JSON request to an agent API, read the answer from the reply.

Without ``response:``, the reply is the answer object itself (or a JSON string of SQL). With
``response:``, each answer field is read from the reply by a JSONPath (``sql: $.message.sql``),
so existing agent APIs plug in without code. ``${VAR}`` in the URL and headers is resolved
from the run's environment at call time and never appears in messages or traces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import Field

from sqlbench.agents.base import Answer, Request
from sqlbench.agents.call import parse_answer, time_left
from sqlbench.agents.context import AgentContext, resolve_env_refs
from sqlbench.agents.kinds import AgentKind, KindOptions, problem
from sqlbench.agents.traces import TraceFormat
from sqlbench.errors import AgentError, Problem
from sqlbench.project import envvars
from sqlbench.project.files import AgentConfig, Timeout
from sqlbench.text import one_line, suggest

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath

ANSWER_FIELDS = ("sql", "answer", "tool_calls", "usage", "error")
_EXCERPT = 80
"""Characters of the reply quoted when no ``response`` path matches it."""


class HttpOptions(KindOptions):
    """Keys of an ``http`` agent."""

    url: str = Field(min_length=1)
    """Where the request is POSTed; may hold ``${VAR}``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers; values may hold ``${VAR}`` (resolved per call, never stored)."""
    timeout_s: Timeout | None = None
    """Socket timeout per request (the range of ``run.agent_timeout_s``); default: the run's
    agent timeout."""
    response: dict[str, str] | None = None
    """Answer field -> JSONPath into the reply. None: the reply is the answer."""
    trace_format: TraceFormat = TraceFormat.SQLBENCH
    """The reply's shape; under ``openai_messages`` the ``response`` key ``messages`` may
    point at the message list (``sqlbench.agents.traces``)."""


class ResponsePath(NamedTuple):
    """One ``response:`` entry: the JSONPath as written and compiled."""

    text: str
    path: JSONPath


def compile_response_paths(
    response: Mapping[str, str], trace_format: TraceFormat = TraceFormat.SQLBENCH
) -> dict[str, ResponsePath]:
    """Parse a ``response:`` mapping's JSONPaths (``messages`` too under ``openai_messages``).

    Raises:
        ValueError: A key is not an answer field or a path does not parse.

    Example:
        >>> sorted(compile_response_paths({"sql": "$.message.sql"}))
        ['sql']
    """
    # Imported here: a project without an http agent never parses a JSONPath.
    from jsonpath_ng.exceptions import JSONPathError
    from jsonpath_ng.ext.parser import parse as parse_jsonpath

    paths: dict[str, ResponsePath] = {}
    fields: tuple[str, ...] = ANSWER_FIELDS
    if trace_format is TraceFormat.OPENAI_MESSAGES:
        fields = ("messages", *ANSWER_FIELDS)
    for field_name, path in response.items():
        if field_name not in fields:
            hint = suggest(field_name, fields)
            raise ValueError(
                f"`response` key '{field_name}' is not an answer field{hint} "
                f"(fields: {', '.join(fields)})"
            )
        try:
            paths[field_name] = ResponsePath(path, parse_jsonpath(path))
        except JSONPathError as err:
            raise ValueError(
                f"`response.{field_name}` is not a valid JSONPath ({path!r}): {err}"
            ) from err
    return paths


def extract_answer(reply: Any, paths: Mapping[str, ResponsePath]) -> dict[str, Any]:
    """Read each answer field from ``reply`` by its JSONPath (absent when nothing matches).

    A path that matches a null gives null (``sql`` null with an ``answer`` is a decline). A
    reply that none of the paths match at all is not an answer in the configured shape (the
    agent API changed, or the paths are wrong), so it is an agent error, not a decline.

    Raises:
        AgentError: A path matches more than one value, or no path matches anything; the
            message names the paths and quotes the start of the reply.

    Example:
        >>> reply = {"message": {"content": [{"type": "sql", "statement": "SELECT 1"}]}}
        >>> paths = compile_response_paths(
        ...     {"sql": "$.message.content[?(@.type=='sql')].statement"})
        >>> extract_answer(reply, paths)
        {'sql': 'SELECT 1'}
    """
    mapped: dict[str, Any] = {}
    for field_name, (text, path) in paths.items():
        matches = [match.value for match in path.find(reply)]
        if len(matches) > 1:
            raise AgentError(
                f"the JSONPath {text} for `{field_name}` matched {len(matches)} "
                "values in the reply; make it select exactly one"
            )
        if matches:
            mapped[field_name] = matches[0]
    if paths and not mapped:
        listed = ", ".join(f"{field_name}: {text}" for field_name, (text, _) in paths.items())
        excerpt = one_line(json.dumps(reply, ensure_ascii=False, default=str), _EXCERPT)
        raise AgentError(
            f"the reply matched none of the response paths ({listed}); reply starts: {excerpt}"
        )
    return mapped


class HttpAgent:
    """POSTs each request; see the module docstring."""

    notice: str | None = None

    def __init__(
        self, name: str, options: HttpOptions, env: Mapping[str, str], default_timeout_s: float
    ) -> None:
        self.name = name
        self.options = options
        self.env = env
        self.default_timeout_s = options.timeout_s or default_timeout_s
        self.paths = (
            compile_response_paths(options.response, options.trace_format)
            if options.response
            else None
        )

    def answer(self, request: Request) -> Answer:
        """POST the request and read the answer from the reply."""
        where = f"agent '{self.name}'"
        url = resolve_env_refs(self.options.url, self.env, f"the url of {where}")
        headers = {
            key: resolve_env_refs(value, self.env, f"header {key} of {where}")
            for key, value in self.options.headers.items()
        }
        left = time_left()
        timeout_s = self.default_timeout_s if left is None else min(self.default_timeout_s, left)
        # A server may echo the URL or a header back: put the ${VAR} form back before anything
        # of the reply (an error, the answer, the trace) can be shown or stored.
        templates = [self.options.url, *self.options.headers.values()]
        # httpx (0.1-0.2 s to import) loads with the first request, not with the agent kinds.
        from sqlbench.agents.transport import post_json

        try:
            reply = post_json(
                url,
                request.model_dump(),
                headers=headers,
                timeout_s=timeout_s,
                env=self.env,
                shown_url=self.options.url,
            )
        except AgentError as err:
            err.args = (envvars.redact(str(err), templates, self.env),)
            raise
        reply = envvars.redact_data(reply, templates, self.env)
        trace_format = self.options.trace_format
        if self.paths is None:
            return parse_answer(reply, trace_format)
        if not isinstance(reply, dict):
            raise AgentError(
                f"the reply is {type(reply).__name__}, not a JSON object, so the "
                "`response` JSONPaths cannot be applied"
            )
        mapped = extract_answer(reply, self.paths)
        if trace_format is TraceFormat.OPENAI_MESSAGES and "messages" not in mapped:
            raise AgentError("the `response` paths found no `messages` in the reply")
        return parse_answer(mapped, trace_format)


def _check(config: AgentConfig, options: HttpOptions) -> list[Problem]:
    problems = []
    for what, text in [
        ("url", options.url),
        *((f"header {k}", v) for k, v in options.headers.items()),
    ]:
        error = envvars.template_error(text)
        if error:
            problems.append(problem(config, f"{what}: {error}"))
    if not options.url.lstrip().lower().startswith(("http://", "https://", "${")):
        problems.append(
            problem(config, f"`url` must start with http:// or https:// (got {options.url!r})")
        )
    if options.response is not None:
        try:
            compile_response_paths(options.response, options.trace_format)
        except ValueError as err:
            problems.append(problem(config, str(err)))
    return problems


def _build(config: AgentConfig, options: HttpOptions, context: AgentContext) -> HttpAgent:
    return HttpAgent(config.name, options, context.env, context.run.agent_timeout_s)


KIND = AgentKind(
    "http",
    HttpOptions,
    _build,
    _check,
    "POSTs the JSON request to a URL; JSONPaths map the reply to an answer",
)
