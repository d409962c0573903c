"""Finding 9 (third pass): bounds on what remained unbounded.

``import`` reads a capped amount, a chunk at a time (an endless ``/dev/zero`` or a file past
the cap is one sentence), refuses integers Python will not convert and values that mean nothing
(a ``created_at`` in 9999, negative latencies and tokens, counts of 2^31 - 1);
``latest~99999999999999999999`` is a usage error in every command that takes a run; the
``also_accept`` YAML that ``review ... pass`` prints shows a U+202E as an escape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from secutil import Sqlbench, write_files

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(
        tmp_path_factory.mktemp("bounds") / "p",
        {
            "sqlbench.yml": "{}\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": json.dumps({"name": "one", "sql": "SELECT 2 AS x -- \u202e"}) + "\n",
        },
    )
    sb = Sqlbench(root.parent)
    proc = sb("run", "--agent", "rec", "--name", "seed", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def _export(sb: Sqlbench, project: Path) -> dict[str, Any]:
    proc = sb("export", "seed", cwd=project)
    assert proc.returncode == 0, proc.stderr
    document: dict[str, Any] = json.loads(proc.stdout)
    document["run"]["name"] = "copy"
    document["run"]["id"] = "f" * 32
    return document


def _one_sentence(proc: Any) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return str(lines[0])


def test_an_endless_file_is_refused_at_once(project: Path, sb: Sqlbench) -> None:
    proc = sb("import", "/dev/zero", cwd=project, timeout=20)
    assert "not a run export" in _one_sentence(proc)


@pytest.mark.slow
def test_a_file_past_the_cap_is_refused_without_holding_it(
    project: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.write(b'{"format": "')
        out.truncate(300 * 2**20)  # sparse: 300 MB read, never written to disk
    rss = tmp_path / "rss"
    proc = sb("import", str(big), cwd=project, timeout=60, peak_rss_file=rss)
    assert "is over 256 MB" in _one_sentence(proc)
    assert int(rss.read_text()) < 900 * 1024  # KiB: the file is never parsed


def test_a_5000_digit_integer_is_one_sentence(project: Path, tmp_path: Path, sb: Sqlbench) -> None:
    path = tmp_path / "huge.json"
    path.write_text('{"format": "sqlbench-run", "x": ' + "9" * 5000 + "}")
    assert "not a run export" in _one_sentence(sb("import", str(path), cwd=project))


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        (("run", "created_at"), "9999-12-31T00:00:00+00:00", "is in the future"),
        (("run", "question_count"), 2**31 - 1, "is not a number of questions"),
        (("run", "repeat"), 2**31 - 1, "is not a repeat count"),
        (("results", 0, "latency_ms"), -5.0, "is negative; it is an amount"),
        (("results", 0, "input_tokens"), -100, "is negative; it is an amount"),
    ],
)
def test_imported_values_that_mean_nothing_are_refused(
    project: Path, tmp_path: Path, sb: Sqlbench, where: tuple[Any, ...], value: Any, said: str
) -> None:
    document = _export(sb, project)
    target: Any = document
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(document))
    sentence = _one_sentence(sb("import", str(path), cwd=project))
    assert said in sentence
    assert "copy" not in sb("runs", cwd=project).stdout


@pytest.mark.parametrize(
    "args",
    [
        ("show", "latest~99999999999999999999"),
        ("report", "latest~99999999999999999999"),
        ("export", "latest~99999999999999999999"),
        ("compare", "latest", "latest~99999999999999999999"),
    ],
)
def test_latest_past_every_run_is_a_usage_error(
    project: Path, sb: Sqlbench, args: tuple[str, ...]
) -> None:
    assert "goes back past the oldest run" in _one_sentence(sb(*args, cwd=project))


def test_the_also_accept_yaml_shows_a_bidi_override_as_an_escape(
    project: Path, sb: Sqlbench
) -> None:
    proc = sb("review", "seed", "auto/one", "pass", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = proc.stdout[proc.stdout.index("also_accept:") :]
    assert "\u202e" not in printed
    assert "\\u202E" in printed
    block = printed.split("\n\n")[0]
    assert yaml.safe_load(block)["also_accept"] == ["SELECT 2 AS x -- \u202e"]


def test_ground_truth_runs_under_the_query_process_memory_bound(
    tmp_path: Path, sb: Sqlbench
) -> None:
    """A ground truth (any ref's question file) that builds one 1.5 GB value is stopped in the
    memory-watched query process, as agent SQL would be: sqlbench's own process never holds it
    (it reached 4.5 GB when ground truth ran in sqlbench's process and was only counted while
    fetching)."""
    root = write_files(
        tmp_path / "huge",
        {
            "sqlbench.yml": "run: {max_result_mb: 16}\n",
            "eval_questions/q.yml": "eval_questions:\n  - name: huge\n    question: Huge?\n"
            "    sql: SELECT repeat('x', 1500000000) AS v\n",
        },
    )
    rss = tmp_path / "peak"
    proc = sb(
        "run", "--agent", "auto", "--format", "json", cwd=root, timeout=120, peak_rss_file=rss
    )
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["verdict"] == "error"
    assert result["reason"].startswith("the ground truth is too large"), result["reason"]
    assert "query process past the memory it may use" in result["reason"], result["reason"]
    assert int(rss.read_text()) < 1024 * 1024  # KiB: no process of the run reached 1 GB
