"""Finding 4 (a forged import passes the check), and the import parts of findings 5 and 9:
imported records are checked field by field, run names follow the rules, signed exports."""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from secutil import CANARY, Sqlbench, git, make_repo

QUESTIONS = (
    "eval_questions:\n"
    "  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"
    "  - name: two\n    question: Two?\n    sql: SELECT 2 AS x\n"
)


def answers(one: int, two: int) -> str:
    return (
        json.dumps({"name": "one", "sql": f"SELECT {one} AS x"})
        + "\n"
        + json.dumps({"name": "two", "sql": f"SELECT {two} AS x"})
        + "\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: the agent is right on both questions; dev: wrong on both (a real regression)."""
    return build_repo(tmp_path / "repo")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A repository holding one run, ``base``, and that run exported (JSON text); made once
    for the tests that only import edited copies of it."""
    root = tmp_path_factory.mktemp("exported")
    sb = Sqlbench(root)
    shared = build_repo(root / "repo")
    assert sb("run", "--name", "base", cwd=shared).returncode == 0
    return shared, sb("export", "base", cwd=shared).stdout


def build_repo(root: Path) -> Path:
    make_repo(root)
    files = {
        "sqlbench.yml": "default_agent: rec\n",
        "eval_questions/q.yml": QUESTIONS,
        "agents/a.yml": "agents:\n  - name: rec\n    kind: replay\n    path: answers.jsonl\n",
        "agents/answers.jsonl": answers(1, 2),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_text(".sqlbench/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "dev")
    (root / "agents/answers.jsonl").write_text(answers(5, 6))
    git(root, "commit", "-qam", "dev breaks it")
    return root


def forged_export(sb: Sqlbench, repo: Path, path: Path) -> dict:
    """A real failing head run, exported, then edited: every verdict pass, dated
    the newest (an hour ahead, within the clock slack an import allows)."""
    assert sb("run", "--branch", "dev", "--name", "real-head", cwd=repo).returncode == 0
    document = json.loads(sb("export", "real-head", cwd=repo).stdout)
    document["run"].update(
        id=uuid.uuid4().hex,
        name="artifact-from-ci",
        created_at=(datetime.now(UTC) + timedelta(hours=1)).isoformat(),
    )
    for result in document["results"]:
        result.update(verdict="pass", reason="results match")
    path.write_text(json.dumps(document))
    return document


def test_check_never_takes_its_head_from_an_imported_run(
    repo: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    forged = tmp_path / "forged.json"
    forged_export(sb, repo, forged)
    shutil.rmtree(repo / ".sqlbench")  # only the forged run is left to be found
    imported = sb("import", str(forged), cwd=repo)
    assert imported.returncode == 0, imported.stderr
    assert "(imported sha256:" in imported.stdout
    check = sb("check", "--base", "main", "--head", "dev", cwd=repo)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "head: reusing run artifact-from-ci" not in check.stderr
    listed = sb("runs", cwd=repo, env={"COLUMNS": "300"})
    assert "imported sha256:" in listed.stdout


def test_signed_exports_refuse_unsigned_and_altered_files(
    repo: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    env = {"SQLBENCH_SIGNING_KEY": CANARY}
    assert sb("run", "--name", "base", cwd=repo).returncode == 0
    signed = json.loads(sb("export", "base", cwd=repo, env=env).stdout)
    assert signed["signature"]["algorithm"] == "HMAC-SHA256"
    other = make_repo(tmp_path / "other")
    (other / "sqlbench.yml").write_text("")
    for label, document in (
        ("altered", {**signed, "results": [{**r, "verdict": "pass"} for r in signed["results"]]}),
        ("unsigned", {k: v for k, v in signed.items() if k != "signature"}),
    ):
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps(document))
        refused = sb("import", str(path), cwd=other, env=env)
        assert refused.returncode == 2, label
        assert ("not signed" if label == "unsigned" else "does not match") in refused.stderr
    good = tmp_path / "good.json"
    good.write_text(json.dumps(signed))
    accepted = sb("import", str(good), cwd=other, env=env)
    assert accepted.returncode == 0 and ", signed)" in accepted.stdout
    sb.assert_no_canary()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["run"].update(name="a\nb\x1b[2J"), "not printable"),
        (lambda d: d["run"].update(name="x" * 5000), "at most 200 characters"),
        (lambda d: d["run"].update(name=""), "cannot be empty"),
        (lambda d: d["results"][0].update(trial=2**70), "results[0].trial: 1180591620717411303424"),
        (lambda d: d["results"][0].update(input_tokens=10**30), "is out of range"),
        (lambda d: d["results"][0].update(latency_ms=float("nan")), "NaN is not a number"),
        (lambda d: d["results"][0].update(name="q" * 250), "250 characters, over the 200"),
        (lambda d: d["run"].update(id="f" * 5000), "run.id"),
    ],
)
def test_imported_records_are_checked_field_by_field(
    exported: tuple[Path, str], sb: Sqlbench, tmp_path: Path, edit: object, message: str
) -> None:
    repo, text = exported
    document = json.loads(text)
    document["run"].update(id=uuid.uuid4().hex, name="copy")
    edit(document)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    refused = sb("import", str(path), cwd=repo)
    assert refused.returncode == 2
    assert message in refused.stderr


def test_a_lone_surrogate_in_an_import_is_replaced_not_a_traceback(
    exported: tuple[Path, str], sb: Sqlbench, tmp_path: Path
) -> None:
    repo, text = exported
    document = json.loads(text)
    document["run"].update(id=uuid.uuid4().hex, name="copy-surrogate")
    document["results"][0]["reason"] = "PLACEHOLDER"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(document).replace("PLACEHOLDER", "bad \\ud800 here"))
    assert sb("import", str(path), cwd=repo).returncode == 0
    assert "bad \ufffd here" in sb("show", "copy-surrogate", cwd=repo).stdout


def test_a_run_name_is_never_another_runs_id(repo: Path, sb: Sqlbench) -> None:
    assert sb("run", "--name", "first", cwd=repo).returncode == 0
    run_id = json.loads(sb("runs", "--format", "json", cwd=repo).stdout)["runs"][0]["id"]
    clash = sb("run", "--name", run_id, cwd=repo)
    assert clash.returncode == 2
    assert "is the id of run 'first'" in clash.stderr
