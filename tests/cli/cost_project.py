"""A small project for the cost, work and partial-credit tests: a DuckDB warehouse of four
regions and three questions, whose agents are written by each test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_servers import Reply, ScriptedServer

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


class AgentServer(ScriptedServer):
    """A real HTTP agent on 127.0.0.1: answers each question with ``ANSWERS`` and the same
    ``usage``; with ``reply``, answers every request with that body instead (an
    OpenAI-compatible judge). ``asked`` lists the questions asked ("judge" for a judge call)."""

    def __init__(self, usage: dict[str, Any], reply: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.respond = lambda request: Reply(
            body=reply
            if reply is not None
            else {"sql": ANSWERS[request.body["name"]], "usage": usage}
        )
        self._judge = reply is not None

    @property
    def asked(self) -> list[str]:
        return ["judge" if self._judge else r.body["name"] for r in self.received]

    @property
    def url(self) -> str:
        return super().url + "/answer"
