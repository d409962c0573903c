"""A small project for the cost, work and partial-credit tests: a DuckDB warehouse of four
regions and three questions, whose agents are written by each test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SETUP = """
CREATE TABLE sales (region VARCHAR, revenue INTEGER);
INSERT INTO sales VALUES ('EU', 10), ('US', 20), ('APAC', 30), ('LATAM', 40);
"""

QUESTIONS = """
eval_questions:
  - name: total
    question: Total revenue?
    sql: SELECT SUM(revenue) AS total FROM sales
  - name: by_region
    question: Revenue by region?
    sql: SELECT region, revenue FROM sales
  - name: top
    question: The region with the most revenue?
    sql: SELECT region FROM sales ORDER BY revenue DESC LIMIT 1
"""

ANSWERS = {
    "total": "SELECT SUM(revenue) FROM sales",
    "by_region": "SELECT region, revenue FROM sales WHERE region <> 'US'",
    "top": "SELECT region FROM sales ORDER BY revenue LIMIT 1",
}
"""A pass, a fail holding three of four rows, a fail holding none."""


def make_project(root: Path, settings: str = "", agents: str = "") -> Path:
    """The project in ``root`` with ``settings`` appended to sqlbench.yml and ``agents`` as
    agents/agents.yml."""
    (root / "models").mkdir(parents=True)
    (root / "models" / "sales.sql").write_text(SETUP, encoding="utf-8")
    (root / "eval_questions").mkdir()
    (root / "eval_questions" / "sales.yml").write_text(QUESTIONS, encoding="utf-8")
    (root / "sqlbench.yml").write_text(
        "dialect: duckdb\nsetup: [models/sales.sql]\n" + settings, encoding="utf-8"
    )
    (root / "agents").mkdir()
    (root / "agents" / "agents.yml").write_text(agents or "agents: []\n", encoding="utf-8")
    return root


def write_replay(root: Path, name: str, usage: dict[str, Any] | None = None) -> str:
    """A replay file of ``ANSWERS`` (each with ``usage`` when given); its agents.yml entry."""
    lines = []
    for question, sql in ANSWERS.items():
        record: dict[str, Any] = {"name": question, "sql": sql}
        if usage is not None:
            record["usage"] = usage
        lines.append(json.dumps(record))
    (root / "agents" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"  - name: {name}\n    kind: replay\n    path: {name}.jsonl\n"


class AgentServer:
    """A real HTTP agent on 127.0.0.1: answers each question with ``ANSWERS`` and the same
    ``usage``, and counts the questions it was asked; with ``reply``, answers every request
    with that body instead (an OpenAI-compatible judge)."""

    def __init__(self, usage: dict[str, Any], reply: dict[str, Any] | None = None) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.asked: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if reply is not None:
                    server.asked.append("judge")
                    body = json.dumps(reply).encode()
                else:
                    server.asked.append(request["name"])
                    body = json.dumps({"sql": ANSWERS[request["name"]], "usage": usage}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/answer"

    def __enter__(self) -> AgentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
