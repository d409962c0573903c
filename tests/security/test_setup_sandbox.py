"""Finding 1 (third pass): a ref's setup SQL runs behind DuckDB's walls, the working tree's too.

Setup SQL is read by DuckDB's own parser statement by statement: writing a file (``COPY ... TO``,
``EXPORT DATABASE``), ``ATTACH``, ``INSTALL``/``LOAD``, settings and secrets are refused with one
sentence, and reads reach only the project tree at that ref (``allowed_directories``). Issue 35's
``CREATE TEMP`` objects are made ordinary ones, so every question sees them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from secutil import Sqlbench, git, make_repo, write_files

QUESTIONS = (
    "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT count(*) AS n FROM t\n"
)
SETTINGS = "default_agent: auto\nsetup:\n  - models/*.sql\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    write_files(
        root,
        {
            "sqlbench.yml": SETTINGS,
            "eval_questions/q.yml": QUESTIONS,
            "data/t.csv": "x\n1\n2\n",
            "models/a.sql": "CREATE TABLE t AS SELECT * FROM read_csv('data/t.csv');\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    return root


def _branch(repo: Path, name: str, sql: str) -> None:
    git(repo, "checkout", "-q", "-b", name)
    (repo / "models" / "zz.sql").write_text(sql)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "attack")
    git(repo, "checkout", "-q", "main")


ATTACKS = {
    "copy_out": ("COPY (SELECT 'pwned') TO '{out}/pwned.txt'", "write files (COPY ... TO)"),
    "git_config": (
        "COPY (SELECT '[core]' || chr(10) || 'fsmonitor = \"touch {out}/ran; false\"') "
        "TO '{repo}/.git/config' (HEADER false, QUOTE '')",
        "write files (COPY ... TO)",
    ),
    "export": ("EXPORT DATABASE '{out}/db'", "write files (EXPORT DATABASE)"),
    "attach": ("ATTACH '{out}/new.duckdb' AS x", "attach a database (ATTACH)"),
    "install": ("INSTALL spatial", "install or load an extension"),
    "load": ("LOAD '{out}/evil.duckdb_extension'", "install or load an extension"),
    "setting": ("SET enable_external_access = true", "change DuckDB's settings"),
    "secret": (
        "CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
        "create a secret (CREATE SECRET)",
    ),
    "read_outside": (
        "CREATE TABLE leak AS SELECT content FROM read_text('/etc/hostname')",
        "file system operations are disabled by configuration",
    ),
    "read_up": (
        "CREATE TABLE leak AS SELECT * FROM read_csv('../secret.csv')",
        "file system operations are disabled by configuration",
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_branchs_setup_reads_only_its_tree_and_writes_nothing(
    repo: Path, tmp_path: Path, sb: Sqlbench, attack: str
) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    (tmp_path / "secret.csv").write_text("s\nsecret\n")
    config_before = (repo / ".git" / "config").read_bytes()
    sql, sentence = ATTACKS[attack]
    _branch(repo, "attack", sql.format(out=out, repo=repo) + ";\n")
    proc = sb("run", "--branch", "attack", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/zz.sql" in proc.stderr and sentence in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(out.iterdir()) == []
    assert (repo / ".git" / "config").read_bytes() == config_before
    git(repo, "status", "--short")
    assert not (out / "ran").exists()


def test_the_working_trees_setup_cannot_write_into_its_own_git_folder(
    repo: Path, sb: Sqlbench
) -> None:
    config_before = (repo / ".git" / "config").read_bytes()
    (repo / "models" / "zz.sql").write_text(
        "COPY (SELECT 'x') TO '.git/config' (HEADER false, QUOTE '');\n"
    )
    proc = sb("validate", "--execute", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "may not write files" in proc.stdout + proc.stderr
    assert (repo / ".git" / "config").read_bytes() == config_before


def test_temporary_objects_made_in_setup_are_seen_by_every_question(
    repo: Path, sb: Sqlbench
) -> None:
    """Issue 35: CREATE TEMP VIEW / TEMP TABLE in setup used to succeed and then every question
    failed with 'Table with name t does not exist!'."""
    (repo / "models" / "a.sql").write_text(
        "CREATE TEMP TABLE base AS SELECT * FROM read_csv('data/t.csv');\n"
        "CREATE OR REPLACE TEMPORARY VIEW t AS SELECT x FROM base;\n"
    )
    (repo / "agents").mkdir()
    (repo / "agents" / "gold.yml").write_text(
        "agents:\n  - name: gold\n    kind: replay\n    path: answers.jsonl\n"
    )
    (repo / "agents" / "answers.jsonl").write_text(
        '{"name": "one", "sql": "SELECT count(*) AS n FROM t"}\n'
    )
    proc = sb("run", "--agent", "gold", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "does not exist" not in proc.stdout
    assert "Accuracy: 100% (1/1)" in proc.stdout, proc.stdout


def test_an_object_put_in_the_temp_catalog_by_name_is_one_sentence(
    repo: Path, sb: Sqlbench
) -> None:
    (repo / "models" / "a.sql").write_text("CREATE TEMP TABLE temp.main.t AS SELECT 1 AS x;\n")
    proc = sb("run", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "in DuckDB's temp catalog, which questions would not see" in proc.stderr
