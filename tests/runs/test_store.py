"""The run store: durable results, statuses, migrations, identity lookups, export/import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sqlbench.errors import StoreError
from sqlbench.project.files import CompareOptions
from sqlbench.records.hashes import stable_hash
from sqlbench.records.run import RunStatus
from sqlbench.runs import migrations
from sqlbench.runs.database import store_url
from sqlbench.runs.identity import RunIdentity, compare_hash, identity_of
from sqlbench.runs.migrations import (
    MIGRATIONS,
    Migration,
    applied_migrations,
    migrate,
)
from sqlbench.runs.store import RunStore
from sqlbench.verdicts import Verdict


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    with RunStore.for_project(tmp_path, None) as opened:
        yield opened


def test_default_store_is_a_git_ignored_sqlite_file_in_the_project(tmp_path: Path) -> None:
    url = store_url(tmp_path, None)
    assert url == f"sqlite:///{(tmp_path / '.sqlbench' / 'runs.db').resolve()}"
    assert (tmp_path / ".sqlbench" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("history", "history/runs.db"),
        ("team/bench.db", "team/bench.db"),
        ("sqlite:///rel/runs.sqlite", "rel/runs.sqlite"),
    ],
)
def test_relative_store_paths_are_under_the_project(
    tmp_path: Path, setting: str, expected: str
) -> None:
    assert store_url(tmp_path, setting) == f"sqlite:///{(tmp_path / expected).resolve()}"


def test_server_urls_are_kept_as_written(tmp_path: Path) -> None:
    url = "postgresql+psycopg://u:pw@db.example/bench"
    assert store_url(tmp_path, url) == url


def test_results_round_trip_with_timezone_aware_times(
    store: RunStore, make_info: Any, make_trial: Any
) -> None:
    info = make_info(name="first")
    store.create_run(info)
    store.record(info.id, make_trial("q1", position=1))
    store.record(info.id, make_trial("q0", Verdict.FAIL, position=0, reason="2 rows differ"))
    store.finish(info.id, RunStatus.COMPLETED)

    run = store.load_run("first")
    assert run.status is RunStatus.COMPLETED
    assert [q.name for q in run.questions] == ["q0", "q1"]  # the run's question order
    assert run.questions[0].reason == "2 rows differ"
    assert run.accuracy.label() == "50% (1/2)"
    assert run.info.created_at == info.created_at
    assert run.info.finished_at is not None and run.info.finished_at.utcoffset().seconds == 0
    assert run.questions[1].first.graded_at.tzinfo is not None


def test_each_recorded_result_is_visible_to_another_process_at_once(
    store: RunStore, tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    info = make_info(name="live", question_count=3)
    store.create_run(info)
    store.record(info.id, make_trial("q0"))
    reader = textwrap.dedent(f"""
        from pathlib import Path
        from sqlbench.runs.store import RunStore
        summary = RunStore.for_project(Path({str(tmp_path)!r}), None).list_runs()[0]
        print(summary.status.value, summary.graded, summary.passed)
    """)
    out = subprocess.run(
        [sys.executable, "-c", reader], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["running", "1", "1"]


def test_names_are_unique(store: RunStore, make_info: Any) -> None:
    store.create_run(make_info(name="nightly"))
    with pytest.raises(StoreError, match="a run named 'nightly' already exists"):
        store.create_run(make_info(name="nightly"))


def test_runs_are_found_by_name_id_or_id_prefix(store: RunStore, make_info: Any) -> None:
    info = make_info(name="by-name")
    store.create_run(info)
    assert store.find_run("by-name").id == info.id
    assert store.find_run(info.id).name == "by-name"
    assert store.find_run(info.id[:8]).name == "by-name"
    with pytest.raises(StoreError, match=r"no run named 'by-nme' .*; did you mean 'by-name'"):
        store.find_run("by-nme")


def test_runs_are_found_by_latest_or_a_unique_start(
    store: RunStore, make_info: Any, ago: Any
) -> None:
    with pytest.raises(StoreError, match="there is no run yet"):
        store.find_run("latest")
    for age, name in ((30, "nightly-1"), (20, "nightly-2"), (10, "pr_42")):
        store.create_run(make_info(name=name, created_at=ago(age), updated_at=ago(age)))
    assert store.find_run("latest").name == "pr_42"
    assert store.find_run("latest~0").name == "pr_42"
    assert store.find_run("latest~2").name == "nightly-1"
    with pytest.raises(StoreError, match=r"'latest~3' goes back past the oldest run: .* 3 runs"):
        store.find_run("latest~3")
    assert store.find_run("pr").name == "pr_42"
    assert store.find_run("nightly-2").name == "nightly-2"
    with pytest.raises(StoreError, match=r"'nightly' is the start of 2 runs' names"):
        store.find_run("nightly")
    # `_` is a LIKE wildcard: it must match only itself.
    with pytest.raises(StoreError, match="no run named 'pr_4x'"):
        store.find_run("pr_4x")
    with pytest.raises(StoreError, match="no run named 'p_'"):
        store.find_run("p_")


def test_latest_skips_runs_that_failed_before_asking_anything(
    store: RunStore, make_info: Any, make_trial: Any, ago: Any
) -> None:
    from sqlbench.report import run_text

    failed = {"status": RunStatus.FAILED, "error": "cannot connect to the warehouse"}
    store.create_run(make_info(name="asked", created_at=ago(40), updated_at=ago(40)))
    store.record(store.find_run("asked").id, make_trial("q"))
    store.create_run(make_info(name="failed-after-one", created_at=ago(30), updated_at=ago(30)))
    store.record(store.find_run("failed-after-one").id, make_trial("q"))
    store.finish(store.find_run("failed-after-one").id, RunStatus.FAILED, error="boom")
    for age in (20, 10):
        store.create_run(make_info(name=f"no-server-{age}", created_at=ago(age), **failed))
    assert store.find_run("latest").name == "failed-after-one"  # it graded a question
    assert store.find_run("latest~1").name == "asked"
    assert store.find_run("no-server-10").name == "no-server-10"  # still there by name
    table = run_text.render_runs(store.list_runs())
    assert "no-server-20" not in table and "Failed x2" in table
    assert (
        "no-server-10 and the 1 run before it (none asked a question) failed: cannot connect"
        in table
    )


def test_latest_with_only_runs_that_asked_nothing_says_so(store: RunStore, make_info: Any) -> None:
    store.create_run(make_info(name="n1", status=RunStatus.FAILED, error="no such file"))
    with pytest.raises(StoreError, match=r"every run in .* failed before asking a question.*"
                       r"the newest, n1, failed: no such file"):  # fmt: skip
        store.find_run("latest")


def test_list_is_newest_first_with_counts_and_skipped_left_out(
    store: RunStore, make_info: Any, make_trial: Any, ago: Any
) -> None:
    old = make_info(name="old", created_at=ago(100), updated_at=ago(100))
    new = make_info(name="new")
    for info in (old, new):
        store.create_run(info)
    store.record(new.id, make_trial("a"))
    store.record(new.id, make_trial("b", Verdict.REVIEW))
    store.record(new.id, make_trial("c", Verdict.SKIPPED))
    listed = store.list_runs()
    assert [s.info.name for s in listed] == ["new", "old"]
    assert (listed[0].passed, listed[0].total, listed[0].graded) == (1, 2, 3)
    assert listed[1].accuracy.value is None


def test_a_run_whose_process_died_reads_interrupted(
    store: RunStore, make_info: Any, ago: Any
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store.create_run(make_info(name="dead-pid", pid=dead.pid))
    store.create_run(make_info(name="stale", host="elsewhere", pid=1, updated_at=ago(3600)))
    store.create_run(make_info(name="other-host-fresh", host="elsewhere", pid=1))
    store.create_run(make_info(name="alive"))
    status = {s.info.name: s.status for s in store.list_runs()}
    assert status == {
        "dead-pid": RunStatus.INTERRUPTED,
        "stale": RunStatus.INTERRUPTED,
        "other-host-fresh": RunStatus.RUNNING,
        "alive": RunStatus.RUNNING,
    }


def test_heartbeat_keeps_a_run_alive(tmp_path: Path, make_info: Any, ago: Any) -> None:
    store = RunStore.for_project(tmp_path, None, stale_after_s=30)
    info = make_info(name="beating", host="elsewhere", updated_at=ago(60))
    store.create_run(info)
    assert store.load_run("beating").status is RunStatus.INTERRUPTED
    store.heartbeat(info.id)
    assert store.load_run("beating").status is RunStatus.RUNNING


def test_resume_bookkeeping(store: RunStore, make_info: Any, make_trial: Any) -> None:
    info = make_info(name="resumable", host="elsewhere", pid=1)
    store.create_run(info)
    store.record(info.id, make_trial("a"))
    store.record(info.id, make_trial("a", trial=1))
    store.finish(info.id, RunStatus.INTERRUPTED)
    assert store.done_keys(info.id) == {("auto", "a", 0), ("auto", "a", 1)}
    store.reopen(info.id, host="here", pid=42)
    reopened = store.find_run(info.id)
    assert (reopened.status, reopened.host, reopened.pid, reopened.finished_at) == (
        RunStatus.RUNNING,
        "here",
        42,
        None,
    )


def test_failed_runs_keep_their_error(store: RunStore, make_info: Any) -> None:
    info = make_info(name="broken")
    store.create_run(info)
    store.finish(info.id, RunStatus.FAILED, error="setup SQL failed: models/x.sql")
    assert store.find_run("broken").error == "setup SQL failed: models/x.sql"


def test_completed_run_found_by_identity(store: RunStore, make_info: Any, ago: Any) -> None:
    match = make_info(name="match", status=RunStatus.COMPLETED)
    identity = identity_of(match)
    store.create_run(make_info(name="older", status=RunStatus.COMPLETED, created_at=ago(50)))
    store.create_run(match)
    store.create_run(make_info(name="running"))  # same identity but not completed
    store.create_run(make_info(name="repeat", status=RunStatus.COMPLETED, repeat=3))
    store.create_run(
        make_info(name="other-agent", status=RunStatus.COMPLETED, agent_settings_hash="x" * 16)
    )
    store.create_run(make_info(name="shard", status=RunStatus.COMPLETED, shard="1/2"))
    found = store.find_completed_run(identity)
    assert found is not None and found.name == "match"
    assert store.find_completed_run(identity, repeat=3).name == "repeat"
    assert store.find_completed_run(identity._replace(compare_hash="z" * 16)) is None
    assert store.find_completed_run(identity._replace(source="b" * 40)) is None


def test_compare_columns_changes_identity_only_when_set_away_from_superset() -> None:
    # Runs stored before `columns` existed hashed these four keys; superset is how they graded.
    before = stable_hash({"order": "ignore", "rows": "bag", "abs_tol": 1e-9, "rel_tol": 1e-9})
    assert compare_hash(CompareOptions()) == before
    assert compare_hash(CompareOptions(columns="superset")) == before
    assert compare_hash(CompareOptions(columns="exact")) != before
    assert compare_hash(CompareOptions(columns="exact", order="strict")) != compare_hash(
        CompareOptions(columns="exact")
    )


def test_dirty_runs_match_only_the_same_working_tree(store: RunStore, make_info: Any) -> None:
    dirty = make_info(name="dirty", status=RunStatus.COMPLETED, dirty=True, working_tree_hash="w1")
    store.create_run(dirty)
    identity = identity_of(dirty)
    assert identity.source == "a" * 40 + "+w1"
    assert store.find_completed_run(identity).name == "dirty"
    assert store.find_completed_run(identity._replace(source="a" * 40 + "+w2")) is None


def test_runs_outside_git_are_never_reused(store: RunStore, make_info: Any) -> None:
    info = make_info(name="nogit", status=RunStatus.COMPLETED, commit=None)
    store.create_run(info)
    identity = identity_of(info)
    assert identity == RunIdentity(None, "q" * 16, "s" * 16, "0.1.0", "c" * 16, "w" * 16)
    assert store.find_completed_run(identity) is None


def test_export_import_between_stores(
    store: RunStore, tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    info = make_info(name="exported", status=RunStatus.COMPLETED)
    store.create_run(info)
    store.record(info.id, make_trial("a", Verdict.FAIL, reason="row counts differ: 3 vs 4"))
    data = json.loads(json.dumps(store.export_run("exported")))
    assert data["format"] == "sqlbench-run" and data["schema_version"] == migrations.SCHEMA_VERSION

    other = RunStore(f"sqlite:///{tmp_path / 'other.db'}")
    imported = other.import_run(data)
    assert imported.imported and imported.name == "exported"
    run = other.load_run("exported")
    assert run.questions[0].reason == "row counts differ: 3 vs 4"
    assert run.info.agent_settings == info.agent_settings
    with pytest.raises(StoreError, match="already in"):
        other.import_run(data)
    assert other.find_completed_run(identity_of(info)).name == "exported"


@pytest.mark.parametrize("setting", ["postgresql://u:s3cret@db:port/x", "postgresql://u@[::1"])
def test_an_invalid_store_url_is_one_sentence_without_the_url(tmp_path: Path, setting: str) -> None:
    # Regression: a port that is no number raised ValueError (a traceback) from SQLAlchemy.
    with pytest.raises(StoreError) as caught:
        RunStore.for_project(tmp_path, setting)
    assert str(caught.value).startswith("`store` in sqlbench.yml is not a valid database URL")
    assert "s3cret" not in str(caught.value)


def test_import_refuses_other_files_and_newer_exports(store: RunStore) -> None:
    with pytest.raises(StoreError, match="not a sqlbench run export"):
        store.import_run({"results": []})
    with pytest.raises(StoreError, match="schema version 99"):
        store.import_run({"format": "sqlbench-run", "schema_version": 99})
    with pytest.raises(StoreError, match="malformed"):
        store.import_run({"format": "sqlbench-run", "schema_version": 1, "run": {"id": 3}})
    # Regressions: a string version read "has schema version 1 ... reads up to 1: upgrade".
    with pytest.raises(StoreError, match=r"schema_version must be a number \(got '1'\)"):
        store.import_run({"format": "sqlbench-run", "schema_version": "1"})


def test_import_names_the_malformed_field_and_refuses_duplicate_results(
    store: RunStore, tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    info = make_info(name="exported", status=RunStatus.COMPLETED)
    store.create_run(info)
    store.record(info.id, make_trial("a", Verdict.PASS))
    data = json.loads(json.dumps(store.export_run("exported")))
    other = RunStore(f"sqlite:///{tmp_path / 'other.db'}")
    # Regression: only "1 validation error for TrialResult" was shown, not which field.
    bad = dict(data, results=[dict(data["results"][0], verdict="PASSED")])
    with pytest.raises(StoreError, match=r"malformed: results\[0\]\.verdict: Input should be"):
        other.import_run(bad)
    # Regression: a result listed twice read "already in the store, or its name is taken".
    twice = dict(data, results=data["results"] * 2)
    with pytest.raises(StoreError, match=r"malformed: it holds \S+/a trial 0 twice"):
        other.import_run(twice)
    assert other.list_runs() == []


def test_an_imported_running_run_is_not_live(
    store: RunStore, tmp_path: Path, make_info: Any
) -> None:
    info = make_info(name="was-running")
    store.create_run(info)
    other = RunStore(f"sqlite:///{tmp_path / 'other.db'}")
    other.import_run(store.export_run("was-running"), name="copy")
    assert other.load_run("copy").status is RunStatus.INTERRUPTED


def test_migrations_are_applied_once_in_order(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    calls: list[str] = []
    extra = Migration("9999_add_notes", lambda conn: calls.append("9999"))
    known = [m.name for m in migrations.MIGRATIONS]
    assert known[:2] == ["0001_create_runs_and_results", "0002_create_reviews"]
    assert migrate(engine) == known
    assert migrate(engine, [*migrations.MIGRATIONS, extra]) == ["9999_add_notes"]
    assert migrate(engine, [*migrations.MIGRATIONS, extra]) == []
    assert calls == ["9999"]
    assert applied_migrations(engine) == [*known, "9999_add_notes"]


def _store_of_version_1(url: str, make_info: Any, make_trial: Any) -> Any:
    """A store as sqlbench wrote it before runs recorded their warehouse, with one run."""
    engine = sa.create_engine(url)
    migrate(engine, migrations.MIGRATIONS[:1])
    info = make_info(name="old-run", status=RunStatus.COMPLETED)
    old_data = info.model_dump(mode="json")
    for key in ("warehouse", "warehouse_hash", "warehouse_built", "regraded_from"):
        old_data.pop(key)
    runs, results = migrations._tables(sa.MetaData(), 1)
    row = {c.name: None for c in runs.columns}
    row.update(
        id=info.id, name=info.name, status="completed", created_at=info.created_at,
        updated_at=info.updated_at, created_by="t", host="h", pid=1, branch="main",
        commit_sha=info.commit, dirty=False, environment="prod",
        question_set_hash=info.question_set_hash, agent_name="fake", agent_kind="python",
        agent_settings_hash=info.agent_settings_hash, sqlbench_version=info.sqlbench_version,
        compare_hash=info.compare_hash, repeat=1, data=json.dumps(old_data),
    )  # fmt: skip
    trial = make_trial("a")
    with engine.begin() as conn:
        conn.execute(runs.insert().values(**row))
        conn.execute(
            results.insert().values(
                run_id=info.id,
                space="auto",
                name="a",
                trial=0,
                position=0,
                verdict="pass",
                reason="ok",
                graded_at=trial.graded_at,
                data=trial.model_dump_json(),
            )
        )
    engine.dispose()
    return info


def test_a_version_1_store_is_migrated_and_its_runs_are_never_reused(
    tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'v1.db'}"
    info = _store_of_version_1(url, make_info, make_trial)
    store = RunStore(url)
    assert applied_migrations(store._engine) == [m.name for m in MIGRATIONS]
    old = store.load_run("old-run")
    assert store.list_runs()[0].cost_usd is None  # no cost recorded before 0006
    assert old.accuracy.label() == "100% (1/1)" and old.info.warehouse_hash is None
    # The same run made today, against whatever warehouse: the old one is not reused.
    assert store.find_completed_run(identity_of(info)) is None
    assert not identity_of(old.info).reusable
    store.close()


@pytest.mark.postgres
def test_a_version_1_postgresql_store_is_migrated(
    postgres_url: str, make_info: Any, make_trial: Any
) -> None:
    _store_of_version_1(postgres_url, make_info, make_trial)
    store = RunStore(postgres_url)
    assert store.load_run("old-run").info.warehouse_hash is None
    fresh = make_info(name="new-run", status=RunStatus.COMPLETED)
    store.create_run(fresh)
    assert store.find_completed_run(identity_of(fresh)).name == "new-run"
    store.close()


def test_a_store_from_a_newer_sqlbench_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    engine = sa.create_engine(url)
    migrate(engine, [*migrations.MIGRATIONS, Migration("9999_future", lambda conn: None)])
    engine.dispose()
    with pytest.raises(StoreError, match="written by a newer sqlbench"):
        RunStore(url)


def test_an_unreachable_store_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open the run store at postgresql"):
        RunStore("postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
    with pytest.raises(StoreError) as caught:
        RunStore("postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
    assert "secret" not in str(caught.value)


@pytest.mark.postgres
def test_postgresql_store(postgres_url: str, make_info: Any, make_trial: Any) -> None:
    store = RunStore(postgres_url)
    info = make_info(name="pg-run")
    store.create_run(info)
    store.record(info.id, make_trial("a"))
    store.record(info.id, make_trial("b", Verdict.ERROR))
    store.finish(info.id, RunStatus.COMPLETED)
    again = RunStore(postgres_url)  # migrations are not re-applied
    run = again.load_run("pg-run")
    assert run.accuracy.label() == "50% (1/2)"
    assert run.info.created_at == info.created_at
    assert again.find_completed_run(identity_of(info)).name == "pg-run"
    summary = again.list_runs()[0]
    assert (summary.status, summary.passed, summary.total) == (RunStatus.COMPLETED, 1, 2)
    store.close()
    again.close()


def test_a_project_store_setting_is_resolved_at_use(tmp_path: Path) -> None:
    from sqlbench.runs.locate import open_project_store, store_setting
    from sqlbench.testing import write_project

    root = write_project(
        tmp_path / "p",
        {
            "sqlbench.yml": {"store": "sqlite:///${BENCH_DIR}/team.db"},
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "a", "question": "?", "sql": "SELECT 1"}]
            },
        },
    )
    assert store_setting(root) == "sqlite:///${BENCH_DIR}/team.db"
    with open_project_store(root, {"BENCH_DIR": str(tmp_path / "shared")}) as store:
        assert store.url == f"sqlite:///{tmp_path / 'shared' / 'team.db'}"
    assert (tmp_path / "shared" / "team.db").is_file()
    assert not (root / ".sqlbench").exists()


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ("afile", "`store: afile` in sqlbench.yml names the file"),
        ("afile/sub", "afile is a file, not a folder"),
        ("afile/sub/runs.db", "afile is a file, not a folder"),
        ("sqlite:///afile/x.db", "afile is a file, not a folder"),
    ],
)
def test_a_store_path_that_cannot_be_made_is_one_sentence(
    tmp_path: Path, store: str, message: str
) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError) as caught:
        store_url(tmp_path, store)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_runs_are_deleted_and_pruned_but_never_while_running(
    store: RunStore, make_info: Any, make_trial: Any, ago: Any
) -> None:
    old = make_info(
        name="old", status=RunStatus.COMPLETED, created_at=ago(90_000), updated_at=ago(90_000)
    )
    failed = make_info(name="failed", created_at=ago(50), updated_at=ago(50))
    live = make_info(name="live")  # Running, in this (live) process
    for info in (old, failed, live):
        store.create_run(info)
    store.record(old.id, make_trial("q"))
    store.finish(failed.id, RunStatus.FAILED, error="setup failed")
    with pytest.raises(StoreError, match="run 'live' is running"):
        store.delete_runs([store.find_run("live"), store.find_run("old")])
    assert len(store.list_runs()) == 3  # nothing removed
    from datetime import timedelta

    assert [i.name for i in store.prune_candidates(statuses=[RunStatus.FAILED])] == ["failed"]
    assert [i.name for i in store.prune_candidates(older_than=timedelta(days=1))] == ["old"]
    assert [i.name for i in store.prune_candidates(keep_last=1)] == ["failed", "old"]
    store.delete_runs(store.prune_candidates(keep_last=0))
    assert [s.info.name for s in store.list_runs()] == ["live"]
    assert store.trials(old.id) == []


def test_a_result_is_made_json_once_when_written(
    store: RunStore, make_info: Any, make_trial: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text checked for secrets is the text stored (a corpus run writes 8,748 results)."""
    from sqlbench.records.run import TrialResult

    info = make_info(name="once")
    store.create_run(info)
    dumps = []
    dump = TrialResult.model_dump_json

    def counted(self: TrialResult, **kwargs: Any) -> str:
        dumps.append(self.name)
        return dump(self, **kwargs)

    monkeypatch.setattr(TrialResult, "model_dump_json", counted)
    store.record(info.id, make_trial("q0", reason="see http://u:zq7-only-in-this-test@db/x"))
    store.record(info.id, make_trial("q1"))
    assert dumps == ["q0", "q0", "q1"]  # q0 held a password: dumped again once scrubbed
    monkeypatch.undo()
    reasons = [q.reason for q in store.load_run("once").questions]
    assert reasons[0] == "see http://u:***@db/x"


def test_default_run_names_never_repeat_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs named in the same second (run --agent a,b,...) get different suffixes even when
    the random draw repeats."""
    from datetime import UTC, datetime

    from sqlbench.runs import new_run

    draws = iter(["abcd", "abcd", "abcd", "ef01"])
    monkeypatch.setattr(new_run.secrets, "token_hex", lambda n: next(draws))
    monkeypatch.setattr(new_run, "utc_now", lambda: datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC))
    names = [new_run.default_run_name(), new_run.default_run_name()]
    assert names == ["20310102-030405-abcd", "20310102-030405-ef01"]


def _result_rows(path: Path, run_id: str) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT space, name, trial, position, verdict, reason, latency_ms, input_tokens, "
            "output_tokens, graded_at, data, typeof(latency_ms), typeof(graded_at) "
            "FROM sqlbench_results WHERE run_id = ? ORDER BY name",
            (run_id,),
        ).fetchall()


def test_a_recorded_result_is_stored_as_sqlalchemy_stores_it(
    store: RunStore, tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    """``record`` writes a SQLite store through its own connection (``_ResultWriter``): the
    row holds the same values, of the same types, as SQLAlchemy's insert of that result."""
    from sqlbench.runs.store import _result_row

    trials = [
        make_trial("q0", latency_ms=12, input_tokens=5, output_tokens=7),  # an int latency
        make_trial("q1", Verdict.FAIL, reason="see http://u:zq7-only-here@db/x", position=1),
        make_trial("q2", Verdict.ERROR, reason="caf\u00e9 \ud800 \x00", position=2),
    ]
    fast, core = make_info(name="fast"), make_info(name="core")
    store.create_run(fast)
    store.create_run(core)
    for trial in trials:
        store.record(fast.id, trial)
    with store._engine.begin() as conn:
        conn.execute(store._insert_result, [_result_row(core.id, t) for t in trials])
    path = tmp_path / ".sqlbench" / "runs.db"
    assert _result_rows(path, fast.id) == _result_rows(path, core.id)
    assert [row[11:] for row in _result_rows(path, fast.id)] == [("real", "text")] * 3


def test_a_refused_record_leaves_the_store_writable(
    store: RunStore, tmp_path: Path, make_info: Any, make_trial: Any
) -> None:
    """A result refused by the database (the same question twice) raises as SQLAlchemy
    raises it, and its transaction is rolled back: the write lock is free for the next
    result, and for another process."""
    import sqlite3

    info = make_info(name="twice")
    store.create_run(info)
    store.record(info.id, make_trial("q0"))
    with pytest.raises(sa.exc.IntegrityError, match="UNIQUE constraint failed"):
        store.record(info.id, make_trial("q0"))
    store.record(info.id, make_trial("q1"))
    with sqlite3.connect(tmp_path / ".sqlbench" / "runs.db", timeout=0) as other:
        other.execute("UPDATE sqlbench_runs SET host = 'elsewhere'")
    assert [q.name for q in store.load_run("twice").questions] == ["q0", "q1"]


def test_a_record_waiting_too_long_for_the_lock_is_one_sentence(
    tmp_path: Path, make_info: Any, make_trial: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    monkeypatch.setenv("SQLBENCH_STORE_LOCK_WAIT", "0.2")
    with RunStore.for_project(tmp_path, None) as store:
        info = make_info(name="locked")
        store.create_run(info)
        holder = sqlite3.connect(tmp_path / ".sqlbench" / "runs.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(
                StoreError, match=r"stayed locked by another process for over 0\.2 s"
            ):
                store.record(info.id, make_trial("q0"))
        finally:
            holder.rollback()
            holder.close()
        store.record(info.id, make_trial("q1"))
        assert [q.name for q in store.load_run("locked").questions] == ["q1"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("told", [True, False], ids=["after_fork", "not-told"])
def test_a_forked_child_records_through_its_own_connection(
    store: RunStore, make_info: Any, make_trial: Any, told: bool
) -> None:
    """A store used before a ``fork`` records in the child through a connection the child
    opened (SQLite forbids using one across a fork), whether the child called
    ``after_fork`` (the forked batch) or not; the parent's goes on working."""
    from sqlbench.runs import store as store_module

    info = make_info(name="forked")
    store.create_run(info)
    store.record(info.id, make_trial("q0"))
    writer = store._writer
    assert writer is not None
    inherited = writer._conn
    assert inherited is not None
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status, never return into pytest
        code = 1
        try:
            if told:
                store.after_fork()
            store.record(info.id, make_trial("q1", position=1))
            fresh = writer._conn is not inherited and writer._conn is not None
            kept = any(conn is inherited for conn in store_module._INHERITED)
            code = 0 if fresh and kept else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert writer._conn is inherited  # the parent's own, still in use
    store.record(info.id, make_trial("q2", position=2))
    assert [q.name for q in store.load_run("forked").questions] == ["q0", "q1", "q2"]
