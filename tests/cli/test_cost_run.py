"""What a run costs: ``pricing:`` applied to an HTTP agent's reported usage (hand-counted),
per answer, per run and per correct answer, in every output and in ``compare``; ``run.budget``
stops a run before it passes it, and ``--resume`` with a larger budget continues."""

from __future__ import annotations

import json
from pathlib import Path

from cost_project import AgentServer, make_project, write_replay

PRICING = """
pricing:
  m1: {input: 2.0, output: 8.0, cached: 0.5}
  m2: {input: 1.0, output: 1.0}
"""
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cached_tokens": 400, "model": "m1"}
# By hand: 600 input at $2/M + 400 cached at $0.5/M + 200 output at $8/M = $0.003 an answer.


def http_agent(name: str, url: str, model: str = "") -> str:
    extra = f"    model: {model}\n" if model else ""
    return f"  - name: {name}\n    kind: http\n    url: {url}\n{extra}"


def test_pricing_a_hand_counted_run(invoke, tmp_path: Path) -> None:
    with AgentServer(USAGE) as server:
        root = make_project(tmp_path / "p", PRICING, "agents:\n" + http_agent("a", server.url))
        data = json.loads(invoke("run", "-C", str(root), "--agent", "a", "--format", "json").stdout)
    costs = {r["name"]: r["cost"] for r in data["results"]}
    assert costs["total"] == {
        "usd": 0.003,
        "tokens": 1200,
        "model": "m1",
        "judge_usd": None,
        "unpriced": [],
    }
    run = data["cost"]
    assert run["usd"] == 0.009 and run["tokens"] == 3600
    assert run["per_correct_usd"] == 0.009  # one of three passes
    assert abs(run["per_answer_usd"] - 0.003) < 1e-12
    text = invoke("show", "-C", str(root), "latest").stdout
    assert "Cost $0.009 · $0.009 per correct answer · 3,600 tokens" in text
    listed = json.loads(invoke("runs", "-C", str(root), "--format", "json").stdout)["runs"]
    assert listed[0]["cost_usd"] == 0.009
    assert "$0.009" in invoke("runs", "-C", str(root)).stdout
    assert "cost $0.003" in invoke("show", "-C", str(root), "latest", "total").stdout


def test_the_agents_model_key_prices_usage_that_names_no_model(invoke, tmp_path: Path) -> None:
    usage = {"input_tokens": 500_000, "output_tokens": 500_000}
    with AgentServer(usage) as server:
        agents = "agents:\n" + http_agent("a", server.url, model="m2")
        agents += http_agent("nameless", server.url)
        root = make_project(tmp_path / "p", PRICING, agents)
        priced = json.loads(
            invoke("run", "-C", str(root), "--agent", "a", "--format", "json").stdout
        )
        unpriced = json.loads(
            invoke("run", "-C", str(root), "--agent", "nameless", "--format", "json").stdout
        )
    assert priced["cost"]["usd"] == 3.0  # $1 an answer at m2's $1/M in and out
    assert unpriced["cost"]["usd"] is None
    assert unpriced["cost"]["unpriced"] == ["the agent's model (set model: on the agent)"]
    text = invoke("show", "-C", str(root), "latest").stdout
    assert "Cost not priced · no price for the agent's model (set model: on the agent)" in text


def test_compare_puts_the_cost_delta_beside_the_accuracy_delta(invoke, tmp_path: Path) -> None:
    with AgentServer(USAGE) as server:
        root = make_project(tmp_path / "p", PRICING)
        agents = "agents:\n" + http_agent("a", server.url)
        agents += write_replay(root, "cheap", {"input_tokens": 100, "output_tokens": 100})
        agents = agents.replace("path: cheap.jsonl\n", "path: cheap.jsonl\n    model: m2\n")
        (root / "agents" / "agents.yml").write_text(agents, encoding="utf-8")
        invoke("run", "-C", str(root), "--agent", "a", "--name", "dear")
        invoke("run", "-C", str(root), "--agent", "cheap", "--name", "cheap")
    text = invoke("compare", "-C", str(root), "dear", "cheap").stdout
    assert (
        "Cost: base $0.009 ($0.009 per correct answer) → head $0.0006 ($0.0006 per correct "
        "answer): -$0.0084 (-$0.0084 per correct answer), accuracy 0.0 points"
    ) in text
    data = json.loads(
        invoke("compare", "-C", str(root), "dear", "cheap", "--format", "json").stdout
    )
    assert abs(data["economy"]["cost"]["usd_delta"] + 0.0084) < 1e-12


def test_a_budget_stops_the_run_and_resume_with_more_continues(invoke, tmp_path: Path) -> None:
    with AgentServer(USAGE) as server:
        settings = PRICING + "run:\n  budget: {usd: 0.005}\n"
        root = make_project(tmp_path / "p", settings, "agents:\n" + http_agent("a", server.url))
        first = invoke("run", "-C", str(root), "--agent", "a", "--name", "capped")
        # $0.003 an answer: a second would pass $0.005, so one question is asked.
        assert server.asked == ["total"]
        assert "run.budget reached: $0.003 spent of $0.005" in first.stderr
        assert "`sqlbench run --resume capped` with a larger run.budget continues it" in (
            first.stderr
        )
        runs = json.loads(invoke("runs", "-C", str(root), "--format", "json").stdout)["runs"]
        assert runs[0]["status"] == "interrupted"
        (root / "sqlbench.yml").write_text(
            (root / "sqlbench.yml").read_text().replace("0.005", "0.01"), encoding="utf-8"
        )
        invoke("run", "-C", str(root), "--resume", "capped")
        assert server.asked[0] == "total" and sorted(server.asked[1:]) == ["by_region", "top"]
    data = json.loads(invoke("show", "-C", str(root), "capped", "--format", "json").stdout)
    assert data["run"]["status"] == "completed"
    assert data["cost"]["usd"] == 0.009


def test_a_token_budget(invoke, tmp_path: Path) -> None:
    with AgentServer(USAGE) as server:
        settings = "run:\n  budget: {tokens: 2500}\n"
        root = make_project(tmp_path / "p", settings, "agents:\n" + http_agent("a", server.url))
        result = invoke("run", "-C", str(root), "--agent", "a")
        assert len(server.asked) == 2  # 1,200 tokens an answer: a third would pass 2,500
    assert "run.budget reached: 2,400 tokens spent of 2,500 tokens" in result.stderr


def test_a_budget_is_kept_for_each_agents_run(invoke, tmp_path: Path) -> None:
    """Every agent's run may spend run.budget: each stops at its own, the cheaper agent's run
    answers more, and --resume with a larger budget continues the stopped one."""
    root = make_project(tmp_path / "p", "run:\n  budget: {tokens: 2500}\n")
    agents = "agents:\n" + write_replay(root, "dear", USAGE)
    agents += write_replay(root, "cheap", {"input_tokens": 500, "output_tokens": 200})
    (root / "agents" / "agents.yml").write_text(agents, encoding="utf-8")
    both = invoke("run", "-C", str(root), "--agent", "dear,cheap", "--format", "json")
    # 1,200 tokens an answer: a third would pass 2,500. 700 an answer: all three fit (2,100).
    assert "run.budget reached: 2,400 tokens spent of 2,500 tokens" in both.stderr
    runs = {
        r["agent"]: r
        for r in json.loads(invoke("runs", "-C", str(root), "--format", "json").stdout)["runs"]
    }
    assert runs["dear"]["status"] == "interrupted" and runs["cheap"]["status"] == "completed"
    dear = json.loads(
        invoke("show", "-C", str(root), runs["dear"]["name"], "--format", "json").stdout
    )
    assert len(dear["results"]) == 2 and dear["cost"]["tokens"] == 2400
    (root / "sqlbench.yml").write_text(
        (root / "sqlbench.yml").read_text().replace("2500", "5000"), encoding="utf-8"
    )
    invoke("run", "-C", str(root), "--resume", runs["dear"]["name"])
    dear = json.loads(
        invoke("show", "-C", str(root), runs["dear"]["name"], "--format", "json").stdout
    )
    assert dear["run"]["status"] == "completed" and dear["cost"]["tokens"] == 3600


def test_a_bad_budget_is_one_sentence(invoke, tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", "run:\n  budget: {usd: 1, tokens: 5}\n")
    result = invoke("run", "-C", str(root), exit_code=2)
    assert "sqlbench.yml:4: error: run.budget: give exactly one of usd or tokens" in result.stderr
    assert "Traceback" not in result.output


def test_explain_analyze_is_refused_on_a_warehouse_that_is_not_postgres(
    invoke, tmp_path: Path
) -> None:
    settings = (
        "run:\n  explain_analyze: true\nwarehouses:\n"
        "  pg:\n    url: postgresql+psycopg://u@h/db\n    run: {explain_analyze: true}\n"
        "  lite:\n    url: sqlite:///x.db\n    run:\n      explain_analyze: true\n"
    )
    root = make_project(tmp_path / "p", settings)
    result = invoke("validate", "-C", str(root), exit_code=1)
    problems = [line for line in result.output.splitlines() if "explain_analyze" in line]
    assert problems == [
        "sqlbench.yml:4: error: run.explain_analyze: only a PostgreSQL warehouse reports its "
        "work through EXPLAIN ANALYZE, and this one is duckdb; remove the key",
        "sqlbench.yml:12: error: warehouses.lite.run.explain_analyze: only a PostgreSQL "
        "warehouse reports its work through EXPLAIN ANALYZE, and this one is sqlite; remove "
        "the key",
    ]


def test_the_report_shows_cost_per_correct_answer_work_and_accuracy_against_cost(
    invoke, tmp_path: Path
) -> None:
    with AgentServer(USAGE) as server:
        root = make_project(tmp_path / "p", PRICING, "agents:\n" + http_agent("a", server.url))
        invoke("run", "-C", str(root), "--agent", "a", "--name", "first")
        invoke("run", "-C", str(root), "--agent", "a", "--name", "second")
    page = tmp_path / "report.html"
    invoke("report", "-C", str(root), "second", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert '<td id="cost-per-correct">$0.009</td>' in html
    assert "Accuracy against cost" in html and 'id="cost-chart"' in html
    assert "second (a): 33% (1/3), $0.009" in html
    # Each question's facts (drawn by the page's script) carry its cost and work ratio.
    assert '"economy":["cost $0.003",' in html
    assert "work 1x the ground truth" in html


JUDGE_REPLY = {
    "model": "judge-m",
    "choices": [{"message": {"content": '{"score": 1, "explanation": "fine"}'}}],
    "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
}


def test_judge_usage_is_priced_as_the_judge_model(invoke, tmp_path: Path) -> None:
    metric = (
        "metrics:\n  - name: tidy\n    prompt: 'Is this SQL tidy? {{sql}}'\n"
        "    score_ranges: {min_score: [0, 0.3], median_score: [0.3, 0.7], "
        "max_score: [0.7, 1]}\n"
    )
    with AgentServer(USAGE) as agent, AgentServer({}, JUDGE_REPLY) as judge:
        settings = PRICING + "  judge-m: {input: 1.0, output: 10.0}\n" + metric
        settings += f"judge: {{base_url: '{judge.url.removesuffix('/answer')}', model: judge-m}}\n"
        root = make_project(tmp_path / "p", settings, "agents:\n" + http_agent("a", agent.url))
        data = json.loads(invoke("run", "-C", str(root), "--agent", "a", "--format", "json").stdout)
    cost = next(r["cost"] for r in data["results"] if r["name"] == "total")
    # Judge by hand: 1,000 in at $1/M + 100 out at $10/M = $0.002; the agent's $0.003 besides.
    assert cost["judge_usd"] == 0.002 and cost["usd"] == 0.005
    assert cost["tokens"] == 1200 + 1100
    assert data["cost"]["judge_usd"] == 0.006


def test_regrade_keeps_the_answers_cost(invoke, tmp_path: Path) -> None:
    with AgentServer(USAGE) as server:
        root = make_project(tmp_path / "p", PRICING, "agents:\n" + http_agent("a", server.url))
        invoke("run", "-C", str(root), "--agent", "a", "--name", "asked")
    invoke("regrade", "-C", str(root), "asked", "--name", "again")
    data = json.loads(invoke("show", "-C", str(root), "again", "--format", "json").stdout)
    assert data["cost"]["usd"] == 0.009  # cached tokens and the model carried over
