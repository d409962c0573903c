"""dbt projects as the data model (docs/dbt.md): the example project in examples/dbt_shop, in a
real temporary git repository, built by real dbt into real DuckDB files.

Each test builds one or two refs (dbt takes a few seconds per invocation), so the module shares
one repository with its branches (``dbt_shop.make_shop``) and checks several behaviours per
build; ``shop_cli`` runs the commands on it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt_shop import (
    BAD_REF,
    BROKEN,
    EXAMPLE,
    FILTER_CHANGE,
    NESTED_MACRO,
    UNRELATED,
    Invoke,
    ShopCli,
    asked,
    dbt_installed,
    edit,
    make_shop,
)

from sqlbench.testing import GitRepo, write_project

pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(
        not dbt_installed(),
        reason="dbt-core and dbt-duckdb are not installed: pip install -e '.[test,dbt]' (.ci/run)",
    ),
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """The example committed on main, with a branch per change."""
    branches = {
        "filter": FILTER_CHANGE,
        "broken": BROKEN,
        "unrelated": UNRELATED,
        "badref": BAD_REF,
        "macro": NESTED_MACRO,
    }
    return make_shop(tmp_path_factory.mktemp("dbt") / "shop", branches)


@pytest.fixture
def shop_cli(shop: GitRepo, invoke: Invoke) -> ShopCli:
    return ShopCli(shop, invoke)


def _builds(root: Path) -> list[str]:
    folder = root / ".sqlbench" / "dbt" / "builds"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_run_builds_the_ref_once_and_resolves_ref_in_ground_truth(shop_cli: ShopCli) -> None:
    root = shop_cli.root
    first = shop_cli.run("--format", "json")
    assert "dbt: 1 of " in first.stderr and "START" in first.stderr  # dbt's progress shows
    assert "dbt: built main (" in first.stderr
    results = {r["name"]: r for r in json.loads(first.stdout)["results"]}
    # `{{ ref('orders') }}` in total_revenue's ground truth ran against the built model.
    assert results["total_revenue"]["verdict"] == "pass"
    assert results["orders_by_status"]["verdict"] == "pass"
    assert results["average_payment"]["verdict"] == "fail"
    (key,) = _builds(root)
    assert (root / ".sqlbench" / "dbt" / "logs" / f"{key}.log").is_file()
    assert not (root / "dev.duckdb").exists()  # the profile's own database is never written
    assert not (root / "target").exists()  # nor dbt's files into the project
    second = shop_cli.run("--format", "json")
    assert "START" not in second.stderr  # the same ref is not built again
    assert f"dbt: reusing the build of main ({key}, " in second.stderr
    assert _builds(root) == [key]
    again = {r["name"]: r["verdict"] for r in json.loads(second.stdout)["results"]}
    assert again == {name: r["verdict"] for name, r in results.items()}


def test_check_of_a_changed_filter_asks_only_affected_questions_and_shows_answer_changes(
    shop_cli: ShopCli,
) -> None:
    root = shop_cli.root
    shop_cli.run_branch("main")
    summary_file = root.parent / "filter.md"
    checked = shop_cli.check("filter", "--affected", "--markdown", str(summary_file), exit_code=1)
    err = checked.stderr
    assert "changed in the dbt project or setup: customers, orders" in err
    assert asked(err) == [
        "shop/customers_by_country",
        "shop/customers_without_orders",
        "shop/june_orders",  # its ground truth reads stg_orders, but the agent read orders
        "shop/monthly_revenue",
        "shop/orders_by_status",
        "shop/top_customer",
        "shop/total_revenue",
    ]
    summary = summary_file.read_text()
    # The agent hard-codes the old definition of a revenue order: a regression on head.
    assert "shop/orders_by_status" in summary.split("Regressions")[1].split("\n\n")[1]
    changes = summary.split("Answer changes")[1]
    assert "shop/total_revenue" in changes and "shop/card_payments" not in changes
    # Both refs were built side by side, each into its own database.
    assert len(_builds(root)) == 2


def test_a_model_that_fails_to_build_is_one_sentence_naming_it_and_the_ref(
    shop_cli: ShopCli,
) -> None:
    broken = shop_cli.check("broken", exit_code=2)
    message = broken.stderr.strip().splitlines()[-1]
    assert "dbt could not build model 'stg_payments' at broken:" in message
    assert "compiled code at" not in message  # dbt's work folder, gone by now
    assert "Traceback" not in broken.stderr
    # The base's work is kept: its run is stored and reused next time.
    assert any(r["branch"] == "main" and r["status"] == "completed" for r in shop_cli.runs())


def test_a_change_to_a_macro_a_model_calls_through_another_asks_what_reads_it(
    shop_cli: ShopCli,
) -> None:
    shop_cli.run_branch("main")
    # The agent reads the models, so its answers follow the change: no regression.
    checked = shop_cli.check("macro", "--affected")
    assert "reads changed stg_payments" in checked.stderr  # card_payments, average_payment
    assert "asking shop/june_orders" in checked.stderr  # orders reads stg_payments
    assert "asking shop/february_signups" not in checked.stderr


def test_a_model_that_does_not_compile_names_the_side_the_ref_and_the_model(
    shop_cli: ShopCli,
) -> None:
    checked = shop_cli.check("badref", exit_code=2)
    line = checked.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: head badref: dbt cannot parse the project in '.': ")
    assert "models/marts/customers.sql" in line and "'orderz'" in line


def test_a_change_to_a_model_no_question_reads_asks_nothing_and_says_so(
    shop_cli: ShopCli,
) -> None:
    shop_cli.run_branch("main")
    checked = shop_cli.check("unrelated", "--affected")
    assert "changed in the dbt project or setup: payment_methods" in checked.stderr
    assert "no question reads what changed; asking none" in checked.stderr
    assert "affected-only: asking" not in checked.stderr


def test_base_and_head_built_side_by_side_give_each_side_its_own_answers(
    shop_cli: ShopCli,
) -> None:
    base = shop_cli.verdicts("--branch", "main")
    assert base["orders_by_status"] == "pass"
    head = shop_cli.verdicts("--branch", "filter", "--trust-ref", "filter")
    assert head["orders_by_status"] == "fail"
    # The base ref's run, made again after head was built, still reads base's models.
    assert shop_cli.verdicts("--branch", "main") == base


def test_a_second_branch_run_reuses_the_parse_and_the_build_without_invoking_dbt(
    shop: GitRepo,
) -> None:
    """Each command a process of its own, as a user runs them: the second finds the first's
    parse on disk (.sqlbench/dbt/parsed) and its build, and invokes dbt not at all."""
    root = shop.root
    change = ("models/marts/orders.sql", "-- One row", "-- Parse cache: one row")
    shop.commit(edit(root, change), "parse cache", branch="parsecache")
    shop.git("checkout", "-q", "main")
    logs = root / ".sqlbench" / "dbt" / "logs"

    branch = ("--branch", "parsecache", "--trust-ref", "parsecache")

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sqlbench", "run", "-C", str(root), *branch],
            capture_output=True,
            text=True,
            check=True,
            timeout=240,
            env={**os.environ, "NO_COLOR": "1"},
        )

    def dbt_logs() -> dict[str, int]:
        return {p.name: p.stat().st_mtime_ns for p in logs.iterdir()} if logs.is_dir() else {}

    before = dbt_logs()
    first = run()
    assert "dbt: built parsecache (" in first.stderr
    after_first = dbt_logs()
    new = sorted(set(after_first) - set(before))
    assert any(name.startswith("parse-") for name in new)  # the first run parsed
    second = run()
    assert "dbt: reusing the build of parsecache (" in second.stderr
    assert "START" not in second.stderr
    assert dbt_logs() == after_first  # no parse, no build: dbt was not invoked


def test_validate_execute_runs_ground_truth_on_the_build(shop_cli: ShopCli) -> None:
    shop_cli.invoke("validate", "-C", str(shop_cli.root), "--execute")


def test_init_dbt_writes_beside_the_dbt_project_never_into_models(
    tmp_path: Path, invoke: Invoke
) -> None:
    root = tmp_path / "shop"
    shutil.copytree(
        EXAMPLE,
        root,
        ignore=shutil.ignore_patterns(
            ".sqlbench", "*.duckdb", "sqlbench.yml", "eval_questions", "agents"
        ),
    )
    before = sorted(p.relative_to(root).as_posix() for p in (root / "models").rglob("*"))
    made = invoke("init", str(root))  # dbt_project.yml detected
    assert "beside the dbt project" in made.stdout
    assert sorted(p.relative_to(root).as_posix() for p in (root / "models").rglob("*")) == before
    assert "dbt:" in (root / "sqlbench.yml").read_text()
    ran = invoke("run", "-C", str(root), "--format", "json")
    assert [r["verdict"] for r in json.loads(ran.stdout)["results"]] == ["pass"]


def test_a_project_missing_its_dbt_deps_packages_is_one_sentence(
    tmp_path: Path, invoke: Invoke
) -> None:
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".sqlbench", "*.duckdb"))
    (root / "packages.yml").write_text(
        "packages:\n  - package: dbt-labs/dbt_utils\n    version: 1.3.0\n"
    )
    ran = invoke("run", "-C", str(root), exit_code=2)
    assert ran.stderr.startswith(
        "Error: dbt: the project in '.' needs packages that are not installed: run `dbt deps`"
    )
    assert len(ran.stderr.strip().splitlines()) == 1


def test_a_duckdb_warehouse_is_where_the_build_starts_and_is_never_written(
    tmp_path: Path, invoke: Invoke
) -> None:
    import duckdb

    root = tmp_path / "wh"
    warehouse = root / "warehouse.duckdb"
    root.mkdir()
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "CREATE TABLE raw_orders AS SELECT range AS id, range * 10 AS amount FROM range(5)"
        )
    write_project(
        root,
        {
            "dbt_project.yml": {"name": "wh", "profile": "wh"},
            # The developer's profile builds into the warehouse file itself.
            "profiles.yml": {
                "wh": {
                    "target": "dev",
                    "outputs": {"dev": {"type": "duckdb", "path": "warehouse.duckdb"}},
                }
            },
            "models/sources.yml": {
                "version": 2,
                "sources": [{"name": "raw", "schema": "main", "tables": [{"name": "raw_orders"}]}],
            },
            "models/big_orders.sql": (
                "select id from {{ source('raw', 'raw_orders') }} where amount >= 20\n"
            ),
            "sqlbench.yml": {"warehouse": "warehouse.duckdb", "dbt": {}},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "big",
                        "question": "How many big orders?",
                        "sql": "SELECT count(*) FROM {{ ref('big_orders') }}",
                    }
                ]
            },
            "agents/a.yml": {"agents": [{"name": "a", "kind": "replay", "path": "a.jsonl"}]},
            "agents/a.jsonl": '{"name": "big", "sql": "SELECT count(*) FROM big_orders"}\n',
        },
    )
    before = warehouse.read_bytes()
    ran = invoke("run", "-C", str(root), "--agent", "a", "--format", "json")
    # The ground truth read the model built from the warehouse's table: 3 rows of 5.
    assert [r["verdict"] for r in json.loads(ran.stdout)["results"]] == ["pass"]
    assert warehouse.read_bytes() == before
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = {
            row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
    assert tables == {"raw_orders"}


def test_a_source_pointed_at_another_table_rebuilds_though_no_model_changed(
    tmp_path: Path, invoke: Invoke
) -> None:
    import duckdb

    root = tmp_path / "src"
    root.mkdir()
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:
        con.execute("CREATE TABLE orders_2023 AS SELECT range AS id FROM range(3)")
        con.execute("CREATE TABLE orders_2024 AS SELECT range AS id FROM range(7)")

    def source(table: str) -> dict[str, Any]:
        raw = {"name": "orders", "identifier": table}
        return {"version": 2, "sources": [{"name": "raw", "schema": "main", "tables": [raw]}]}

    write_project(
        root,
        {
            "dbt_project.yml": {"name": "src", "profile": "src"},
            "models/sources.yml": source("orders_2023"),
            "models/all_orders.sql": "select id from {{ source('raw', 'orders') }}\n",
            "sqlbench.yml": {"warehouse": "warehouse.duckdb", "dbt": {}},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "count",
                        "question": "How many orders?",
                        "sql": "SELECT count(*) FROM {{ ref('all_orders') }}",
                    }
                ]
            },
            "agents/a.yml": {"agents": [{"name": "a", "kind": "replay", "path": "a.jsonl"}]},
            "agents/a.jsonl": '{"name": "count", "sql": "SELECT 3"}\n',
        },
    )
    repo = GitRepo.init(root)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "2023")
    first = invoke("run", "-C", str(root), "--agent", "a", "--format", "json")
    assert [r["verdict"] for r in json.loads(first.stdout)["results"]] == ["pass"]
    # The model's SQL and its checksum stay the same; only the table its source names moves.
    repo.commit({"models/sources.yml": yaml.safe_dump(source("orders_2024"))}, "2024")
    second = invoke("run", "-C", str(root), "--agent", "a", "--format", "json")
    assert "reusing the build" not in second.stderr
    assert [r["verdict"] for r in json.loads(second.stdout)["results"]] == ["fail"]
    # And dbt's lineage counts the model reading it as modified: the check asks its question.
    check = invoke(
        "check", "-C", str(root), "--base", "HEAD~1", "--head", "HEAD", "--agent", "a",
        "--affected", exit_code=1,
    )  # fmt: skip
    assert asked(check.stderr) == ["auto/count"]


def _env_project(root: Path) -> None:
    """A dbt project whose model reads two environment variables with env_var()."""
    write_project(
        root,
        {
            "dbt_project.yml": {"name": "envp", "profile": "envp"},
            "models/big.sql": (
                "select n, '{{ env_var('SHOP_LABEL') }}' as label\n"
                "from (values (1), (2), (3), (4)) as t(n)\n"
                "where n >= {{ env_var('SHOP_MIN_N') }}\n"
            ),
            "sqlbench.yml": {"dbt": {}},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "big",
                        "question": "How many big numbers?",
                        "sql": "SELECT count(*) FROM {{ ref('big') }}",
                    }
                ]
            },
            "agents/a.yml": {"agents": [{"name": "a", "kind": "replay", "path": "a.jsonl"}]},
            "agents/a.jsonl": '{"name": "big", "sql": "SELECT 3"}\n',
        },
    )


def test_a_change_to_an_environment_variable_the_project_reads_rebuilds_it(
    tmp_path: Path, invoke: Invoke
) -> None:
    root = tmp_path / "envp"
    _env_project(root)
    marker = "label-5c1e9a"
    env = {"SHOP_MIN_N": "2", "SHOP_LABEL": marker}

    def run(**changed: str) -> tuple[str, str]:
        ran = invoke(
            "run", "-C", str(root), "--agent", "a", "--format", "json", env={**env, **changed}
        )
        (verdict,) = [r["verdict"] for r in json.loads(ran.stdout)["results"]]
        return verdict, ran.stderr

    verdict, err = run()
    assert verdict == "pass" and "dbt: built " in err  # 2, 3 and 4: three rows
    verdict, err = run(SOME_OTHER_VARIABLE="x")  # a variable the project does not read
    assert verdict == "pass" and "dbt: reusing the build of " in err
    verdict, err = run(SHOP_MIN_N="3")  # built again: 3 and 4
    assert verdict == "fail" and "dbt: built " in err
    assert len(_builds(root)) == 2
    verdict, err = run()  # back to the first value: its build is still there
    assert verdict == "pass" and "dbt: reusing the build of " in err
    # The values are hashed into the build key, never stored by sqlbench (dbt's own log of a
    # build, under .sqlbench/dbt/logs, holds the SQL it ran, as dbt's logs do).
    stored = [
        p
        for p in (root / ".sqlbench").rglob("*")
        if p.is_file() and "builds" not in p.parts and "logs" not in p.parts
    ]
    assert any(p.parent.name == "parsed" for p in stored)
    assert not [p for p in stored if marker.encode() in p.read_bytes()]


def test_a_dbt_project_on_a_mariadb_warehouse_is_one_sentence(
    tmp_path: Path, invoke: Invoke
) -> None:
    root = tmp_path / "maria"
    _env_project(root)
    settings = "dbt: {}\nwarehouse: mysql+pymysql://root@127.0.0.1:3306/test\n"
    (root / "sqlbench.yml").write_text(settings)
    ran = invoke(
        "run",
        "-C",
        str(root),
        "--agent",
        "a",
        exit_code=2,
        env={"SHOP_MIN_N": "2", "SHOP_LABEL": "x"},
    )
    assert ran.stderr.strip().splitlines()[-1] == (
        "Error: sqlbench.yml has `dbt:` with the MariaDB/MySQL warehouse "
        "mysql+pymysql://root@127.0.0.1:3306/test; sqlbench builds each ref's dbt models into "
        "schemas of their own, which MariaDB and MySQL do not have (a schema is a database "
        "there): use PostgreSQL or DuckDB"
    )
