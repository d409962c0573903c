"""A scripted HTTP server on 127.0.0.1: the one every test uses for an agent endpoint (``http``
kind, OpenAI-compatible LLM) or an LLM judge, so no test writes a server of its own.

Imported as ``agent_servers`` (pytest puts ``tests/``, where the root conftest is, on sys.path).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted HTTP reply: a status, a JSON body (or raw bytes), headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Received:
    """One request the server got."""

    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """An HTTP server answering POSTs with scripted replies (or a function of the request)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.respond: Callable[[Received], Reply] | None = None
        self.received: list[Received] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                data = self.rfile.read(length)
                request = Received(self.path, dict(self.headers.items()), json.loads(data))
                with server._lock:
                    server.received.append(request)
                    if server.respond is not None:
                        reply = server.respond(request)
                    elif server.replies:
                        reply = server.replies.pop(0)
                    else:
                        reply = Reply(500, {"error": "no scripted reply left"})
                if reply.delay_s:
                    threading.Event().wait(reply.delay_s)
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing left to send

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
