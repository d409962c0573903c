"""Finding 10 (kill -9 during ``check``): the next ``check`` resumes the head run instead of
asking every question again, and removes the temporary folders (branch trees, DuckDB spill)
the killed process left."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from secutil import Sqlbench, git, make_repo, write_files

QUESTIONS = "eval_questions:\n" + "".join(
    f"  - name: q{i}\n    question: Q{i}?\n    sql: SELECT {i} AS x\n" for i in range(4)
)
AGENT = r"""import json, os, sys, time
BRANCH = "%s"
name = json.load(sys.stdin)["name"]
with open(os.environ["ASKED"], "a") as log:
    log.write(f"{BRANCH} {name}\n")
if BRANCH == "dev" and name == "q2" and os.path.exists(os.environ["BLOCK"]):
    open(os.environ["STARTED"], "w").close()
    time.sleep(600)
print(json.dumps({"sql": "SELECT %%s AS x" %% name[1:]}))
"""


def test_a_check_killed_mid_run_is_resumed_and_its_temp_folders_removed(
    tmp_path: Path, sb: Sqlbench
) -> None:
    repo = make_repo(tmp_path / "repo")
    write_files(
        repo,
        {
            ".gitignore": ".sqlbench/\n",
            "sqlbench.yml": "default_agent: slow\nrun:\n  concurrency: 1\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - name: slow\n    kind: command\n"
            "    command: [python3, agents/slow.py]\n    env: [ASKED, BLOCK, STARTED]\n",
            "agents/slow.py": AGENT % "main",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "checkout", "-q", "-b", "dev")
    (repo / "agents" / "slow.py").write_text(AGENT % "dev")
    git(repo, "commit", "-qam", "dev")
    temp, asked, block, started = (tmp_path / n for n in ("tmp", "asked", "block", "started"))
    temp.mkdir()
    block.touch()
    agent_env = {
        "TMPDIR": str(temp),
        "ASKED": str(asked),
        "BLOCK": str(block),
        "STARTED": str(started),
    }
    env = {**os.environ, "SQLBENCH_HOME": str(tmp_path / "home"), **agent_env}
    with (tmp_path / "killed.out").open("wb") as out:
        killed = subprocess.Popen(
            [sys.executable, "-m", "sqlbench", "check", "--base", "main", "--head", "dev"],
            cwd=repo,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 300
            while not started.exists() and killed.poll() is None:
                assert time.monotonic() < deadline, "the head run never reached q2"
                time.sleep(0.05)
        finally:
            os.killpg(killed.pid, signal.SIGKILL)  # kill -9: sqlbench and its agent
            killed.wait()
    assert started.exists(), (tmp_path / "killed.out").read_text()

    def of_killed(folder: Path) -> bool:  # sqlbench-<kind>-<pid>[.<start>]-...
        return re.match(rf"sqlbench-[a-z]+-{killed.pid}[.-]", folder.name) is not None

    left = [p.name for p in temp.iterdir() if of_killed(p)]
    assert any(name.startswith("sqlbench-tree-") for name in left), left
    assert asked.read_text().splitlines()[-3:] == ["dev q0", "dev q1", "dev q2"]

    block.unlink()
    asked.write_text("")
    check = sb("check", "--base", "main", "--head", "dev", cwd=repo, env=agent_env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "head: resuming run" in check.stderr
    assert "base: reusing run" in check.stderr
    # Only the questions the killed run had not graded are asked again.
    assert asked.read_text().splitlines() == ["dev q2", "dev q3"]
    assert not [p.name for p in temp.iterdir() if of_killed(p)]
