"""``sqlbench merge`` of shard runs and ``export``/``import`` between stores."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]


def test_export_import_into_a_fresh_store_is_reused_by_check(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    invoke("run", "-C", str(repo.root), "--branch", "main", "--name", "base-on-main")
    exported = invoke("export", "-C", str(repo.root), "base-on-main")
    document = json.loads(exported.stdout)
    assert document["schema_version"] >= 1 and document["run"]["name"] == "base-on-main"
    artifact = tmp_path / "run.json"
    artifact.write_text(exported.stdout, encoding="utf-8")

    # A PR's CI: a fresh clone (the store is not in git), the base run arrives as a file.
    clone = tmp_path / "pr"
    subprocess.run(["git", "clone", "-q", "--no-local", str(repo.root), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "branch", "-q", "dev", "origin/dev"], check=True)
    assert not (clone / ".sqlbench").exists()
    imported = invoke("import", "-C", str(clone), str(artifact))
    assert imported.stdout.startswith("Imported run base-on-main (main@")
    result = invoke("check", "-C", str(clone), "--base", "main", "--head", "dev", exit_code=1)
    assert "base: reusing run base-on-main" in result.stderr
    assert "| base | base-on-main (main@" in result.stdout

    again = invoke("import", "-C", str(clone), str(artifact), exit_code=2)
    assert "already in" in again.stderr and "--name NEW" in again.stderr
    # A second copy under a new name works, as `import --help` says (its own id).
    copy = invoke("import", "-C", str(clone), str(artifact), "--name", "base-copy")
    assert copy.stdout.startswith("Imported run base-copy (main@") and "Note:" not in copy.stderr
    listed = json.loads(invoke("runs", "-C", str(clone), "--format", "json").stdout)["runs"]
    ids = {r["name"]: r["id"] for r in listed}
    assert {"base-on-main", "base-copy"} <= set(ids) and ids["base-on-main"] != ids["base-copy"]
    # Another project's run is imported, and said to be another project's.
    other = tmp_path / "other"
    invoke("init", str(other))
    foreign = invoke("import", "-C", str(other), str(artifact))
    assert "Note: none of this run's" in foreign.stderr and "another project" in foreign.stderr
    future = dict(document, schema_version=999)
    artifact.write_text(json.dumps(future), encoding="utf-8")
    refused = invoke("import", "-C", str(clone), str(artifact), exit_code=2)
    assert "schema version 999" in refused.stderr
    artifact.write_text("{not json", encoding="utf-8")
    assert "not JSON" in invoke("import", "-C", str(clone), str(artifact), exit_code=2).stderr
    artifact.write_bytes(b"\xff\xfe{}")  # Regression: Python's codec message was shown.
    refused = invoke("import", "-C", str(clone), str(artifact), exit_code=2)
    assert refused.stderr == f"Error: cannot read {artifact}: it is not UTF-8 text\n"


def test_merge_shards_into_a_run_that_compare_reuses(repo: GitRepo, invoke: Invoke) -> None:
    root = str(repo.root)
    invoke("run", "-C", root, "--branch", "main", "--shard", "1/2", "--name", "s1")
    invoke("run", "-C", root, "--branch", "main", "--shard", "2/2", "--name", "s2")
    refused = invoke("merge", "-C", root, "s1", exit_code=2)
    assert "shard 2/2 is missing" in refused.stderr
    merged = invoke("merge", "-C", root, "s2", "s1", "--name", "whole")
    assert merged.stdout.startswith("Merged 2 shard runs into run whole: 9 questions")
    assert "Accuracy: 78% (7/9)" in merged.stdout
    result = invoke("compare", "-C", root, "--base", "main", "--head", "dev")
    assert "base: reusing run whole" in result.stderr
    shown = invoke("show", "-C", root, "whole")
    assert "7/9" in shown.stdout
    # Regression: a taken name read "run 'whole' (id <new id>) is already in ..., or its
    # name is taken", naming an id that was never stored.
    taken = invoke("merge", "-C", root, "s2", "s1", "--name", "whole", exit_code=2)
    assert "a run named 'whole' already exists in" in taken.stderr
    assert "choose another --name" in taken.stderr


def test_merge_refuses_runs_that_are_not_shards_of_one_run(repo: GitRepo, invoke: Invoke) -> None:
    root = str(repo.root)
    invoke("run", "-C", root, "--branch", "main", "--shard", "1/2", "--name", "m1")
    invoke("run", "-C", root, "--branch", "dev", "--shard", "2/2", "--name", "d2")
    invoke("run", "-C", root, "--branch", "main", "--name", "full")
    different = invoke("merge", "-C", root, "m1", "d2", exit_code=2)
    assert "differ in project commit" in different.stderr
    not_shard = invoke("merge", "-C", root, "m1", "full", exit_code=2)
    assert "run full is not a shard run" in not_shard.stderr
