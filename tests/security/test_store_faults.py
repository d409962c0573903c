"""Finding 9: store faults are sentences. A damaged row marks that run Corrupt and every other
run still lists, shows and compares; a truncated (zero-byte) store file and a full disk
(``ulimit -f``) are one sentence naming the store, with nothing graded lost."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from secutil import Sqlbench, write_files

QUESTIONS = "".join(
    f"  - name: q{i}\n    question: Q{i}?\n    sql: SELECT {i} AS x\n" for i in range(30)
)


def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {
            "sqlbench.yml": "default_agent: auto\n",
            "eval_questions/q.yml": "eval_questions:\n" + QUESTIONS,
        },
    )


def test_a_damaged_row_marks_that_run_corrupt_and_the_others_still_work(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path)
    for name in ("good-a", "bad", "good-b"):
        assert sb("run", "--name", name, cwd=proj).returncode == 0
    with sqlite3.connect(proj / ".sqlbench" / "runs.db") as conn:
        conn.execute("UPDATE sqlbench_runs SET data = '{not json' WHERE name = 'bad'")
    listed = sb("runs", "--format", "json", cwd=proj)
    assert listed.returncode == 0, listed.stderr
    statuses = {r["name"]: r["status"] for r in json.loads(listed.stdout)["runs"]}
    assert statuses == {"good-a": "completed", "bad": "corrupt", "good-b": "completed"}
    table = sb("runs", cwd=proj, env={"COLUMNS": "300"})
    assert "Corrupt" in table.stdout
    assert "bad: its stored record cannot be read" in table.stdout
    assert sb("show", "good-a", cwd=proj).returncode == 0
    assert sb("compare", "good-a", "good-b", cwd=proj).returncode == 0
    assert sb("export", "good-b", cwd=proj).returncode == 0


def test_a_zero_byte_store_file_is_a_sentence_not_an_empty_store(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path)
    store = proj / ".sqlbench" / "runs.db"
    store.parent.mkdir()
    store.write_bytes(b"")
    old = time.time() - 60
    os.utime(store, (old, old))
    proc = sb("runs", cwd=proj)
    assert proc.returncode == 2
    assert "is empty (0 bytes): it was truncated" in proc.stderr
    assert store.stat().st_size == 0


def test_a_full_disk_is_one_sentence_and_keeps_what_was_graded(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path)
    assert sb("run", "--name", "first", cwd=proj).returncode == 0
    largest = max(p.stat().st_size for p in (proj / ".sqlbench").iterdir())
    proc = sb("run", "--name", "second", cwd=proj, max_file_bytes=largest + 4096)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the disk holding the run store" in proc.stderr or "failed" in proc.stderr
    listed = sb("runs", "--format", "json", cwd=proj)
    assert "first" in listed.stdout
