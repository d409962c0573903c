"""Partial credit stored with each answer and averaged over the run, in every output."""

from __future__ import annotations

import json
from pathlib import Path

from cost_project import make_project, write_replay


def test_each_answer_and_the_run_carry_partial_credit(invoke, tmp_path: Path) -> None:
    root = tmp_path / "p"
    make_project(root)
    (root / "agents" / "agents.yml").write_text(
        "agents:\n" + write_replay(root, "replayed"), encoding="utf-8"
    )
    out = invoke("run", "-C", str(root), "--agent", "replayed", "--format", "json").stdout
    data = json.loads(out)
    credit = {r["name"]: r["partial_credit"] for r in data["results"]}
    verdicts = {r["name"]: r["verdict"] for r in data["results"]}
    assert verdicts == {"total": "pass", "by_region": "fail", "top": "fail"}
    assert credit["total"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # Three of four rows: 6 of 8 expected cells, and no wrong cell.
    assert credit["by_region"] == {"precision": 1.0, "recall": 0.75, "f1": 0.857143}
    assert credit["top"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    run = data["partial_credit"]
    assert run["answers"] == 3
    assert abs(run["f1"] - (1 + 0.857143) / 3) < 1e-6
    text = invoke("show", "-C", str(root), "latest").stdout
    assert "Partial credit F1 0.62 (precision 0.67, recall 0.58) over 3 answers" in text
    detail = invoke("show", "-C", str(root), "latest", "by_region").stdout
    assert "partial credit F1 0.86 (precision 1.00, recall 0.75)" in detail
    markdown = invoke("run", "-C", str(root), "--agent", "replayed", "--format", "markdown").stdout
    assert "Partial credit F1 0.62" in markdown


def test_compare_shows_partial_credit_where_both_sides_fail(invoke, tmp_path: Path) -> None:
    root = tmp_path / "p"
    make_project(root)
    agents = write_replay(root, "before")
    # After: by_region now misses two rows instead of one; top still wrong.
    after = (
        (root / "agents" / "before.jsonl")
        .read_text(encoding="utf-8")
        .replace("WHERE region <> 'US'", "WHERE region NOT IN ('US', 'EU')")
    )
    (root / "agents" / "after.jsonl").write_text(after, encoding="utf-8")
    agents += "  - name: after\n    kind: replay\n    path: after.jsonl\n"
    (root / "agents" / "agents.yml").write_text("agents:\n" + agents, encoding="utf-8")
    invoke("run", "-C", str(root), "--agent", "before", "--name", "b")
    invoke("run", "-C", str(root), "--agent", "after", "--name", "a")
    text = invoke("compare", "-C", str(root), "b", "a").stdout
    assert "Partial credit on the 2 questions failing on both sides: F1 base 0.43 → head 0.33" in (
        text
    )
    assert "auto/by_region 0.86 → 0.67" in text
    data = json.loads(invoke("compare", "-C", str(root), "b", "a", "--format", "json").stdout)
    both = data["economy"]["partial_credit_both_failing"]
    assert [q["question"] for q in both["questions"]] == ["auto/by_region", "auto/top"]
    assert both["questions"][0]["head_f1"] == 0.666667
