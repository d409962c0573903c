"""The durable run store (docs/runs.md): runs and their graded results in a SQL database.

Default: a SQLite file ``.sqlbench/runs.db`` in the project (WAL journal, so another process can
read a run's live progress); ``store:`` in ``sqlbench.yml`` may name any SQLAlchemy URL for a
team-shared history. Every graded result is committed on its own, so ``kill -9`` loses nothing
graded. Thread-safe: the run loop records results from its worker threads.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from sqlbench import gcpolicy, secrets
from sqlbench.errors import StoreError
from sqlbench.hygiene import clean_data, valid_text
from sqlbench.processes import process_started
from sqlbench.project.names import MAX_NAME_CHARS
from sqlbench.records.hashes import (
    ReviewHashes,
    disputed_keys,
    review_hashes,
    trial_dispute_hash,
)
from sqlbench.records.provenance import (
    ImportOrigin,
    meaning_problems,
    record_problems,
    run_name_problem,
)
from sqlbench.records.run import (
    Dispute,
    HumanReview,
    RunInfo,
    RunStatus,
    RunSummary,
    TrialResult,
    utc_now,
)
from sqlbench.runs.database import (
    UTF8_CHECK,
    create_store_engine,
    lock_wait_s,
    mask_url,
    open_writer,
    sqlite_path,
    sqlite_read_only,
    store_url,
)
from sqlbench.runs.identity import RunIdentity, identity_of
from sqlbench.runs.liveness import process_alive
from sqlbench.runs.migrations import (
    SCHEMA_VERSION,
    current_tables,
    disputes_table,
    judge_cache_table,
    migrate,
    require_current,
    reviews_table,
)
from sqlbench.runs.scores import RunResult, gather
from sqlbench.text import one_line, suggest
from sqlbench.verdicts import NOT_ASKED, Verdict

EXPORT_FORMAT = "sqlbench-run"
_Model = TypeVar("_Model", bound=BaseModel)
STALE_AFTER_S = 60.0
"""A Running run whose heartbeat is older than this reads Interrupted (its process is gone)."""

# Columns of the runs table that change during a run; the rest of RunInfo lives in `data`.
_LIVE_COLUMNS = ("status", "updated_at", "finished_at", "host", "pid", "error")


class RunStore:
    """Runs and results in one database. Open with ``RunStore(url)`` or ``RunStore.for_project``.

    Args:
        url: A SQLAlchemy URL (``sqlite:////abs/path/runs.db``, ``postgresql+psycopg://...``).
        stale_after_s: Heartbeat age after which a Running run reads Interrupted.
    """

    def __init__(self, url: str, *, stale_after_s: float = STALE_AFTER_S) -> None:
        self.stale_after = timedelta(seconds=stale_after_s)
        _refuse_empty_file(url)
        self.read_only = sqlite_read_only(url)
        """Why this store can only be read (a SQLite file or folder that is not writable), or
        None: ``runs``, ``show``, ``export`` and ``compare`` work; a write is one sentence."""
        try:
            self._engine = create_store_engine(url, read_only=self.read_only is not None)
            if self.read_only is None:
                migrate(self._engine)
            else:
                require_current(self._engine, self.read_only)
        except SQLAlchemyError as err:
            raise StoreError(
                _fault_sentence(err, mask_url(url), writing=False, opening=True)
            ) from err
        except ImportError as err:
            raise StoreError(
                f"cannot open the run store at {mask_url(url)}: its database driver "
                f"is not installed ({err.name or err}); install it with pip"
            ) from err
        self.url = self._engine.url.render_as_string(hide_password=True)
        metadata = sa.MetaData()
        self._runs, self._results = current_tables(metadata)
        self._reviews = reviews_table(metadata)
        self._judge_cache = judge_cache_table(metadata)
        self._disputes = disputes_table(metadata)
        self._insert_result = self._results.insert()
        self._write_lock: AbstractContextManager[Any] = threading.Lock()
        self._writer: _ResultWriter | None = None
        if self.read_only is None and sqlite_path(self.url) is not None:
            self._writer = _ResultWriter(self._engine, self._insert_result)

    @classmethod
    def for_project(cls, project_dir: Path, store: str | None, **kwargs: Any) -> RunStore:
        """The store a project names: ``store:`` from ``sqlbench.yml`` (already ``${ENV}``-
        resolved), else ``.sqlbench/runs.db`` in ``project_dir`` (created, git-ignored)."""
        try:
            url = store_url(project_dir, store)
        except (sa.exc.ArgumentError, ValueError) as err:
            # Not quoted: the URL may hold a resolved password.
            raise StoreError(
                "`store` in sqlbench.yml is not a valid database URL (expected a path, or "
                "dialect+driver://user:password@host:port/database)"
            ) from err
        return cls(url, **kwargs)

    def close(self) -> None:
        """Release the database connections."""
        if self._writer is not None:
            with self._write_lock:
                self._writer.close()
        self._engine.dispose()

    def after_fork(self, write_lock: AbstractContextManager[Any] | None = None) -> None:
        """In a process forked from the one that opened this store (``runs/forked.py``):
        forget the inherited connections without closing them (they are the parent's); this
        process opens its own. ``write_lock``: a lock the forked processes share, taken around
        each write (a writer waiting on it wakes when it is released; one waiting on SQLite's
        lock polls it, sleeping up to 100 ms between tries); writes of other processes wait
        for each other through SQLite's busy timeout (``database.lock_wait_s``)."""
        self._engine.dispose(close=False)
        if self._writer is not None:
            self._writer.forget()
        self._write_lock = write_lock if write_lock is not None else threading.Lock()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------

    def create_run(self, info: RunInfo) -> None:
        """Store a new run (status Running). Refuses a name already taken, or one that breaks
        the run-name rules (``provenance.run_name_problem``)."""
        self._check_name(info)
        try:
            with self._write() as conn:
                conn.execute(self._runs.insert().values(**_run_row(info)))
        except IntegrityError as err:
            raise StoreError(
                f"a run named '{info.name}' already exists in {self.url}; choose another --name"
            ) from err

    def record(self, run_id: str, result: TrialResult) -> str:
        """Commit one graded result, on its own (the run's heartbeat keeps ``updated_at``);
        the JSON text stored (what ``load_run`` reads back)."""
        row = _result_row(run_id, result)
        if self._writer is None:
            with self._write() as conn:
                conn.execute(self._insert_result, row)
            return str(row["data"])
        values = self._writer.values(row)
        with self._write_lock:
            try:
                self._writer.insert(values)
            except IntegrityError:
                raise
            except SQLAlchemyError as err:
                raise StoreError(_fault_sentence(err, self.url, writing=True)) from err
        return str(row["data"])

    def replace_result(self, run_id: str, result: TrialResult) -> None:
        """Overwrite one stored result (``sqlbench judge`` adding judged metrics)."""
        row = _result_row(run_id, result)
        keys = ("run_id", "space", "name", "trial")
        table = self._results
        with self._write() as conn:
            conn.execute(
                table.update()
                .where(*(table.c[key] == row[key] for key in keys))
                .values({k: v for k, v in row.items() if k not in keys})
            )

    def judge_reply(self, key: str) -> str | None:
        """A cached judge reply for the call hashed as ``key``; None when not cached."""
        table = self._judge_cache
        with self._read() as conn:
            row = conn.execute(sa.select(table.c.reply).where(table.c.key == key)).first()
        return None if row is None else str(row.reply)

    def cache_judge_reply(self, key: str, reply: str) -> None:
        """Keep a judge reply for the call hashed as ``key`` (first one wins)."""
        table = self._judge_cache
        try:
            with self._write() as conn:
                conn.execute(table.insert().values(key=key, reply=reply, created_at=utc_now()))
        except IntegrityError:
            return  # another worker cached the same call first: same call, same reply

    def heartbeat(self, run_id: str) -> None:
        """Mark a Running run as alive now."""
        with self._write() as conn:
            conn.execute(
                self._runs.update()
                .where(self._runs.c.id == run_id, self._runs.c.status == RunStatus.RUNNING.value)
                .values(updated_at=utc_now())
            )

    def finish(self, run_id: str, status: RunStatus, *, error: str | None = None) -> None:
        """Set a run's final status (Completed, Interrupted or Failed), and carry to it, in the
        same transaction, the human decisions of earlier runs that still apply
        (``carry_reviews``)."""
        wanted = self._carry_wanted(run_id)
        now = utc_now()
        with self._write() as conn:
            conn.execute(
                self._runs.update()
                .where(self._runs.c.id == run_id)
                .values(
                    status=status.value,
                    updated_at=now,
                    finished_at=now,
                    error=secrets.scrub(error) if error else error,
                )
            )
            if wanted:
                self._carry(conn, run_id, *wanted)

    def save_review(self, run_id: str, space: str, name: str, review: HumanReview) -> None:
        """Store a person's decision on one question of a run, replacing an earlier one."""
        c = self._reviews.c
        with self._write() as conn:
            conn.execute(
                self._reviews.delete().where(c.run_id == run_id, c.space == space, c.name == name)
            )
            conn.execute(self._reviews.insert(), [_review_row(run_id, space, name, review)])

    def carry_reviews(self, run_id: str) -> int:
        """Copy to run ``run_id`` the newest decision of an earlier run (created before it) on
        each of its undecided questions, where the question's ground truth and the agent's SQL
        hash the same as when the person decided. Decisions are carried only from runs made
        here or imported with a checked signature (anyone can compute the hashes, so an
        unsigned import's decisions count in that run alone). Idempotent: a question decided
        meanwhile (the viewer, ``review``) keeps that decision. Returns how many were carried."""
        wanted = self._carry_wanted(run_id)
        if not wanted:
            return 0
        with self._write() as conn:
            return self._carry(conn, run_id, *wanted)

    def carried_reviews(self, run_id: str) -> dict[tuple[str, str], HumanReview]:
        """The decisions ``carry_reviews`` would carry to run ``run_id`` now, by ``(space,
        name)``, without storing them: what a run in progress will take for the questions it
        graded so far (the viewer shows them as the run goes)."""
        wanted = self._carry_wanted(run_id)
        if not wanted:
            return {}
        with self._read() as conn:
            return self._carried(conn, run_id, *wanted)

    def _carry_wanted(
        self, run_id: str
    ) -> tuple[RunInfo, dict[tuple[str, str], ReviewHashes]] | None:
        """The run and the review hashes of its questions, when an earlier run holds any
        decision (None: nothing could be carried, the results need not be read)."""
        info = self.find_run(run_id)
        c, runs = self._reviews.c, self._runs.c
        earlier = (
            self._reviews.join(self._runs, runs.id == c.run_id)
            .select()
            .with_only_columns(c.run_id)
            .where(runs.created_at < info.created_at, c.run_id != run_id)
            .limit(1)
        )
        with self._read() as conn:
            if conn.execute(earlier).first() is None:
                return None
        grouped: dict[tuple[str, str], list[TrialResult]] = {}
        for trial in self.trials(run_id):
            if trial.verdict is not Verdict.SKIPPED:
                grouped.setdefault((trial.space, trial.name), []).append(trial)
        wanted = {key: review_hashes(trials) for key, trials in grouped.items()}
        return (info, wanted) if wanted else None

    def _carry(
        self,
        conn: Connection,
        run_id: str,
        info: RunInfo,
        wanted: dict[tuple[str, str], ReviewHashes],
    ) -> int:
        """``carry_reviews`` inside the caller's write transaction: the run's own decisions
        are read in it, and each carried one is inserted unless the question was decided
        meanwhile (``_insert_ignoring_conflicts``), so carrying never fails the run."""
        carried = self._carried(conn, run_id, info, wanted)
        if carried:
            rows = [_review_row(run_id, s, n, review) for (s, n), review in carried.items()]
            conn.execute(_insert_ignoring_conflicts(self._reviews, conn.dialect.name), rows)
        return len(carried)

    def _carried(
        self,
        conn: Connection,
        run_id: str,
        info: RunInfo,
        wanted: dict[tuple[str, str], ReviewHashes],
    ) -> dict[tuple[str, str], HumanReview]:
        """The decisions to carry to run ``run_id``, read through ``conn``: the newest trusted
        one of an earlier run on each question the run has not decided, where the hashes
        match."""
        c, runs = self._reviews.c, self._runs.c
        own = {
            (row.space, row.name)
            for row in conn.execute(sa.select(c.space, c.name).where(c.run_id == run_id))
        }
        wanted = {key: hashes for key, hashes in wanted.items() if key not in own}
        if not wanted:
            return {}
        query = (
            sa.select(self._reviews, runs.name.label("run_name"), runs.data.label("run_data"))
            .select_from(self._reviews.join(self._runs, runs.id == c.run_id))
            .where(runs.created_at < info.created_at, c.run_id != run_id)
            .order_by(c.decided_at.desc())
        )
        carried: dict[tuple[str, str], HumanReview] = {}
        trusted: dict[str, bool] = {}
        for row in conn.execute(query):
            key = (row.space, row.name)
            hashes = wanted.get(key)
            if key in carried or hashes is None:
                continue
            if (row.truth_hash, row.sql_hash) != (hashes.truth, hashes.sql):
                continue
            if row.run_id not in trusted:
                trusted[row.run_id] = _carries_decisions(row.run_data)
            if not trusted[row.run_id]:
                continue
            try:
                review = HumanReview.model_validate_json(row.data)
            except ValueError:
                continue  # a damaged row is not carried; it never fails the run
            if review.imported is not None and "signed" not in review.imported:
                continue
            carried[key] = review.model_copy(
                update={"carried_from": review.carried_from or row.run_name}
            )
        return carried

    def reopen(self, run_id: str, *, host: str, pid: int) -> None:
        """Mark a run Running again in process ``pid`` (``--resume``), with its start time."""
        runs = self._runs
        with self._write() as conn:
            (data,) = conn.execute(sa.select(runs.c.data).where(runs.c.id == run_id)).one()
            try:
                record = json.loads(data)
            except ValueError as err:
                raise StoreError(
                    f"run {run_id} in {self.url} cannot be resumed: its stored record cannot "
                    "be read (corrupt)"
                ) from err
            record["pid_started"] = process_started(pid)
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(
                    status=RunStatus.RUNNING.value,
                    updated_at=utc_now(),
                    finished_at=None,
                    host=host,
                    pid=pid,
                    error=None,
                    data=json.dumps(record, ensure_ascii=False),
                )
            )

    def save_run(
        self,
        info: RunInfo,
        results: list[TrialResult],
        reviews: dict[tuple[str, str], HumanReview] | None = None,
    ) -> RunInfo:
        """Store a whole run at once (``sqlbench import``, ``sqlbench merge``), with its human
        decisions, in one transaction. Refuses a run id or name already present."""
        self._check_name(info)
        try:
            with self._write() as conn:
                conn.execute(self._runs.insert().values(**_run_row(info)))
                if results:
                    conn.execute(self._results.insert(), [_result_row(info.id, r) for r in results])
                if reviews:
                    conn.execute(
                        self._reviews.insert(),
                        [_review_row(info.id, s, n, r) for (s, n), r in reviews.items()],
                    )
        except IntegrityError as err:
            runs = self._runs
            with self._read() as conn:
                same_id = conn.execute(sa.select(runs.c.id).where(runs.c.id == info.id)).first()
            if same_id is not None:
                raise StoreError(
                    f"run '{info.name}' (id {info.id}) is already in {self.url}; "
                    "import it with --name NEW to keep a second copy"
                ) from err
            raise StoreError(
                f"a run named '{info.name}' already exists in {self.url}; choose another --name"
            ) from err
        return info

    # --- reading -------------------------------------------------------------------------

    def list_runs(
        self, *, limit: int | None = None, find_damaged: bool = False, automatic_only: bool = False
    ) -> list[RunSummary]:
        """Every run, newest first, with its effective status and counts so far. With
        ``find_damaged`` (``sqlbench runs``), a run with a stored result whose bytes are not
        UTF-8 reads Corrupt (``_unreadable_results``: one more pass over the results' bytes)."""
        r = self._results.c
        counted = self._counted()
        totals = (
            sa.select(
                r.run_id,
                sa.func.sum(sa.case((r.verdict == Verdict.PASS.value, 1), else_=0)).label("passed"),
                sa.func.sum(sa.case((counted, 1), else_=0)).label("total"),
                sa.func.count().label("graded"),
                sa.func.sum(r.cost_usd).label("cost_usd"),
                sa.func.count(r.cost_priced).label("costed"),
                sa.func.sum(sa.case((r.cost_priced.is_(False), 1), else_=0)).label("unpriced"),
            )
            .group_by(r.run_id)
            .subquery()
        )
        query = (
            sa.select(
                self._runs,
                totals.c.passed,
                totals.c.total,
                totals.c.graded,
                totals.c.cost_usd,
                totals.c.costed,
                totals.c.unpriced,
            )
            .select_from(self._runs.outerjoin(totals, totals.c.run_id == self._runs.c.id))
            .order_by(self._runs.c.created_at.desc(), self._runs.c.name.desc())
        )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).all()
            disputed = self._disputed_counts(conn, None if limit is None else [r.id for r in rows])
            decided = self._decided_counts(conn, disputed)
            unreadable = (
                self._unreadable_results(conn, None if limit is None else [r.id for r in rows])
                if find_damaged
                else {}
            )
        now = utc_now()
        summaries = []
        for row in rows:
            info = _run_info(row._mapping)
            damage = unreadable.get(info.id)
            if damage is not None and info.status is not RunStatus.CORRUPT:
                info = info.model_copy(update={"status": RunStatus.CORRUPT, "error": damage})
            human, passed_change = (0, 0) if automatic_only else decided.get(info.id, (0, 0))
            out = disputed.get(info.id, {})
            summaries.append(
                RunSummary(
                    info=info,
                    status=self.effective_status(info, now),
                    passed=int(row.passed or 0) + passed_change - sum(p for p, _ in out.values()),
                    total=int(row.total or 0) - sum(n for _, n in out.values()),
                    graded=int(row.graded or 0),
                    human=human,
                    disputed=sum(1 for _, n in out.values() if n),
                    cost_usd=(
                        round(float(row.cost_usd or 0.0), 10)
                        if int(row.costed or 0) and not int(row.unpriced or 0)
                        else None
                    ),
                )
            )
        return summaries

    def _counted(self) -> sa.ColumnElement[bool]:
        """Whether a result counts in accuracy: not skipped, and asked (``NOT_ASKED``)."""
        r = self._results.c
        not_asked = sa.and_(
            r.verdict == Verdict.ERROR.value, r.reason.startswith(NOT_ASKED, autoescape=True)
        )
        return sa.and_(r.verdict != Verdict.SKIPPED.value, sa.not_(not_asked))

    def _disputed_counts(
        self, conn: Connection, run_ids: Sequence[str] | None
    ) -> dict[str, dict[tuple[str, str], tuple[int, int]]]:
        """Per run (of ``run_ids``, or every run), the questions ``load_run`` leaves out of its
        accuracy: those whose ground truth, as the run graded it, a person disputes; each with
        its passing and counted trials, by ``(space, name)``. Reads only the results of
        questions some dispute names, and the stored record of one trial of each (the key it
        was graded against is hashed from it, ``records.hashes.trial_dispute_hash``): nothing
        when no dispute is stored, so the run list stays summed in SQL."""
        d = self._disputes.c
        keys = {
            (row.space, row.name, row.truth_hash)
            for row in conn.execute(sa.select(d.space, d.name, d.truth_hash))
        }
        if not keys or (run_ids is not None and not run_ids):
            return {}
        r = self._results.c
        query = (
            sa.select(
                r.run_id,
                r.space,
                r.name,
                r.data,
                sa.case((r.verdict == Verdict.PASS.value, 1), else_=0).label("passed"),
                sa.case((self._counted(), 1), else_=0).label("counted"),
            )
            .where(sa.exists().where(d.space == r.space, d.name == r.name))
            .order_by(r.run_id, r.space, r.name, r.trial)
        )
        if run_ids is not None:
            query = query.where(r.run_id.in_(run_ids))
        grouped: dict[tuple[str, str, str], list[Any]] = {}
        for row in conn.execute(query):
            grouped.setdefault((row.run_id, row.space, row.name), []).append(row)
        out: dict[str, dict[tuple[str, str], tuple[int, int]]] = {}
        for (run_id, space, name), trials in grouped.items():
            try:  # the first trial's key, as ``scores.gather`` reads it
                first = TrialResult.model_validate_json(trials[0].data)
            except ValueError:
                continue  # an unreadable result: ``show`` says so, the list counts it
            if (space, name, trial_dispute_hash(first)) not in keys:
                continue  # graded against another key: the dispute does not apply
            out.setdefault(run_id, {})[(space, name)] = (
                sum(int(t.passed) for t in trials),
                sum(int(t.counted) for t in trials),
            )
        return out

    def _unreadable_results(
        self, conn: Connection, run_ids: Sequence[str] | None
    ) -> dict[str, str]:
        """Per run (of ``run_ids``, or every run), the sentence saying which stored result
        holds bytes that are not UTF-8 (a damaged SQLite file): one pass over the results
        table's bytes in the database (``sqlbench_utf8``, ``database.create_store_engine``).
        JSON that does not parse is not looked for here (``json_valid`` over every result
        costs several times the listing, docs/performance.md): ``trials`` marks that run
        Corrupt the first time a command reads the row (``_mark_corrupt``)."""
        if conn.dialect.name != "sqlite" or (run_ids is not None and not run_ids):
            return {}
        r = self._results.c
        not_utf8 = getattr(sa.func, UTF8_CHECK)(sa.cast(r.data, sa.LargeBinary)) == 0
        query = (
            sa.select(r.run_id, r.space, r.name, r.trial)
            .where(not_utf8)
            .order_by(r.run_id, r.position, r.space, r.name, r.trial)
        )
        if run_ids is not None:
            query = query.where(r.run_id.in_(run_ids))
        found: dict[str, list[Any]] = {}
        for row in conn.execute(query):
            found.setdefault(row.run_id, []).append(row)
        return {
            run_id: _unreadable_sentence(rows, "bytes that are not UTF-8 text")
            for run_id, rows in found.items()
        }

    def _mark_corrupt(self, run_id: str, sentence: str) -> None:
        """Record that run ``run_id`` is Corrupt (``sentence`` says why), so that ``runs``
        lists it so from now on; a read-only store is left as it is (the caller's own
        sentence still says what is wrong)."""
        if self.read_only is not None:
            return
        runs = self._runs
        with self._write() as conn:
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(status=RunStatus.CORRUPT.value, error=sentence)
            )

    def _decided_counts(
        self,
        conn: Connection,
        disputed: dict[str, dict[tuple[str, str], tuple[int, int]]],
    ) -> dict[str, tuple[int, int]]:
        """Per run: how many questions a person decided, and how that changes the passed
        trials (a decision counts for every counted trial of its question); a question of
        ``disputed`` (``_disputed_counts``) is out of accuracy, its decision too."""
        r, v = self._results.c, self._reviews.c
        counted = r.verdict != Verdict.SKIPPED.value
        query = (
            sa.select(
                v.run_id,
                v.space,
                v.name,
                v.verdict,
                sa.func.sum(sa.case((r.verdict == Verdict.PASS.value, 1), else_=0)).label("auto"),
                sa.func.sum(sa.case((counted, 1), else_=0)).label("counted"),
            )
            .select_from(
                self._reviews.join(
                    self._results,
                    (r.run_id == v.run_id) & (r.space == v.space) & (r.name == v.name),
                )
            )
            .group_by(v.run_id, v.space, v.name, v.verdict)
        )
        out: dict[str, tuple[int, int]] = {}
        for row in conn.execute(query):
            if not row.counted or (row.space, row.name) in disputed.get(row.run_id, {}):
                continue
            human, change = out.get(row.run_id, (0, 0))
            decided = int(row.counted) if row.verdict == Verdict.PASS.value else 0
            out[row.run_id] = (human + 1, change + decided - int(row.auto or 0))
        return out

    def find_run(self, ref: str) -> RunInfo:
        """The run ``ref`` names: a run's name or id; ``latest`` (the newest run that asked
        anything: a run that failed before grading a question is skipped) or ``latest~N`` (N
        such runs before it); or the unique start of a name or id.

        Raises:
            StoreError: No run, or several, answer to ``ref`` (the message says which).
        """
        runs = self._runs
        with self._read() as conn:
            row = conn.execute(sa.select(runs).where(runs.c.name == ref)).first()
            if row is None:
                row = conn.execute(sa.select(runs).where(runs.c.id == ref)).first()
            if row is not None:
                return _run_info(row._mapping)
            newest = sa.select(runs).order_by(runs.c.created_at.desc(), runs.c.name.desc())
            back = _latest_offset(ref)
            if back is not None:
                # An offset past any store (``latest~99999999999999999999``) is never sent to
                # the database, whose integers it would overflow.
                asked = sa.or_(
                    runs.c.status != RunStatus.FAILED.value,
                    sa.exists().where(self._results.c.run_id == runs.c.id),
                )
                row = (
                    None
                    if back > _MAX_LATEST_BACK
                    else conn.execute(newest.where(asked).offset(back).limit(1)).first()
                )
                if row is None:
                    count = conn.execute(
                        sa.select(sa.func.count()).select_from(runs).where(asked)
                    ).scalar()
                    unasked = conn.execute(newest.limit(1)).first() if not count else None
                    if unasked is not None:
                        raise StoreError(
                            f"every run in {self.url} failed before asking a question, so "
                            f"'{ref}' names none; the newest, {unasked.name}, failed: "
                            f"{one_line(unasked.error or 'no reason recorded', 200)}"
                        )
                    raise StoreError(_too_far_back(ref, int(count or 0), self.url))
                return _run_info(row._mapping)
            found = conn.execute(
                newest.where(
                    sa.or_(
                        runs.c.name.startswith(ref, autoescape=True),
                        runs.c.id.startswith(ref, autoescape=True),
                    )
                )
            ).all()
            if len(found) == 1:
                return _run_info(found[0]._mapping)
            if found:
                listed = ", ".join(f"'{r.name}'" for r in found[:5])
                more = f" and {len(found) - 5} more" if len(found) > 5 else ""
                raise StoreError(
                    f"'{ref}' is the start of {len(found)} runs' names ({listed}{more}); "
                    "type more of the name"
                )
            names = [n for (n,) in conn.execute(sa.select(runs.c.name))]
        raise StoreError(_not_found(ref, names, self.url))

    def trials(self, run_id: str) -> list[TrialResult]:
        """Every stored result of a run, in the run's question order."""
        r = self._results.c
        with self._read() as conn:
            rows = conn.execute(
                sa.select(r.space, r.name, r.trial, r.data)
                .where(r.run_id == run_id)
                .order_by(r.position, r.space, r.name, r.trial)
            ).all()
        trials = []
        # Thousands of acyclic records: garbage collections during the loop would find nothing.
        with gcpolicy.paused():
            for row in rows:
                try:
                    if _undecodable(row.data):
                        raise ValueError("it holds bytes that are not UTF-8 text")
                    trials.append(TrialResult.model_validate_json(row.data))
                except ValueError as err:
                    why = _unreadable_why(row.data, err)
                    self._mark_corrupt(run_id, _unreadable_sentence([row], why))
                    raise StoreError(
                        f"a stored result of run {run_id} in {self.url} cannot be read (corrupt: "
                        f"{one_line(str(err), 120)}); the store's other runs are fine"
                    ) from err
        return trials

    def done_keys(self, run_id: str) -> set[tuple[str, str, int]]:
        """``(space, name, trial)`` of every result already stored for a run."""
        r = self._results.c
        with self._read() as conn:
            rows = conn.execute(sa.select(r.space, r.name, r.trial).where(r.run_id == run_id)).all()
        return {(row.space, row.name, row.trial) for row in rows}

    def forget_not_asked(self, run_id: str) -> set[tuple[str, str, int]]:
        """Delete a run's results that were not asked (``error_kind: unreachable``: the agent's
        endpoint could not be reached), so that ``--resume`` asks exactly those again; their
        ``(space, name, trial)``."""
        keys = {(t.space, t.name, t.trial) for t in self.trials(run_id) if t.not_asked}
        r = self._results.c
        with self._write() as conn:
            for space, name, trial in sorted(keys):
                conn.execute(
                    self._results.delete().where(
                        r.run_id == run_id, r.space == space, r.name == name, r.trial == trial
                    )
                )
        return keys

    def reviews(self, run_id: str) -> dict[tuple[str, str], HumanReview]:
        """A run's human decisions (its own and those carried to it), by ``(space, name)``."""
        c = self._reviews.c
        with self._read() as conn:
            rows = conn.execute(sa.select(c.space, c.name, c.data).where(c.run_id == run_id)).all()
        return {(row.space, row.name): HumanReview.model_validate_json(row.data) for row in rows}

    def save_dispute(self, dispute: Dispute) -> None:
        """Store a dispute of a ground truth (replacing one on the same question and key)."""
        c = self._disputes.c
        with self._write() as conn:
            conn.execute(
                self._disputes.delete().where(
                    c.space == dispute.space,
                    c.name == dispute.name,
                    c.truth_hash == dispute.truth_hash,
                )
            )
            conn.execute(
                self._disputes.insert(),
                [
                    {
                        "space": dispute.space,
                        "name": dispute.name,
                        "truth_hash": dispute.truth_hash,
                        "disputed_at": dispute.disputed_at,
                        "data": dispute.model_dump_json(),
                    }
                ],
            )

    def disputes(self) -> list[Dispute]:
        """Every stored dispute, oldest first."""
        c = self._disputes.c
        with self._read() as conn:
            rows = conn.execute(sa.select(c.data).order_by(c.disputed_at)).all()
        return [Dispute.model_validate_json(row.data) for row in rows]

    def load_run(self, ref: str, *, automatic_only: bool = False) -> RunResult:
        """A run with its results grouped per question, its human decisions, the disputes of
        the ground truths it was graded against, and its accuracy (``automatic_only``: without
        the decisions, the machine's verdicts alone; disputed questions stay left out)."""
        with gcpolicy.paused():  # thousands of acyclic records: collections would find nothing
            info = self.find_run(ref)
            reviews = {} if automatic_only else self.reviews(info.id)
            return gather(
                info,
                self.effective_status(info),
                self.trials(info.id),
                reviews,
                disputed_keys(self.disputes()),
            )

    def find_completed_run(
        self,
        identity: RunIdentity,
        *,
        repeat: int | None = 1,
        agent_name: str | None = None,
        include_imported: bool = True,
    ) -> RunInfo | None:
        """The newest Completed run with this identity (and ``repeat``, unless None), or None.
        A run whose project version is unknown (outside git) never matches; an imported run
        only with ``include_imported`` (``check`` never takes its head side from one)."""
        if not identity.reusable:
            return None
        c = self._runs.c
        query = (
            sa.select(self._runs)
            .where(
                c.status == RunStatus.COMPLETED.value,
                c.question_set_hash == identity.question_set_hash,
                c.agent_settings_hash == identity.agent_settings_hash,
                c.sqlbench_version == identity.sqlbench_version,
                c.compare_hash == identity.compare_hash,
                c.warehouse_hash == identity.warehouse_hash,
            )
            .order_by(c.created_at.desc())
        )
        if repeat is not None:
            query = query.where(c.repeat == repeat)
        if agent_name is not None:
            query = query.where(c.agent_name == agent_name)
        with self._read() as conn:
            rows = conn.execute(query).all()
        for row in rows:
            info = _run_info(row._mapping)
            if info.imported and not include_imported:
                continue
            if identity_of(info) == identity and info.shard is None:
                return info
        return None

    def find_stopped_run(
        self, identity: RunIdentity, *, repeat: int, agent_name: str
    ) -> RunInfo | None:
        """The newest run with this identity, ``repeat`` and agent that stopped before it
        finished (Interrupted, or Running with its process gone: killed), never an imported
        or sharded one; None when there is none. ``check`` resumes it rather than start over."""
        if not identity.reusable:
            return None
        c = self._runs.c
        query = (
            sa.select(self._runs)
            .where(
                c.status.in_([RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value]),
                c.question_set_hash == identity.question_set_hash,
                c.agent_settings_hash == identity.agent_settings_hash,
                c.repeat == repeat,
                c.agent_name == agent_name,
            )
            .order_by(c.created_at.desc())
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        now = utc_now()
        for row in rows:
            info = _run_info(row._mapping)
            if info.imported or info.shard is not None or identity_of(info) != identity:
                continue
            if self.effective_status(info, now) is RunStatus.INTERRUPTED:
                return info
        return None

    def effective_status(self, info: RunInfo, now: datetime | None = None) -> RunStatus:
        """A Running run whose process is gone (dead pid on this host, imported, or a heartbeat
        older than ``stale_after``) reads Interrupted."""
        if info.status is not RunStatus.RUNNING:
            return info.status
        if info.imported or process_alive(info.host, info.pid, info.pid_started) is False:
            return RunStatus.INTERRUPTED
        if (now or utc_now()) - info.updated_at > self.stale_after:
            return RunStatus.INTERRUPTED
        return RunStatus.RUNNING

    # --- removing runs -------------------------------------------------------------------

    def delete_runs(self, infos: Sequence[RunInfo]) -> None:
        """Remove runs with their results and human decisions, in one transaction.

        Raises:
            StoreError: One of them is Running (its process is alive): nothing is removed.
        """
        now = utc_now()
        running = [i.name for i in infos if self.effective_status(i, now) is RunStatus.RUNNING]
        if running:
            raise StoreError(
                f"run {running[0]!r} is running; stop it (Ctrl-C) before removing it"
                + (f" ({len(running) - 1} more running)" if len(running) > 1 else "")
            )
        ids = [i.id for i in infos]
        if not ids:
            return
        with self._write() as conn:
            conn.execute(self._reviews.delete().where(self._reviews.c.run_id.in_(ids)))
            conn.execute(self._results.delete().where(self._results.c.run_id.in_(ids)))
            conn.execute(self._runs.delete().where(self._runs.c.id.in_(ids)))

    def prune_candidates(
        self,
        *,
        statuses: Collection[RunStatus] = (),
        older_than: timedelta | None = None,
        keep_last: int | None = None,
    ) -> list[RunInfo]:
        """The runs a prune would remove: any whose effective status is in ``statuses``, any
        last updated more than ``older_than`` ago, and any beyond the newest ``keep_last``.
        Running runs are never candidates.

        Args:
            statuses: Failed, Interrupted, ... runs to remove.
            older_than: Remove runs not updated for this long.
            keep_last: Keep only this many newest runs (by creation).
        """
        now = utc_now()
        picked: list[RunInfo] = []
        for position, summary in enumerate(self.list_runs()):
            info = summary.info
            if summary.status is RunStatus.RUNNING:
                continue
            if (
                summary.status in statuses
                or (older_than is not None and now - info.updated_at > older_than)
                or (keep_last is not None and position >= keep_last)
            ):
                picked.append(info)
        return picked

    # --- moving runs between stores ------------------------------------------------------

    def export_run(self, ref: str) -> dict[str, Any]:
        """A run and all its results as a JSON-able dict (``sqlbench export``)."""
        with gcpolicy.paused():  # thousands of acyclic records: collections would find nothing
            return self._export(self.find_run(ref))

    def _export(self, info: RunInfo) -> dict[str, Any]:
        info = info.model_copy(update={"status": self.effective_status(info)})
        return {
            "format": EXPORT_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "run": info.model_dump(mode="json"),
            "results": [t.model_dump(mode="json") for t in self.trials(info.id)],
            "reviews": [
                {"space": space, "name": name, **review.model_dump(mode="json")}
                for (space, name), review in self.reviews(info.id).items()
            ],
        }

    def _check_name(self, info: RunInfo) -> None:
        """Run names are printable, 1-200 characters, and never another run's id."""
        problem = run_name_problem(info.name)
        if problem is not None:
            raise StoreError(problem)
        runs = self._runs
        with self._read() as conn:
            clash = conn.execute(
                sa.select(runs.c.name).where(runs.c.id == info.name, runs.c.id != info.id)
            ).first()
        if clash is not None:
            raise StoreError(
                f"the name '{info.name}' is the id of run '{clash[0]}'; a run name is never "
                "another run's id: choose another --name"
            )

    def import_run(
        self, data: dict[str, Any], *, name: str | None = None, origin: ImportOrigin | None = None
    ) -> RunInfo:
        """Store a run exported by ``export_run`` (maybe from another store), as imported,
        with its ``origin``. Every field is checked first (``provenance.record_problems``; text
        made valid Unicode): a value no store can hold is one sentence, nothing is stored."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise StoreError(f'not a sqlbench run export (expected "format": "{EXPORT_FORMAT}")')
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise StoreError(
                f"the run export is malformed: schema_version must be a number (got {version!r})"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"this run export has schema version {version}; this sqlbench "
                f"reads up to {SCHEMA_VERSION}: upgrade sqlbench"
            )
        run_data, items = data.get("run"), data.get("results")
        if not isinstance(run_data, dict) or not isinstance(items, list):
            raise StoreError(
                "the run export is malformed: it needs a `run` object and a `results` list"
            )
        run_data, _ = clean_data(run_data)
        items, _ = clean_data(items)
        run_data.pop("origin", None)  # set here, from the file actually read, never taken
        problems = record_problems(run_data, "run") + record_problems(items, "results")
        problems += meaning_problems(run_data, items)
        run_id = run_data.get("id")
        if not (isinstance(run_id, str) and re.fullmatch(r"[0-9a-f]{32}", run_id)):
            problems.append(f"run.id: {str(run_id)[:40]!r} is not a run id (32 hex characters)")
        for index, item in enumerate(items):
            for field in ("space", "name"):
                value = item.get(field) if isinstance(item, dict) else None
                if isinstance(value, str) and len(value) > MAX_NAME_CHARS:
                    problems.append(
                        f"results[{index}].{field}: {len(value)} characters, over the "
                        f"{MAX_NAME_CHARS} a store holds"
                    )
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise StoreError("the run export is malformed: " + "; ".join(problems[:3]) + more)
        info = _validated(RunInfo, run_data, "run")
        results = [_validated(TrialResult, item, f"results[{i}]") for i, item in enumerate(items)]
        seen: set[tuple[str, str, int]] = set()
        for result in results:
            key = (result.space, result.name, result.trial)
            if key in seen:
                raise StoreError(
                    f"the run export is malformed: it holds {result.space}/{result.name} "
                    f"trial {result.trial} twice"
                )
            seen.add(key)
        reviews = _imported_reviews(data.get("reviews", []), seen)
        # Decisions in an imported run count in that run alone, labelled so; they are carried
        # to later runs only from a signed import (``carry_reviews``).
        label = origin.label if origin is not None else "imported"
        reviews = {key: r.model_copy(update={"imported": label}) for key, r in reviews.items()}
        update: dict[str, Any] = {"imported": True, "origin": origin}
        if name is not None:
            update["name"] = name
            if self._has_id(info.id):
                # A second copy under a new name (as `import --name` promises): its own id.
                update["id"] = uuid.uuid4().hex
        return self.save_run(info.model_copy(update=update), results, reviews)

    def _has_id(self, run_id: str) -> bool:
        runs = self._runs
        with self._read() as conn:
            return conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is not None

    # --- plumbing ------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        if self.read_only is not None:
            raise StoreError(
                f"the run store {self.url} is read-only ({self.read_only}); this command "
                "writes to it: give sqlbench write access, or set `store:` in sqlbench.yml "
                "to a writable place"
            )
        try:
            with self._write_lock, self._engine.connect() as conn:
                conn = conn.execution_options(sqlite_begin="IMMEDIATE")
                with conn.begin():
                    yield conn
        except IntegrityError:
            raise
        except SQLAlchemyError as err:
            raise StoreError(_fault_sentence(err, self.url, writing=True)) from err

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._engine.connect() as conn, conn.begin():
                yield conn
        except SQLAlchemyError as err:
            raise StoreError(_fault_sentence(err, self.url, writing=False)) from err


class _ResultWriter:
    """``RunStore.record`` on a writable SQLite file store: the results table's INSERT,
    compiled once, run through one DBAPI connection of this process (``database.open_writer``)
    in a transaction of its own (``BEGIN IMMEDIATE`` ... ``COMMIT``, as ``RunStore._write``
    takes), without SQLAlchemy's connect, begin and execution machinery around each row
    (docs/performance.md, "The run loop"). Stores the same values as
    ``conn.execute(insert, row)`` does: each column's bind processor is SQLAlchemy's own.

    Not thread-safe: the caller holds ``RunStore._write_lock``. Fork-safe: the connection
    belongs to the process that opened it; another process (a ``fork`` child) opens its
    own, and never uses nor closes the one it inherited (SQLite forbids both).
    """

    def __init__(self, engine: sa.Engine, insert: sa.Insert) -> None:
        compiled = insert.compile(dialect=engine.dialect)
        self._engine = engine
        self._sql = compiled.string
        columns = insert.table.c
        self._columns: tuple[str, ...] = tuple(compiled.positiontup or ())
        self._processors = [
            (i, processor)
            for i, name in enumerate(self._columns)
            if (
                processor := columns[name]
                .type.dialect_impl(engine.dialect)
                .bind_processor(engine.dialect)
            )
            is not None
        ]
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def values(self, row: dict[str, Any]) -> list[Any]:
        """The parameters of ``row`` in the INSERT's order, as SQLAlchemy would bind them."""
        values = [row[name] for name in self._columns]
        try:
            for i, processor in self._processors:
                values[i] = processor(values[i])
        except Exception as err:
            # What SQLAlchemy raises for a value its bind processor refuses.
            raise sa.exc.DBAPIError.instance(
                self._sql, row, err, sqlite3.Error, dialect=self._engine.dialect
            ) from err
        return values

    def insert(self, values: list[Any]) -> None:
        """Commit one row. A database error raises as SQLAlchemy raises it (``IntegrityError``,
        ``OperationalError``...); another exception (a value SQLite cannot bind) as it is."""
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(self._sql, values)
                conn.execute("COMMIT")
            except BaseException:
                # The error that interrupted the transaction is the one to report.
                with contextlib.suppress(sqlite3.Error):
                    conn.rollback()
                raise
        except sqlite3.Error as err:
            raise sa.exc.DBAPIError.instance(
                self._sql, values, err, sqlite3.Error, dialect=self._engine.dialect
            ) from err

    def _connection(self) -> sqlite3.Connection:
        self.forget()
        if self._conn is None:
            try:
                self._conn = open_writer(self._engine)
            except sqlite3.Error as err:
                raise sa.exc.DBAPIError.instance(
                    None, None, err, sqlite3.Error, dialect=self._engine.dialect
                ) from err
            self._pid = os.getpid()
        return self._conn

    def forget(self) -> None:
        """Drop a connection another process opened (this is a ``fork`` child of it) without
        touching it: the next insert opens this process's own."""
        if self._conn is not None and self._pid != os.getpid():
            _INHERITED.append(self._conn)
            self._conn = None

    def close(self) -> None:
        """Close this process's connection (a later insert opens another)."""
        self.forget()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


_INHERITED: list[sqlite3.Connection] = []
"""Writer connections a ``fork`` child inherited: kept referenced so that the child never
closes them (closing touches the parent's locks and write-ahead log)."""


def _scrubbed(model: _Model) -> _Model:
    """``model`` with every secret redacted (``sqlbench.secrets``): nothing resolved reaches
    the store, whatever an agent, a driver or an HTTP reply put into a reason or a trace; and
    every string is valid Unicode (lone surrogates and NUL replaced, ``sqlbench.hygiene``)."""
    return _scrubbed_json(model)[0]


def _scrubbed_json(model: _Model) -> tuple[_Model, str]:
    """``_scrubbed(model)`` and its JSON text (made once: a result is written as it)."""
    try:
        text = model.model_dump_json()
        if secrets.scrub(text) == text and "\\u0000" not in text:
            return model, text
    except ValueError:  # a lone surrogate: not encodable
        pass
    data, _ = clean_data(secrets.scrub_data(model.model_dump(mode="json")))
    clean = type(model).model_validate(data)
    return clean, clean.model_dump_json()


def _refuse_empty_file(url: str) -> None:
    """A zero-byte SQLite store file is a truncated store, not an empty one: say so rather than
    start a new store over it."""
    path = sqlite_path(url)
    if path is None:
        return
    try:
        stat = path.stat()
    except OSError:
        return
    # A second old: another process may have just created it and be writing the schema.
    if path.is_file() and stat.st_size == 0 and time.time() - stat.st_mtime > 5:
        raise StoreError(
            f"the run store file {path} is empty (0 bytes): it was truncated; restore it from "
            "a backup, or delete it to start a new store"
        )


def _fault_sentence(err: BaseException, url: str, *, writing: bool, opening: bool = False) -> str:
    """One sentence for a store fault (full disk, read-only, locked, damaged file); results
    already graded are committed one by one, so they are kept."""
    text = str(getattr(err, "orig", None) or err).lower()
    kept = " (results graded so far are kept)" if writing else ""
    if "disk is full" in text or "no space left" in text or "disk i/o error" in text:
        return f"the disk holding the run store {url} is full or failing; free space{kept}"
    if "readonly" in text or "read-only" in text or "read only" in text:
        return f"the run store {url} is read-only; sqlbench cannot write to it{kept}"
    if "locked" in text or "busy" in text:
        return (
            f"the run store {url} stayed locked by another process for over "
            f"{_seconds(lock_wait_s())}; try again when that process is done{kept}"
        )
    if "malformed" in text or "not a database" in text or "decode" in text:
        return f"the run store {url} is damaged ({_first_line(err)}); restore it from a backup"
    if opening:
        return f"cannot open the run store at {url}: {_first_line(err)}"
    return f"the run store {url} failed: {_first_line(err)}{kept}"


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _run_row(info: RunInfo) -> dict[str, Any]:
    info = _scrubbed(info)
    return {
        "id": info.id,
        "name": info.name,
        "status": info.status.value,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "finished_at": info.finished_at,
        "created_by": info.created_by,
        "host": info.host,
        "pid": info.pid,
        "branch": info.branch,
        "commit_sha": info.commit,
        "dirty": info.dirty,
        "working_tree_hash": info.working_tree_hash,
        "environment": info.environment,
        "question_set_hash": info.question_set_hash,
        "agent_name": info.agent_name,
        "agent_kind": info.agent_kind,
        "agent_settings_hash": info.agent_settings_hash,
        "sqlbench_version": info.sqlbench_version,
        "compare_hash": info.compare_hash,
        "repeat": info.repeat,
        "warehouse_hash": info.warehouse_hash,
        "error": info.error,
        "data": info.model_dump_json(),
    }


def _run_info(row: Any) -> RunInfo:
    """The run a row holds; a row that cannot be read (JSON that does not parse, a record that
    does not validate, bytes that are not UTF-8) gives a ``Corrupt`` run that says why, so every
    other run still lists, shows and compares."""
    try:
        undecodable = [key for key, value in row.items() if _undecodable(value)]
        if undecodable:
            raise ValueError(f"column {undecodable[0]} holds bytes that are not UTF-8 text")
        data = json.loads(row["data"])
        for column in _LIVE_COLUMNS:
            value = row[column]
            data[column] = value.isoformat() if isinstance(value, datetime) else value
        return RunInfo.model_validate(data)
    except (ValueError, TypeError, KeyError) as err:
        return _corrupt_run(row, err)


def _undecodable(value: Any) -> bool:
    """Whether a value read from the store held bytes that are not UTF-8 (read as lone
    surrogates, ``database._text_or_surrogates``; the store never writes one)."""
    return isinstance(value, str) and not value.isascii() and _SURROGATE.search(value) is not None


def _unreadable_why(data: Any, err: ValueError) -> str:
    """What is wrong with a stored result that ``TrialResult`` refused with ``err``."""
    if _undecodable(data):
        return "bytes that are not UTF-8 text"
    if isinstance(err, ValidationError) and err.errors()[0]["type"] == "json_invalid":
        return "JSON that does not parse"
    return "a record that does not validate"


def _unreadable_sentence(rows: Sequence[Any], why: str) -> str:
    """Why a run whose stored results ``rows`` cannot be read is Corrupt (the first one named)."""
    first = rows[0]
    where = valid_text(f"{first.space}/{first.name}")[0]
    if first.trial:  # counted from 1 for people; a run of one trial names none
        where += f" (trial {first.trial + 1})"
    more = f" (and {len(rows) - 1} more)" if len(rows) > 1 else ""
    return (
        f"its stored result of question {where} cannot be read ({why})"
        f"{more}; `show` and `compare` of this run stop there; the store's other runs are fine"
    )


def _corrupt_run(row: Any, err: BaseException) -> RunInfo:
    def text(column: str, default: str = "?") -> str:
        value = row.get(column) if hasattr(row, "get") else None
        return valid_text(value)[0] if isinstance(value, str) and value else default

    def when(column: str) -> datetime:
        value = row.get(column) if hasattr(row, "get") else None
        return value if isinstance(value, datetime) else utc_now()

    detail = one_line(valid_text(str(err))[0], 120) or type(err).__name__
    return RunInfo(
        id=text("id"),
        name=text("name", text("id")),
        status=RunStatus.CORRUPT,
        created_at=when("created_at"),
        updated_at=when("updated_at"),
        created_by=text("created_by"),
        branch=text("branch"),
        environment=text("environment"),
        question_set_hash="",
        question_count=0,
        agent_name=text("agent_name"),
        agent_kind=text("agent_kind"),
        agent_settings_hash="",
        sqlbench_version=text("sqlbench_version"),
        compare_hash="",
        error=f"its stored record cannot be read ({detail}); the store's other runs are fine",
    )


def _result_row(run_id: str, result: TrialResult) -> dict[str, Any]:
    result, data = _scrubbed_json(result)
    return {
        "run_id": run_id,
        "space": result.space,
        "name": result.name,
        "trial": result.trial,
        "position": result.position,
        "verdict": result.verdict.value,
        "reason": result.reason,
        "latency_ms": result.latency_ms,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cost_usd": result.cost.usd if result.cost is not None else None,
        "cost_priced": (result.cost.usd is not None) if result.cost is not None else None,
        "graded_at": result.graded_at,
        "data": data,
    }


_SURROGATE = re.compile("[\ud800-\udfff]")
_LATEST = re.compile(r"latest(?:~(\d+))?")
_MAX_LATEST_BACK = 2**31 - 1


def _latest_offset(ref: str) -> int | None:
    """How many runs back from the newest ``ref`` points (``latest`` 0, ``latest~2`` 2), or
    None when ``ref`` is not of that form."""
    match = _LATEST.fullmatch(ref)
    if match is None:
        return None
    digits = match.group(1) or "0"
    return _MAX_LATEST_BACK + 1 if len(digits) > 10 else int(digits)


def _too_far_back(ref: str, count: int, url: str) -> str:
    if count == 0:
        return f"there is no run yet in {url}, so '{ref}' names none; `sqlbench run` makes one"
    runs = "run" if count == 1 else "runs"
    return (
        f"'{ref}' goes back past the oldest run: {url} holds {count} {runs} "
        f"(latest to latest~{count - 1})"
    )


def _review_row(run_id: str, space: str, name: str, review: HumanReview) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "space": space,
        "name": name,
        "verdict": review.verdict.value,
        "truth_hash": review.truth_hash,
        "sql_hash": review.sql_hash,
        "decided_at": review.decided_at,
        "carried": review.carried_from is not None,
        "data": review.model_dump_json(),
    }


def _carries_decisions(run_data: str | None) -> bool:
    """Whether decisions stored on a run may be carried to later runs: it was made in this
    store, or imported from a file whose signature was checked."""
    try:
        record = json.loads(run_data or "{}")
    except ValueError:
        return False
    if not isinstance(record, dict):
        return False
    if not record.get("imported"):
        return True
    origin = record.get("origin")
    return isinstance(origin, dict) and origin.get("signed") is True


def _insert_ignoring_conflicts(table: sa.Table, dialect: str) -> Any:
    """An INSERT that skips a row whose key is taken (a decision stored meanwhile wins)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    if dialect in ("mysql", "mariadb"):
        return table.insert().prefix_with("IGNORE")
    return table.insert().prefix_with("OR IGNORE", dialect="sqlite")


def _imported_reviews(
    items: Any, questions: set[tuple[str, str, int]]
) -> dict[tuple[str, str], HumanReview]:
    """The ``reviews`` of a run export, each on a question the export holds."""
    if not isinstance(items, list):
        raise StoreError("the run export is malformed: `reviews` must be a list")
    names = {(space, name) for space, name, _ in questions}
    reviews: dict[tuple[str, str], HumanReview] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise StoreError(f"the run export is malformed: reviews[{i}] must be an object")
        fields = dict(item)
        key = (fields.pop("space", None), fields.pop("name", None))
        if key not in names:
            raise StoreError(
                f"the run export is malformed: reviews[{i}] names a question the run does not "
                f"hold ({key[0]}/{key[1]})"
            )
        review = _validated(HumanReview, fields, f"reviews[{i}]")
        if review.verdict not in (Verdict.PASS, Verdict.FAIL):
            raise StoreError(
                f"the run export is malformed: reviews[{i}].verdict must be pass or fail"
            )
        reviews[(str(key[0]), str(key[1]))] = review
    return reviews


def _not_found(ref: str, names: list[str], url: str) -> str:
    hint = suggest(ref, names, otherwise="; `sqlbench runs` lists the runs")
    return f"no run named {ref!r} in {url}{hint}"


def _validated(model: type[_Model], data: Any, where: str) -> _Model:
    """``model`` validated from ``data``; a malformed export says which field is wrong."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]
        )
        raise StoreError(f"the run export is malformed: {where}{field}: {first['msg']}") from err


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
