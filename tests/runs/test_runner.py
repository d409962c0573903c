"""The run loop on a real temporary project (embedded DuckDB, python agents, a FakeAgent kind)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from sqlbench.agents.base import Answer, Request
from sqlbench.errors import AgentError, EngineError, SqlbenchError, StoreError
from sqlbench.records.run import RunStatus
from sqlbench.runs import warehouses as run_warehouses
from sqlbench.runs.events import ProgressEvent, QuestionGraded, RunStarted
from sqlbench.runs.plan import RunOptions, Shard, pick_questions
from sqlbench.runs.runner import open_store, run_benchmark
from sqlbench.runs.store import RunStore
from sqlbench.testing import FakeAgent, write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

P, F, R, E, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR, Verdict.SKIPPED


def verdicts(run: Any) -> dict[str, Verdict]:
    return {q.full_name: q.verdict for q in run.questions}


def test_every_verdict_for_an_honest_reason(
    project_dir: Path, asked_questions: Callable[[Path], list[str]]
) -> None:
    events: list[ProgressEvent] = []
    run = run_benchmark(load_project(project_dir), progress=events.append)
    assert run.status is RunStatus.COMPLETED
    assert verdicts(run) == {
        "ops/region_count": E,
        "sales/count_customers": P,
        "sales/revenue_by_region": P,
        "sales/emea_names": F,
        "sales/top_customer": P,
        "sales/broken_truth": E,
        "sales/no_truth": R,
        "sales/syntax": F,
        "sales/drop": F,
        "sales/words": R,
        "sales/later": S,
    }
    reasons = {q.full_name: q.reason for q in run.questions}
    assert reasons["ops/region_count"] == "agent error: RuntimeError: model overloaded"
    assert reasons["sales/top_customer"].startswith("matches also_accept #1")
    assert reasons["sales/broken_truth"].startswith("the ground truth failed: ")
    assert "missing_table" in reasons["sales/broken_truth"]
    assert reasons["sales/drop"].startswith("not a read-only query")
    assert reasons["sales/words"] == (
        "the answer is not SQL (the agent answered in words): There are three customers."
    )
    assert reasons["sales/later"] == "skipped: not ready"
    assert run.accuracy.label() == "30% (3/10)"  # skipped is not in the total
    # Neither the broken ground truth's question nor the skipped one reached the agent.
    assert sorted(asked_questions(project_dir)) == sorted(
        set(verdicts(run)) - {"sales/broken_truth", "sales/later"}
    )
    started = [e for e in events if isinstance(e, RunStarted)]
    graded = [e for e in events if isinstance(e, QuestionGraded)]
    assert len(started) == 1 and started[0].total == 11 and started[0].done == 0
    assert [e.done for e in graded] == list(range(1, 12))
    assert graded[-1].counts == {P: 3, F: 3, R: 2, E: 2, S: 1}


def test_a_graded_question_keeps_sql_previews_trace_and_timings(project_dir: Path) -> None:
    run = run_benchmark(load_project(project_dir), options=RunOptions(select=("emea_names",)))
    trial = run.questions[0].first
    assert trial.truth_sql == "SELECT name FROM customers WHERE region = 'EMEA'"
    assert trial.agent_sql == "SELECT name FROM customers WHERE region = 'APAC'"
    assert trial.expected_preview is not None and trial.actual_preview is not None
    assert trial.expected_preview.rows == [["Ann"], ["Cy"]]
    assert trial.expected_preview.differs == [True, True]
    assert trial.actual_preview.rows == [["Bob"]] and trial.actual_preview.differs == [True]
    assert trial.latency_ms is not None and trial.latency_ms > 0
    assert set(trial.timings_ms) == {"truth", "agent_sql", "compare"}
    assert trial.question == "Names of EMEA customers?"


def test_results_are_in_the_store_and_match_what_is_returned(project_dir: Path) -> None:
    project = load_project(project_dir)
    run = run_benchmark(project, options=RunOptions(name="stored"))
    with open_store(project) as store:
        again = store.load_run("stored")
        assert again == run
        assert store.list_runs()[0].status is RunStatus.COMPLETED
    assert (project_dir / ".sqlbench" / "runs.db").is_file()


def test_a_stored_run_has_the_identity_its_project_gives(project_dir: Path) -> None:
    """One identity rule: the record's fields (built by identity_fields) read back by
    identity_of equal run_identity of the project, agent and questions (issue 10)."""
    from sqlbench.runs.identity import identity_of, run_identity
    from sqlbench.runs.plan import agent_config

    project = load_project(project_dir)
    run = run_benchmark(project, options=RunOptions(name="same"))
    config = agent_config(project, project.settings.default_agent)
    assert identity_of(run.info) == run_identity(project, config, project.questions)


def test_previews_are_capped(tmp_path: Path, fake_agent: Callable[[FakeAgent], None]) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "big", "question": "?", "sql": "SELECT range AS n FROM range(5000)"}
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    fake_agent(FakeAgent({"big": "SELECT range + 1 AS n FROM range(5000)"}))
    run = run_benchmark(load_project(root), "fake")
    trial = run.questions[0].first
    assert trial.verdict is F
    assert trial.actual_preview is not None and len(trial.actual_preview.rows) <= 20
    assert trial.actual_preview.total_rows == 5000
    # The differing rows far down the result are shown too, marked.
    assert trial.actual_preview.row_numbers[-1] == 4999 and trial.actual_preview.differs[-1]


def test_selection_space_and_shards(project_dir: Path) -> None:
    project = load_project(project_dir)
    run = run_benchmark(project, options=RunOptions(space="sales", select=("count_*", "words")))
    assert sorted(verdicts(run)) == ["sales/count_customers", "sales/words"]
    assert run.info.select == ["count_*", "words"] and run.info.spaces == ["sales"]
    every = {q.full_name for q in project.questions}
    parts = [
        {q.full_name for q in pick_questions(project, (), None, Shard(i, 3))} for i in (1, 2, 3)
    ]
    assert set().union(*parts) == every and sum(map(len, parts)) == len(every)
    assert parts == [
        {q.full_name for q in pick_questions(project, (), None, Shard(i, 3))} for i in (1, 2, 3)
    ]
    shard = run_benchmark(project, options=RunOptions(shard=Shard(2, 3)))
    assert set(verdicts(shard)) == parts[1] and shard.info.shard == "2/3"


@pytest.mark.parametrize("text", ["0/2", "3/2", "x", "1-2"])
def test_bad_shards_are_one_sentence(text: str) -> None:
    with pytest.raises(SqlbenchError, match="--shard must be I/N"):
        Shard.parse(text)


def test_unknown_agent_suggests_the_closest(project_dir: Path) -> None:
    with pytest.raises(AgentError, match=r"unknown agent 'scriptd'; did you mean 'scripted'"):
        run_benchmark(load_project(project_dir), "scriptd")


def _questions_for_fake(tmp_path: Path, count: int) -> Path:
    """A project of ``count`` questions whose ground truth is ``SELECT 1``, and the agent
    ``fake`` (see ``fake_agent``)."""
    return write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": f"q{i}", "question": "?", "sql": "SELECT 1"} for i in range(count)
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )


def test_questions_run_concurrently(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _questions_for_fake(tmp_path, 10)
    agent = _InFlightAgent(default="SELECT 1", delay_s=0.5)
    fake_agent(agent)
    run = run_benchmark(load_project(root), "fake", RunOptions(concurrency=10))
    # Counted, not timed: a wall-clock bound failed on a busy machine.
    assert agent.most_in_flight >= 2
    assert run.accuracy.label() == "100% (10/10)"


def test_a_run_that_stops_on_an_error_leaves_no_thread_behind(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a run stops on an error (here the store refuses a result) its worker and
    ground-truth threads have ended before the error reaches the caller: the error then ends
    the process, and a daemon thread still inside DuckDB at interpreter exit aborts it."""
    root = _questions_for_fake(tmp_path, 12)
    fake_agent(FakeAgent(default="SELECT 1", delay_s=0.3))
    record = RunStore.record
    calls = []

    def failing(self: RunStore, run_id: str, result: Any) -> None:
        calls.append(run_id)
        if len(calls) == 2:
            raise StoreError("the disk holding the run store is full")
        record(self, run_id, result)

    monkeypatch.setattr(RunStore, "record", failing)
    with pytest.raises(StoreError):
        run_benchmark(load_project(root), "fake", RunOptions(concurrency=4))
    ours = ("sqlbench-run-", "sqlbench-truths", "sqlbench-heartbeat")
    left = [t.name for t in threading.enumerate() if t.name.startswith(ours)]
    assert left == []


class _InFlightAgent(FakeAgent):
    """A FakeAgent that counts how many questions it is answering at once."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.in_flight = 0
        self.most_in_flight = 0
        self._count_lock = threading.Lock()

    def answer(self, request: Request) -> Answer:
        with self._count_lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return super().answer(request)
        finally:
            with self._count_lock:
                self.in_flight -= 1


def test_repeat_asks_k_times_and_reports_rates(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "steady", "question": "?", "sql": "SELECT 1"},
                    {"name": "wobbly", "question": "?", "sql": "SELECT 2"},
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    agent = FakeAgent({"steady": "SELECT 1", "wobbly": ["SELECT 2", "SELECT 3", "SELECT 2"]})
    fake_agent(agent)
    run = run_benchmark(load_project(root), "fake", RunOptions(repeat=3, concurrency=1))
    assert len(agent.requests) == 6
    steady, wobbly = run.questions
    assert (steady.pass_rate, steady.flaky, steady.verdict) == (1.0, False, P)
    assert wobbly.pass_rate == pytest.approx(2 / 3) and wobbly.flaky and wobbly.verdict is F
    assert wobbly.pass_at_k == 1.0 and wobbly.pass_hat_k == 0.0
    assert [t.trial for t in wobbly.trials] == [0, 1, 2]
    assert run.accuracy.value == pytest.approx((1 + 2 / 3) / 2)
    assert run.accuracy.interval is not None
    assert run.accuracy.interval.low <= run.accuracy.value <= run.accuracy.interval.high


def test_each_distinct_ground_truth_runs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = write_project(
        tmp_path / "p",
        {
            "sqlbench.yml": {"run": {"concurrency": 6}},
            "certified_queries/c.yml": {
                "certified_queries": [
                    {
                        "name": "shared",
                        "sql": "SELECT count(*) AS n FROM range(1000) t(x) WHERE x % 7 = 3",
                    }
                ]
            },
            "eval_questions/q.yml": {
                "eval_questions": [
                    *(
                        {"name": f"q{i}", "question": "?", "certifiedQuery": "shared"}
                        for i in range(6)
                    ),
                    {
                        "name": "other",
                        "question": "?",
                        "sql": "SELECT 143 AS n",
                        "also_accept": [
                            "SELECT count(*) AS n FROM range(1000) t(x) WHERE x % 7 = 3"
                        ],
                    },
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    executed: list[str] = []
    real_open = run_warehouses.open_project_engine

    def counting_open(project: Any, warehouse: str | None = None, **options: Any) -> Any:
        engine = real_open(project, warehouse, **options)
        real_run_truth = engine.run_truth

        def run_truth(sql: str, **kwargs: Any) -> Any:
            executed.append(sql)
            return real_run_truth(sql, **kwargs)

        engine.run_truth = run_truth  # type: ignore[method-assign]
        return engine

    monkeypatch.setattr(run_warehouses, "open_project_engine", counting_open)
    fake_agent(FakeAgent(default="SELECT 143 AS n"))
    run = run_benchmark(load_project(root), "fake", RunOptions(repeat=2))
    assert run.accuracy.label() == "100% (14/14)"
    assert sorted(executed) == sorted(
        ["SELECT count(*) AS n FROM range(1000) t(x) WHERE x % 7 = 3", "SELECT 143 AS n"]
    )


def test_resume_asks_only_what_has_no_answer(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": f"q{i}", "question": "?", "sql": "SELECT 1"} for i in range(6)
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    project = load_project(root)
    first = FakeAgent(default="SELECT 1")
    fake_agent(first)

    def stop_after_three(event: ProgressEvent) -> None:
        if isinstance(event, QuestionGraded) and event.done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_benchmark(
            project, "fake", RunOptions(name="half", concurrency=1), progress=stop_after_three
        )
    with open_store(project) as store:
        assert store.list_runs()[0].status is RunStatus.INTERRUPTED
        kept = store.done_keys(store.find_run("half").id)
    assert len(kept) >= 3
    second = FakeAgent(default="SELECT 1")
    fake_agent(second)
    run = run_benchmark(project, None, RunOptions(resume="half"))
    asked_again = {r.name for r in second.requests}
    assert asked_again == {f"q{i}" for i in range(6)} - {name for _, name, _ in kept}
    assert run.status is RunStatus.COMPLETED and run.accuracy.label() == "100% (6/6)"


def _interrupted_run(project: Any, fake_agent: Callable[[FakeAgent], None]) -> None:
    fake_agent(FakeAgent(default="SELECT 1"))

    def stop(event: ProgressEvent) -> None:
        if isinstance(event, QuestionGraded):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_benchmark(project, "fake", RunOptions(name="r1", concurrency=1), progress=stop)


def _resumable(tmp_path: Path, **extra: Any) -> Path:
    files: dict[str, Any] = {
        "eval_questions/q.yml": {
            "eval_questions": [
                {"name": "a", "question": "?", "sql": "SELECT 1"},
                {"name": "b", "question": "?", "sql": "SELECT 2"},
            ]
        },
        "agents/fake.yml": {
            "agents": [{"name": "fake", "kind": "fake"}, {"name": "other", "kind": "fake"}]
        },
    }
    files.update(extra)
    return write_project(tmp_path, files)


def test_resume_refuses_a_changed_question_set(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _resumable(tmp_path)
    _interrupted_run(load_project(root), fake_agent)
    write_project(
        root,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "a", "question": "?", "sql": "SELECT 1"},
                    {"name": "b", "question": "?", "sql": "SELECT 3"},
                ]
            }
        },
    )
    with pytest.raises(SqlbenchError, match="cannot resume run 'r1': its question set changed"):
        run_benchmark(load_project(root), None, RunOptions(resume="r1"))
    with pytest.raises(SqlbenchError, match="its question set changed"):
        run_benchmark(load_project(root), None, RunOptions(resume="r1", select=("a",)))


def test_resume_refuses_changed_agent_settings(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _resumable(tmp_path)
    _interrupted_run(load_project(root), fake_agent)
    with pytest.raises(
        SqlbenchError,
        match="the agent's settings changed since it started \\(agent 'fake' then, 'other' now\\)",
    ):
        run_benchmark(load_project(root), "other", RunOptions(resume="r1"))
    with pytest.raises(SqlbenchError, match="started with --repeat 1"):
        run_benchmark(load_project(root), None, RunOptions(resume="r1", repeat=2))


def test_resume_refuses_a_live_run(project_dir: Path, make_info: Any) -> None:
    project = load_project(project_dir)
    with open_store(project) as store:
        store.create_run(make_info(name="busy"))  # this process, fresh heartbeat
    with pytest.raises(SqlbenchError, match="cannot resume run 'busy': it is still running"):
        run_benchmark(project, None, RunOptions(resume="busy"))


def test_setup_error_fails_the_run_and_records_why(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["models/*.sql"]},
            "models/bad.sql": "CREATE VIEW v AS SELECT * FROM nowhere;",
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "a", "question": "?", "sql": "SELECT 1"}]
            },
        },
    )
    project = load_project(root)
    with pytest.raises(EngineError, match=r"models/bad\.sql: setup SQL failed"):
        run_benchmark(project, "auto", RunOptions(name="broken"))
    with open_store(project) as store:
        info = store.find_run("broken")
    assert info.status is RunStatus.FAILED and "models/bad.sql" in (info.error or "")


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        body = json.dumps({"sql": "SELECT 1 AS x"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def test_secrets_stay_in_env_form(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = write_project(
            tmp_path,
            {
                "eval_questions/q.yml": {
                    "eval_questions": [{"name": "a", "question": "?", "sql": "SELECT 1"}]
                },
                "agents/http.yml": {
                    "agents": [
                        {
                            "name": "api",
                            "kind": "http",
                            "url": f"http://127.0.0.1:{server.server_port}/",
                            "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                        }
                    ]
                },
            },
        )
        project = load_project(root)
        run = run_benchmark(project, "api", RunOptions(env={"API_TOKEN": "s3cr3t-t0ken"}))
    finally:
        server.shutdown()
    assert _Recorder.seen == ["Bearer s3cr3t-t0ken"]  # the agent did use the secret
    assert run.accuracy.label() == "100% (1/1)"
    assert run.info.agent_settings["options"]["headers"] == {"Authorization": "Bearer ${API_TOKEN}"}
    stored = b"".join(p.read_bytes() for p in (root / ".sqlbench").glob("runs.db*"))
    assert b"${API_TOKEN}" in stored and b"s3cr3t" not in stored
    with RunStore.for_project(root, None) as store:
        assert "s3cr3t" not in json.dumps(store.export_run(run.info.name))


def test_options_are_checked(project_dir: Path) -> None:
    with pytest.raises(SqlbenchError, match="--repeat must be at least 1"):
        RunOptions(repeat=0)
    with pytest.raises(SqlbenchError, match="no question matches 'nope'"):
        run_benchmark(load_project(project_dir), options=RunOptions(select=("nope",)))


def test_agent_notice_is_reported_once(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "certified_queries/c.yml": {
                "certified_queries": [
                    {
                        "name": "customer_count",
                        "question": "How many customers do we have?",
                        "sql": "SELECT 3 AS n",
                    }
                ]
            },
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "a",
                        "question": "How many customers do we have?",
                        "certifiedQuery": "customer_count",
                    },
                    {
                        "name": "b",
                        "question": "Which planet is largest?",
                        "sql": "SELECT 'Jupiter'",
                    },
                ]
            },
        },
    )
    events: list[ProgressEvent] = []
    run = run_benchmark(load_project(root), "auto", RunOptions(env={}), progress=events.append)
    notices = [e for e in events if type(e).__name__ == "RunNotice"]
    assert len(notices) == 1
    assert verdicts(run)["auto/a"] is P and verdicts(run)["auto/b"] is R


def test_ground_truth_in_another_dialect_is_transpiled(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"dialect": "postgres"},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "month",
                        "question": "?",
                        "sql": "SELECT to_char(DATE '2024-01-31', 'YYYY-MM') AS m",
                    },
                    {"name": "bad", "question": "?", "sql": "SELECT FROM WHERE"},
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    agent = FakeAgent({"month": "SELECT strftime(DATE '2024-01-31', '%Y-%m')"})
    fake_agent(agent)
    run = run_benchmark(load_project(root), "fake")
    month, bad = run.questions
    assert month.verdict is P
    assert month.first.truth_sql == "SELECT to_char(DATE '2024-01-31', 'YYYY-MM') AS m"
    assert bad.verdict is E and "sqlglot cannot parse the ground truth" in bad.reason
    assert [r.name for r in agent.requests] == ["month"]


def test_compare_columns_from_settings_and_questions_reach_grading(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    gold = "SELECT 'Ann' AS name"
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"compare": {"columns": "exact"}},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "wide", "question": "?", "sql": gold},
                    {
                        "name": "lenient",
                        "question": "?",
                        "sql": gold,
                        "compare": {"columns": "superset"},
                    },
                    {"name": "narrow", "question": "?", "sql": gold},
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    star = "SELECT 1 AS id, 'Ann' AS name, 'a@x' AS email"
    fake_agent(FakeAgent({"wide": star, "lenient": star, "narrow": "SELECT 'Ann' AS who"}))
    run = run_benchmark(load_project(root), "fake")
    assert verdicts(run) == {"auto/wide": F, "auto/lenient": P, "auto/narrow": P}
    wide = run.questions[0]
    assert wide.reason == (
        "the agent returned 3 columns, the ground truth 1 (columns: exact): extra agent "
        "columns 'id', 'email'; near miss: would pass with columns: superset"
    )
    assert (
        run.questions[1].reason == "results match: 1 row x 1 column (2 extra agent columns ignored)"
    )
    assert run.info.compare["columns"] == "exact"


@pytest.mark.postgres
def test_a_run_into_a_postgresql_store(project_dir: Path, postgres_url: str) -> None:
    write_project(
        project_dir,
        {
            "sqlbench.yml": {
                "dialect": "duckdb",
                "setup": ["models/*.sql"],
                "default_agent": "scripted",
                "store": postgres_url,
            }
        },
    )
    project = load_project(project_dir)
    run = run_benchmark(project, options=RunOptions(name="team-run"))
    assert run.accuracy.label() == "30% (3/10)"
    with open_store(project) as store:
        assert store.url.startswith("postgresql")
        assert store.load_run("team-run") == run
    assert not (project_dir / ".sqlbench").exists()


def _distinct_truths(tmp_path: Path, count: int) -> Path:
    """``count`` questions, ``q{i}``'s ground truth ``SELECT {i}``, and two agents of kind
    ``fake``: ``fake`` and ``other``."""
    return write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": f"q{i}", "question": "?", "sql": f"SELECT {i}"} for i in range(count)
                ]
            },
            "agents/fake.yml": {
                "agents": [{"name": "fake", "kind": "fake"}, {"name": "other", "kind": "fake"}]
            },
        },
    )


@pytest.mark.parametrize("agents", [("fake",), ("fake", "other")])
def test_a_ground_truth_failing_ahead_is_its_questions_verdict(
    tmp_path: Path,
    fake_agent: Callable[[FakeAgent], None],
    monkeypatch: pytest.MonkeyPatch,
    agents: tuple[str, ...],
) -> None:
    """What fails while a ground truth runs ahead of its answers (outside its query, which the
    cache grades itself) is that question's ``error`` verdict with the reason; the run goes
    on, and so does running the next ground truths ahead. A run of one agent is a batch of one:
    both behave alike."""
    from sqlbench.runs.runner import run_benchmarks
    from sqlbench.runs.truth_cache import TruthCache

    root = _distinct_truths(tmp_path, 4)
    fake_agent(FakeAgent({f"q{i}": f"SELECT {i}" for i in range(4)}))
    prefetch, get = TruthCache.prefetch, TruthCache.get
    failed = threading.Event()
    went_on = threading.Event()

    def prefetching(self: TruthCache, sqls: Any) -> None:
        if "SELECT 0" in sqls:
            failed.set()
            raise RuntimeError("the cache's lock broke")
        if failed.is_set():
            went_on.set()  # the prefetcher is past q0: its outcome is recorded
        prefetch(self, sqls)

    def getting(self: TruthCache, sqls: Any) -> Any:
        if "SELECT 0" in sqls:
            went_on.wait(10)  # grade q0 once the prefetcher has been through it
        return get(self, sqls)

    monkeypatch.setattr(TruthCache, "prefetch", prefetching)
    monkeypatch.setattr(TruthCache, "get", getting)
    project = load_project(root)
    if len(agents) == 1:
        runs = [run_benchmark(project, "fake", RunOptions(concurrency=2))]
    else:
        runs = run_benchmarks(project, list(agents), RunOptions(concurrency=2))
    assert went_on.is_set()
    for run in runs:
        assert run.status is RunStatus.COMPLETED
        found = {q.name: q for q in run.questions}
        assert {name: q.verdict for name, q in found.items()} == {
            "q0": E,
            "q1": P,
            "q2": P,
            "q3": P,
        }
        assert found["q0"].reason == (
            "the ground truth failed: sqlbench failed running it ahead: "
            "RuntimeError: the cache's lock broke"
        )


@pytest.mark.parametrize("agents", [("fake",), ("fake", "other")])
def test_a_heartbeat_the_store_refuses_is_tried_again(
    tmp_path: Path,
    fake_agent: Callable[[FakeAgent], None],
    monkeypatch: pytest.MonkeyPatch,
    agents: tuple[str, ...],
) -> None:
    """A store that fails one heartbeat (locked, a network blip) costs a notice; the next beat
    is tried, and the run completes."""
    from sqlbench.runs.events import RunNotice
    from sqlbench.runs.runner import run_benchmarks

    root = _distinct_truths(tmp_path, 4)
    fake_agent(FakeAgent({f"q{i}": f"SELECT {i}" for i in range(4)}, delay_s=0.3))
    heartbeat = RunStore.heartbeat
    beats: list[str] = []
    refused: list[str] = []

    def beating(self: RunStore, run_id: str) -> None:
        if not refused:
            refused.append(run_id)
            raise StoreError("the run store is locked by another process")
        beats.append(run_id)
        heartbeat(self, run_id)

    monkeypatch.setattr(RunStore, "heartbeat", beating)
    events: list[ProgressEvent] = []
    options = RunOptions(concurrency=1, heartbeat_s=0.05)
    project = load_project(root)
    if len(agents) == 1:
        runs = [run_benchmark(project, "fake", options, progress=events.append)]
    else:
        runs = run_benchmarks(project, list(agents), options, progress=events.append)
    assert [run.status for run in runs] == [RunStatus.COMPLETED] * len(agents)
    assert beats  # beating went on after the refusal
    notices = [e.message for e in events if isinstance(e, RunNotice)]
    assert "heartbeat not recorded: the run store is locked by another process" in notices
