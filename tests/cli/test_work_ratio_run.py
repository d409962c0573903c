"""Warehouse work per answer (ground truth, agent SQL, ratio) in a run's outputs and in
``compare``; ``compare: {max_work_ratio: N}`` as a check rule that never changes a verdict."""

from __future__ import annotations

import json
from pathlib import Path

from cost_project import ANSWERS, make_project

from sqlbench.rundiff.policy import CheckPolicy, run_check
from sqlbench.rundiff.sides import stored_side
from sqlbench.runs.locate import open_project_store

# Reads the 4-row table twice where the ground truth reads it once: 8 rows scanned, not 4.
TWICE = "SELECT SUM(a.revenue) FROM sales a WHERE a.region IN (SELECT region FROM sales)"


def replay(root: Path, name: str, answers: dict[str, str]) -> str:
    lines = [json.dumps({"name": q, "sql": sql}) for q, sql in answers.items()]
    (root / "agents" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"  - name: {name}\n    kind: replay\n    path: {name}.jsonl\n"


def test_work_ratio_in_outputs_compare_and_the_check_rule(invoke, tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", "compare: {max_work_ratio: 1.5}\n")
    agents = replay(root, "lean", ANSWERS) + replay(root, "wasteful", {**ANSWERS, "total": TWICE})
    (root / "agents" / "agents.yml").write_text("agents:\n" + agents, encoding="utf-8")
    invoke("run", "-C", str(root), "--agent", "lean", "--name", "lean")
    out = invoke(
        "run", "-C", str(root), "--agent", "wasteful", "--name", "wasteful", "--format", "json"
    )
    data = json.loads(out.stdout)
    work = {r["name"]: r["work"] for r in data["results"]}
    assert work["total"] == {"truth": 4.0, "agent": 8.0, "ratio": 2.0, "unit": "rows scanned"}
    assert work["by_region"]["ratio"] == 1.0
    verdicts = {r["name"]: r["verdict"] for r in data["results"]}
    assert verdicts["total"] == "pass"  # twice the work, the same answer: still a pass
    assert data["work"]["max_ratio"] == 2.0
    text = invoke("show", "-C", str(root), "wasteful").stdout
    assert "Work (rows scanned): agent/truth median 1x, max 2x over 3 answers" in text
    detail = invoke("show", "-C", str(root), "wasteful", "total").stdout
    assert "work 2x the ground truth's (rows scanned: 8 vs 4)" in detail
    compared = invoke("compare", "-C", str(root), "lean", "wasteful").stdout
    assert "Over max_work_ratio 1.5 on head: auto/total 2x" in compared
    with open_project_store(root) as store:
        result = run_check(
            stored_side(store, "lean"), stored_side(store, "wasteful"), CheckPolicy()
        )
        reverse = run_check(
            stored_side(store, "wasteful"), stored_side(store, "lean"), CheckPolicy()
        )
    rule = next(r for r in result.rules if r.rule == "work_ratio")
    assert rule.failed and rule.enforced and rule.questions == ("auto/total",)
    assert not result.passed
    assert reverse.passed
