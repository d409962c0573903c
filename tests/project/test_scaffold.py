"""`sqlbench init`'s template: it validates, its SQL runs, and nothing is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from sqlbench.errors import SqlbenchError
from sqlbench.project.scaffold import scaffold_project, template_files
from sqlbench.validation import check_project, load_project


def test_the_template_validates_without_any_problem(tmp_path: Path) -> None:
    result = scaffold_project(tmp_path / "new")
    assert sorted(result.created) == sorted(template_files())
    assert ".gitignore" in result.created and result.notes == []
    check = check_project(tmp_path / "new")
    assert check.problems == []
    assert ".sqlbench/" in (tmp_path / "new/.gitignore").read_text()


def test_the_template_setup_and_ground_truth_run_on_duckdb(tmp_path: Path) -> None:
    scaffold_project(tmp_path)
    project = load_project(tmp_path)
    db = duckdb.connect()
    for pattern in project.settings.setup:
        for file in sorted(tmp_path.glob(pattern)):
            db.execute(file.read_text())
    for question in project.questions:
        assert question.truth_sql is not None
        rows = db.execute(question.truth_sql).fetchall()
        assert rows, question.full_name
    assert db.execute(project.questions[2].truth_sql or "").fetchall()[0][0] == "Initech"


def test_the_example_agent_has_an_answer_for_every_question(tmp_path: Path) -> None:
    scaffold_project(tmp_path)
    project = load_project(tmp_path)
    agent = project.agents["example"]
    recorded = (agent.base_dir / agent.options["path"]).read_text().splitlines()
    names = {(r["space"], r["name"]) for r in map(json.loads, recorded)}
    assert names == {(q.space, q.name) for q in project.questions}


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models/shop.sql").write_text("-- mine\n")
    with pytest.raises(
        SqlbenchError,
        match=r"refusing to overwrite existing files in .*: "
        r"models/shop\.sql",
    ):
        scaffold_project(tmp_path)
    assert (tmp_path / "models/shop.sql").read_text() == "-- mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models"]


def test_init_refuses_an_existing_project(tmp_path: Path) -> None:
    (tmp_path / "eval_questions").mkdir()
    with pytest.raises(SqlbenchError, match="already holds a sqlbench project"):
        scaffold_project(tmp_path)


def test_an_existing_gitignore_is_left_alone_with_a_note(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc\n")
    result = scaffold_project(tmp_path)
    assert ".gitignore" not in result.created
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n"
    assert result.notes and ".sqlbench/" in result.notes[0]


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SqlbenchError, match="exists and is not a folder"):
        scaffold_project(tmp_path / "file")
