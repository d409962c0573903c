"""``run --agent a,b,c`` graded in several forked processes (``run.processes``,
``sqlbench/runs/forked.py``), on real ``sqlbench`` subprocesses over real SQLite files: the
records are those of one process, and Ctrl-C, a dying child and a killed parent end as they do
in one process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sqlbench.records.run import RunStatus, TrialResult
from sqlbench.runs import forked
from sqlbench.runs.forked import cores, idle_cores, process_count, watch_idle
from sqlbench.runs.store import RunStore

VOLATILE = {"latency_ms", "timings_ms", "graded_at"}

SLOW = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) "
    "SELECT count(*) FROM c"
)
"""A SQLite query that takes a while (``n`` rows counted)."""

# Runs sqlbench after wrapping fork_children so that every fork is written to $FORKS, and
# applying $PATCH (a crash or an exit in a child).
LAUNCH = """
import atexit, os, sys
atexit.register(lambda: open(os.environ["FORKS"] + ".exits", "a").write(f"{os.getpid()}\\n"))
from sqlbench.runs import agent_run, forked
real = forked.fork_children
def spying(count, body, children):
    real(count, body, children)
    with open(os.environ["FORKS"], "a") as out:
        out.write(" ".join(str(c.pid) for c in children) + "\\n")
    return children
forked.fork_children = spying
grade = agent_run.AgentRun.grade
def patched(self, warehouses, agent, item, shared=None):
    if os.environ.get("GRADED"):
        import threading
        with open(os.environ["GRADED"], "a") as out:
            names = ",".join(sorted(t.name.replace(" ", "_") for t in threading.enumerate()))
            here = threading.current_thread().name
            out.write(f"{os.getpid()} {item.question.name} {here} {names}\\n")
    patch = os.environ.get("PATCH", "")
    if patch == "exit" and item.question.name == "q05":
        os._exit(3)
    if patch == "crash" and self.info.agent_name == "bad" and item.question.name == "q05":
        raise KeyError("a sqlbench bug")
    return grade(self, warehouses, agent, item, shared)
agent_run.AgentRun.grade = patched
if os.environ.get("EVENTS"):
    from sqlbench.runs import batch
    from sqlbench.runs.events import QuestionGraded
    sending, emitting = forked.send, batch.Batch._emit
    def sent(conn, message):
        if message[0] == "graded":
            with open(os.environ["EVENTS"] + ".sent", "a") as out:
                out.write(" ".join(type(text).__name__ for _, text in message[2]) + "\\n")
        return sending(conn, message)
    def emitted(self, event):
        if isinstance(event, QuestionGraded):
            with open(os.environ["EVENTS"], "a") as out:
                out.write(event.result.model_dump_json() + "\\n")
        return emitting(self, event)
    forked.send, batch.Batch._emit = sent, emitted
if os.environ.get("CORES"):
    forked.cores = lambda: int(os.environ["CORES"])
from sqlbench.cli.main import main
sys.argv = ["sqlbench", *sys.argv[1:]]
main()
"""


def _database(path: Path, script: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()


def _project(
    root: Path, *, processes: int | str, slow: int = 0, slow_only: frozenset[str] | None = None
) -> Path:
    """Two SQLite files, 12 questions, 4 replay agents: passes, fails, errors, reviews, and SQL
    two agents wrote alike. ``slow``: every answer of agent ``good`` (those to ``slow_only``
    when given) counts that many rows."""
    root.mkdir()
    _database(
        root / "a.sqlite",
        "CREATE TABLE singer (name TEXT, age INTEGER, country TEXT);"
        "INSERT INTO singer VALUES ('Ann', 30, 'FR'), ('Bob', 41, 'US'), ('Cy', 25, 'FR');",
    )
    _database(
        root / "b.sqlite",
        "CREATE TABLE pets (kind TEXT, n INTEGER, weight REAL);"
        "INSERT INTO pets VALUES ('cat', 2, 4.5), ('dog', 3, 20.25), ('eel', 1, 0.5);",
    )
    settings: dict[str, Any] = {
        "dialect": "sqlite",
        "warehouse": "sqlite:///a.sqlite",
        "warehouses": {"pets": "sqlite:///b.sqlite"},
        "compare": {"order": "auto", "rows": "bag", "columns": "exact"},
        "default_agent": "good",
        "run": {"processes": processes},
    }
    (root / "sqlbench.yml").write_text(yaml.safe_dump(settings))
    singer = [
        ("q00", "SELECT count(*) FROM singer"),
        ("q01", "SELECT name FROM singer ORDER BY age"),
        ("q02", "SELECT name, age FROM singer WHERE country = 'FR'"),
        ("q03", "SELECT max(age), min(age) FROM singer"),
        ("q04", "SELECT country, count(*) FROM singer GROUP BY country"),
        ("q05", "SELECT avg(age) FROM singer"),
    ]
    pets = [
        ("q06", "SELECT kind FROM pets WHERE n > 1"),
        ("q07", "SELECT sum(n) FROM pets"),
        ("q08", "SELECT kind, weight FROM pets ORDER BY weight DESC"),
        ("q09", "SELECT count(*) FROM pets"),
        ("q10", "SELECT max(weight) FROM pets"),
        ("q11", "SELECT kind FROM pets ORDER BY kind"),
    ]
    (root / "eval_questions").mkdir()
    for space, warehouse, questions in (("s", None, singer), ("p", "pets", pets)):
        body: dict[str, Any] = {"space": space}
        if warehouse:
            body["warehouse"] = warehouse
        body["eval_questions"] = [
            {"name": n, "question": f"{n}?", "sql": sql} for n, sql in questions
        ]
        (root / "eval_questions" / f"{space}.yml").write_text(yaml.safe_dump(body))
    truth = dict(singer + pets)
    space_of = {n: ("s" if n in dict(singer) else "p") for n in truth}
    answers: dict[str, dict[str, dict[str, Any]]] = {
        "good": {n: {"sql": sql} for n, sql in truth.items()},
        "same": {n: {"sql": sql} for n, sql in truth.items()},  # alike: shared executions
        "bad": {
            "q00": {"sql": "SELECT count(*) + 1 FROM singer"},  # fail
            "q01": {"sql": "SELECT name FROM singer ORDER BY age DESC"},  # fail (order)
            "q02": {"sql": "SELECT nme FROM singer"},  # no such column
            "q03": {"sql": "SELECT min(age) AS a, max(age) AS b FROM singer"},
            "q04": {"error": "the agent crashed while recording"},  # error
            "q05": {"answer": "about 32"},  # no SQL: review
            "q06": {"sql": "SELECT kind FROM pets WHERE n > 1"},
            "q07": {"sql": "SELECT sum(n) FROM pets"},
            "q08": {"sql": "SELECT weight, kind FROM pets ORDER BY weight DESC"},
            "q09": {"sql": "DROP TABLE pets"},  # refused
            "q10": {"sql": "SELECT max(weight) + 0.0000000001 FROM pets"},
            "q11": {"sql": "SELECT kind FROM pets"},
        },
        "other": {n: {"sql": sql + " LIMIT 2"} for n, sql in truth.items()},
    }
    answers["same"]["q03"] = {"sql": "SELECT max(age) AS x, min(age) AS y FROM singer"}
    if slow:
        for name in truth:
            if slow_only is not None and name not in slow_only:
                continue
            answers["good"][name] = {
                "sql": f"SELECT ({SLOW.format(n=slow)}) * 0 + ({truth[name]} LIMIT 1)"
            }
    (root / "agents").mkdir()
    agents = []
    for agent, by_name in answers.items():
        lines = [json.dumps({"space": space_of[n], "name": n, **a}) for n, a in by_name.items()]
        (root / "agents" / f"{agent}.jsonl").write_text("\n".join(lines) + "\n")
        agents.append({"name": agent, "kind": "replay", "path": f"{agent}.jsonl"})
    (root / "agents" / "agents.yml").write_text(yaml.safe_dump({"agents": agents}))
    return root


def _command(project: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", LAUNCH, "run", "-C", str(project), "--agent", "*", *args]


def _run(
    project: Path, *args: str, patch: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[list[int]]]:
    forks = project / "forks.log"
    forks.unlink(missing_ok=True)
    env = {**os.environ, "FORKS": str(forks), "PATCH": patch}
    done = subprocess.run(
        _command(project, *args), capture_output=True, text=True, timeout=120, env=env
    )
    lines = forks.read_text().splitlines() if forks.exists() else []
    return done, [[int(pid) for pid in line.split()] for line in lines]


def _gradings(project: Path, name: str, **extra: str) -> list[list[str]]:
    """Run every agent of ``project`` as runs named ``name`` (``extra``: more environment);
    each answer graded, in the order graded: pid, question, the grading thread, every thread
    of its process."""
    graded = project.parent / f"graded-{name}.log"
    env = {
        **os.environ,
        "FORKS": str(project / "forks.log"),
        "PATCH": "",
        "GRADED": str(graded),
        **extra,
    }
    done = subprocess.run(
        _command(project, "--name", name), capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    return [line.split() for line in graded.read_text().splitlines()]


def _set_concurrency(project: Path, concurrency: int) -> None:
    settings = yaml.safe_load((project / "sqlbench.yml").read_text())
    settings["run"]["concurrency"] = concurrency
    (project / "sqlbench.yml").write_text(yaml.safe_dump(settings))


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_slow_questions_are_shared_out_as_the_processes_run_short(tmp_path: Path) -> None:
    """Every other question is slow (one agent's answer counts 1M rows), one worker thread a
    process. Dealt out in turn, one process would get every slow question while the other
    idled; taken as each process runs short, both meet slow ones, and no answer is graded
    twice or left out."""
    slow = frozenset(f"q{i:02d}" for i in range(0, 12, 2))
    project = _project(tmp_path / "proj", processes=2, slow=1_000_000, slow_only=slow)
    _set_concurrency(project, 2)  # one grader in each of the 2 processes
    by_process: dict[str, list[str]] = {}
    for pid, name, _, _ in _gradings(project, "b"):
        by_process.setdefault(pid, []).append(name)
    assert len(by_process) == 2
    assert sorted(n for names in by_process.values() for n in names) == sorted(
        f"q{i:02d}" for i in range(12) for _ in range(4)
    )  # each answer graded once, all 4 agents' answers to a question in one process
    for names in by_process.values():
        assert len(set(names)) * 4 == len(names)  # a question's answers stay together
        assert set(names) & slow, by_process


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_the_parent_reports_each_answer_as_it_is_stored(tmp_path: Path) -> None:
    """A child sends the record's stored JSON text, not the pickled result (about half the
    CPU on both sides), records graded together in one message; the parent's progress events
    hold exactly the stored records."""
    project = _project(tmp_path / "proj", processes=2)
    events = tmp_path / "events.jsonl"
    env = {**os.environ, "FORKS": str(project / "forks.log"), "PATCH": "", "EVENTS": str(events)}
    done = subprocess.run(
        _command(project, "--name", "e"), capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert len((project / "forks.log").read_text().split()) == 2
    messages = Path(f"{events}.sent").read_text().splitlines()
    assert {kind for line in messages for kind in line.split()} == {"str"}
    assert sum(len(line.split()) for line in messages) == 48
    assert len(messages) < 48  # records graded together are sent together
    reported = sorted(
        json.dumps(TrialResult.model_validate_json(line).model_dump(mode="json"), sort_keys=True)
        for line in events.read_text().splitlines()
    )
    stored: list[str] = []
    with RunStore.for_project(project, None) as store:
        for line in store.list_runs():
            stored += (
                json.dumps(t.model_dump(mode="json"), sort_keys=True)
                for t in store.trials(line.info.id)
            )
    assert len(reported) == 48
    assert reported == sorted(stored)


def _records(project: Path, prefix: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with RunStore.for_project(project, None) as store:
        for line in store.list_runs():
            if not line.info.name.startswith(prefix):
                continue
            run = store.load_run(line.info.id)
            found[f"{run.info.agent_name} status"] = run.status
            for trial in store.trials(line.info.id):
                data = trial.model_dump(mode="json", exclude=VOLATILE)
                found[f"{run.info.agent_name} {trial.space}/{trial.name}"] = data
    return found


def test_several_processes_store_the_records_of_one(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=1)
    one, forks = _run(project, "--name", "one")
    assert one.returncode == 0, one.stderr
    assert forks == []
    settings = yaml.safe_load((project / "sqlbench.yml").read_text())
    settings["run"]["processes"] = 3
    (project / "sqlbench.yml").write_text(yaml.safe_dump(settings))
    exits = project / "forks.log.exits"
    exits.unlink()
    several, forks = _run(project, "--name", "several")
    assert several.returncode == 0, several.stderr
    assert [len(pids) for pids in forks] == [3]  # graded in 3 forked processes
    assert len(exits.read_text().split()) == 1  # the children ran no exit handler
    alone, together = _records(project, "one-"), _records(project, "several-")
    assert len(alone) == 4 * 12 + 4
    assert together == alone
    verdicts = {r["verdict"] for r in alone.values() if isinstance(r, dict)}
    assert verdicts == {"pass", "fail", "error", "review"}
    # Several agents print no line per answer (only the progress bar and each run's start);
    # test_the_parent_reports_each_answer_as_it_is_stored checks the parent's events.
    lines = several.stderr.splitlines()
    assert not [line for line in lines if line.startswith("[")]
    assert len([line for line in lines if line.startswith("Starting run several-")]) == 4
    assert "Traceback" not in several.stderr


def test_auto_forks_only_when_it_pays() -> None:
    safe: Any = lambda: None  # noqa: E731
    idle: Any = lambda n: lambda: n  # noqa: E731
    assert process_count("auto", answers=499, questions=100, refusal=safe, idle=idle(2)) == (
        1,
        None,
    )
    assert process_count("auto", answers=8748, questions=1034, refusal=safe, idle=idle(2)) == (
        2,
        None,
    )
    assert process_count("auto", answers=8748, questions=1034, refusal=safe, idle=idle(16))[0] == 4
    # a busy machine: its cores are taken, more processes would only share them
    assert process_count("auto", answers=8748, questions=1034, refusal=safe, idle=idle(1))[0] == 1
    unsafe: Any = lambda: "no"  # noqa: E731
    assert process_count("auto", answers=8748, questions=1034, refusal=unsafe) == (1, None)
    assert process_count(2, answers=8, questions=4, refusal=safe, idle=idle(1)) == (2, None)
    assert process_count(8, answers=8, questions=3, refusal=safe) == (3, None)
    python = process_count(2, answers=8, questions=4, refusal=lambda: "agent x is a python agent")
    assert python == (
        1,
        "run.processes is 2, but this batch is graded in one process: agent x is a python agent",
    )


def test_asking_for_processes_where_it_is_not_safe_says_why_once(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2)
    (project / "agents" / "live.py").write_text("def answer(request):\n    return 'SELECT 1'\n")
    agents = yaml.safe_load((project / "agents" / "agents.yml").read_text())
    agents["agents"].append({"name": "live", "kind": "python", "function": "agents.live:answer"})
    (project / "agents" / "agents.yml").write_text(yaml.safe_dump(agents))
    done, forks = _run(project)
    assert done.returncode == 0, done.stderr
    assert forks == []
    note = (
        "Note: run.processes is 2, but this batch is graded in one process: agent live is a "
        "python agent (only replayed answers are graded in several processes)"
    )
    assert done.stderr.count(note) == 1


def test_a_batch_with_a_judge_is_graded_in_one_process(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2)
    settings = yaml.safe_load((project / "sqlbench.yml").read_text())
    settings["judge"] = {"base_url": "http://127.0.0.1:9/v1", "model": "judge-1"}
    (project / "sqlbench.yml").write_text(yaml.safe_dump(settings))
    done, forks = _run(project)
    assert done.returncode == 0, done.stderr
    assert forks == []
    note = (
        "Note: this batch is graded in one process: judged metrics call the judge's endpoint "
        "(not tried in several processes)"
    )
    assert done.stderr.count(note) == 1


def test_one_agent_with_processes_says_it_runs_in_one(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2)
    done = subprocess.run(
        [sys.executable, "-m", "sqlbench", "run", "-C", str(project), "--agent", "bad"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    note = (
        "Note: run.processes is 2, but a run of one agent is graded in one process (several "
        "processes grade `run --agent a,b,...` of replayed answers)"
    )
    assert done.stderr.count(note) == 1


def test_a_crash_in_a_child_fails_that_run_alone(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2)
    done, forks = _run(project, "--name", "c", "--format", "json", patch="crash")
    assert [len(pids) for pids in forks] == [2]
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "(agent bad) failed: KeyError: 'a sqlbench bug'" in errors[0]
    assert "Traceback" not in done.stderr
    records = _records(project, "c-")
    statuses = {k.split()[0]: v for k, v in records.items() if k.endswith(" status")}
    assert statuses == {
        "good": RunStatus.COMPLETED,
        "same": RunStatus.COMPLETED,
        "other": RunStatus.COMPLETED,
        "bad": RunStatus.FAILED,
    }
    assert sum(1 for k in records if k.startswith("good ") and "/" in k) == 12


def test_a_child_that_exits_fails_the_runs_it_held(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2)
    done, forks = _run(project, "--name", "x", patch="exit")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    why = "the process grading part of its answers (pid {}) exited with code 3 before it finished"
    with RunStore.for_project(project, None) as store:
        infos = [line.info for line in store.list_runs() if line.info.name.startswith("x-")]
        assert {i.status for i in infos} == {RunStatus.FAILED}
        errors = {i.error for i in infos}
        assert len(errors) == 1 and errors <= {why.format(pid) for pid in forks[0]}
        kept = sum(len(store.done_keys(i.id)) for i in infos)
    # The other child graded its whole share (6 questions x 4 agents, less what it skipped once
    # the runs failed), and what was graded before the exit stays.
    assert kept > 0


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(p) for p in path.read_text().split()]
    except OSError:
        return []


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _graded(project: Path) -> int:
    if not (project / ".sqlbench" / "runs.db").exists():
        return 0
    with RunStore.for_project(project, None) as store:
        return sum(line.graded for line in store.list_runs())


def _sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(project: Path, name: str) -> tuple[subprocess.Popen[str], list[int]]:
    """A slow forked run, once it has graded something; its children."""
    env = {**os.environ, "FORKS": str(project / "forks.log"), "PATCH": ""}
    run = subprocess.Popen(
        _command(project, "--name", name),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        # As from a terminal: a test runner started in the background has SIGINT ignored,
        # and a process keeps an ignored SIGINT ignored (Python too).
        preexec_fn=_sigint_as_in_a_terminal,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _graded(project) < 3:
        time.sleep(0.05)
    children = _children(run.pid)
    assert len(children) == 2, "the run should have forked 2 grading processes"
    return run, children


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
@pytest.mark.parametrize(
    ("sent", "to"),
    [(signal.SIGINT, "group"), (signal.SIGTERM, "group"), (signal.SIGTERM, "child")],
    ids=["ctrl_c", "sigterm", "sigterm_to_a_child"],
)
def test_ctrl_c_stops_every_process_and_marks_the_runs_interrupted(
    tmp_path: Path, sent: signal.Signals, to: str
) -> None:
    project = _project(tmp_path / "proj", processes=2, slow=3_000_000)
    run, children = _start(project, "stopped")
    try:
        if to == "group":
            os.killpg(run.pid, sent)  # Ctrl-C reaches the whole foreground group
        else:
            os.kill(children[0], sent)
        _, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    assert "Interrupted: " in err and "Traceback" not in err
    assert all(_gone(pid) for pid in children)
    with RunStore.for_project(project, None) as store:
        infos = [line.info for line in store.list_runs()]
        assert {i.status for i in infos} == {RunStatus.INTERRUPTED}  # written by the run
        assert sum(len(store.done_keys(i.id)) for i in infos) >= 3  # what was graded stays
        assert sum(len(store.done_keys(i.id)) for i in infos) < 48


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_a_killed_child_fails_the_runs_and_the_rest_is_kept(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2, slow=3_000_000)
    run, children = _start(project, "k")
    try:
        os.kill(children[0], signal.SIGKILL)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 2, err
    assert "Traceback" not in err
    why = f"the process grading part of its answers (pid {children[0]}) was killed by SIGKILL"
    assert why in err
    with RunStore.for_project(project, None) as store:
        infos = [line.info for line in store.list_runs()]
        assert {i.status for i in infos} == {RunStatus.FAILED}
        assert all(i.error is not None and i.error.startswith(why) for i in infos)
        assert sum(len(store.done_keys(i.id)) for i in infos) >= 3


def _forked(body: Any) -> int:
    """A child process that runs ``body`` and exits (without anything of this process's)."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def _taken_within(lock: Any, seconds: float) -> bool:
    """Whether this process takes ``lock`` within ``seconds`` (a thread tries; it may go on
    waiting after this returns False)."""
    taken = threading.Event()

    def take() -> None:
        with lock:
            taken.set()

    threading.Thread(target=take, daemon=True).start()
    return taken.wait(seconds)


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_a_process_killed_holding_the_shared_lock_leaves_it_free() -> None:
    """The children take one lock around each store write: one killed while it holds it
    (kill -9, the out-of-memory killer) must not leave the others waiting forever (a semaphore
    in shared memory did, and the batch hung instead of failing)."""
    lock = forked.shared_lock()
    assert lock is not None
    ready, told = os.pipe()

    def hold() -> None:
        with lock:
            os.write(told, b"x")
            time.sleep(120)

    pid = _forked(hold)
    try:
        assert os.read(ready, 1) == b"x"
        assert not _taken_within(lock, 0.3)  # held by the other process: this one waits
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert _taken_within(lock, 10)


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_the_shared_counter_gives_each_number_to_one_process() -> None:
    counter = forked.shared_counter()
    assert counter is not None
    outs = []
    pids = []
    for _ in range(2):
        read, write = os.pipe()

        def take(write: int = write) -> None:
            taken = []
            while (n := counter.take_below(2000)) < 2000:
                taken.append(n)
            os.write(write, json.dumps(taken).encode())
            os.close(write)

        pids.append(_forked(take))
        os.close(write)
        outs.append(read)
    taken = []
    for read, pid in zip(outs, pids, strict=True):
        with os.fdopen(read, "rb") as got:
            taken.append(json.loads(got.read()))
        os.waitpid(pid, 0)
    assert sorted(taken[0] + taken[1]) == list(range(2000))
    assert counter.take_below(2000) == 2000


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_killing_the_parent_leaves_no_child_grading(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", processes=2, slow=3_000_000)
    run, children = _start(project, "orphan")
    run.kill()
    run.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(_gone(pid) for pid in children):
        time.sleep(0.05)
    assert all(_gone(pid) for pid in children)


@contextlib.contextmanager
def _every_core_busy() -> Iterator[None]:
    """A busy loop on every core of this machine while the block runs."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores())]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs Linux's /proc/stat")
def test_idle_cores_sees_the_machine_busy_now_not_a_minute_ago(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Busy loops on every core, started just now: the cores are not idle, whatever the load
    average (which trails by a minute; here it claims an idle machine). Measured as the share
    of CPU time that went idle while this process slept."""
    if cores() > 8:
        pytest.skip("keeps the test cheap: one busy loop per core")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with _every_core_busy():
        time.sleep(0.3)
        assert idle_cores(window_s=0.3) == 1


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs Linux's /proc/stat")
def test_idle_cores_over_a_watch_begun_earlier_does_not_sleep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A watch begun before the run's imports is the window: the busy loops on every core are
    seen over it, and ``idle_cores`` returns at once instead of sleeping its window."""
    if cores() > 8:
        pytest.skip("keeps the test cheap: one busy loop per core")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with _every_core_busy():
        time.sleep(0.2)
        since = watch_idle()
        time.sleep(0.3)
        began = time.monotonic()
        assert idle_cores(window_s=0.3, since=since) == 1
        assert time.monotonic() - began < 0.1


def test_idle_cores_counts_this_process_s_own_cpu_as_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU this process spent over the window (its imports, loading the project) is work
    the forked processes take over, not another program's: a machine busy with nothing else
    has every core idle. Another program's CPU on top of it is still seen."""
    ticks = forked._TICKS_PER_S
    monkeypatch.setattr(forked, "cores", lambda: 2)
    clock = {"cpu": 10.0}
    monkeypatch.setattr(time, "process_time", lambda: clock["cpu"])
    # 1 s of two cores: 2 s of CPU time in all
    readings = iter([(0, 0), (ticks, 2 * ticks)])
    monkeypatch.setattr(forked, "_cpu_jiffies", lambda: next(readings))
    since = forked.IdleWatch(time.monotonic() - 1.0, forked._cpu_jiffies(), time.process_time())
    clock["cpu"] = 11.0  # this process: 1 s, all the machine's busy time
    assert idle_cores(since=since) == 2
    readings = iter([(0, 0), (2 * ticks, 2 * ticks)])  # and another program: the other core
    since = forked.IdleWatch(time.monotonic() - 1.0, forked._cpu_jiffies(), 10.0)
    assert idle_cores(since=since) == 1


def test_the_first_batch_measures_over_the_imports_and_later_ones_sleep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The watch begun at import is used once: a later batch's window would hold the earlier
    batch's own processes."""
    seen: list[forked.IdleWatch | None] = []
    monkeypatch.setattr(forked, "idle_cores", lambda since=None: seen.append(since) or 2)
    mark = watch_idle()
    monkeypatch.setattr(forked, "_since_import", mark)
    safe = lambda: None  # noqa: E731
    assert process_count("auto", answers=8748, questions=1034, refusal=safe)[0] == 2
    assert process_count("auto", answers=8748, questions=1034, refusal=safe)[0] == 2
    assert seen == [mark, None]


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_a_forked_process_grades_in_its_one_thread(tmp_path: Path) -> None:
    """Replayed answers wait on nothing but SQLite: a forked process grades in its main thread,
    with no second worker always at it, no ground-truth prefetcher and no thread passing each
    event on (they only handed the interpreter lock around; the outbox's thread wakes once for
    many records, the stand-in only beside a slow answer), and grades every answer once."""
    project = _project(tmp_path / "proj", processes=2)
    seen = _gradings(project, "t")
    children = set((project / "forks.log").read_text().split())
    assert len(children) == 2
    assert len(seen) == 4 * 12
    assert {pid for pid, _, _, _ in seen} <= children
    for _, _, thread, threads in seen:
        assert thread == "MainThread"
        others = {"MainThread", "sqlbench-sqlite-deadlines", "sqlbench-outbox", "sqlbench-stand-in"}
        assert set(threads.split(",")) <= others, threads


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux")
def test_beside_a_slow_answer_the_stand_in_grades_the_next_ones(tmp_path: Path) -> None:
    """One answer counts rows for over a second: the process's stand-in grades the answers
    after it meanwhile (a slow query releases the interpreter), so that its core is not left
    idle; every answer is still graded once."""
    project = _project(tmp_path / "proj", processes=2, slow=8_000_000, slow_only=frozenset({"q00"}))
    seen = _gradings(project, "s")
    assert sorted(name for _, name, _, _ in seen) == sorted(
        f"q{i:02d}" for i in range(12) for _ in range(4)
    )
    slow_process = {pid for pid, name, _, _ in seen if name == "q00"}
    by_stand_in = {pid for pid, _, thread, _ in seen if thread == "sqlbench-stand-in"}
    assert slow_process <= by_stand_in, seen


def test_replays_on_sqlite_in_one_process_are_graded_by_one_worker(tmp_path: Path) -> None:
    """In one process too (``run.processes: 1``), answers that wait on nothing but SQLite files
    are graded by one worker and its stand-in, without the 8 workers and the ground-truth
    prefetcher that agents waited on side by side need."""
    project = _project(tmp_path / "proj", processes=1)
    seen = _gradings(project, "o")
    assert len(seen) == 4 * 12
    assert {thread for _, _, thread, _ in seen} == {"sqlbench-run-0"}
    for _, _, _, threads in seen:
        grading = {t for t in threads.split(",") if t.startswith(("sqlbench-run", "sqlbench-tr"))}
        assert grading == {"sqlbench-run-0"}, threads


def test_in_one_process_stand_ins_take_over_one_after_another(tmp_path: Path) -> None:
    """In one process on four cores, the worker and the first stand-in both held up by slow
    answers, a second stand-in grades the next ones; every answer is graded once."""
    slow = frozenset({"q00", "q01"})
    project = _project(tmp_path / "proj", processes=1, slow=12_000_000, slow_only=slow)
    seen = _gradings(project, "c", CORES="4")
    assert sorted(name for _, name, _, _ in seen) == sorted(
        f"q{i:02d}" for i in range(12) for _ in range(4)
    )
    threads = {thread for _, _, thread, _ in seen}
    assert {"sqlbench-run-0", "sqlbench-stand-in", "sqlbench-stand-in-2"} <= threads, seen


def test_concurrency_one_grades_one_answer_at_a_time(tmp_path: Path) -> None:
    """``run.concurrency: 1`` in one process: no stand-in, even beside a slow answer (one
    query at a time, as asked)."""
    project = _project(tmp_path / "proj", processes=1, slow=8_000_000, slow_only=frozenset({"q00"}))
    _set_concurrency(project, 1)
    seen = _gradings(project, "c")
    assert len(seen) == 4 * 12
    assert {thread for _, _, thread, _ in seen} == {"sqlbench-run-0"}
    assert not any("stand-in" in threads for _, _, _, threads in seen)


def test_the_outbox_gathers_records_and_keeps_every_message_in_order() -> None:
    """Records given close together reach the parent as one message within SEND_EVERY_S;
    another message goes at once, after the records given before it; closing sends the rest."""
    from multiprocessing import Pipe

    from sqlbench.runs.forked import SEND_EVERY_S, Outbox

    parent, child = Pipe()
    outbox = Outbox(child)
    try:
        for n in range(3):
            outbox.record(("run", f"r{n}"))
        assert parent.poll(SEND_EVERY_S + 5)
        assert parent.recv() == ("graded", None, [("run", "r0"), ("run", "r1"), ("run", "r2")])
        outbox.record(("run", "r3"))
        outbox.send(("crash", "run", "why"))
        assert parent.recv() == ("graded", None, [("run", "r3")])
        assert parent.recv() == ("crash", "run", "why")
        outbox.record(("run", "r4"))
    finally:
        outbox.close()
    assert parent.recv() == ("graded", None, [("run", "r4")])
    assert not parent.poll(SEND_EVERY_S * 2)
    parent.close()
    child.close()
