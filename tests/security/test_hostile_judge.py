"""Finding 5 (third pass): a hostile judge makes its metrics "not judged", never ends the run.

A real judge server on 127.0.0.1 answers with replies nested 100,000 deep, integers of 5,000
digits (in the reply and inside its message text), ``Retry-After: inf`` and ``Retry-After:
100000``; each is that metric's error with a reason, within the judge's ``timeout_s``. A key
the judge echoes in a 200 reply is redacted before the reply is cached.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from secutil import CANARY, Server, Sqlbench, json_reply, write_files

QUESTIONS = (
    "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"
    '    ground_truth_output: "1"\n'
)
DEEP = 100_000
HUGE = "9" * 5000


def _chat(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


REPLIES: dict[str, Any] = {
    "deep_reply": (200, {}, b'{"choices": ' + b"[" * DEEP + b"]" * DEEP + b"}"),
    "huge_int_reply": (
        200,
        {},
        b'{"choices": [], "usage": {"total_tokens": ' + HUGE.encode() + b"}}",
    ),
    "deep_content": (200, {}, _chat('{"score": ' + "[" * DEEP + "]" * DEEP + "}")),
    "huge_int_content": (200, {}, _chat('{"score": ' + HUGE + "}")),
    "retry_after_inf": (429, {"Retry-After": "inf"}, b"{}"),
    "retry_after_long": (503, {"Retry-After": "100000"}, b"{}"),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "p",
        {
            "sqlbench.yml": "judge:\n  timeout_s: 3\n  retries: 2\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": json.dumps({"name": "one", "sql": "SELECT 1 AS x", "answer": "1"})
            + "\n",
        },
    )


@pytest.fixture
def judge() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"reply": None}
    server = Server("127.0.0.1", lambda path, headers, body: state["reply"])
    state["url"] = server.url
    try:
        yield state
    finally:
        server.close()


def _metrics(sb: Sqlbench, project: Path, env: dict[str, str]) -> dict[str, Any]:
    shown = sb("show", "latest", "--format", "json", cwd=project, env=env)
    assert shown.returncode == 0, shown.stderr
    (result,) = json.loads(shown.stdout)["results"]
    return dict(result["metrics"])


@pytest.mark.parametrize("reply", sorted(REPLIES))
def test_a_hostile_judge_reply_is_that_metrics_error_and_the_run_ends_normally(
    project: Path, judge: dict[str, Any], sb: Sqlbench, reply: str
) -> None:
    judge["reply"] = REPLIES[reply]
    env = {"SQLBENCH_JUDGE_BASE_URL": judge["url"] + "/v1", "SQLBENCH_JUDGE_MODEL": "j"}
    start = time.monotonic()
    proc = sb("run", "--agent", "rec", cwd=project, env=env, timeout=60)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Accuracy: 100% (1/1)" in proc.stdout
    # Two judged metrics, each within the judge's 3 s deadline (plus sqlbench's start).
    assert took < 20, took
    metrics = _metrics(sb, project, env)
    correct = metrics["answer_correctness"]
    assert correct["score"] is None and correct["error"], correct


def test_a_key_echoed_in_a_judges_200_reply_is_never_cached(
    project: Path, judge: dict[str, Any], sb: Sqlbench
) -> None:
    judge["reply"] = json_reply(
        {"choices": [{"message": {"content": f'{{"score": 1, "explanation": "key {CANARY}"}}'}}]}
    )
    env = {
        "SQLBENCH_JUDGE_BASE_URL": judge["url"] + "/v1",
        "SQLBENCH_JUDGE_MODEL": "j",
        "SQLBENCH_JUDGE_API_KEY": CANARY,
    }
    proc = sb("run", "--agent", "rec", cwd=project, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = _metrics(sb, project, env)
    assert metrics["answer_correctness"]["score"] == 1.0
    assert "***" in metrics["answer_correctness"]["explanation"]
    sb.assert_no_canary()
