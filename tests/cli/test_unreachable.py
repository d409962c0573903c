"""An agent endpoint that cannot be reached is no failure of the agent (docs/verdicts.md,
"Not asked"): a real HTTP server on 127.0.0.1 answers 429, then the run, ``--resume`` and
``check`` are driven as a user drives them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_servers import Received, Reply, ScriptedServer
from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]

QUESTIONS = """\
space: s
eval_questions:
  - name: total
    question: Total of x?
    sql: SELECT SUM(x) FROM t
  - name: rows
    question: How many rows?
    sql: SELECT COUNT(*) FROM t
"""
SQL = {"total": "SELECT SUM(x) FROM t", "rows": "SELECT COUNT(*) FROM t"}


class Endpoint(ScriptedServer):
    """An agent endpoint on 127.0.0.1: answers 429 while ``limited`` says so, else the SQL;
    ``asked`` lists the questions asked, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.limited: Callable[[str], bool] = lambda name: False
        self.respond = self._answer

    @property
    def asked(self) -> list[str]:
        return [request.body["name"] for request in self.received]

    def _answer(self, request: Received) -> Reply:
        name = request.body["name"]
        if self.limited(name):
            return Reply(429, {"error": "rate limited"}, headers={"Retry-After": "0"})
        return Reply(200, {"sql": SQL[name]})


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with Endpoint() as server:
        yield server


def _files(url: str) -> dict[str, str]:
    return {
        "sqlbench.yml": "dialect: duckdb\nsetup: [models/t.sql]\nrun: {retries: 2}\n",
        "models/t.sql": "CREATE TABLE t AS SELECT * FROM (VALUES (1000.5), (234.0)) v(x);\n",
        "eval_questions/q.yml": QUESTIONS,
        "agents/api.yml": (
            f"agents:\n  - name: api\n    kind: http\n    url: {url}\n    timeout_s: 5\n"
        ),
    }


@pytest.fixture
def project(tmp_path: Path, endpoint: Endpoint) -> GitRepo:
    repo = GitRepo.init(tmp_path / "p")
    repo.commit(_files(endpoint.url), "base")
    repo.commit({"eval_questions/note.md": "a change that touches no question\n"}, "head")
    return repo


def _json(invoke: Invoke, root: Path) -> dict[str, Any]:
    out = invoke("show", "-C", str(root), "latest", "--format", "json").stdout
    data: dict[str, Any] = json.loads(out)
    return data


def test_429_twice_then_sql_passes_with_the_retries_recorded(
    invoke: Invoke, project: GitRepo, endpoint: Endpoint
) -> None:
    tries: dict[str, int] = {}

    def twice(name: str) -> bool:
        tries[name] = tries.get(name, 0) + 1
        return tries[name] <= 2

    endpoint.limited = twice
    result = invoke("run", "-C", str(project.root), "--agent", "api", "--concurrency", "1")
    assert "Accuracy: 100% (2/2)" in result.stdout
    data = _json(invoke, project.root)
    assert [r["verdict"] for r in data["results"]] == ["pass", "pass"]
    assert [r["retries"] for r in data["results"]] == [2, 2]
    assert all(r["error_kind"] is None for r in data["results"])


def test_429_always_is_not_asked_out_of_accuracy_and_resume_asks_it(
    invoke: Invoke, project: GitRepo, endpoint: Endpoint
) -> None:
    endpoint.limited = lambda name: name == "total"
    result = invoke("run", "-C", str(project.root), "--agent", "api")
    assert "Accuracy: 100% (1/1, 1 not asked)" in result.stdout
    # Resumed while the endpoint still answers 429: still not asked, JUnit skips it.
    path = project.root.parent / "run.xml"
    invoke("run", "-C", str(project.root), "--resume", "latest", "--format", "junit",
           "--output", str(path))  # fmt: skip
    junit = path.read_text()
    assert 'skipped message="not asked: the agent' in junit and "<error" not in junit
    assert "1 not asked: the agent's endpoint answered 429" in result.stdout
    data = _json(invoke, project.root)
    by_name = {r["name"]: r for r in data["results"]}
    assert by_name["total"]["verdict"] == "error"
    assert by_name["total"]["error_kind"] == "unreachable"
    assert by_name["total"]["reason"].startswith("not asked: the agent's endpoint answered 429")
    assert by_name["rows"]["error_kind"] is None
    assert data["accuracy"]["total"] == 1 and data["accuracy"]["not_asked"] == 1
    runs = json.loads(invoke("runs", "-C", str(project.root), "--format", "json").stdout)
    assert (runs["runs"][0]["passed"], runs["runs"][0]["total"]) == (1, 1)

    endpoint.received.clear()
    endpoint.limited = lambda name: False
    resumed = invoke("run", "-C", str(project.root), "--agent", "api", "--resume", "latest")
    assert endpoint.asked == ["total"]  # exactly the question not asked, nothing else
    assert "Accuracy: 100% (2/2)" in resumed.stdout


def test_an_agent_error_of_its_own_stays_the_agents_error(
    invoke: Invoke, tmp_path: Path, endpoint: Endpoint
) -> None:
    files = _files(endpoint.url)
    files["agents/api.yml"] += '  - name: broken\n    kind: command\n    command: "false"\n'
    GitRepo.init(tmp_path / "q").commit(files)
    result = invoke("run", "-C", str(tmp_path / "q"), "--agent", "broken")
    assert "Accuracy: 0% (0/2)" in result.stdout
    assert "not asked" not in result.stdout


def test_check_never_calls_a_question_not_asked_a_regression_and_exits_3(
    invoke: Invoke, project: GitRepo, endpoint: Endpoint
) -> None:
    root = str(project.root)
    invoke("run", "-C", root, "--agent", "api", "--branch", "HEAD~1")  # the base, all pass
    endpoint.limited = lambda name: True
    junit = project.root.parent / "junit.xml"
    result = invoke(
        "check", "-C", root, "--base", "HEAD~1", "--head", "HEAD", "--agent", "api",
        "--junit", str(junit), exit_code=3,
    )  # fmt: skip
    assert "regression" in result.stdout and "0 regressions" in result.stdout
    xml = junit.read_text()
    assert xml.count("<skipped") == 2 and "<failure" not in xml
    assert "incomplete: 2 questions not asked (s/rows, s/total)" in result.stderr
    assert "re-run with --resume" in result.stderr

    # The endpoint is back: the check asks exactly those again (the faulty head is not reused).
    endpoint.received.clear()
    endpoint.limited = lambda name: False
    again = invoke("check", "-C", root, "--base", "HEAD~1", "--head", "HEAD", "--agent", "api")
    assert sorted(endpoint.asked) == ["rows", "total"]
    assert "holds 2 answers not asked" in again.stderr


def test_a_policy_failure_wins_over_incomplete(
    invoke: Invoke, project: GitRepo, endpoint: Endpoint
) -> None:
    root = str(project.root)
    invoke("run", "-C", root, "--agent", "api", "--branch", "HEAD~1")
    # Head: `rows` answered wrong (a real regression), `total` not asked.
    wrong_truth = QUESTIONS.replace("COUNT(*) FROM t", "COUNT(*) + 1 FROM t")
    project.commit({"eval_questions/q.yml": wrong_truth})
    endpoint.limited = lambda name: name == "total"
    result = invoke(
        "check", "-C", root, "--base", "HEAD~2", "--head", "HEAD", "--agent", "api", exit_code=1
    )
    assert "incomplete: 1 question not asked (s/total)" in result.stderr


def test_a_refused_connection_is_not_asked(invoke: Invoke, tmp_path: Path) -> None:
    closed = Endpoint()  # bound, then closed: nothing listens on its port
    url = closed.url
    closed.httpd.server_close()
    GitRepo.init(tmp_path / "r").commit(_files(url))
    result = invoke("run", "-C", str(tmp_path / "r"), "--agent", "api")
    assert "Accuracy: n/a (0/0, 2 not asked)" in result.stdout
    assert "2 not asked: the agent's endpoint refused or reset the connection" in result.stdout
