"""``sqlbench compare`` of stored runs and of git refs, on a real repository."""

from __future__ import annotations

import json
from collections.abc import Callable

from branch_project import BROKEN_QUESTIONS
from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]


def test_compare_two_stored_runs(repo: GitRepo, invoke: Invoke) -> None:
    root = str(repo.root)
    invoke("run", "-C", root, "--branch", "main", "--name", "before")
    invoke("run", "-C", root, "--branch", "dev", "--name", "after")
    result = invoke("compare", "-C", root, "before", "after")
    out = result.stdout
    assert "base  before (main@" in out and "78% (7/9)" in out and "45%–94% (Wilson)" in out
    assert "head  after (dev@" in out and "60% (6/10)" in out
    assert "Difference (head - base): -22.2 points on 9 shared questions" in out
    section = out.split("Regressions: passed on base, not on head (2):", 1)[1]
    section = section.split("\n\n", 1)[0]
    assert [
        line.split()[0]
        for line in section.splitlines()
        if not line.startswith("    ") and line.strip()
    ] == list(BROKEN_QUESTIONS)
    assert "sales/top_region         pass → fail" in section
    assert "      base: " in section and "      head: " in section
    assert "Fixes: pass on head, did not on base: none" in out
    assert "sales/smallest_order" in out.split("Added: on head only (not counted) (1):")[1]
    assert "Paired test: exact McNemar on 9 shared questions, 2 changed: p = 0.5" in out
    assert out.rstrip().endswith(
        "Conclusion: inconclusive: the difference is not significant at alpha 0.05 (p = 0.5)"
    )


def test_compare_refs_runs_what_is_missing_and_reuses_the_rest(
    repo: GitRepo, invoke: Invoke
) -> None:
    root = str(repo.root)
    invoke("run", "-C", root, "--branch", "main", "--name", "main-run")
    result = invoke("compare", "-C", root, "--base", "main", "--head", "dev", "--format", "json")
    assert "base: reusing run main-run" in result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"] == 1
    assert document["base"]["run"] == "main-run" and document["base"]["reused"] is True
    assert document["head"]["reused"] is False
    regressions = [
        f"{c['space']}/{c['name']}" for c in document["changes"] if c["kind"] == "regression"
    ]
    assert regressions == list(BROKEN_QUESTIONS)
    change = document["changes"][0]
    assert change["base"]["verdict"] == "pass" and change["head"]["verdict"] == "fail"
    assert change["head"]["reason"]  # the reason on both sides
    assert document["paired_test"] == {
        "method": "exact McNemar",
        "questions": 9,
        "changed": 2,
        "p_value": 0.5,
        "alpha": 0.05,
    }
    assert document["conclusion"] == "inconclusive"
    again = invoke("compare", "-C", root, "--base", "main", "--head", "dev")
    assert "base: reusing run main-run" in again.stderr
    assert "head: reusing run" in again.stderr


def test_compare_markdown(repo: GitRepo, invoke: Invoke) -> None:
    result = invoke(
        "compare", "-C", str(repo.root), "--base", "main", "--head", "dev", "--format", "markdown"
    )
    assert result.stdout.startswith("### sqlbench compare: inconclusive")
    assert "| `sales/revenue_by_region` | pass → fail |" in result.stdout


def test_a_printing_agent_does_not_corrupt_json_on_stdout(repo: GitRepo, invoke: Invoke) -> None:
    # Regression: the in-process python agent's print() landed in the JSON on stdout.
    agent = repo.root / "analyst_agent.py"
    agent.write_text(agent.read_text() + '\nprint("analyst loaded")\n')
    result = invoke("compare", "-C", str(repo.root), "--base", "main", "--format", "json")
    assert json.loads(result.stdout)["schema_version"] >= 1
    assert "analyst loaded" in result.stderr


def test_usage_errors_exit_2(repo: GitRepo, invoke: Invoke) -> None:
    root = str(repo.root)
    assert "two runs" in invoke("compare", "-C", root, "only-one", exit_code=2).output
    assert (
        "not both" in invoke("compare", "-C", root, "a", "b", "--base", "main", exit_code=2).output
    )
    missing = invoke("compare", "-C", root, "nope", "nada", exit_code=2)
    assert "no run named 'nope'" in missing.stderr
    assert "does not exist" in invoke("compare", "-C", root, "--base", "mian", exit_code=2).stderr


def test_compare_refs_gives_the_python_api_what_compare_base_prints(
    repo: GitRepo, invoke: Invoke
) -> None:
    """One library function per command (issue 10): `compare --base/--head` is
    ``rundiff.refs.compare_refs`` rendered; called directly it reuses the runs the command
    stored and reaches the same comparison."""
    from sqlbench.report import rundiff_json
    from sqlbench.rundiff.refs import compare_refs
    from sqlbench.rundiff.sides import SideOptions
    from sqlbench.runs.locate import open_project_store

    root = repo.root
    printed = invoke(
        "compare", "-C", str(root), "--base", "main", "--head", "dev", "--format", "json"
    )
    notes: list[str] = []
    with open_project_store(root) as store:
        diff = compare_refs(
            store, "main", "dev", SideOptions(project_dir=root), notify=notes.append
        )
    cli, api = json.loads(printed.stdout), rundiff_json.to_dict(diff)
    assert api["base"]["reused"] and api["head"]["reused"]
    for side in ("base", "head"):
        cli[side].pop("reused"), api[side].pop("reused")
    assert api == cli
