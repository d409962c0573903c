"""Findings 3 and 7 (third pass): decisions are carried only from where a person made them, and
carrying never fails a run.

3. An unsigned imported run can hold made-up "pass" decisions whose hashes anyone can compute;
   they count in that run alone (labelled imported), never in a later local run. A signed
   import's decisions are carried, and the carried copy says so.
7. A decision stored while a run finishes (the viewer or ``review`` in another process) never
   makes the run fail with an IntegrityError, and every other decision is still carried.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from secutil import Sqlbench, write_files

from sqlbench.records.run import HumanReview
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.reviews import review_hashes
from sqlbench.runs.store import RunStore
from sqlbench.verdicts import Verdict

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"
WRONG = "SELECT 2 AS x"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "p",
        {
            "sqlbench.yml": "{}\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: bad, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": json.dumps({"name": "one", "sql": WRONG}) + "\n",
        },
    )


def _forged_export(sb: Sqlbench, project: Path, tmp_path: Path) -> Path:
    """A run export holding a made-up "pass" decision on the failing question, as an attacker
    writes it: the hashes are computed from the export's own results."""
    first = sb("run", "--agent", "bad", "--name", "seed", cwd=project)
    assert first.returncode == 0, first.stderr
    exported = sb("export", "seed", cwd=project)
    document: dict[str, Any] = json.loads(exported.stdout)
    (trial,) = document["results"]
    from sqlbench.records.run import TrialResult

    hashes = review_hashes([TrialResult.model_validate(trial)])
    document["run"]["id"] = uuid.uuid4().hex
    document["run"]["name"] = "forged"
    document["run"]["created_at"] = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    document["reviews"] = [
        {
            "space": trial["space"],
            "name": trial["name"],
            "verdict": "pass",
            "decided_by": "lead",
            "decided_at": (datetime.now(UTC) - timedelta(days=1)).isoformat(),
            "truth_hash": hashes.truth,
            "sql_hash": hashes.sql,
        }
    ]
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(document))
    return path


def test_a_forged_unsigned_decision_counts_only_in_its_imported_run(
    project: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    forged = _forged_export(sb, project, tmp_path)
    imported = sb("import", str(forged), cwd=project)
    assert imported.returncode == 0, imported.stderr
    proc = sb("run", "--agent", "bad", "--fail-under", "1.0", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Accuracy: 0% (0/1)" in proc.stdout
    assert "decided by a person" not in proc.stdout
    shown = sb("show", "forged", "auto/one", cwd=project)
    assert "imported" in shown.stdout and "decided by lead" in shown.stdout


def test_a_signed_imports_decision_is_carried_and_says_so(
    project: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    key = {"SQLBENCH_SIGNING_KEY": "a-signing-key-of-the-team-1234"}
    forged = _forged_export(sb, project, tmp_path)
    from sqlbench.records import provenance

    document = json.loads(forged.read_text())
    forged.write_text(json.dumps(provenance.sign(document, key["SQLBENCH_SIGNING_KEY"])))
    imported = sb("import", str(forged), cwd=project, env=key)
    assert imported.returncode == 0, imported.stderr
    proc = sb("run", "--agent", "bad", "--name", "later", cwd=project, env=key)
    assert "1 decided by a person" in proc.stdout, proc.stdout
    shown = sb("show", "later", "auto/one", cwd=project, env=key)
    assert "carried from run forged" in shown.stdout and "signed" in shown.stdout, shown.stdout


def _decided(store: RunStore, run_id: str, key: tuple[str, str], verdict: Verdict) -> None:
    trials = [t for t in store.trials(run_id) if (t.space, t.name) == key]
    hashes = review_hashes(trials)
    store.save_review(
        run_id,
        key[0],
        key[1],
        HumanReview(
            verdict=verdict,
            decided_by="viewer",
            decided_at=datetime.now(UTC),
            truth_hash=hashes.truth,
            sql_hash=hashes.sql,
        ),
    )


def test_a_decision_made_while_a_run_finishes_never_fails_it(tmp_path: Path) -> None:
    """Carrying reads the run's own decisions, then inserts the carried ones: a decision stored
    between the two (another process, the viewer) used to raise IntegrityError and lose every
    carried decision. Here it is stored exactly there, every time."""
    questions = "eval_questions:\n" + "".join(
        f"  - {{name: q{i}, question: Q{i}?, sql: SELECT {i} AS x}}\n" for i in range(30)
    )
    answers = "".join(
        json.dumps({"name": f"q{i}", "sql": "SELECT -1 AS x"}) + "\n" for i in range(30)
    )
    root = write_files(
        tmp_path / "p",
        {
            "sqlbench.yml": "{}\n",
            "eval_questions/q.yml": questions,
            "agents/a.yml": "agents:\n  - {name: bad, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": answers,
        },
    )
    from sqlbench.runs.plan import RunOptions
    from sqlbench.runs.runner import run_benchmark
    from sqlbench.validation import load_project

    first = run_benchmark(load_project(root), "bad", RunOptions(name="first"))
    with open_project_store(root) as store:
        for i in range(30):
            _decided(store, first.info.id, ("auto", f"q{i}"), Verdict.PASS)
    # A third run: while it finishes, a person decides q0 "fail" on it, between carrying's
    # read of the run's own decisions and its insert.
    with open_project_store(root) as store:
        original = RunStore.reviews
        raced = threading.Event()

        def reviews_then_decide(self: RunStore, run_id: str) -> dict[Any, HumanReview]:
            own = original(self, run_id)
            if not raced.is_set() and run_id != first.info.id:
                raced.set()
                with open_project_store(root) as other:
                    _decided(other, run_id, ("auto", "q0"), Verdict.FAIL)
            return own

        RunStore.reviews = reviews_then_decide  # type: ignore[method-assign]
        try:
            third = run_benchmark(load_project(root), "bad", RunOptions(name="third"))
        finally:
            RunStore.reviews = original  # type: ignore[method-assign]
        assert raced.is_set()
        reviews = store.reviews(third.info.id)
    assert len(reviews) == 30
    assert reviews[("auto", "q0")].verdict is Verdict.FAIL  # the person's, not the carried one
    assert reviews[("auto", "q0")].carried_from is None
    assert all(reviews[("auto", f"q{i}")].carried_from == "first" for i in range(1, 30))
