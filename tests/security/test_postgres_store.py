"""Finding 9 on a PostgreSQL store (``SQLBENCH_TEST_POSTGRES_URL``): a name longer than the
store's columns, a huge imported id or trial number, and corrupt JSON in one run's row are each
one sentence or handled, and nothing stored is lost.

The store lives in a schema of its own (``search_path``), made for this module and dropped after
it, so parallel test runs never share tables."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from secutil import Sqlbench, write_files

sa = pytest.importorskip("sqlalchemy")

POSTGRES_URL = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(
    not POSTGRES_URL, reason="SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL store tests)"
)
QUESTIONS = "eval_questions:\n" + "".join(
    f"  - name: q{i}\n    question: Q{i}?\n    sql: SELECT {i} AS x\n" for i in range(3)
)
RUNS = ("good-a", "bad", "good-b")


@pytest.fixture(scope="module")
def pg_store() -> Iterator[tuple[str, sa.engine.Engine]]:
    """A store URL whose tables go to a new schema; the schema is dropped afterwards."""
    assert POSTGRES_URL is not None
    schema = f"sqlbench_sec_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(POSTGRES_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    store = sa.create_engine(url)
    try:
        yield url, store
    finally:
        store.dispose()
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(scope="module")
def proj(pg_store: tuple[str, sa.engine.Engine], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose store is on PostgreSQL, holding the runs ``good-a``, ``bad``, ``good-b``."""
    root = tmp_path_factory.mktemp("pgstore")
    project = write_files(
        root / "proj",
        {
            "sqlbench.yml": f"default_agent: auto\nstore: {pg_store[0]}\n",
            "eval_questions/q.yml": QUESTIONS,
        },
    )
    sb = Sqlbench(root)
    for name in RUNS:
        run = sb("run", "--name", name, cwd=project)
        assert run.returncode == 0, run.stderr
    return project


def run_names(sb: Sqlbench, proj: Path) -> dict[str, str]:
    listed = sb("runs", "--format", "json", cwd=proj)
    assert listed.returncode == 0, listed.stderr
    return {r["name"]: r["status"] for r in json.loads(listed.stdout)["runs"]}


def test_names_longer_than_the_stores_columns_are_one_sentence(
    proj: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    long_question = tmp_path / "long"
    write_files(
        long_question,
        {
            "sqlbench.yml": (proj / "sqlbench.yml").read_text(),
            "eval_questions/q.yml": QUESTIONS
            + f"  - name: {'n' * 250}\n    question: Long?\n    sql: SELECT 1 AS x\n",
        },
    )
    for command, code in ((("validate",), 1), (("run", "--name", "long-question"), 2)):
        refused = sb(*command, cwd=long_question)
        assert refused.returncode == code, refused.stdout + refused.stderr
        assert "has 250 characters; at most 200" in refused.stdout + refused.stderr
    named = sb("run", "--name", "r" * 201, cwd=proj)
    assert named.returncode == 2
    assert "at most 200 characters" in named.stderr
    names = run_names(sb, proj)
    assert set(RUNS) <= set(names) and "long-question" not in names


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["run"].update(id="f" * 5000), "run.id"),
        (lambda d: d["results"][0].update(trial=2**70), "results[0].trial"),
        (lambda d: d["run"].update(name="x" * 5000), "at most 200 characters"),
    ],
    ids=["id-5000-chars", "trial-2**70", "name-5000-chars"],
)
def test_huge_imported_values_are_one_sentence(
    proj: Path, sb: Sqlbench, tmp_path: Path, edit: object, message: str
) -> None:
    document = json.loads(sb("export", "good-a", cwd=proj).stdout)
    document["run"].update(id=uuid.uuid4().hex, name=f"copy-{uuid.uuid4().hex[:6]}")
    edit(document)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    refused = sb("import", str(path), cwd=proj)
    assert refused.returncode == 2
    assert message in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert set(RUNS) <= set(run_names(sb, proj))


def test_corrupt_json_in_one_runs_row_marks_it_corrupt(
    proj: Path, sb: Sqlbench, pg_store: tuple[str, sa.engine.Engine]
) -> None:
    with pg_store[1].begin() as conn:
        conn.execute(sa.text("UPDATE sqlbench_runs SET data = '{not json' WHERE name = 'bad'"))
    names = run_names(sb, proj)
    assert (names["good-a"], names["bad"], names["good-b"]) == ("completed", "corrupt", "completed")
    assert sb("show", "good-a", cwd=proj).returncode == 0
    assert sb("compare", "good-a", "good-b", cwd=proj).returncode == 0
    assert json.loads(sb("export", "good-b", cwd=proj).stdout)["run"]["name"] == "good-b"


def test_corrupt_json_in_one_result_row_marks_its_run_corrupt(
    proj: Path, sb: Sqlbench, pg_store: tuple[str, sa.engine.Engine]
) -> None:
    """A result row of its own run: the first command that reads it (``show``) is one sentence
    and records the run Corrupt, so ``runs`` lists it so, naming the question; the others work.
    (A PostgreSQL UTF8 database refuses bytes that are not UTF-8, so only JSON can break.)"""
    run = sb("run", "--name", "bad-result", cwd=proj)
    assert run.returncode == 0, run.stderr
    with pg_store[1].begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE sqlbench_results SET data = '{not json' WHERE name = 'q1' AND run_id = "
                "(SELECT id FROM sqlbench_runs WHERE name = 'bad-result')"
            )
        )
    shown = sb("show", "bad-result", cwd=proj)
    assert shown.returncode != 0 and "cannot be read" in shown.stderr, shown
    assert "Traceback" not in shown.stderr and len(shown.stderr.strip().splitlines()) <= 2
    assert run_names(sb, proj)["bad-result"] == "corrupt"
    table = sb("runs", cwd=proj, env={"COLUMNS": "400"})
    assert (
        "bad-result: its stored result of question auto/q1 cannot be read "
        "(JSON that does not parse)" in table.stdout
    ), table.stdout
    assert sb("show", "good-a", cwd=proj).returncode == 0
    assert sb("compare", "good-a", "good-b", cwd=proj).returncode == 0
