"""Affected-only PR runs (issue 11): ``check --affected`` asks the agent only the questions a
change can have touched, on real temporary git repositories, counting the agent's calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]

AGENT = """\
SQL = {{
    # Right while big_orders means > 100; wrong once the view says >= 100.
    "big_count": "SELECT COUNT(*) FROM orders WHERE amount > 100",
    "big_chain": "SELECT COUNT(*) FROM big_eu",
    "total": "SELECT SUM(amount) FROM orders",
    "regions": "SELECT COUNT(DISTINCT region) FROM orders",
}}


def answer(request):
    with open({log!r}, "a") as log:
        log.write(request["name"] + "\\n")
    return SQL[request["name"]]
"""
RAW = """\
CREATE TABLE orders AS
SELECT * FROM (VALUES (1, 'EU', 120), (2, 'EU', 100), (3, 'US', 200), (4, 'US', 50))
    AS t(id, region, amount);
"""
VIEWS = """\
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount {op} 100;
CREATE VIEW big_eu AS SELECT * FROM big_orders WHERE region = 'EU';
"""
QUESTIONS = """\
space: sales
eval_questions:
  - name: big_count
    question: {big}
    sql: SELECT COUNT(*) FROM big_orders
  - name: big_chain
    question: How many big EU orders?
    sql: WITH b AS (SELECT * FROM big_eu) SELECT COUNT(*) FROM b
  - name: total
    question: {total}
    sql: SELECT SUM(amount) FROM orders
  - name: regions
    question: How many regions?
    sql: SELECT COUNT(DISTINCT region) FROM orders
"""


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {
            "sqlbench.yml": (
                "dialect: duckdb\nsetup:\n  - models/raw.sql\n  - models/views.sql\n"
                "default_agent: analyst\n"
            ),
            "models/raw.sql": RAW,
            "models/views.sql": VIEWS.format(op=">"),
            "eval_questions/sales.yml": QUESTIONS.format(
                big="How many big orders?", total="Total revenue?"
            ),
            "agents/analyst.yml": (
                "agents:\n  - name: analyst\n    kind: python\n    function: agent:answer\n"
            ),
            "agent.py": AGENT.format(log=str(tmp_path / "calls.log")),
        },
        "project",
    )
    return repo


def _calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    names = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return sorted(names)


def _head_trials(invoke: Invoke, root: Path, run: str) -> dict[str, tuple[str, str]]:
    exported = json.loads(invoke("export", "-C", str(root), run).stdout)
    return {t["name"]: (t["verdict"], t["reason"]) for t in exported["results"]}


def _head_run(markdown: str) -> str:
    line = next(line for line in markdown.splitlines() if line.startswith("| head |"))
    return line.split("|")[2].split()[0]


def test_a_view_change_asks_only_the_questions_downstream_and_gives_the_full_verdicts(
    tmp_path: Path, invoke: Invoke
) -> None:
    repo = _repo(tmp_path)
    repo.commit({"models/views.sql": VIEWS.format(op=">=")}, "big means >= 100", branch="dev")
    root = repo.root
    invoke("run", "-C", str(root), "--branch", "main")  # the base run, which check reuses
    assert _calls(tmp_path) == ["big_chain", "big_count", "regions", "total"]
    affected = invoke(
        "check", "-C", str(root), "--base", "main", "--head", "dev", "--affected", exit_code=1
    )
    assert "asking sales/big_count: reads changed big_orders" in affected.stderr
    assert "asking sales/big_chain: reads changed big_eu" in affected.stderr  # transitively
    # Only big_orders' downstream questions were put to the agent on head.
    assert _calls(tmp_path) == ["big_chain", "big_count"]
    head = _head_trials(invoke, root, _head_run(affected.stdout))
    assert head["total"][1].startswith("unaffected (reused): ")
    assert head["regions"][1].startswith("unaffected (reused): ")
    assert not head["big_count"][1].startswith("unaffected")
    # The same verdicts as a full run of the head, which asks all four.
    full = invoke(
        "check", "-C", str(root), "--base", "main", "--head", "dev", "--fresh", exit_code=1
    )
    assert len(_calls(tmp_path)) == 8  # base and head in full
    full_head = _head_trials(invoke, root, _head_run(full.stdout))
    assert {n: v for n, (v, _) in head.items()} == {n: v for n, (v, _) in full_head.items()}
    assert head["big_count"][0] == "fail" and "Regressions: passed on base, not on head (1)" in (
        affected.stdout
    )
    assert "sales/big_chain" in affected.stdout.split("Answer changes")[1]


def test_a_yaml_only_change_of_one_question_asks_only_it(tmp_path: Path, invoke: Invoke) -> None:
    repo = _repo(tmp_path)
    repo.commit(
        {
            "eval_questions/sales.yml": QUESTIONS.format(
                big="How many big orders?", total="What is the total revenue, all orders?"
            )
        },
        "reword total",
        branch="dev",
    )
    root = repo.root
    invoke("run", "-C", str(root), "--branch", "main")
    assert len(_calls(tmp_path)) == 4  # the base
    checked = invoke("check", "-C", str(root), "--base", "main", "--head", "dev", "--affected")
    assert _calls(tmp_path) == ["total"]
    head = _head_trials(invoke, root, _head_run(checked.stdout))
    assert "asking sales/total: its YAML entry (or its certified query) changed" in checked.stderr
    assert sorted(n for n, (_, r) in head.items() if r.startswith("unaffected (reused)")) == [
        "big_chain",
        "big_count",
        "regions",
    ]


def test_a_question_new_on_head_or_whose_base_sql_cannot_be_parsed_is_asked(
    tmp_path: Path, invoke: Invoke
) -> None:
    repo = _repo(tmp_path)
    questions = QUESTIONS.format(big="How many big orders?", total="Total revenue?")
    odd = "  - name: odd\n    question: Odd?\n    sql: SELECT COUNT(*) FROM orders\n"
    fresh = "  - name: fresh\n    question: New?\n    sql: SELECT 1\n"
    agent = AGENT.format(log=str(tmp_path / "calls.log")).replace(
        "}\n\n\ndef", '    "fresh": "SELECT 1",\n    "odd": "SELECT SELECT FROM (",\n}\n\n\ndef'
    )
    repo.commit({"agent.py": agent, "eval_questions/sales.yml": questions + odd}, "odd")
    repo.commit(
        {
            "eval_questions/sales.yml": questions + odd + fresh,
            "models/views.sql": VIEWS.format(op=">") + "CREATE VIEW spare AS SELECT 1 AS x;\n",
        },
        "fresh question, a view no question reads",
        branch="dev",
    )
    root = repo.root
    invoke("run", "-C", str(root), "--branch", "main")  # odd fails: a syntax error
    assert len(_calls(tmp_path)) == 5  # the base
    checked = invoke("check", "-C", str(root), "--base", "main", "--head", "dev", "--affected")
    assert _calls(tmp_path) == ["fresh", "odd"]
    assert "asking sales/fresh: new on head" in checked.stderr
    assert "asking sales/odd: its SQL (ground truth or base answer) cannot be parsed" in (
        checked.stderr
    )
    assert "changed in setup: spare" in checked.stderr


def test_sql_inputs_leave_out_ctes_and_refuse_what_does_not_parse() -> None:
    from sqlbench.rundiff.affected import sql_inputs

    assert sql_inputs("WITH b AS (SELECT * FROM big_eu) SELECT * FROM b JOIN x.Y", "duckdb") == {
        "big_eu",
        "y",
    }
    assert sql_inputs("SELECT SELECT FROM (", "duckdb") is None


def test_run_affected_by_asks_only_what_the_change_touched(tmp_path: Path, invoke: Invoke) -> None:
    repo = _repo(tmp_path)
    repo.commit({"models/views.sql": VIEWS.format(op=">=")}, "big means >= 100", branch="dev")
    root = repo.root
    run = invoke(
        "run", "-C", str(root), "--branch", "dev", "--affected-by", "main", "--format", "json"
    )
    # The base had no run: it is run first (4 calls), then the head asks 2.
    assert _calls(tmp_path) == sorted(
        ["big_chain", "big_count", "regions", "total", "big_chain", "big_count"]
    )
    data = json.loads(run.stdout)
    reasons = {r["name"]: r["reason"] for r in data["results"]}
    assert reasons["total"].startswith("unaffected (reused): ")
    assert not reasons["big_count"].startswith("unaffected")
    again = invoke("run", "-C", str(root), "--branch", "dev", "--affected-by", "main")
    assert _calls(tmp_path) == ["big_chain", "big_count"]  # the base run is reused
    assert "unaffected (reused)" in again.stdout
    refused = invoke("run", "-C", str(root), "--affected-by", "main", "--shard", "1/2", exit_code=2)
    assert "--affected-by makes a whole run" in refused.stderr
