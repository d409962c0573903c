"""``sqlbench audit``: the questions whose ground truth is suspect, most suspect first
(docs/audit.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from planted_keys import WRONG, write_planted

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agents"))
from agent_servers import Received, Reply, ScriptedServer


@pytest.fixture
def planted(tmp_path: Path, invoke) -> Path:
    root = write_planted(tmp_path / "shop")
    invoke("run", "-C", str(root), "--agent", "*")
    return root


def test_audit_ranks_the_planted_wrong_keys_first(planted: Path, invoke) -> None:
    data = json.loads(invoke("audit", "-C", str(planted), "--format", "json").stdout)
    assert data["schema_version"] == 1
    assert sorted(data["agents"]) == ["a1", "a2", "a3", "a4"]
    assert data["audited"] == 12
    ranked = [q["name"] for q in data["questions"]]
    assert sorted(ranked[:3]) == sorted(WRONG), ranked
    top = data["questions"][0]
    assert top["space"] == "shop" and 0 < top["score"] <= 1
    kinds = {e["kind"] for q in data["questions"][:3] for e in q["evidence"]}
    assert kinds == {"agents_agree"}
    q02 = next(q for q in data["questions"] if q["name"] == "q02")
    assert q02["evidence"][0]["detail"] == (
        "3 of 4 agents (a1, a2, a3) return the same result as each other, 4, not the ground "
        "truth's 2; none passes"
    )
    # The two agents repeating regions agree against the key too, but two others pass.
    assert [q["score"] for q in data["questions"]] == sorted(
        (q["score"] for q in data["questions"]), reverse=True
    )
    text = invoke("audit", "-C", str(planted)).stdout
    assert text.startswith("Audit of the answer key: 12 questions, 4 runs (a1, a2, a3, a4)")
    assert "  1. shop/q0" in text and "agents_agree: 3 of 4 agents" in text


def test_audit_names_runs_and_smells_of_the_ground_truth(tmp_path: Path, invoke) -> None:
    root = write_planted(tmp_path / "shop")
    (root / "eval_questions" / "odd.yml").write_text(
        "space: odd\neval_questions:\n"
        "  - name: nobody\n    question: Which customers are in LATAM?\n"
        "    sql: SELECT name FROM customers WHERE region = 'LATAM'\n"
        "  - name: tied\n    question: Which year had the smallest order?\n"
        "    sql: SELECT year FROM orders ORDER BY customer_id LIMIT 1\n"
        "  - name: fixed\n    question: How many regions are there?\n"
        "    sql: SELECT 3\n"
        "  - name: unread\n    question: What is the region of the customer named ann?\n"
        "    sql: SELECT name FROM customers WHERE name = 'ann'\n",
        encoding="utf-8",
    )
    for agent in ("a1", "a2"):
        path = root / "agents" / f"{agent}.yml"
        path.write_text(
            path.read_text(encoding="utf-8")
            + "- name: nobody\n  sql: SELECT name FROM customers WHERE region = 'LATAM'\n"
            "- name: tied\n  sql: SELECT 2022\n- name: fixed\n  sql: SELECT 3\n"
            "- name: unread\n  sql: SELECT region FROM customers WHERE name = 'ann'\n",
            encoding="utf-8",
        )
    invoke("run", "-C", str(root), "--agent", "a1", "--name", "one")
    invoke("run", "-C", str(root), "--agent", "a2", "--name", "two")
    data = json.loads(invoke("audit", "-C", str(root), "one", "two", "--format", "json").stdout)
    assert data["runs"] == ["one", "two"]
    kinds = {q["name"]: {e["kind"] for e in q["evidence"]} for q in data["questions"]}
    assert kinds["nobody"] == {"empty"}
    assert "tie_at_limit" in kinds["tied"]
    assert kinds["fixed"] == {"constant"}
    assert "unread_column" in kinds["unread"]
    unread = next(q for q in data["questions"] if q["name"] == "unread")
    assert any("'region'" in e["detail"] for e in unread["evidence"])


def test_audit_without_runs_says_how_to_make_them(tmp_path: Path, invoke) -> None:
    root = write_planted(tmp_path / "shop")
    result = invoke("audit", "-C", str(root), exit_code=2)
    assert "no completed run on this project to audit" in result.stderr


def _accuracy(invoke, root: Path, run: str) -> str:
    return next(
        line
        for line in invoke("show", "-C", str(root), run).stdout.splitlines()
        if "Accuracy" in line
    )


def test_a_disputed_key_leaves_accuracy_until_its_question_changes(planted: Path, invoke) -> None:
    runs = json.loads(invoke("runs", "-C", str(planted), "--format", "json").stdout)["runs"]
    a1 = next(r["name"] for r in runs if r["agent"] == "a1")
    assert "75% (9/12)" in _accuracy(invoke, planted, a1)
    out = invoke("review", "-C", str(planted), "shop/q02", "--dispute", "counts APAC").stdout
    assert out.startswith("shop/q02: ground truth disputed by ")
    invoke("review", "-C", str(planted), "q04", "--dispute", "sums 2022, not 2023")
    assert "82% (9/11, 1 disputed, not counted)" not in _accuracy(invoke, planted, a1)
    assert "90% (9/10, 2 disputed, not counted)" in _accuracy(invoke, planted, a1)
    text = invoke("audit", "-C", str(planted)).stdout
    assert "Disputed (2, not counted in accuracy):" in text
    assert "shop/q02 since " in text and ": counts APAC" in text
    data = json.loads(invoke("audit", "-C", str(planted), "--format", "json").stdout)
    assert [(d["name"], d["reason"]) for d in data["disputed"]] == [
        ("q02", "counts APAC"),
        ("q04", "sums 2022, not 2023"),
    ]
    # The key of q02 is fixed: its dispute no longer applies, and a new run counts it again.
    questions = planted / "eval_questions" / "shop.yml"
    questions.write_text(
        questions.read_text(encoding="utf-8").replace("region = 'APAC'", "region = 'EMEA'", 1),
        encoding="utf-8",
    )
    invoke("run", "-C", str(planted), "--agent", "a1", "--name", "fixed")
    assert "91% (10/11, 1 disputed, not counted)" in _accuracy(invoke, planted, "fixed")
    # The old run was graded against the disputed key: it stays out there.
    assert "2 disputed, not counted" in _accuracy(invoke, planted, a1)
    data = json.loads(invoke("audit", "-C", str(planted), "--format", "json").stdout)
    assert [d["name"] for d in data["disputed"]] == ["q04"]


def test_a_dispute_needs_a_question_with_a_ground_truth(planted: Path, invoke) -> None:
    result = invoke("review", "-C", str(planted), "q2", "--dispute", "x", exit_code=2)
    assert "the project has no question 'q2'" in result.stderr
    result = invoke("review", "-C", str(planted), "r", "q02", "--dispute", "x", exit_code=2)
    assert "--dispute takes one QUESTION" in result.stderr


def test_compare_leaves_a_disputed_question_out_of_both_sides(planted: Path, invoke) -> None:
    runs = json.loads(invoke("runs", "-C", str(planted), "--format", "json").stdout)["runs"]
    base = next(r["name"] for r in runs if r["agent"] == "a1")
    invoke("review", "-C", str(planted), "q02", "--dispute", "counts APAC")
    questions = planted / "eval_questions" / "shop.yml"
    questions.write_text(
        questions.read_text(encoding="utf-8").replace("region = 'APAC'", "region = 'EMEA'", 1),
        encoding="utf-8",
    )
    invoke("run", "-C", str(planted), "--agent", "a1", "--name", "fixed")
    # q02 fails on base (the disputed key) and passes on head (the fixed key): not a fix, and
    # neither side counts it.
    data = json.loads(
        invoke("compare", "-C", str(planted), base, "fixed", "--format", "json").stdout
    )
    for side in ("base", "head"):
        accuracy = data[side]["accuracy"]
        assert (accuracy["passed"], accuracy["total"]) == (9, 11), side
    assert data["base"]["accuracy"]["disputed"] == 1
    assert data["head"]["accuracy"]["disputed"] == 1
    assert "shop/q02" not in json.dumps(data.get("changes", data))
    text = invoke("compare", "-C", str(planted), base, "fixed").stdout
    assert text.count("82% (9/11, 1 disputed, not counted)") == 2


def _judge(request: Received) -> Reply:
    prompt = request.body["messages"][-1]["content"]
    verdict = "no" if "customers are in EMEA?" in prompt else "yes"
    content = json.dumps({"verdict": verdict, "why": "it filters on APAC"})
    return Reply(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})


def test_a_configured_judge_adds_its_cached_opinion(
    planted: Path, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer() as server:
        server.respond = _judge
        monkeypatch.setenv("SQLBENCH_JUDGE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SQLBENCH_JUDGE_MODEL", "judge-1")
        data = json.loads(invoke("audit", "-C", str(planted), "--format", "json").stdout)
        asked = len(server.received)
        assert asked == 12  # every audited question once
        q02 = next(q for q in data["questions"] if q["name"] == "q02")
        judged = [e for e in q02["evidence"] if e["kind"] == "judge"]
        assert judged == [
            {
                "kind": "judge",
                "detail": "the judge (judge-1) says the ground truth answers the question: no "
                "(it filters on APAC)",
                "weight": 0.5,
            }
        ]
        assert q02["score"] == 0.875  # 1 - (1 - 0.75) x (1 - 0.5): it adds to the agents'
        others = [q for q in data["questions"] if q["name"] != "q02"]
        assert all(e["kind"] != "judge" for q in others for e in q["evidence"])
        invoke("audit", "-C", str(planted), "--format", "json")
        assert len(server.received) == asked  # answered from the run store's cache


def test_agreeing_on_finding_nothing_weighs_less(tmp_path: Path, invoke) -> None:
    """Agents that spell a literal unlike the data ('Emea' where it holds 'EMEA') all find
    nothing alike: that agreement ranks below agreement on a real answer."""
    root = write_planted(tmp_path / "shop")
    (root / "eval_questions" / "more.yml").write_text(
        "space: more\neval_questions:\n"
        "  - name: spelled\n    question: How many customers are in Emea?\n"
        "    sql: SELECT COUNT(*) FROM customers WHERE region = 'EMEA'\n"
        "  - name: counted\n    question: How many orders are there?\n"
        "    sql: SELECT COUNT(*) FROM orders WHERE year = 2022\n",
        encoding="utf-8",
    )
    for agent in ("a1", "a2"):
        path = root / "agents" / f"{agent}.yml"
        path.write_text(
            path.read_text(encoding="utf-8")
            + "- name: spelled\n  sql: SELECT COUNT(*) FROM customers WHERE region = 'Emea'\n"
            "- name: counted\n  sql: SELECT COUNT(*) FROM orders\n",
            encoding="utf-8",
        )
    invoke("run", "-C", str(root), "--agent", "a1", "--name", "one")
    invoke("run", "-C", str(root), "--agent", "a2", "--name", "two")
    data = json.loads(invoke("audit", "-C", str(root), "one", "two", "--format", "json").stdout)
    scores = {q["name"]: q["score"] for q in data["questions"]}
    assert scores["counted"] == 1.0 and scores["spelled"] == 0.4
    spelled = next(q for q in data["questions"] if q["name"] == "spelled")
    assert spelled["evidence"][0]["detail"].endswith(
        "; an empty answer, which a literal spelled unlike the data also gives"
    )


def test_a_dispute_made_in_the_viewer_leaves_accuracy(planted: Path, invoke) -> None:
    import urllib.request

    from sqlbench.runs.locate import open_project_store
    from sqlbench.view import ViewServer
    from sqlbench.view.server import TOKEN_HEADER

    runs = json.loads(invoke("runs", "-C", str(planted), "--format", "json").stdout)["runs"]
    a1 = next(r["name"] for r in runs if r["agent"] == "a1")
    with open_project_store(planted) as store:
        server = ViewServer(store)
        server.start()
        try:
            page = urllib.request.urlopen(server.url + f"runs/{a1}", timeout=10).read().decode()
            assert 'id: "review-dispute"' in page
            post = urllib.request.Request(
                server.url + "api/review",
                data=json.dumps(
                    {"run": a1, "question": "shop/q07", "dispute": "ASC for the largest"}
                ).encode(),
                headers={TOKEN_HEADER: server.token, "Content-Type": "application/json"},
                method="POST",
            )
            reply = json.loads(urllib.request.urlopen(post, timeout=10).read())
        finally:
            server.shutdown()
    assert reply == {"ok": True, "accuracy": "82% (9/11, 1 disputed, not counted)"}
    data = json.loads(invoke("audit", "-C", str(planted), "--format", "json").stdout)
    assert [(d["name"], d["reason"]) for d in data["disputed"]] == [("q07", "ASC for the largest")]
    shown = json.loads(invoke("show", "-C", str(planted), a1, "--format", "json").stdout)
    q07 = next(r for r in shown["results"] if r["name"] == "q07")
    assert q07["disputed"]["reason"] == "ASC for the largest"
    assert shown["accuracy"]["disputed"] == 1


def _listed(invoke, root: Path, run: str) -> tuple[str, dict[str, object]]:
    """The Accuracy cell of ``run`` in ``sqlbench runs`` and its entry in ``--format json``."""
    table = invoke("runs", "-C", str(root), env={"COLUMNS": "400"}).stdout
    line = next(line for line in table.splitlines() if line.startswith(run + " "))
    runs = json.loads(invoke("runs", "-C", str(root), "--format", "json").stdout)["runs"]
    return line, next(r for r in runs if r["name"] == run)


def test_the_run_list_leaves_a_disputed_question_out_as_show_does(planted: Path, invoke) -> None:
    runs = json.loads(invoke("runs", "-C", str(planted), "--format", "json").stdout)["runs"]
    a1 = next(r["name"] for r in runs if r["agent"] == "a1")
    invoke("review", "-C", str(planted), "q02", "--dispute", "counts APAC")
    # A person's decision on a disputed question leaves accuracy with it.
    invoke("review", "-C", str(planted), a1, "q02", "pass")
    shown = _accuracy(invoke, planted, a1)
    assert "82% (9/11, 1 disputed, not counted)" in shown
    line, entry = _listed(invoke, planted, a1)
    assert "82% (9/11, 1 disputed, not counted)" in line
    assert (entry["passed"], entry["total"], entry["disputed"]) == (9, 11, 1)
    data = json.loads(invoke("show", "-C", str(planted), a1, "--format", "json").stdout)
    assert entry["accuracy"] == data["accuracy"]["value"]
    # The key of q02 changes: a run graded against the new key counts q02 again, in both.
    questions = planted / "eval_questions" / "shop.yml"
    questions.write_text(
        questions.read_text(encoding="utf-8").replace("region = 'APAC'", "region = 'EMEA'", 1),
        encoding="utf-8",
    )
    invoke("run", "-C", str(planted), "--agent", "a1", "--name", "fixed")
    shown = _accuracy(invoke, planted, "fixed")
    assert "83% (10/12)" in shown and "disputed" not in shown
    line, entry = _listed(invoke, planted, "fixed")
    assert "83% (10/12)" in line and "disputed" not in line
    assert (entry["passed"], entry["total"], entry["disputed"]) == (10, 12, 0)
    # The run graded against the disputed key keeps it out, in both.
    assert "82% (9/11, 1 disputed, not counted)" in _accuracy(invoke, planted, a1)
    assert "82% (9/11, 1 disputed, not counted)" in _listed(invoke, planted, a1)[0]
