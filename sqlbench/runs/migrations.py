"""The run store's schema and its migrations: an ordered list of named functions, each applied
once per store (recorded in ``sqlbench_migrations``); ``SCHEMA_VERSION`` is how many there are.

To change the stored schema: freeze the current table definitions inside a new migration's
function, append it to ``MIGRATIONS``, and update ``current_tables``. A store that has a
migration this sqlbench does not know was written by a newer sqlbench and is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Connection, Dialect, Engine

from sqlbench.errors import StoreError

MIGRATIONS_TABLE = "sqlbench_migrations"
RUNS_TABLE = "sqlbench_runs"
RESULTS_TABLE = "sqlbench_results"
REVIEWS_TABLE = "sqlbench_reviews"
JUDGE_CACHE_TABLE = "sqlbench_judge_cache"
# A constant key for PostgreSQL's advisory lock, so two processes never migrate at once.
_PG_LOCK_KEY = 7_310_426_118


class UtcDateTime(sa.types.TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every database (SQLite keeps naive UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("the run store only takes timezone-aware timestamps")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name in ("sqlite", "mysql") else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)


def _long_text() -> sa.types.TypeEngine[str]:
    return sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def current_tables(metadata: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    """The runs and results tables as the latest migration leaves them."""
    return _tables(metadata, SCHEMA_VERSION)


def _tables(metadata: sa.MetaData, version: int) -> tuple[sa.Table, sa.Table]:
    """The tables as migration number ``version`` leaves them (earlier ones stay frozen)."""
    later: list[sa.Column[Any]] = []
    if version >= 4:
        later.append(sa.Column("warehouse_hash", sa.String(64), nullable=True))
    runs = sa.Table(
        RUNS_TABLE,
        metadata,
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("finished_at", UtcDateTime(), nullable=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("branch", sa.String(255), nullable=False),
        sa.Column("commit_sha", sa.String(64), nullable=True),
        sa.Column("dirty", sa.Boolean(), nullable=False),
        sa.Column("working_tree_hash", sa.String(64), nullable=True),
        sa.Column("environment", sa.String(20), nullable=False),
        sa.Column("question_set_hash", sa.String(64), nullable=False),
        sa.Column("agent_name", sa.String(200), nullable=False),
        sa.Column("agent_kind", sa.String(50), nullable=False),
        sa.Column("agent_settings_hash", sa.String(64), nullable=False),
        sa.Column("sqlbench_version", sa.String(50), nullable=False),
        sa.Column("compare_hash", sa.String(64), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("data", _long_text(), nullable=False),
        *later,
        sa.Index("ix_sqlbench_runs_identity", "question_set_hash", "agent_settings_hash"),
    )
    results = sa.Table(
        RESULTS_TABLE,
        metadata,
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey(f"{RUNS_TABLE}.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("space", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("trial", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("graded_at", UtcDateTime(), nullable=False),
        sa.Column("data", _long_text(), nullable=False),
    )
    return runs, results


def reviews_table(metadata: sa.MetaData) -> sa.Table:
    """Human decisions (``sqlbench review``): one per question of a run, beside its results."""
    return sa.Table(
        REVIEWS_TABLE,
        metadata,
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey(f"{RUNS_TABLE}.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("space", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("truth_hash", sa.String(64), nullable=False),
        sa.Column("sql_hash", sa.String(64), nullable=False),
        sa.Column("decided_at", UtcDateTime(), nullable=False),
        sa.Column("carried", sa.Boolean(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Index("ix_sqlbench_reviews_question", "space", "name"),
    )


def _m0001_create_runs_and_results(conn: Connection) -> None:
    metadata = sa.MetaData()
    _tables(metadata, 1)
    metadata.create_all(conn)


def _m0002_create_reviews(conn: Connection) -> None:
    # Frozen here when the reviews table next changes. The runs table is declared alongside
    # only so the foreign key resolves; it already exists.
    metadata = sa.MetaData()
    current_tables(metadata)
    reviews_table(metadata).create(conn)


def judge_cache_table(metadata: sa.MetaData) -> sa.Table:
    """Judge replies by the hash of the call that produced them (docs/agent-behaviour.md)."""
    return sa.Table(
        JUDGE_CACHE_TABLE,
        metadata,
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("reply", _long_text(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
    )


def _m0003_create_judge_cache(conn: Connection) -> None:
    metadata = sa.MetaData()
    judge_cache_table(metadata)
    metadata.create_all(conn)


def _m0004_add_warehouse_hash(conn: Connection) -> None:
    # Runs stored before this have no warehouse in their identity: their column stays NULL
    # (their JSON has no warehouse_hash), so they are never reused for a comparison; a run made
    # against another database must not stand in for this one.
    column = sa.Column("warehouse_hash", sa.String(64), nullable=True)
    kind = column.type.compile(dialect=conn.dialect)
    conn.execute(sa.text(f"ALTER TABLE {RUNS_TABLE} ADD COLUMN warehouse_hash {kind}"))


class Migration(NamedTuple):
    """One named step of the schema's history."""

    name: str
    apply: Callable[[Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_create_runs_and_results", _m0001_create_runs_and_results),
    Migration("0002_create_reviews", _m0002_create_reviews),
    Migration("0003_create_judge_cache", _m0003_create_judge_cache),
    Migration("0004_add_warehouse_hash", _m0004_add_warehouse_hash),
)
SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this sqlbench writes: the number of migrations it knows."""


def _migrations_table(metadata: sa.MetaData) -> sa.Table:
    return sa.Table(
        MIGRATIONS_TABLE,
        metadata,
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("applied_at", UtcDateTime(), nullable=False),
    )


def applied_migrations(engine: Engine) -> list[str]:
    """Names of the migrations a store has had, in the order they were applied."""
    table = _migrations_table(sa.MetaData())
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(MIGRATIONS_TABLE):
            return []
        rows = conn.execute(sa.select(table.c.name).order_by(table.c.position)).all()
    return [row.name for row in rows]


def migrate(engine: Engine, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations a store has not had yet, in order, each in its own transaction
    under a lock (so two processes opening a new store at once do not race). Returns the names
    applied now. Refuses a store written by a newer sqlbench."""
    known = [m.name for m in migrations]
    if set(applied_migrations(engine)) == set(known):
        # Nothing to apply: no write lock is taken, so opening a store never waits for a
        # writer (a running run). Unknown (newer) migrations are refused below.
        return []
    table = _migrations_table(sa.MetaData())
    applied_now: list[str] = []
    with engine.connect() as conn:
        conn = conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():
            _lock(conn)
            table.create(conn, checkfirst=True)
            done = [row.name for row in conn.execute(sa.select(table.c.name))]
            unknown = sorted(set(done) - set(known))
            if unknown:
                raise StoreError(
                    f"the run store at {_safe_url(engine)} has schema changes this sqlbench does "
                    f"not know ({', '.join(unknown)}): it was written by a newer sqlbench; "
                    "upgrade sqlbench to read it"
                )
            for position, migration in enumerate(migrations):
                if migration.name in done:
                    continue
                migration.apply(conn)
                conn.execute(
                    table.insert().values(
                        name=migration.name, position=position, applied_at=datetime.now(UTC)
                    )
                )
                applied_now.append(migration.name)
    return applied_now


def require_current(engine: Engine, why_read_only: str) -> None:
    """For a store sqlbench may only read: refuse one that lacks a migration (it would have
    to be written to upgrade) or has one this sqlbench does not know (newer)."""
    known = [m.name for m in MIGRATIONS]
    done = applied_migrations(engine)
    unknown = sorted(set(done) - set(known))
    if unknown:
        raise StoreError(
            f"the run store at {_safe_url(engine)} has schema changes this sqlbench does "
            f"not know ({', '.join(unknown)}): it was written by a newer sqlbench; "
            "upgrade sqlbench to read it"
        )
    missing = [name for name in known if name not in done]
    if missing:
        raise StoreError(
            f"the run store at {_safe_url(engine)} is read-only ({why_read_only}) and needs "
            f"an upgrade this sqlbench must write ({len(missing)} schema change(s)); open it "
            "once with write access"
        )


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})


def _safe_url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)
