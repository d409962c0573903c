"""dbt projects on a PostgreSQL warehouse (docs/dbt.md, "On a server warehouse"): the example
project in examples/dbt_shop built by real dbt (dbt-postgres) into schemas of its own on the
real server named by SQLBENCH_TEST_POSTGRES_URL, and queried as the read-only role of
SQLBENCH_TEST_POSTGRES_READER_URL when it is set.

Every schema the tests make starts with a name of the module's own (``shop_<random>``): what is
left after a command is read from information_schema, and whatever a failing test left is
dropped at the end.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from dbt_shop import (
    BROKEN,
    EXAMPLE,
    FILTER_CHANGE,
    Invoke,
    ShopCli,
    asked,
    dbt_installed,
    make_shop,
)

from sqlbench.testing import GitRepo

PG_URL = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")
READER_URL = os.environ.get("SQLBENCH_TEST_POSTGRES_READER_URL")

pytestmark = [
    pytest.mark.dbt,
    pytest.mark.postgres,
    pytest.mark.skipif(PG_URL is None, reason="SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL)"),
    pytest.mark.skipif(
        not dbt_installed("postgres"),
        reason="dbt-postgres is not installed: pip install -c constraints-dbt.txt dbt-postgres "
        "(.ci/run's dbt step)",
    ),
]

# The recorded agent's SQL, in PostgreSQL's dialect (the example's is DuckDB's: month()).
ANSWERS = EXAMPLE / "agents" / "recorded_answers.jsonl"
GENERATE_SCHEMA_NAME = """\
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ custom_schema_name or 'public' }}
{%- endmacro %}
"""


def _profile(schema: str, database: str | None = None) -> str:
    """A postgres target on the test server, building into ``schema`` (as a developer's)."""
    assert PG_URL is not None
    url = sa.make_url(PG_URL)
    target = {
        "type": "postgres",
        "host": url.host or "127.0.0.1",
        "port": url.port or 5432,
        "user": url.username,
        "password": url.password or "",
        "dbname": database or url.database,
        "schema": schema,
        "threads": 4,
    }
    return yaml.safe_dump({"dbt_shop": {"target": "pg", "outputs": {"pg": target}}})


def _settings(*, keep: bool = False, warehouse: str | None = None) -> str:
    dbt = {"project_dir": ".", "profiles_dir": ".", **({"keep_schemas": True} if keep else {})}
    # Questions run as the least-privilege role when there is one: sqlbench grants it reading
    # the schemas the target's role builds.
    settings = {"dbt": dbt, "warehouse": warehouse or READER_URL or PG_URL}
    return yaml.safe_dump({**settings, "default_agent": "recorded"})


@pytest.fixture(scope="module")
def prefix() -> Iterator[str]:
    """The target schema of the module's projects; every schema left with it is dropped."""
    name = f"shop_{uuid.uuid4().hex[:8]}"
    yield name
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        for schema in _schemas(name):
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


def _schemas(prefix: str) -> list[str]:
    """The schemas on the server whose names start with ``prefix``."""
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        found = conn.execute(
            sa.text(
                "SELECT schema_name FROM information_schema.schemata "
                "WHERE starts_with(schema_name, :prefix) ORDER BY 1"
            ),
            {"prefix": prefix},
        )
        names = [str(row[0]) for row in found]
    engine.dispose()
    return names


@pytest.fixture(scope="module")
def pg_shop(tmp_path_factory: pytest.TempPathFactory, prefix: str) -> GitRepo:
    """The example on PostgreSQL, its marts in a custom schema (``+schema: marts``, built as
    ``<schema>_sqlb_<key>_marts``), committed on main, with branches `filter` (a changed
    filter), `broken` (a model that does not build) and `kept` (``keep_schemas: true``, and a
    comment changed in a model: a build key of its own)."""
    root = tmp_path_factory.mktemp("dbt_pg") / "shop"
    project = EXAMPLE / "dbt_project.yml"
    answers = ANSWERS.read_text().replace(
        "month(signed_up_at) = 2", "extract(month from signed_up_at) = 2"
    )
    answers = answers.replace("month(ordered_at) = 6", "extract(month from ordered_at) = 6")
    files = {
        "profiles.yml": _profile(prefix),
        "sqlbench.yml": _settings(),
        "dbt_project.yml": project.read_text().replace(
            "+materialized: table", "+materialized: table\n      +schema: marts"
        ),
        "agents/recorded_answers.jsonl": answers,
    }
    branches = {
        "filter": FILTER_CHANGE,
        "broken": BROKEN,
        "kept": {
            "sqlbench.yml": _settings(keep=True),
            "models/marts/orders.sql": "-- kept\n"
            + (EXAMPLE / "models" / "marts" / "orders.sql").read_text(),
        },
    }
    return make_shop(root, branches, files)


@pytest.fixture
def shop_cli(pg_shop: GitRepo, invoke: Invoke) -> ShopCli:
    return ShopCli(pg_shop, invoke)


def _built_schema(stderr: str, ref: str) -> str:
    """The schema a command's `dbt: built REF in schema S` line names."""
    (line,) = [
        s
        for s in stderr.splitlines()
        if f" {ref} in schema " in s and ("built" in s or "reusing" in s)
    ]
    return line.split(" in schema ")[1].split(" ")[0]


def test_base_and_head_build_side_by_side_into_schemas_of_their_own_dropped_after(
    shop_cli: ShopCli, prefix: str
) -> None:
    summary_file = shop_cli.root.parent / "filter.md"
    checked = shop_cli.check(
        "filter", "--affected", "--fresh", "--markdown", str(summary_file), exit_code=1
    )
    err = checked.stderr
    base, head = _built_schema(err, "main"), _built_schema(err, "filter")
    assert base != head
    assert base.startswith(f"{prefix}_sqlb_") and head.startswith(f"{prefix}_sqlb_")
    assert f"START sql table model {base}_marts.orders" in err  # the custom schema, suffixed
    # `{{ ref('orders') }}` (total_revenue) and the unqualified names the agent's SQL and the
    # rest of the ground truth use read each ref's own models: head's filter changes answers.
    assert asked(err) == [
        "shop/customers_by_country",
        "shop/customers_without_orders",
        "shop/june_orders",
        "shop/monthly_revenue",
        "shop/orders_by_status",
        "shop/top_customer",
        "shop/total_revenue",
    ]
    summary = summary_file.read_text()
    assert "shop/orders_by_status" in summary.split("Regressions")[1].split("\n\n")[1]
    changes = summary.split("Answer changes")[1]
    assert "shop/total_revenue" in changes and "shop/card_payments" not in changes
    # Dropped when the command was done with them, and said so; nothing else was created.
    assert f"dbt: dropped schemas {base}, {base}_marts" in err
    assert f"dbt: dropped schemas {head}, {head}_marts" in err
    assert _schemas(prefix) == []


def test_kept_schemas_are_reused_by_the_next_command_not_built_again(
    shop_cli: ShopCli, prefix: str
) -> None:
    first = shop_cli.run_branch("kept", "--format", "json")
    schema = _built_schema(first.stderr, "kept")
    assert "dbt: built kept in schema " in first.stderr
    assert f"dbt: kept schemas {schema}, {schema}_marts (dbt: keep_schemas)" in first.stderr
    assert _schemas(prefix) == [schema, f"{schema}_marts"]
    second = shop_cli.run_branch("kept", "--format", "json")
    assert "START" not in second.stderr  # dbt did not build again
    assert f"dbt: reusing the build of kept in schema {schema} (" in second.stderr
    assert _schemas(prefix) == [schema, f"{schema}_marts"]
    verdicts = shop_cli.verdicts("--branch", "kept", "--trust-ref", "kept")
    assert verdicts["total_revenue"] == verdicts["orders_by_status"] == "pass"
    # Unqualified names in the agent's SQL found the marts' schema and the target's.
    assert verdicts["top_customer"] == verdicts["card_payments"] == "pass"


def test_a_model_that_fails_to_build_is_one_sentence_and_the_base_run_is_kept(
    shop_cli: ShopCli, prefix: str
) -> None:
    broken = shop_cli.check("broken", "--fresh", exit_code=2)
    message = broken.stderr.strip().splitlines()[-1]
    assert message.startswith("Error: dbt could not build model 'stg_payments' at broken: ")
    assert 'syntax error at or near ","' in message and "Traceback" not in broken.stderr
    assert any(r["branch"] == "main" and r["status"] == "completed" for r in shop_cli.runs())
    assert not [s for s in _schemas(prefix) if "_sqlb_" in s and not _kept(s)]


def _kept(schema: str) -> bool:
    """Whether ``schema`` belongs to a finished build (kept by the test above): its build's
    own schema (``<prefix>_sqlb_<key>``) is marked so."""
    own = re.sub(r"(_sqlb_[0-9a-f]{12}).*", r"\1", schema)
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        comment = conn.execute(
            sa.text(
                "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = :s"
            ),
            {"s": own},
        ).scalar()
    engine.dispose()
    return str(comment or "").startswith("sqlbench dbt build ")


def test_a_target_on_another_database_is_one_sentence(
    tmp_path: Path, invoke: Invoke, prefix: str
) -> None:
    repo = make_shop(
        tmp_path / "other",
        {},
        {
            "profiles.yml": _profile(prefix, "elsewhere"),
            "sqlbench.yml": _settings(warehouse=PG_URL),
        },
    )
    ran = invoke("run", "-C", str(repo.root), exit_code=2)
    database = sa.make_url(str(PG_URL)).database
    assert ran.stderr.strip().splitlines()[-1] == (
        "Error: dbt: target 'pg' builds into database 'elsewhere', but sqlbench.yml's warehouse "
        f"{PG_URL} is database {database!r}: sqlbench runs the questions where dbt builds the "
        "models, so both must name the same database"
    )


def test_a_schema_macro_that_leaves_out_the_target_schema_is_refused_before_building(
    tmp_path: Path, invoke: Invoke, prefix: str
) -> None:
    repo = make_shop(
        tmp_path / "macro",
        {},
        {
            "profiles.yml": _profile(prefix),
            "sqlbench.yml": _settings(warehouse=PG_URL),
            "macros/schemas.sql": GENERATE_SCHEMA_NAME,
        },
    )
    ran = invoke("run", "-C", str(repo.root), exit_code=2)
    line = ran.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: dbt: model 'customers' is built into schema 'public', ")
    assert "generate_schema_name" in line and "START" not in ran.stderr


# A project reading tables that live on the server outside any build: `refunds`, a declared dbt
# source, `credits`, named as it is in a view model, and `debits`, named as it is in the mart
# table (through a CTE). The mart counts all three; the agent counts the tables themselves, so a
# build made before a write answers differently from them.
LIVE_MODELS = {
    "dbt_project.yml": """\
name: live
version: "1.0.0"
config-version: 2
profile: dbt_shop
model-paths: ["models"]
models:
  live:
    staging:
      +materialized: view
    marts:
      +materialized: table
""",
    "models/sources.yml": """\
version: 2
sources:
  - name: live
    schema: {src}
    tables:
      - name: refunds
""",
    "models/staging/stg_credits.sql": 'select id from "{src}"."credits"\n',
    "models/marts/totals.sql": """\
with debited as (select id from "{src}".debits)
select
    (select count(*) from {{{{ source('live', 'refunds') }}}}) as refunds,
    (select count(*) from {{{{ ref('stg_credits') }}}}) as credits,
    (select count(*) from debited) as debits
""",
    "eval_questions/live.yml": """\
space: live
eval_questions:
  - name: counts
    question: How many refunds, credits and debits are there?
    sql: SELECT refunds, credits, debits FROM totals
""",
    "agents/recorded.yml": "agents:\n  - {{name: recorded, kind: replay, path: answers.jsonl}}\n",
}


def _execute(*statements: str) -> None:
    """Run ``statements`` on a connection of their own, as another client would, committed."""
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(sa.text(statement))
    engine.dispose()


def _write(src: str, table: str, statement: str) -> None:
    """Commit ``statement`` on ``src``.``table`` from another connection, and wait until its
    write shows in the server's cumulative statistics or its relation is a new one (TRUNCATE).
    A session's counts are published when it goes idle, up to about 10 seconds later if it
    published less than a second before; at once after ``pg_stat_force_next_flush()``
    (PostgreSQL 15+) or when it disconnects, which the writer does both of."""
    query = (
        "SELECT c.relfilenode, s.n_tup_ins + s.n_tup_upd + s.n_tup_del "
        "FROM pg_class c JOIN pg_stat_all_tables s ON s.relid = c.oid "
        "WHERE c.oid = to_regclass(:name)"
    )
    name = f'"{src}"."{table}"'
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        before = tuple(conn.execute(sa.text(query), {"name": name}).one())
        conn.execute(sa.text(statement))
        conn.commit()
        flush = conn.execute(
            sa.text("SELECT count(*) FROM pg_proc WHERE proname = 'pg_stat_force_next_flush'")
        ).scalar()
        if flush:
            conn.execute(sa.text("SELECT pg_stat_force_next_flush()"))
            conn.commit()
    engine.dispose()
    engine = sa.create_engine(str(PG_URL), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        for _ in range(200):
            conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
            if tuple(conn.execute(sa.text(query), {"name": name}).one()) != before:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"the write to {name} never showed in pg_stat_all_tables")
    engine.dispose()


@pytest.fixture
def live(tmp_path: Path, invoke: Invoke) -> Iterator[tuple[ShopCli, str, str]]:
    """The project above, kept schemas on (target schema ``live_<random>``), its tables in
    ``src_<random>``, two rows each; dropped when the test is done."""
    token = uuid.uuid4().hex[:8]
    src, target = f"src_{token}", f"live_{token}"
    _execute(
        f'CREATE SCHEMA "{src}"',
        f'CREATE TABLE "{src}".refunds (id int)',
        f'CREATE TABLE "{src}".credits (id int)',
        f'CREATE TABLE "{src}".debits (id int)',
        f'INSERT INTO "{src}".refunds VALUES (1), (2)',
        f'INSERT INTO "{src}".credits VALUES (1), (2)',
        f'INSERT INTO "{src}".debits VALUES (1), (2)',
    )
    answer = (
        f'SELECT (SELECT count(*) FROM "{src}".refunds), (SELECT count(*) FROM "{src}".credits), '
        f'(SELECT count(*) FROM "{src}".debits)'
    )
    files = {path: text.format(src=src) for path, text in LIVE_MODELS.items()}
    files["agents/answers.jsonl"] = json.dumps({"name": "counts", "space": "live", "sql": answer})
    files["profiles.yml"] = _profile(target)
    files["sqlbench.yml"] = _settings(keep=True, warehouse=PG_URL)
    root = tmp_path / "live"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    repo = GitRepo.init(root)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "live")
    try:
        yield ShopCli(repo, invoke), src, target
    finally:
        _execute(*(f'DROP SCHEMA IF EXISTS "{s}" CASCADE' for s in [src, *_schemas(target)]))


def _counts(cli: ShopCli) -> tuple[str, str]:
    """The verdict of `counts` and what the command said of its build (`built`, `reusing`)."""
    ran = cli.run("--format", "json")
    (result,) = json.loads(ran.stdout)["results"]
    done = "reusing" if "dbt: reusing the build of main" in ran.stderr else "built"
    assert (done == "built") == ("dbt: built main in schema" in ran.stderr), ran.stderr
    return result["verdict"], ran.stderr


def test_a_kept_build_is_built_again_when_a_table_it_read_changed(
    live: tuple[ShopCli, str, str],
) -> None:
    cli, src, target = live
    verdict, err = _counts(cli)
    assert verdict == "pass" and "dbt: built main" in err
    verdict, err = _counts(cli)
    assert verdict == "pass" and "dbt: reusing the build of main" in err and "START" not in err
    schema = _built_schema(err, "main")
    database = sa.make_url(str(PG_URL)).database
    # A declared source, a table a view model names, a table only a table model's compiled SQL
    # names (`debits`: were it not recorded, `totals` would say 2), and a TRUNCATE (a new
    # relfilenode, no counter moves): each is seen, the kept build dropped and built again from
    # the new data.
    writes = [
        ("refunds", f'INSERT INTO "{src}".refunds VALUES (3)', f'"{database}"."{src}"."refunds"'),
        ("credits", f'INSERT INTO "{src}".credits VALUES (3)', f'"{src}"."credits"'),
        ("debits", f'INSERT INTO "{src}".debits VALUES (3)', f'"{src}"."debits"'),
        ("refunds", f'TRUNCATE "{src}".refunds', f'"{database}"."{src}"."refunds"'),
    ]
    for table, statement, named in writes:
        _write(src, table, statement)
        verdict, err = _counts(cli)
        assert (
            f"dbt: not reusing the build in schema {schema}: sources changed since the kept "
            f"build: {named}; building it afresh"
        ) in err
        assert "dbt: built main" in err and verdict == "pass", err
    verdict, err = _counts(cli)  # unchanged since: reused again
    assert verdict == "pass" and "dbt: reusing the build of main" in err
    assert _schemas(target) == [schema]


def test_a_kept_build_that_read_a_view_is_never_reused(
    live: tuple[ShopCli, str, str],
) -> None:
    cli, src, _ = live
    _execute(
        f'ALTER TABLE "{src}".credits RENAME TO credits_table',
        f'CREATE VIEW "{src}".credits AS SELECT id FROM "{src}".credits_table',
    )
    for _ in range(2):
        verdict, err = _counts(cli)
        assert verdict == "pass" and "dbt: built main" in err
    assert (
        f'the kept build read "{src}"."credits", a view, whose changes sqlbench cannot see' in err
    )
