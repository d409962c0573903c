"""The LLM judge: an OpenAI-compatible chat-completions endpoint, with its replies cached.

``resolve_judge`` reads ``judge:`` from sqlbench.yml and the ``SQLBENCH_JUDGE_*`` variables
(the variables win, as for ``llm:``). ``Judge.ask`` sends one prompt and returns the reply's
text and tokens; identical calls (same endpoint, model, temperature and messages) are answered
from the run store's cache, so re-running or re-judging costs nothing. HTTP 429/5xx and refused
connections are retried with backoff (at least what ``Retry-After`` asks); a timeout or any
other failure is a ``JudgeError`` for that one metric, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlbench.agents.call import RetryLater, endpoint_fault
from sqlbench.errors import AgentError, AgentTransientError, SqlbenchError
from sqlbench.project import envvars
from sqlbench.project.files import JudgeSettings
from sqlbench.text import one_line

ENV_BASE_URL = "SQLBENCH_JUDGE_BASE_URL"
ENV_MODEL = "SQLBENCH_JUDGE_MODEL"
ENV_API_KEY = "SQLBENCH_JUDGE_API_KEY"
_MAX_BACKOFF_S = 10.0
MAX_REPLY_DEPTH = 64
"""The deepest JSON nesting a judge reply (and the JSON in its text) may have."""
MAX_TOKENS = 2**31 - 1
"""A reply's ``usage.total_tokens`` above this (or negative) is not believed (None)."""


class JudgeError(SqlbenchError):
    """A judge call failed (unreachable, timed out, refused); the metric records why."""


class JudgeCache(Protocol):
    """Where judge replies are kept (the run store)."""

    def judge_reply(self, key: str) -> str | None:
        """The cached reply for ``key``, or None."""
        ...

    def cache_judge_reply(self, key: str, reply: str) -> None:
        """Keep ``reply`` for ``key``."""
        ...


@dataclass(frozen=True)
class JudgeEndpoint:
    """A resolved judge. The key is never stored or printed."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    timeout_s: float = 60.0
    retries: int = 2
    shown_url: str = ""
    """How messages name the endpoint: the URL as written (``${VAR}`` unresolved)."""


@dataclass(frozen=True)
class JudgeReply:
    """What the judge said, and what it cost."""

    text: str
    tokens: int | None
    cached: bool
    input_tokens: int | None = None
    """Prompt tokens the call spent (None when the endpoint did not say, or the reply came
    from the cache and cost nothing)."""
    output_tokens: int | None = None


def resolve_judge(
    settings: JudgeSettings, env: Mapping[str, str]
) -> tuple[JudgeEndpoint | None, str]:
    """The configured judge, or None with the sentence saying why there is none.

    Raises:
        JudgeError: A base URL without a model, or an ``api_key_env`` naming an unset variable.
    """
    # Named as written in sqlbench.yml (a ${VAR} there may hold a secret); a URL given by the
    # variable itself is shown as given.
    shown = "" if env.get(ENV_BASE_URL) else (settings.base_url or "")
    url = env.get(ENV_BASE_URL) or _resolved(settings.base_url, env, "judge.base_url")
    if not url:
        return None, (
            "no judge is configured (set `judge: {base_url, model}` in sqlbench.yml or "
            f"{ENV_BASE_URL} and {ENV_MODEL})"
        )
    model = env.get(ENV_MODEL) or _resolved(settings.model, env, "judge.model")
    if not model:
        raise JudgeError(
            f"a judge endpoint is configured ({url}) but no model: set `judge.model` in "
            f"sqlbench.yml or {ENV_MODEL}"
        )
    key = env.get(ENV_API_KEY)
    if not key and settings.api_key_env:
        if settings.api_key_env not in env:
            raise JudgeError(
                f"judge.api_key_env in sqlbench.yml names {settings.api_key_env}, which is not set"
            )
        key = env[settings.api_key_env]
    endpoint = JudgeEndpoint(
        url,
        model,
        key or None,
        settings.temperature,
        settings.timeout_s,
        settings.retries,
        shown_url=shown + "/chat/completions" if shown else "",
    )
    return endpoint, ""


def _resolved(value: str | None, env: Mapping[str, str], where: str) -> str | None:
    if value is None:
        return None
    try:
        return envvars.resolve(value, env)
    except SqlbenchError as err:
        raise JudgeError(f"{where}: {err}") from err


class Judge:
    """Asks the judge, through the cache. Safe to share between the run's worker threads."""

    def __init__(
        self,
        endpoint: JudgeEndpoint,
        cache: JudgeCache | None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.cache = cache
        self.env = dict(env or {})
        """The run's environment: proxy settings for the judge's requests."""
        self.requests = 0
        """Calls that reached the endpoint (not answered from the cache)."""
        self._count_lock = threading.Lock()

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self.endpoint.model

    def call_key(self, messages: list[dict[str, str]]) -> str:
        """The cache key of one call: what the judge is asked, and who asks it how."""
        payload = {
            "base_url": self.endpoint.base_url.rstrip("/"),
            "model": self.endpoint.model,
            "temperature": self.endpoint.temperature,
            "messages": messages,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def ask(self, messages: list[dict[str, str]], *, keep: Any = None) -> JudgeReply:
        """The judge's reply text to ``messages`` (from the cache when the same call was made).

        Args:
            messages: Chat messages.
            keep: Called with the reply text; only replies it accepts (returns True) are
                cached, so a reply that did not parse is asked again next time.

        Raises:
            JudgeError: The endpoint failed after retries, or its reply has no message text.
        """
        key = self.call_key(messages)
        if self.cache is not None:
            cached = self.cache.judge_reply(key)
            if cached is not None:
                data = bounded_json(cached, "the cached judge reply")
                if isinstance(data, dict) and isinstance(data.get("text"), str):
                    return JudgeReply(data["text"], _tokens(data.get("tokens")), cached=True)
        try:
            reply = self._post(messages)
            text, tokens = _content(reply)
            text = self._redacted(text)
            accepted = keep is None or keep(text)
        except JudgeError:
            raise
        except Exception as err:  # a hostile reply is this metric's "not judged", never a crash
            raise JudgeError(self._safe(f"the judge failed: {type(err).__name__}: {err}")) from err
        if self.cache is not None and accepted:
            self.cache.cache_judge_reply(key, json.dumps({"text": text, "tokens": tokens}))
        spent_in, spent_out = _split_usage(reply)
        return JudgeReply(
            text, tokens, cached=False, input_tokens=spent_in, output_tokens=spent_out
        )

    def _redacted(self, text: str) -> str:
        """The reply's text with the key (and any registered secret) masked: a judge may echo
        what it was sent, and the text is stored in the metric and the cache."""
        from sqlbench import secrets

        if self.endpoint.api_key:
            text = text.replace(self.endpoint.api_key, "***")
        return secrets.scrub(text)

    def _post(self, messages: list[dict[str, str]]) -> Any:
        endpoint = self.endpoint
        url = endpoint.base_url.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        payload = {
            "model": endpoint.model,
            "temperature": endpoint.temperature,
            "messages": messages,
        }
        deadline = time.monotonic() + endpoint.timeout_s
        attempt = 0
        while True:
            with self._count_lock:
                self.requests += 1
            left = deadline - time.monotonic()
            try:
                data = judge_post(
                    url, payload, headers, max(left, 0.001), self.env, endpoint.shown_url or None
                )
                return bounded_json(data, "the judge's reply")
            except AgentTransientError as err:
                if attempt >= endpoint.retries:
                    # An unreachable judge says nothing of the answer: the metric is "not
                    # judged" (no score), never a low score (docs/metrics.md).
                    tries = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise JudgeError(
                        self._safe(
                            f"not judged: the judge's endpoint {endpoint_fault(err)} ({err}{tries})"
                        )
                    ) from err
                delay = min(_MAX_BACKOFF_S, 0.5 * 2**attempt) * random.uniform(1.0, 1.25)
                if isinstance(err, RetryLater) and err.retry_after_s is not None:
                    delay = max(delay, err.retry_after_s)
                if not math.isfinite(delay) or time.monotonic() + delay >= deadline:
                    raise JudgeError(
                        self._safe(
                            f"the judge failed: {err} (no time left to retry within its "
                            f"timeout_s of {endpoint.timeout_s:g}s)"
                        )
                    ) from err
                time.sleep(delay)
                attempt += 1
            except AgentError as err:
                raise JudgeError(self._safe(f"the judge failed: {err}")) from err

    def _safe(self, message: str) -> str:
        """``message`` on one line with the key and the resolved URL never in it (a server may
        echo them back; metric errors are stored)."""
        endpoint = self.endpoint
        if endpoint.api_key:
            message = message.replace(endpoint.api_key, "***")
        if endpoint.shown_url:
            resolved = endpoint.base_url.rstrip("/")
            message = message.replace(
                resolved, endpoint.shown_url.removesuffix("/chat/completions")
            )
        return one_line(message)


def judge_post(
    url: str,
    payload: Any,
    headers: Mapping[str, str],
    timeout_s: float,
    env: Mapping[str, str],
    shown_url: str | None = None,
) -> Any:
    """The one place a judge request goes over HTTP (the project's transport; ``env`` gives
    its proxy settings; httpx loads with the first request, not with the run)."""
    from sqlbench.agents.transport import post_json

    return post_json(
        url, payload, headers=headers, timeout_s=timeout_s, env=env, shown_url=shown_url
    )


def bounded_json(data: Any, what: str) -> Any:
    """``data`` (JSON text, or what the transport parsed) checked against the bounds of an
    agent reply: nesting at most ``MAX_REPLY_DEPTH`` deep, no integer Python refuses to convert
    (over 4,300 digits); parsing text that passes them never recurses far.

    Raises:
        JudgeError: one sentence naming ``what`` and the bound it passed.
    """
    if isinstance(data, str | bytes):
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if _bracket_depth(text) > MAX_REPLY_DEPTH:
            raise JudgeError(f"{what} nests JSON over {MAX_REPLY_DEPTH} deep; it was not read")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise JudgeError(
                f"{what} is not JSON sqlbench reads: {one_line(str(err), 120)}"
            ) from err
    if _value_depth(data, MAX_REPLY_DEPTH + 1) > MAX_REPLY_DEPTH:
        raise JudgeError(f"{what} nests JSON over {MAX_REPLY_DEPTH} deep; it was not read")
    return data


def _bracket_depth(text: str) -> int:
    """How deep ``[``/``{`` nest in ``text`` outside strings (an upper bound is enough)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_REPLY_DEPTH:
                    return deepest
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def _value_depth(value: Any, stop: int) -> int:
    """The nesting depth of a parsed JSON value, counted without recursion, up to ``stop``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Callable[[], Any] | None = None
        if isinstance(item, dict):
            children = item.values
        elif isinstance(item, list):
            children = lambda item=item: item  # noqa: E731
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest >= stop:
            return deepest
        stack.extend((child, depth + 1) for child in children())
    return deepest


def _tokens(value: Any) -> int | None:
    """Tokens a reply reports, when believable (a non-negative integer within 32 bits)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def _content(reply: Any) -> tuple[str, int | None]:
    try:
        text = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as err:
        shown = one_line(json.dumps(reply, default=str), 80)
        raise JudgeError(f"the judge's reply has no choices[0].message.content: {shown}") from err
    if not isinstance(text, str):
        raise JudgeError("the judge's reply content is not text")
    usage = reply.get("usage") if isinstance(reply, dict) else None
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    return text, _tokens(tokens)


def _split_usage(reply: Any) -> tuple[int | None, int | None]:
    """The reply's prompt and completion tokens (None where not reported or not believable)."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return _tokens(usage.get("prompt_tokens")), _tokens(usage.get("completion_tokens"))
