"""Which warehouse a run used is part of its identity (docs/runs.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from sqlbench.project import load
from sqlbench.project.files import Settings
from sqlbench.project.load import load_project
from sqlbench.runs import identity
from sqlbench.runs.identity import run_identity, warehouse_identity
from sqlbench.testing import write_project

PG = "postgresql+psycopg://analyst:${PGPASSWORD}@db.example:5432/${PGDB}"


def test_one_variable_differing_is_another_warehouse() -> None:
    settings = Settings(warehouse=PG)
    one = warehouse_identity(settings, Path("."), {"PGDB": "prod", "PGPASSWORD": "a"})
    two = warehouse_identity(settings, Path("."), {"PGDB": "ci", "PGPASSWORD": "a"})
    assert one.hash != two.hash and one.hash is not None
    assert not one.built  # a server: its data can change without a commit


def test_the_password_is_neither_hashed_nor_shown() -> None:
    settings = Settings(warehouse=PG)
    one = warehouse_identity(settings, Path("."), {"PGDB": "prod", "PGPASSWORD": "s3cret"})
    two = warehouse_identity(settings, Path("."), {"PGDB": "prod", "PGPASSWORD": "rotated"})
    assert one.hash == two.hash
    assert one.label == "postgresql+psycopg://analyst:***@db.example:5432/${PGDB}"
    literal = warehouse_identity(Settings(warehouse="postgresql://u:s3cret@h/db"), Path("."))
    assert "s3cret" not in literal.label


def test_host_port_user_and_dialect_count() -> None:
    def of(url: str, dialect: str | None = None) -> str | None:
        return warehouse_identity(Settings(warehouse=url, dialect=dialect), Path("."), {}).hash

    base = of("postgresql://u@h:5432/db")
    assert len({base, of("postgresql://u@h:5433/db"), of("postgresql://v@h:5432/db")}) == 3
    assert of("postgresql://u@other:5432/db") != base
    assert of("postgresql://u@h:5432/db", dialect="duckdb") != base


def test_an_unset_variable_makes_the_warehouse_unknown() -> None:
    identity = warehouse_identity(Settings(warehouse=PG), Path("."), {})
    assert identity.hash is None


def test_a_duckdb_file_is_fingerprinted_by_content(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS x")
    settings = Settings(warehouse="shop.duckdb")
    before = warehouse_identity(settings, tmp_path)
    assert before.built and before.hash is not None
    assert warehouse_identity(settings, tmp_path).hash == before.hash
    with duckdb.connect(str(path)) as conn:
        conn.execute("INSERT INTO t VALUES (2)")
        conn.execute("CHECKPOINT")
    after = warehouse_identity(settings, tmp_path)
    assert after.hash != before.hash
    url_form = warehouse_identity(Settings(warehouse=f"duckdb:///{path}"), tmp_path)
    assert url_form.hash == after.hash


def test_the_built_in_memory_duckdb_is_built() -> None:
    identity = warehouse_identity(Settings(), Path("."))
    assert identity.built and identity.label == "in-memory DuckDB"


def test_every_named_warehouse_counts() -> None:
    def of(db: str) -> str | None:
        settings = Settings(warehouses={"pg": {"url": "postgresql://u@h/${DB}"}})  # type: ignore[dict-item]
        return warehouse_identity(settings, Path("."), {"DB": db}).hash

    assert of("one") != of("two")
    mixed = Settings(warehouses={"pg": {"url": "postgresql://u@h/db"}})  # type: ignore[dict-item]
    identity = warehouse_identity(mixed, Path("."))
    assert not identity.built and identity.label.startswith("default: in-memory DuckDB, pg: ")


def test_a_run_of_every_question_takes_the_loaders_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question set of a run of every question is the loader's hash of the same question
    objects: not hashed again per run (9 agents, 972 questions each), and the same value."""
    files: dict[str, object] = {
        "sqlbench.yml": {},
        "eval_questions/q.yml": {
            "eval_questions": [
                {"name": f"q{n}", "question": "?", "sql": f"SELECT {n}"} for n in range(3)
            ]
        },
        "eval_questions/other.yml": {
            "space": "other",
            "eval_questions": [{"name": "q0", "question": "?", "sql": "SELECT 9"}],
        },
        "agents/a.yml": {"agents": [{"name": "a", "kind": "replay", "path": "a.jsonl"}]},
        "agents/a.jsonl": "",
    }
    project = load_project(write_project(tmp_path, files))
    agent = project.agents["a"]
    every = identity.question_set_hash(project.questions)
    assert project.question_set_hash == every
    hashed: list[int] = []
    real = load.question_set_hash

    def counting(questions: Any) -> str:
        hashed.append(len(questions))
        return real(questions)

    monkeypatch.setattr(load, "question_set_hash", counting)
    assert run_identity(project, agent).question_set_hash == every
    assert run_identity(project, agent, list(project.questions)).question_set_hash == every
    assert hashed == []
    # A selection, or other question objects, is hashed.
    some = project.questions[:2]
    assert run_identity(project, agent, some).question_set_hash == real(some)
    copies = [q.model_copy() for q in project.questions]
    assert run_identity(project, agent, copies).question_set_hash == every
    assert hashed == [2, 4]
