"""The viewer's HTTP server (stdlib ``http.server``): the run list, each run's report page, and
human review decisions — the only thing it writes.

It binds to 127.0.0.1 only and answers only requests addressed to it by that name (or
``localhost``), so a web page elsewhere cannot reach it through DNS rebinding; a review decision
must carry the page's random token in a header, which a cross-site form or script cannot send.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from sqlbench.errors import SqlbenchError
from sqlbench.report import html
from sqlbench.runs.disputes import dispute_graded
from sqlbench.runs.pages import report_inputs
from sqlbench.runs.reviews import decide
from sqlbench.runs.store import RunStore
from sqlbench.verdicts import Verdict

HOST = "127.0.0.1"
TOKEN_HEADER = "X-Sqlbench-Token"
_MAX_BODY = 64 * 1024
_RUN_PATH = re.compile(r"^/runs/([^/]+)$")


class ViewServer:
    """Serves ``store``'s runs on 127.0.0.1:``port`` (0: a free port).

    Args:
        store: The project's run store (kept open while serving).
        port: The port to bind; 0 picks a free one.
    """

    def __init__(self, store: RunStore, port: int = 0) -> None:
        self.store = store
        self.token = secrets.token_urlsafe(24)
        try:
            self._server = ThreadingHTTPServer((HOST, port), _handler_for(self))
        except OSError as err:
            raise SqlbenchError(
                f"cannot listen on {HOST}:{port}: {err.strerror or err}; choose another --port"
            ) from err
        self._server.daemon_threads = True
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
        }

    def runs_json(self) -> dict[str, Any]:
        runs = []
        for summary in self.store.list_runs():
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
                    "accuracy": summary.accuracy.label(),
                    "created_by": info.created_by,
                    "updated_at": info.updated_at.isoformat(),
                }
            )
        return {"runs": runs}

    def run_page(self, ref: str, base: str | None) -> str:
        inputs = report_inputs(self.store, ref, base_ref=base)
        return html.render(
            inputs.run, base=inputs.base, history=inputs.history, viewer=self.viewer_settings()
        )

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

        def log_message(self, format: str, *args: Any) -> None:
            # The library never prints; the CLI says where the server is.
            return

        def _host_ok(self) -> bool:
            host = self.headers.get("Host", "")
            return host in (f"{HOST}:{view.port}", f"localhost:{view.port}")

        def _send(self, status: int, body: str, content_type: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
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
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY:
                self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "too large"})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise SqlbenchError("a review is a JSON object")
                self._json(HTTPStatus.OK, view.review(body))
            except json.JSONDecodeError:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "not JSON"})
            except SqlbenchError as err:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})

    return Handler
