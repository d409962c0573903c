"""Previews made once per result object for the answers of one question (``SharedSql.preview``):
the same preview as ``make_preview``, and the same stored records as without the sharing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.engines.base import ResultSet
from sqlbench.project.load import load_project
from sqlbench.runs import shared_sql
from sqlbench.runs.previews import make_preview
from sqlbench.runs.runner import run_benchmarks
from sqlbench.runs.shared_sql import SharedAnswers, SharedSql
from sqlbench.testing import write_project

_VALUES = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(), st.text(max_size=5))


@st.composite
def _results(draw: st.DrawFn) -> tuple[ResultSet, list[int], int]:
    rows = draw(st.integers(0, 45))
    kinds = draw(st.lists(st.sampled_from(["int", "float", "text"]), min_size=0, max_size=3))
    strategies = {
        "int": st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
        "float": st.one_of(st.none(), st.floats()),
        "text": st.one_of(st.none(), st.text(max_size=5)),
    }
    types = {"int": pa.int64(), "float": pa.float64(), "text": pa.string()}
    arrays = [
        pa.array(draw(st.lists(strategies[kind], min_size=rows, max_size=rows)), types[kind])
        for kind in kinds
    ]
    table = pa.Table.from_arrays(arrays, names=[f"c{i % 2}" for i in range(len(arrays))])
    differing = draw(st.lists(st.integers(-2, rows + 2), max_size=12))
    count = draw(st.integers(0, rows + 3))
    return ResultSet(table), differing, count


@settings(max_examples=150, deadline=None)
@given(_results())
def test_a_shared_preview_is_make_previews_and_made_once(
    case: tuple[ResultSet, list[int], int],
) -> None:
    result, differing, count = case
    shared = SharedSql(SharedAnswers(2))
    expected = make_preview(result, differing, differing_count=count)
    first = shared.preview(result, differing, count)
    assert first == expected and first.model_dump_json() == expected.model_dump_json()
    # The cheap path: the same result object and marks give the same record, not a new one.
    assert shared.preview(result, list(differing), count) is first
    # Another result object (equal or not) and other marks are previews of their own.
    other = ResultSet(result.table)
    assert shared.preview(other, differing, count) is not first
    assert shared.preview(other, differing, count) == expected
    assert shared.preview(result, [*differing, 0], count) == make_preview(
        result, [*differing, 0], differing_count=count
    )


def _stored(root: Path) -> list[tuple[str, str, str]]:
    """Each stored result's agent, question and JSON, without the fields that differ run to
    run (when it was graded, how long each step took)."""
    with sqlite3.connect(root / ".sqlbench" / "runs.db") as conn:
        rows = conn.execute(
            "SELECT r.agent_name, s.name, s.data FROM sqlbench_results s"
            " JOIN sqlbench_runs r ON r.id = s.run_id ORDER BY r.agent_name, s.name"
        ).fetchall()
    out = []
    for agent, name, data in rows:
        record = json.loads(data)
        record.pop("graded_at")
        record.pop("timings_ms")
        record.pop("latency_ms")
        out.append((agent, name, json.dumps(record)))
    return out


def _project(tmp_path: Path) -> Path:
    answers = {
        "a": {"q1": "SELECT n FROM t", "q2": "SELECT n, s FROM t WHERE n > 1"},
        "b": {"q1": "SELECT n FROM t", "q2": "SELECT n, s FROM t WHERE n > 1"},
        "c": {"q1": "SELECT n + 1 AS n FROM t", "q2": "SELECT n, s FROM t"},
        "d": {"q1": "SELECT n FROM t WHERE n < 3", "q2": "SELECT n, s FROM t"},
    }
    files: dict[str, object] = {
        "sqlbench.yml": {"setup": ["model.sql"]},
        "model.sql": (
            "CREATE TABLE t AS SELECT * FROM (VALUES (1, 'x'), (2, 'y'), (3, NULL)) v(n, s);\n"
        ),
        "eval_questions/q.yml": {
            "eval_questions": [
                {"name": "q1", "question": "?", "sql": "SELECT n FROM t"},
                {"name": "q2", "question": "?", "sql": "SELECT n, s FROM t WHERE n >= 2"},
            ]
        },
    }
    for agent, sqls in answers.items():
        files[f"agents/{agent}.yml"] = {
            "agents": [{"name": agent, "kind": "replay", "path": f"{agent}.jsonl"}]
        }
        files[f"agents/{agent}.jsonl"] = "".join(
            json.dumps({"name": name, "sql": sql}) + "\n" for name, sql in sqls.items()
        )
    return write_project(tmp_path, files)


def test_sharing_previews_stores_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        made.append(1)
        return make_preview(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shared_sql, "make_preview", counted)
    shared_root = _project(tmp_path / "shared")
    run_benchmarks(load_project(shared_root), ["a", "b", "c", "d"])
    # 4 agents x 2 questions, both sides: 16 previews without sharing.
    assert 0 < len(made) < 16

    def unshared(
        self: SharedSql, result: ResultSet, differing: list[int], differing_count: int
    ) -> object:
        return make_preview(result, differing, differing_count=differing_count)

    monkeypatch.setattr(SharedSql, "preview", unshared)
    alone_root = _project(tmp_path / "alone")
    run_benchmarks(load_project(alone_root), ["a", "b", "c", "d"])
    assert _stored(shared_root) == _stored(alone_root)
    assert len(_stored(shared_root)) == 8
