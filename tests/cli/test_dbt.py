"""dbt projects as the data model (docs/dbt.md): the example project in examples/dbt_shop, in a
real temporary git repository, built by real dbt into real DuckDB files.

Each test builds one or two refs (dbt takes a few seconds per invocation), so the module shares
one repository with its branches (``dbt_shop.make_shop``) and checks several behaviours per
build; ``shop_cli`` runs the commands on it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
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
