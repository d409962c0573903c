"""``sqlbench init --dbt`` (docs/dbt.md): the sqlbench files beside a dbt project, never in its
folders, and the pull-request workflow watching the dbt project's files. No dbt needed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sqlbench.cli.main import get_cli
from sqlbench.dbt.scaffold import scaffold_dbt_project
from sqlbench.errors import SqlbenchError
from sqlbench.project.scaffold import add_workflow
from sqlbench.testing import write_project
from sqlbench.validation import check_project


def _dbt_project(root: Path) -> Path:
    return write_project(
        root,
        {
            "dbt_project.yml": {"name": "shop", "profile": "shop"},
            "profiles.yml": {"shop": {"target": "dev", "outputs": {"dev": {"type": "duckdb"}}}},
            "models/marts/orders.sql": "select 1 as id\n",
            "models/staging/stg_orders.sql": "select 1 as id\n",
        },
    )


def test_init_in_a_dbt_project_writes_beside_it_and_validates(tmp_path: Path) -> None:
    root = _dbt_project(tmp_path / "shop")
    result = CliRunner().invoke(get_cli(), ["init", str(root)])
    assert result.exit_code == 0, result.output
    assert "beside the dbt project" in result.output
    assert sorted(p.relative_to(root).as_posix() for p in (root / "models").rglob("*.sql")) == [
        "models/marts/orders.sql",
        "models/staging/stg_orders.sql",
    ]
    settings = yaml.safe_load((root / "sqlbench.yml").read_text())
    assert settings["dbt"] == {"project_dir": ".", "profiles_dir": "."}
    question = yaml.safe_load((root / "eval_questions/questions.yml").read_text())
    assert question["eval_questions"][0]["sql"] == (
        "SELECT count(*) AS row_count FROM {{ ref('orders') }}"
    )
    assert ".sqlbench/" in (root / ".gitignore").read_text()
    assert [p.message for p in check_project(root).problems] == []


def test_init_dbt_refuses_a_folder_without_dbt_project_yml_or_with_a_project(
    tmp_path: Path,
) -> None:
    with pytest.raises(SqlbenchError, match=r"holds no dbt_project\.yml"):
        scaffold_dbt_project(tmp_path)
    root = _dbt_project(tmp_path / "shop")
    scaffold_dbt_project(root)
    with pytest.raises(SqlbenchError, match="already holds a sqlbench project"):
        scaffold_dbt_project(root)


def test_the_workflow_of_a_dbt_project_watches_its_models_and_seeds(tmp_path: Path) -> None:
    root = _dbt_project(tmp_path / "shop")
    scaffold_dbt_project(root)
    add_workflow(root)
    workflow = yaml.safe_load((root / ".github/workflows/sqlbench-check.yml").read_text())
    paths = workflow[True]["pull_request"]["paths"]  # YAML 1.1 reads `on:` as True
    assert {"dbt_project.yml", "models/**", "seeds/**", "macros/**"} <= set(paths)
