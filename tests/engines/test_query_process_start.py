"""A query process that cannot start is the run's error, not every answer's fail (docs/engines.md,
"What each engine enforces")."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from sqlbench.testing import write_project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the query process runs on Linux only"),
]


def test_a_hard_address_space_limit_below_its_need_fails_the_run_in_one_sentence(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": "dialect: duckdb\nsetup: [models/t.sql]\n",
            "models/t.sql": "CREATE TABLE t AS SELECT 1 AS x;\n",
            "eval_questions/q.yml": (
                "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT x FROM t\n"
                "  - name: two\n    question: Two?\n    sql: SELECT x + 1 FROM t\n"
            ),
            "agents/a.yml": "agents:\n  - name: r\n    kind: replay\n    path: a.jsonl\n",
            "agents/a.jsonl": (
                '{"name": "one", "sql": "SELECT x FROM t"}\n'
                '{"name": "two", "sql": "SELECT x + 1 FROM t"}\n'
            ),
        },
    )
    limit = 4000 * 2**20  # under what the query process needs with the defaults (768 MB + 3 GB)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "sqlbench", "run", "-C", str(root), "--agent", "r"],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "query process could not start" in done.stderr
    assert "the hard address-space limit (ulimit -v) is 4,000 MB" in done.stderr
    assert "fail" not in done.stdout  # no answer took the blame
    runs = subprocess.run(
        [sys.executable, "-m", "sqlbench", "runs", "-C", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"status": "failed"' in runs.stdout
