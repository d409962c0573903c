"""The viewer's HTTP server (stdlib ``http.server``): the run list, each run's report page, and
human review decisions — the only thing it writes.

It binds to 127.0.0.1 only and answers only requests addressed to it by that name (or
``localhost``), so a web page elsewhere cannot reach it through DNS rebinding; a review decision
must carry the page's random token in a header, which a cross-site form or script cannot send,
and come from the viewer's own page (``Origin``/``Sec-Fetch-Site``). No page may be framed
(``X-Frame-Options: DENY``, ``frame-ancestors 'none'``), so another site cannot lay a decoy over
a decision button. A request body is read only with a valid ``Content-Length`` within 64 KB;
each connection has a socket timeout and at most ``max_connections`` are served at once
(docs/security.md).
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from sqlbench.errors import SqlbenchError
from sqlbench.report import html, html_data
from sqlbench.report.run_format import usd_text
from sqlbench.runs.disputes import dispute_graded
from sqlbench.runs.pages import report_inputs
from sqlbench.runs.reviews import decide
from sqlbench.runs.store import RunStore
from sqlbench.verdicts import Verdict

HOST = "127.0.0.1"
TOKEN_HEADER = "X-Sqlbench-Token"
_MAX_BODY = 64 * 1024
_MAX_BODY_DEPTH = 32
"""A review is a flat JSON object; nesting deeper than this is refused before parsing."""
SOCKET_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 16
_RUN_PATH = re.compile(r"^/runs/([^/]+)$")
_RUN_DATA_PATH = re.compile(r"^/api/runs/([^/]+)/data$")
_LENGTH = re.compile(r"[0-9]{1,7}")
_SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})


def host_allowed(host: str, port: int) -> bool:
    """Whether a request's ``Host`` names this viewer: 127.0.0.1 or localhost with its port
    (without it on port 80, as browsers send it there)."""
    names = {f"{HOST}:{port}", f"localhost:{port}"}
    if port == 80:
        names |= {HOST, "localhost"}
    return host in names


class _BoundedServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` serving at most ``limit`` connections at once: one more is
    closed at once with 503 (the others time out on their own: ``SOCKET_TIMEOUT_S``)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, limit: int) -> None:
        self._slots = threading.BoundedSemaphore(limit)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away or stalled is no error of the viewer's; nothing is printed.
        return


def _depth_over(body: bytes, limit: int) -> bool:
    """Whether ``[``/``{`` nest deeper than ``limit`` outside JSON strings."""
    depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


class ViewServer:
    """Serves ``store``'s runs on 127.0.0.1:``port`` (0: a free port).

    Args:
        store: The project's run store (kept open while serving).
        port: The port to bind; 0 picks a free one.
    """

    def __init__(
        self,
        store: RunStore,
        port: int = 0,
        *,
        socket_timeout_s: float = SOCKET_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.store = store
        self.token = secrets.token_urlsafe(24)
        self.socket_timeout_s = socket_timeout_s
        try:
            self._server = _BoundedServer((HOST, port), _handler_for(self), max_connections)
        except OSError as err:
            raise SqlbenchError(
                f"cannot listen on {HOST}:{port}: {err.strerror or err}; choose another --port"
            ) from err
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/``."""
        return f"http://{HOST}:{self.port}/"

    def serve_forever(self) -> None:
        """Serve until ``shutdown`` (or KeyboardInterrupt in the calling thread)."""
        self._server.serve_forever(poll_interval=0.2)

    def start(self) -> None:
        """Serve from a background thread (tests, embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    # --- what the routes return ----------------------------------------------------------

    def viewer_settings(self) -> dict[str, str]:
        return {
            "token": self.token,
            "review_url": "/api/review",
            "runs_url": "/",
            "runs_api": "/api/runs",
            "run_api": "/api/runs/",
        }

    def runs_json(self) -> dict[str, Any]:
        """The run list, newest first, and the chart of accuracy against cost over the runs
        priced in full (``report.html.cost_chart``; None with fewer than two)."""
        runs = []
        summaries = self.store.list_runs()
        for summary in summaries:
            info = summary.info
            runs.append(
                {
                    "id": info.id,
                    "name": info.name,
                    "environment": info.environment,
                    "source": info.source_label,
                    "agent": f"{info.agent_name} ({info.agent_kind})",
                    "status": summary.status.label,
                    "graded": summary.graded,
                    "planned": info.question_count * info.repeat,
                    "passed": summary.passed,
                    "total": summary.total,
                    "human": summary.human,
                    "disputed": summary.disputed,
                    "accuracy": summary.accuracy.label(),
                    "cost": usd_text(summary.cost_usd) if summary.cost_usd is not None else "",
                    "created_by": info.created_by,
                    "updated_at": info.updated_at.isoformat(),
                }
            )
        return {"runs": runs, "cost_chart": html.cost_chart(summaries, None)}

    def run_page(self, ref: str, base: str | None) -> str:
        inputs = report_inputs(self.store, ref, base_ref=base)
        return html.render(
            inputs.run, base=inputs.base, history=inputs.history, viewer=self.viewer_settings()
        )

    def run_data(self, ref: str, base: str | None) -> dict[str, Any]:
        """What a run's page shows, as it is now: a page of a run in progress reads it to add
        the questions graded since it loaded, and the decisions they carry."""
        inputs = report_inputs(self.store, ref, base_ref=base)
        return html_data.report_data(inputs.run, base=inputs.base, history=inputs.history)

    def review(self, body: dict[str, Any]) -> dict[str, Any]:
        run_ref, question_name = body.get("run"), body.get("question")
        verdict, note = body.get("verdict"), body.get("note")
        if not isinstance(run_ref, str) or not isinstance(question_name, str):
            raise SqlbenchError("a review names a run and a question")
        if "dispute" in body:
            return self._dispute(run_ref, question_name, body["dispute"])
        if verdict not in ("pass", "fail"):
            raise SqlbenchError("a person decides pass or fail")
        if note is not None and not isinstance(note, str):
            raise SqlbenchError("a review note is text")
        run = self.store.load_run(run_ref)
        question = run.question(question_name)
        if question is None:
            raise SqlbenchError(f"run {run.info.name} has no question {question_name!r}")
        decide(self.store, run, question, Verdict(verdict), note)
        return {"ok": True, "accuracy": self.store.load_run(run.info.id).accuracy.label()}

    def _dispute(self, run_ref: str, question_name: str, why: object) -> dict[str, Any]:
        """``review QUESTION --dispute`` from a run's page: the key that run graded against."""
        if not isinstance(why, str) or not why.strip():
            raise SqlbenchError("a dispute says why the ground truth is wrong")
        run = self.store.load_run(run_ref)
        question = run.question(question_name)
        if question is None:
            raise SqlbenchError(f"run {run.info.name} has no question {question_name!r}")
        if question.first.truth_sql is None:
            raise SqlbenchError(f"{question.full_name} has no ground truth to dispute")
        dispute_graded(self.store, question.first, why.strip())
        return {"ok": True, "accuracy": self.store.load_run(run.info.id).accuracy.label()}


def _handler_for(view: ViewServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "sqlbench-view"
        timeout = view.socket_timeout_s

        def log_message(self, format: str, *args: Any) -> None:
            # The library never prints; the CLI says where the server is.
            return

        def _host_ok(self) -> bool:
            return host_allowed(self.headers.get("Host", ""), view.port)

        def _same_origin(self) -> bool:
            """A browser names the page that sent a POST; only the viewer's own may decide."""
            origin = self.headers.get("Origin")
            if origin is not None and not host_allowed(origin.removeprefix("http://"), view.port):
                return False
            site = self.headers.get("Sec-Fetch-Site")
            return site is None or site in _SAME_ORIGIN_FETCH

        def _send(self, status: int, body: str, content_type: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("X-Frame-Options", "DENY")
            self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
            self.end_headers()
            self.wfile.write(data)

        def _json(self, status: int, value: Any) -> None:
            self._send(status, json.dumps(value, ensure_ascii=False), "application/json")

        def do_GET(self) -> None:
            if not self._host_ok():
                self._send(HTTPStatus.MISDIRECTED_REQUEST, "wrong host", "text/plain")
                return
            parts = urlsplit(self.path)
            try:
                if parts.path == "/":
                    page = html.render_runs_page(view.viewer_settings())
                    self._send(HTTPStatus.OK, page, "text/html")
                elif parts.path == "/api/runs":
                    self._json(HTTPStatus.OK, view.runs_json())
                elif match := _RUN_DATA_PATH.match(parts.path):
                    base = parse_qs(parts.query).get("base", [None])[0]
                    self._json(HTTPStatus.OK, view.run_data(unquote(match.group(1)), base))
                elif match := _RUN_PATH.match(parts.path):
                    base = parse_qs(parts.query).get("base", [None])[0]
                    page = view.run_page(unquote(match.group(1)), base)
                    self._send(HTTPStatus.OK, page, "text/html")
                else:
                    self._send(HTTPStatus.NOT_FOUND, "not found", "text/plain")
            except SqlbenchError as err:
                self._send(HTTPStatus.NOT_FOUND, str(err), "text/plain")

        def do_POST(self) -> None:
            if not self._host_ok():
                self._json(HTTPStatus.MISDIRECTED_REQUEST, {"error": "wrong host"})
                return
            if urlsplit(self.path).path != "/api/review":
                self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
                return
            if not secrets.compare_digest(self.headers.get(TOKEN_HEADER, ""), view.token):
                self._json(HTTPStatus.FORBIDDEN, {"error": "this page's token is missing"})
                return
            if not self._same_origin():
                self._json(
                    HTTPStatus.FORBIDDEN,
                    {"error": "this request is not this viewer's own page's; nothing was recorded"},
                )
                return
            raw_length = (self.headers.get("Content-Length") or "0").strip()
            if not _LENGTH.fullmatch(raw_length):
                self.close_connection = True
                self._json(
                    HTTPStatus.BAD_REQUEST,
                    {"error": "Content-Length must be a number of bytes up to 64 KB"},
                )
                return
            length = int(raw_length)
            if length > _MAX_BODY:
                self.close_connection = True
                self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "too large"})
                return
            try:
                data = self.rfile.read(length)
            except OSError:  # the socket timed out or the client went away
                self.close_connection = True
                return
            try:
                if _depth_over(data, _MAX_BODY_DEPTH):
                    raise SqlbenchError("a review is a flat JSON object; this one nests deeply")
                body = json.loads(data or b"{}")
                if not isinstance(body, dict):
                    raise SqlbenchError("a review is a JSON object")
                self._json(HTTPStatus.OK, view.review(body))
            except (ValueError, RecursionError):
                self._json(HTTPStatus.BAD_REQUEST, {"error": "not JSON"})
            except SqlbenchError as err:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})

    return Handler
