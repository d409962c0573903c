"""POSTing JSON over HTTP (httpx), with failures sorted into transient and permanent ones.

The one HTTP client of sqlbench: ``http`` and ``llm`` agents and judges all call ``post_json``.
HTTP 429 and 5xx, refused and reset connections raise ``AgentTransientError`` (``RetryLater``
when the server sent ``Retry-After``), which ``ask`` retries with backoff; everything else
raises ``AgentError``. Proxies come from the run's environment mapping (``http_proxy``,
``https_proxy``, ``no_proxy``), never from ``os.environ``.

Walls (docs/security.md): only ``http`` and ``https`` URLs, checked after ``${VAR}``
substitution; userinfo (``http://user:password@host/``) is parsed as userinfo and sent as basic
authentication; redirects are followed only within the same origin (scheme, host and port) --
a redirect to another origin is an agent error and nothing, least of all the configured headers,
is sent there; every reply body, success or error, is read up to ``MAX_REPLY_BYTES`` at most;
every message passes ``sqlbench.secrets.scrub``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from sqlbench import secrets
from sqlbench.agents.call import RetryLater
from sqlbench.errors import AgentError, AgentTransientError
from sqlbench.text import one_line

_BODY_TAIL = 200
MAX_REPLY_BYTES = 16 * 2**20
"""The largest reply read; a bigger one is an agent error (memory stays bounded)."""
MAX_ERROR_BODY_BYTES = 64 * 2**10
"""Of an error reply, only this much is read (its start is quoted in the message)."""
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)
_TRANSIENT = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def post_json(
    url: str,
    payload: Any,
    *,
    headers: Mapping[str, str],
    timeout_s: float,
    env: Mapping[str, str],
    shown_url: str | None = None,
) -> Any:
    """POST ``payload`` as JSON to ``url`` and return the reply's parsed JSON.

    Args:
        url: The resolved URL.
        payload: Anything ``json.dumps`` takes.
        headers: Extra request headers (already resolved).
        timeout_s: Timeout for connecting and each read.
        env: Environment for proxy settings.
        shown_url: How to name the URL in messages (its unresolved ``${VAR}`` form).

    Raises:
        AgentTransientError: HTTP 429/5xx or a refused/reset connection (retry later).
        AgentError: Any other failure: other HTTP statuses, timeouts, a reply that is not JSON,
            a URL that is not http(s), a redirect to another origin.
    """
    where = secrets.scrub(shown_url or url)
    target = _http_url(url, where)
    for value in headers.values():
        secrets.register(value.partition(" ")[2] or value)
    body = json.dumps(payload).encode("utf-8")
    sent_headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    timeout = httpx.Timeout(max(timeout_s, 0.001))
    method = "POST"
    try:
        with httpx.Client(
            timeout=timeout, follow_redirects=False, trust_env=False, proxy=_proxy(url, env)
        ) as client:
            for _ in range(MAX_REDIRECTS + 1):
                request = client.build_request(
                    method,
                    target,
                    content=body if method == "POST" else None,
                    headers=sent_headers,
                )
                response = client.send(request, stream=True)
                try:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        target, method = _redirect(target, response, method, where)
                        continue
                    ok = response.status_code < 400
                    data = _read_capped(response, MAX_REPLY_BYTES if ok else MAX_ERROR_BODY_BYTES)
                finally:
                    response.close()
                if not ok:
                    raise _status_error(response.status_code, data, response.headers, where)
                break
            else:
                raise AgentError(f"{where} redirected more than {MAX_REDIRECTS} times")
    except httpx.TimeoutException as err:
        raise AgentError(f"no reply from {where} within {timeout_s:.3g}s") from err
    except (
        httpx.ConnectError,
        httpx.RemoteProtocolError,
        httpx.ReadError,
        httpx.WriteError,
    ) as err:
        raise AgentTransientError(f"cannot reach {where}: {_detail(err)}") from err
    except (httpx.HTTPError, httpx.InvalidURL) as err:
        raise AgentError(f"cannot reach {where}: {_detail(err)}") from err
    if len(data) > MAX_REPLY_BYTES:
        raise AgentError(
            f"the reply from {where} is over {MAX_REPLY_BYTES // 2**20} MB; an answer is SQL "
            "text or a JSON answer object"
        )
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        began = secrets.scrub(one_line(data.decode("utf-8", "replace"), 80))
        raise AgentError(
            f"the reply from {where} is not valid JSON ({err}); it began: {began!r}"
        ) from err


def _http_url(url: str, where: str) -> httpx.URL:
    """``url`` parsed; only http and https are agent or judge URLs (after substitution)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as err:
        raise AgentError(f"{where} is not a valid URL ({_detail(err)})") from err
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise AgentError(
            f"{where} is not an http:// or https:// URL; sqlbench sends requests only over HTTP"
        )
    return parsed


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def _redirect(
    current: httpx.URL, response: httpx.Response, method: str, where: str
) -> tuple[httpx.URL, str]:
    """Where a redirect leads, refusing another origin or a scheme other than http(s)."""
    location = response.headers["location"]
    try:
        target = current.join(location)
    except (httpx.InvalidURL, ValueError) as err:
        raise AgentError(f"{where} redirected to an invalid URL ({_detail(err)})") from err
    shown = secrets.scrub(str(target.copy_with(query=None)))
    if target.scheme not in ("http", "https"):
        raise AgentError(f"{where} redirected to {shown}, which is not an http(s) URL")
    if _origin(target) != _origin(current):
        raise AgentError(
            f"{where} redirected to another origin ({shown}); sqlbench does not follow "
            "redirects to another host, port or scheme (credentials would go with them): "
            "set the URL to the final address"
        )
    if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
        method = "GET"  # as browsers do; 307 and 308 keep the POST and its body
    return target, method


def _read_capped(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the body (one more than allowed tells "too large")."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return b"".join(chunks)[: limit + 1]


def _detail(err: BaseException) -> str:
    return secrets.scrub(str(err) or type(err).__name__)


def _status_error(status: int, body: bytes, headers: httpx.Headers, where: str) -> AgentError:
    tail = secrets.scrub(one_line(body.decode("utf-8", "replace"), _BODY_TAIL))
    message = f"HTTP {status} from {where}" + (f": {tail}" if tail else "")
    if status == 429 or status >= 500:
        return RetryLater(message, _retry_after(headers), status)
    return AgentError(message)


def _retry_after(headers: httpx.Headers | None) -> float | None:
    """Seconds from a ``Retry-After: <seconds>`` header (HTTP dates are ignored)."""
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _proxy(url: str, env: Mapping[str, str]) -> str | None:
    """The proxy for ``url`` from ``env`` (None: connect directly)."""
    proxies = _proxies(url, env)
    scheme = url.split("://", 1)[0].lower()
    return proxies.get(scheme)


def _proxies(url: str, env: Mapping[str, str]) -> dict[str, str]:
    """Proxy settings for ``url`` from ``env`` (empty: connect directly)."""
    lowered = {key.lower(): value for key, value in env.items() if value}
    proxies = {
        scheme: lowered[f"{scheme}_proxy"]
        for scheme in ("http", "https")
        if f"{scheme}_proxy" in lowered
    }
    if not proxies:
        return {}
    try:
        host = httpx.URL(url).host
    except (httpx.InvalidURL, ValueError):
        host = ""
    if _bypassed(host, lowered.get("no_proxy", "")):
        return {}
    return proxies


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether ``no_proxy`` (``*`` or comma-separated host suffixes) covers ``host``.

    Example:
        >>> _bypassed("api.internal.example", "localhost,.internal.example")
        True
    """
    for entry in (item.strip().lower() for item in no_proxy.split(",")):
        if entry == "*":
            return True
        suffix = entry.lstrip(".")
        if suffix and (host == suffix or host.endswith("." + suffix)):
            return True
    return False
