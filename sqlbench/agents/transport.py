"""POSTing JSON over stdlib HTTP, with failures sorted into transient and permanent ones.

Used by the ``http`` and ``llm`` kinds. HTTP 429 and 5xx, refused and reset connections raise
``AgentTransientError`` (``RetryLater`` when the server sent ``Retry-After``), which ``ask``
retries with backoff; everything else raises ``AgentError``. Proxies come from the run's
environment mapping (``http_proxy``, ``https_proxy``, ``no_proxy``), never from ``os.environ``.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any

from sqlbench.agents.call import RetryLater
from sqlbench.errors import AgentError, AgentTransientError
from sqlbench.text import one_line

_BODY_TAIL = 200
MAX_REPLY_BYTES = 16 * 2**20
"""The largest reply read; a bigger one is an agent error (memory stays bounded)."""
_CONNECTION_ERRORS = (
    ConnectionRefusedError,
    ConnectionResetError,
    ConnectionAbortedError,
    BrokenPipeError,
    http.client.RemoteDisconnected,
    http.client.IncompleteRead,
)


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
        timeout_s: Socket timeout for connecting and each read.
        env: Environment for proxy settings.
        shown_url: How to name the URL in messages (its unresolved ``${VAR}`` form).

    Raises:
        AgentTransientError: HTTP 429/5xx or a refused/reset connection (retry later).
        AgentError: Any other failure: other HTTP statuses, timeouts, a reply that is not JSON.
    """
    where = shown_url or url
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode("utf-8"),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler(_proxies(url, env)))
    try:
        with opener.open(request, timeout=max(timeout_s, 0.001)) as response:
            body = response.read(MAX_REPLY_BYTES + 1)
    except urllib.error.HTTPError as err:
        raise _status_error(err.code, err.read(), err.headers, where) from err
    except urllib.error.URLError as err:
        raise _connection_error(err.reason, where, timeout_s) from err
    except (TimeoutError, *_CONNECTION_ERRORS) as err:
        raise _connection_error(err, where, timeout_s) from err
    if len(body) > MAX_REPLY_BYTES:
        raise AgentError(
            f"the reply from {where} is over {MAX_REPLY_BYTES // 2**20} MB; an answer is SQL "
            "text or a JSON answer object"
        )
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        began = one_line(body.decode("utf-8", "replace"), 80)
        raise AgentError(
            f"the reply from {where} is not valid JSON ({err}); it began: {began!r}"
        ) from err


def _status_error(status: int, body: bytes, headers: Message | None, where: str) -> AgentError:
    tail = one_line(body.decode("utf-8", "replace"), _BODY_TAIL)
    message = f"HTTP {status} from {where}" + (f": {tail}" if tail else "")
    if status == 429 or status >= 500:
        return RetryLater(message, _retry_after(headers))
    return AgentError(message)


def _retry_after(headers: Message | None) -> float | None:
    """Seconds from a ``Retry-After: <seconds>`` header (HTTP dates are ignored)."""
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _connection_error(reason: object, where: str, timeout_s: float) -> AgentError:
    if isinstance(reason, TimeoutError | socket.timeout):
        return AgentError(f"no reply from {where} within {timeout_s:.3g}s")
    if isinstance(reason, _CONNECTION_ERRORS):
        detail = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return AgentTransientError(f"cannot reach {where}: {detail}")
    if isinstance(reason, OSError):
        return AgentError(f"cannot reach {where}: {reason.strerror or reason}")
    return AgentError(f"cannot reach {where}: {reason}")


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
    host = urllib.parse.urlsplit(url).hostname or ""
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
