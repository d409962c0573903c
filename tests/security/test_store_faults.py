"""Finding 9: store faults are sentences. A damaged row (bad JSON, bytes flipped in the SQLite
file) marks that run Corrupt and every other run still lists, shows and compares; a read-only
store is still read; a lock held too long, a truncated (zero-byte) store file and a full disk
(``ulimit -f``) are one sentence naming the store, with nothing graded lost.

The three stored runs every test starts from are made once per module and copied."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from secutil import Sqlbench, read_only, write_files

QUESTIONS = "".join(
    f"  - name: q{i}\n    question: Q{i}?\n    sql: SELECT {i} AS x\n" for i in range(30)
)
RUNS = ("good-a", "bad", "good-b")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose store holds the runs ``good-a``, ``bad`` and ``good-b``."""
    root = tmp_path_factory.mktemp("stored")
    proj = write_files(
        root / "proj",
        {
            "sqlbench.yml": "default_agent: auto\n",
            "eval_questions/q.yml": "eval_questions:\n" + QUESTIONS,
        },
    )
    sb = Sqlbench(root)
    for name in RUNS:
        assert sb("run", "--name", name, cwd=proj).returncode == 0
    return proj


@pytest.fixture
def proj(stored: Path, tmp_path: Path) -> Path:
    """A copy of the stored project, for this test alone."""
    return Path(shutil.copytree(stored, tmp_path / "proj", symlinks=True))


def store_file(proj: Path) -> Path:
    return proj / ".sqlbench" / "runs.db"


def statuses(sb: Sqlbench, proj: Path) -> dict[str, str]:
    listed = sb("runs", "--format", "json", cwd=proj)
    assert listed.returncode == 0, listed.stderr
    return {r["name"]: r["status"] for r in json.loads(listed.stdout)["runs"]}


def assert_the_others_work(sb: Sqlbench, proj: Path) -> None:
    assert sb("show", "good-a", cwd=proj).returncode == 0
    assert sb("compare", "good-a", "good-b", cwd=proj).returncode == 0
    assert json.loads(sb("export", "good-b", cwd=proj).stdout)["run"]["name"] == "good-b"


def test_a_damaged_row_marks_that_run_corrupt_and_the_others_still_work(
    proj: Path, sb: Sqlbench
) -> None:
    with sqlite3.connect(store_file(proj)) as conn:
        conn.execute("UPDATE sqlbench_runs SET data = '{not json' WHERE name = 'bad'")
    assert statuses(sb, proj) == {"good-a": "completed", "bad": "corrupt", "good-b": "completed"}
    table = sb("runs", cwd=proj, env={"COLUMNS": "300"})
    assert "Corrupt" in table.stdout
    assert "bad: its stored record cannot be read" in table.stdout
    assert_the_others_work(sb, proj)


def flip_in_file(path: Path, find: bytes, replace: bytes) -> None:
    """Overwrite, in the database file itself, the one place ``find`` occurs (same length)."""
    with sqlite3.connect(path) as conn:  # everything into the main file, no -wal left
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    assert data.count(find) == 1 and len(find) == len(replace)
    path.write_bytes(data.replace(find, replace))


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda run_id: (b'{"id":"' + run_id, b'\xff"id":"' + run_id), "not UTF-8"),
        (lambda run_id: (b'{"id":"' + run_id, b'{"id"#"' + run_id), "cannot be read"),
    ],
    ids=["bytes-not-utf8", "json-broken"],
)
def test_bytes_flipped_in_one_runs_row_mark_it_corrupt(
    proj: Path, sb: Sqlbench, damage: object, why: str
) -> None:
    """The red team's bit flip: bytes changed inside the run's row in the SQLite file, so
    SQLite itself hands back text that is not UTF-8 ("Could not decode") or broken JSON."""
    with sqlite3.connect(store_file(proj)) as conn:
        (run_id,) = conn.execute("SELECT id FROM sqlbench_runs WHERE name = 'bad'").fetchone()
    find, replace = damage(run_id.encode())  # type: ignore[operator]
    flip_in_file(store_file(proj), find, replace)
    assert statuses(sb, proj) == {"good-a": "completed", "bad": "corrupt", "good-b": "completed"}
    table = sb("runs", cwd=proj, env={"COLUMNS": "400"})
    assert "bad: its stored record cannot be read" in table.stdout and why in table.stdout
    assert_the_others_work(sb, proj)


@pytest.mark.parametrize(
    ("find", "replace", "why", "listed_at_once"),
    [
        (b'"reason":"MARK-q7"', b'"reason":"MARK\xffq7"', "bytes that are not UTF-8 text", True),
        (b'"reason":"MARK-q7"', b'"reason"#"MARK-q7"', "JSON that does not parse", False),
    ],
    ids=["bytes-not-utf8", "json-broken"],
)
def test_bytes_flipped_in_one_result_row_mark_its_run_corrupt(
    proj: Path, sb: Sqlbench, find: bytes, replace: bytes, why: str, listed_at_once: bool
) -> None:
    """Bytes changed inside one stored result of run ``bad`` (not its run row). Bytes that are
    not UTF-8: ``runs`` lists ``bad`` as Corrupt before anything read that result. Broken
    JSON: from the first command that reads it on (``json_valid`` over every result would cost
    ``runs`` several times its listing). ``show`` and ``compare`` of ``bad`` are one sentence,
    ``runs`` names the question, and the other runs still work."""
    with sqlite3.connect(store_file(proj)) as conn:
        # A reason no other row holds, so the bytes to flip occur once in the file.
        conn.execute(
            "UPDATE sqlbench_results SET data = json_set(data, '$.reason', 'MARK-q7') "
            "WHERE name = 'q7' AND run_id = (SELECT id FROM sqlbench_runs WHERE name = 'bad')"
        )
    flip_in_file(store_file(proj), find, replace)
    if listed_at_once:
        assert statuses(sb, proj)["bad"] == "corrupt"
    for command in (("show", "bad"), ("compare", "good-a", "bad")):
        refused = sb(*command, cwd=proj)
        assert refused.returncode != 0 and "cannot be read" in refused.stderr, refused
        assert "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) <= 2, refused.stderr
    assert statuses(sb, proj) == {"good-a": "completed", "bad": "corrupt", "good-b": "completed"}
    table = sb("runs", cwd=proj, env={"COLUMNS": "400"})
    assert table.returncode == 0, table.stderr
    assert "Corrupt" in table.stdout
    assert f"bad: its stored result of question auto/q7 cannot be read ({why})" in table.stdout, (
        table.stdout
    )
    assert_the_others_work(sb, proj)


def test_a_read_only_store_is_read_and_a_write_is_one_sentence(proj: Path, sb: Sqlbench) -> None:
    folder = proj / ".sqlbench"
    with read_only(store_file(proj), folder):
        assert statuses(sb, proj) == dict.fromkeys(RUNS, "completed")
        assert_the_others_work(sb, proj)
        refused = sb("run", "--name", "new", cwd=proj)
        assert refused.returncode == 2
        assert f"the run store sqlite:///{store_file(proj)} is read-only" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) <= 3, refused.stderr
    assert sorted(statuses(sb, proj)) == sorted(RUNS)


LOCKING_AGENT = r"""import json, os, subprocess, sys, time
name = json.load(sys.stdin)["name"]
if name == "q2":
    # A second process takes the store's write lock and keeps it (until the test ends it).
    subprocess.Popen(
        [sys.executable, "-c", os.environ["HOLD_LOCK"], os.environ["STORE"], os.environ["HELD"]],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not os.path.exists(os.environ["HELD"]):
        time.sleep(0.02)
print(json.dumps({"sql": "SELECT %s AS x" % name[1:]}))
"""
HOLD_LOCK = (
    "import os, sqlite3, sys, time\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "conn.execute('BEGIN IMMEDIATE')\n"
    "open(sys.argv[2], 'w').write(str(os.getpid()))\n"
    "time.sleep(300)\n"
)


def test_a_lock_held_too_long_is_one_sentence_and_the_run_resumes(
    proj: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    write_files(
        proj,
        {
            "sqlbench.yml": "default_agent: locker\nrun:\n  concurrency: 1\n",
            "agents/a.yml": "agents:\n  - name: locker\n    kind: command\n"
            "    command: [python3, agents/lock.py]\n    env: [HOLD_LOCK, STORE, HELD]\n",
            "agents/lock.py": LOCKING_AGENT,
        },
    )
    held = tmp_path / "held"
    env = {
        "SQLBENCH_STORE_LOCK_WAIT": "1",
        "HOLD_LOCK": HOLD_LOCK,
        "STORE": str(store_file(proj)),
        "HELD": str(held),
    }
    try:
        stopped = sb("run", "--name", "locked", *select("q0", "q1", "q2", "q3"), cwd=proj, env=env)
        assert stopped.returncode == 2, stopped.stdout + stopped.stderr
        assert (
            f"the run store sqlite:///{store_file(proj)} stayed locked by another process "
            "for over 1 s" in stopped.stderr
        )
        assert "`sqlbench run --resume locked` finishes it" in stopped.stderr
    finally:
        if held.exists():
            os.kill(int(held.read_text()), signal.SIGKILL)
    with sqlite3.connect(store_file(proj)) as conn:
        # The stopped process could not record even its stop (the lock was still held).
        assert (
            conn.execute("SELECT status FROM sqlbench_runs WHERE name = 'locked'").fetchone()[0]
            == "running"
        )
        # Finding 10's reused process id: the stopped run's pid now names another, live
        # process (this one), and its heartbeat is seconds old: it still reads Interrupted.
        conn.execute("UPDATE sqlbench_runs SET pid = ? WHERE name = 'locked'", (os.getpid(),))
    assert statuses(sb, proj)["locked"] == "interrupted"
    shown = json.loads(sb("show", "locked", "--format", "json", cwd=proj).stdout)
    assert {r["name"] for r in shown["results"]} == {"q0", "q1"}  # graded before: kept
    resumed = sb("run", "--resume", "locked", cwd=proj)
    assert resumed.returncode == 0, resumed.stderr
    assert statuses(sb, proj)["locked"] == "completed"


def select(*names: str) -> list[str]:
    return [arg for name in names for arg in ("--select", name)]


def test_a_zero_byte_store_file_is_a_sentence_not_an_empty_store(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = write_files(tmp_path / "proj", {"sqlbench.yml": "default_agent: auto\n"})
    store = store_file(proj)
    store.parent.mkdir()
    store.write_bytes(b"")
    old = time.time() - 60
    os.utime(store, (old, old))
    proc = sb("runs", cwd=proj)
    assert proc.returncode == 2
    assert "is empty (0 bytes): it was truncated" in proc.stderr
    assert store.stat().st_size == 0


def test_a_full_disk_is_one_sentence_and_keeps_what_was_graded(proj: Path, sb: Sqlbench) -> None:
    largest = max(p.stat().st_size for p in (proj / ".sqlbench").iterdir())
    proc = sb("run", "--name", "second", cwd=proj, max_file_bytes=largest + 4096)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the disk holding the run store" in proc.stderr or "failed" in proc.stderr
    assert sorted(statuses(sb, proj)) >= sorted(RUNS)
