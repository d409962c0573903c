"""Asking an agent one question: timeout, retries, latency, and failures turned into answers.

``ask`` is what the run loop (and any Python caller) uses for every kind alike. It never raises
for an agent's failure: the returned ``Answer`` has ``error`` set to a one-line reason instead.

Each attempt runs in its own daemon thread (async agents in their own event loop there), so a
stuck agent can never hold the caller past its deadline. Kinds that can stop their own work
cleanly (the command kind kills its process tree) read the deadline with ``time_left()``.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import random
import threading
import time
from collections.abc import Coroutine, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import ValidationError

from sqlbench.agents.base import Agent, Answer, Request
from sqlbench.agents.sqltext import extract_sql, looks_like_words, starts_like_sql
from sqlbench.agents.traces import TraceFormat, adapt
from sqlbench.errors import AgentError, AgentTransientError
from sqlbench.hygiene import clean_data
from sqlbench.text import few_lines, one_line

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "sqlbench_agent_deadline", default=None
)
_GRACE_MAX_S = 1.0
"""How long past the deadline ``ask`` waits (at most; 10% of short timeouts) for a kind that
enforces its own timeout, so its clearer message (e.g. with stderr's tail) wins."""
_MAX_BACKOFF_S = 10.0
_ANSWER_FIELDS = ("sql", "answer", "tool_calls", "usage", "error")


class RetryLater(AgentTransientError):
    """A transient failure whose server said when to retry (HTTP ``Retry-After``)."""

    def __init__(
        self, message: str, retry_after_s: float | None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.status = status
        """The HTTP status (429, 503, ...), when the server answered."""


def endpoint_fault(err: AgentTransientError) -> str:
    """What an unreachable endpoint did, for "not asked: the agent's endpoint ...".

    Example:
        >>> endpoint_fault(RetryLater("HTTP 429 from x", None, 429))
        'answered 429'
        >>> endpoint_fault(AgentTransientError("cannot reach x: refused"))
        'refused or reset the connection'
    """
    status = getattr(err, "status", None)
    if status is not None:
        return f"answered {status}"
    return "refused or reset the connection"


def time_left() -> float | None:
    """Seconds until the current ``ask`` deadline (never negative); None outside ``ask``."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


def parse_answer(
    raw: Any, trace_format: TraceFormat = TraceFormat.SQLBENCH, *, as_recorded: bool = False
) -> Answer:
    """Validate what an agent returned and turn it into an ``Answer``.

    Accepted: an ``Answer``; a string (bare SQL text); a mapping with only the answer fields
    ``sql``, ``answer``, ``tool_calls``, ``usage``, ``error``, each of the right type; or,
    under another ``trace_format``, that format's shape (``sqlbench.agents.traces``).
    With ``as_recorded``, an answer object's ``sql`` is kept exactly as given, even in a
    Markdown fence (a replayed published prediction, run as its benchmark's evaluator runs it).

    Raises:
        AgentError: One sentence saying what is wrong (unknown fields, wrong types, empty SQL,
            a value that is neither text nor an object).

    Example:
        >>> parse_answer("SELECT 1").sql
        'SELECT 1'
    """
    if trace_format is not TraceFormat.SQLBENCH and not isinstance(raw, (Answer, str)):
        raw = adapt(raw, trace_format)
    if isinstance(raw, Answer):
        if raw.latency_ms is not None or raw.unreachable is not None or raw.retries:
            raw = raw.model_copy(update={"latency_ms": None, "unreachable": None, "retries": 0})
        return _checked(raw, as_recorded=as_recorded)
    if isinstance(raw, str):
        if not raw.strip():
            raise AgentError("the answer is empty: expected SQL text or a JSON answer object")
        return answer_from_text(raw)
    if isinstance(raw, Mapping):
        return _checked(_validate_mapping(raw), as_recorded=as_recorded)
    kind = "null" if raw is None else type(raw).__name__
    raise AgentError(f"the answer must be SQL text or an answer object, got {kind}")


def parse_output_text(text: str, trace_format: TraceFormat = TraceFormat.SQLBENCH) -> Answer:
    """Parse an agent's printed output: a JSON answer, a JSON string, or bare SQL text.

    Output starting with ``{``, ``[`` or ``"`` must be valid JSON (SQL never starts so).

    Raises:
        AgentError: Empty output, malformed JSON, or an invalid answer.
    """
    stripped = text.strip()
    if not stripped:
        raise AgentError("the agent printed nothing: expected SQL text or a JSON answer object")
    if stripped[0] in '{["':
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise AgentError(
                f"the answer is not valid JSON ({err.msg} at line {err.lineno} column "
                f"{err.colno}); output began: {one_line(stripped, 80)!r}"
            ) from err
        return parse_answer(value, trace_format)
    return parse_answer(stripped)


def _validate_mapping(raw: Mapping[Any, Any]) -> Answer:
    unknown = sorted(str(key) for key in raw if key not in _ANSWER_FIELDS)
    if unknown:
        note = " (sqlbench measures latency itself)" if "latency_ms" in unknown else ""
        names = ", ".join(f"`{key}`" for key in unknown)
        raise AgentError(
            f"the answer has unknown field(s) {names}{note}; allowed: {', '.join(_ANSWER_FIELDS)}"
        )
    try:
        return Answer.model_validate(dict(raw), strict=True)
    except ValidationError as err:
        details = []
        for item in err.errors()[:3]:
            where = ".".join(str(part) for part in item["loc"])
            got = one_line(repr(item.get("input")), 40)
            details.append(f"`{where}`: {item['msg'].lower()} (got {got})")
        raise AgentError(f"the answer has wrong types: {'; '.join(details)}") from err


def answer_from_text(text: str) -> Answer:
    """An answer printed as text: the SQL in it (a fenced block, a bare query, or a query
    with a sentence around it); text with no SQL is an answer in words.

    Example:
        >>> answer_from_text("```sql\\nSELECT 1\\n```").sql
        'SELECT 1'
        >>> answer_from_text("There are three customers.").sql is None
        True
        >>> answer_from_text("SELEC 1").sql
        'SELEC 1'
    """
    if starts_like_sql(text):
        return Answer(sql=text.strip())  # as printed
    sql = extract_sql(text)
    if sql is not None:
        return Answer(sql=sql)
    if looks_like_words(text):
        return Answer(answer=text.strip())
    return Answer(sql=text.strip())  # broken SQL (SELEC 1): it fails as a syntax error


def _checked(answer: Answer, *, as_recorded: bool = False) -> Answer:
    if answer.sql is not None and not answer.sql.strip():
        raise AgentError("the answer's `sql` is empty; leave it out (or null) to decline")
    if answer.sql is not None and not as_recorded and not starts_like_sql(answer.sql):
        # SQL in a Markdown fence or with a sentence around it, as models write it; SQL that
        # starts like SQL is kept exactly as sent. A `sql` with no SQL in it stays as sent too:
        # it fails as a syntax error.
        found = extract_sql(answer.sql)
        if found is not None:
            answer = answer.model_copy(update={"sql": found})
    usage = answer.usage
    if usage is not None and min(usage.input_tokens, usage.output_tokens, usage.cached_tokens) < 0:
        raise AgentError("the answer's `usage` has a negative token count")
    if usage is not None and usage.cached_tokens > usage.input_tokens:
        raise AgentError(
            "the answer's `usage.cached_tokens` is more than its `input_tokens` (cached tokens "
            "are counted among the input tokens)"
        )
    if answer.error is not None and not answer.error.strip():
        # An empty `error` carries no reason: treat it as no error (APIs send "" for none).
        answer = answer.model_copy(update={"error": None})
    return answer


def ask(
    agent: Agent,
    request: Request,
    *,
    timeout_s: float,
    retries: int,
    backoff_s: float = 0.5,
) -> Answer:
    """Ask ``agent`` one question; never raises for the agent's failures.

    Args:
        agent: Any agent (built-in kind, plugin, or ``FakeAgent``).
        request: The question.
        timeout_s: Deadline for the whole call, retries and backoff included.
        retries: How many times a transient failure (``AgentTransientError``: HTTP 429/5xx,
            connection refused or reset) is retried; other failures are not retried.
        backoff_s: First retry delay; doubles per retry (with jitter), at most 10 s, and at
            least what a ``Retry-After`` asked for.

    Returns:
        The validated answer with ``latency_ms`` (the whole call), or an answer whose
        ``error`` is a one-line reason: exception text, exit status with stderr's tail,
        timeout, malformed or wrongly typed output, or the agent's own ``error``. When the
        retries ran out on transient failures (the endpoint answered 429/5xx, or refused or
        reset the connection), ``unreachable`` also says what the endpoint did: the question
        was not asked.
    """
    start = time.monotonic()
    deadline = start + timeout_s
    attempt = 0
    while True:
        try:
            answer = _attempt(agent, request, deadline, timeout_s)
            break
        except AgentTransientError as err:
            delay = min(_MAX_BACKOFF_S, backoff_s * 2**attempt) * random.uniform(1.0, 1.25)
            if isinstance(err, RetryLater) and err.retry_after_s is not None:
                delay = max(delay, err.retry_after_s)
            if attempt >= retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                answer = Answer(error=one_line(f"{err}{tries}"), unreachable=endpoint_fault(err))
                break
            if time.monotonic() + delay >= deadline:
                answer = Answer(
                    error=one_line(f"{err} (no time left to retry in {timeout_s:g}s)"),
                    unreachable=endpoint_fault(err),
                )
                break
            time.sleep(delay)
            attempt += 1
        except _AttemptTimeout:
            answer = Answer(error=f"the agent did not answer within {timeout_s:g}s")
            break
        except AgentError as err:
            answer = Answer(error=few_lines(str(err)) or type(err).__name__)
            break
        except Exception as err:  # an agent's own failure becomes its verdict's reason
            answer = Answer(error=one_line(f"{type(err).__name__}: {err}"))
            break
    latency_ms = (time.monotonic() - start) * 1000.0
    return _valid_unicode(answer).model_copy(update={"latency_ms": latency_ms, "retries": attempt})


def _valid_unicode(answer: Answer) -> Answer:
    """The answer with lone surrogates and NUL replaced (they cannot be stored, sent to a
    database or written as JSON); SQL that held any is an agent error that says so."""
    try:
        if "\\u0000" not in answer.model_dump_json():
            return answer
    except ValueError:
        pass
    data, replaced = clean_data(answer.model_dump())
    cleaned = Answer.model_validate({**data, "replaced_chars": replaced})
    if replaced and cleaned.sql != answer.sql and not cleaned.error:
        cleaned = cleaned.model_copy(
            update={
                "error": "the agent's SQL held characters that are not valid text (a lone "
                "surrogate or NUL); they were replaced with U+FFFD and the SQL was not run"
            }
        )
    return cleaned


class _AttemptTimeout(Exception):
    """The attempt's thread did not finish by the deadline (plus grace)."""


def _attempt(agent: Agent, request: Request, deadline: float, timeout_s: float) -> Answer:
    if getattr(agent, "answers_at_once", False):
        # A recorded answer is looked up, never waited for: no thread to time it out.
        token = _DEADLINE.set(deadline)
        try:
            return parse_answer(agent.answer(request), as_recorded=_as_recorded(agent))
        finally:
            _DEADLINE.reset(token)
    runner = _AttemptThread(agent, request, deadline)
    runner.start()
    try:
        grace = min(_GRACE_MAX_S, 0.1 + 0.1 * timeout_s)
        result = runner.future.result(timeout=max(0.0, deadline - time.monotonic()) + grace)
    except FutureTimeout as err:
        runner.cancel()
        raise _AttemptTimeout(f"no answer within {timeout_s:g}s") from err
    return parse_answer(result, as_recorded=_as_recorded(agent))


def _as_recorded(agent: Agent) -> bool:
    """Whether the agent's SQL runs exactly as it gives it (``replay`` with
    ``sql_as_recorded: true``), even in a Markdown fence."""
    return bool(getattr(agent, "sql_as_recorded", False))


class _AttemptThread:
    """Runs one ``agent.answer`` call in a daemon thread with the deadline in its context."""

    def __init__(self, agent: Agent, request: Request, deadline: float) -> None:
        self.future: Future[Any] = Future()
        self._agent = agent
        self._request = request
        self._deadline = deadline
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False
        name = f"sqlbench-agent-{getattr(agent, 'name', 'agent')}"
        self._thread = threading.Thread(target=self._body, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        """Cancel an async agent's task (a sync one cannot be stopped; it is abandoned)."""
        with self._lock:
            self._cancelled = True
            if self._loop is not None and self._task is not None:
                self._loop.call_soon_threadsafe(self._task.cancel)

    def _body(self) -> None:
        _DEADLINE.set(self._deadline)
        try:
            result = self._agent.answer(self._request)
            if inspect.isawaitable(result):
                result = asyncio.run(self._drive(result))
            self.future.set_result(result)
        except Exception as err:
            self.future.set_exception(err)
        except SystemExit as err:
            self.future.set_exception(AgentError(f"the agent called sys.exit({err.code!r})"))
        except asyncio.CancelledError:
            self.future.set_exception(AgentError("the agent was cancelled"))

    async def _drive(self, awaitable: Any) -> Any:
        coroutine: Coroutine[Any, Any, Any] = _awaited(awaitable)
        task = asyncio.ensure_future(coroutine)
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._task = task
            if self._cancelled:
                task.cancel()
        return await task


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
