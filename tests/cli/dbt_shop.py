"""The example dbt project (examples/dbt_shop) in a real temporary git repository, with branches
that change it, and the commands the dbt tests run on it (``ShopCli``): shared by the DuckDB
tests (test_dbt.py) and the PostgreSQL ones (test_dbt_postgres.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dbt_shop"

FILTER_CHANGE = (
    "models/marts/orders.sql",
    "where o.status <> 'returned'",
    "where o.status not in ('returned', 'placed')",
)
BROKEN = (
    "models/staging/stg_payments.sql",
    "{{ cents_to_units('amount_cents') }} as amount",
    "{{ cents_to_units('amount_cents') }} as amount,,",
)
# A macro two calls away from stg_payments (cents_to_units calls cents_per_unit).
NESTED_MACRO = ("macros/money.sql", "cents_per_unit() %}100.0", "cents_per_unit() %}1000.0")
BAD_REF = ("models/marts/customers.sql", "ref('orders')", "ref('orderz')")
UNRELATED = (
    "models/marts/payment_methods.sql",
    "from {{ ref('stg_payments') }}",
    "from {{ ref('stg_payments') }}\nwhere method <> 'gift_card'",
)
Change = tuple[str, str, str]


def dbt_installed(adapter: str = "duckdb") -> bool:
    """Whether dbt-core and the adapter's plugin can be imported."""
    return all(
        importlib.util.find_spec(m) is not None for m in ("dbt.cli", f"dbt.adapters.{adapter}")
    )


def edit(root: Path, change: Change) -> dict[str, str]:
    """The file of ``change`` with its text replaced, as ``GitRepo.commit`` takes it."""
    path, old, new = change
    text = (root / path).read_text(encoding="utf-8")
    assert old in text
    return {path: text.replace(old, new)}


def make_shop(
    root: Path,
    branches: Mapping[str, Change | Mapping[str, str]],
    files: Mapping[str, str] | None = None,
) -> GitRepo:
    """examples/dbt_shop copied to ``root`` (with ``files`` written over it) and committed on
    main, with one branch per entry of ``branches``: a change, or files to write."""
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".sqlbench", "*.duckdb"))
    for rel, text in (files or {}).items():
        (root / rel).write_text(text, encoding="utf-8")
    repo = GitRepo.init(root)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "shop")
    for branch, change in branches.items():
        written = edit(root, change) if isinstance(change, tuple) else dict(change)
        repo.commit(written, branch, branch=branch)
        repo.git("checkout", "-q", "main")
    return repo


@dataclass
class ShopCli:
    """The commands the dbt tests run on a shop repository."""

    repo: GitRepo
    invoke: Invoke

    @property
    def root(self) -> Path:
        return self.repo.root

    def run(self, *args: str, exit_code: int = 0, env: Mapping[str, str] | None = None) -> Result:
        """``sqlbench run -C ROOT ARGS``."""
        return self.invoke("run", "-C", str(self.root), *args, exit_code=exit_code, env=env)

    def verdicts(self, *args: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """Question name -> verdict of ``sqlbench run ARGS --format json``."""
        ran = self.run(*args, "--format", "json", env=env)
        return {r["name"]: r["verdict"] for r in json.loads(ran.stdout)["results"]}

    def run_branch(self, branch: str, *args: str) -> Result:
        """``sqlbench run --branch BRANCH`` (trusted when it is not main)."""
        trust = () if branch == "main" else ("--trust-ref", branch)
        return self.run("--branch", branch, *trust, *args)

    def check(self, head: str, *args: str, exit_code: int = 0) -> Result:
        """``sqlbench check --base main --head HEAD --trust-ref HEAD ARGS``."""
        return self.invoke(
            "check",
            "-C",
            str(self.root),
            "--base",
            "main",
            "--head",
            head,
            "--trust-ref",
            head,
            *args,
            exit_code=exit_code,
        )

    def runs(self) -> list[dict[str, Any]]:
        """The stored runs (``sqlbench runs --format json``)."""
        listed = json.loads(self.invoke("runs", "-C", str(self.root), "--format", "json").stdout)
        runs: list[dict[str, Any]] = listed["runs"]
        return runs


def asked(stderr: str) -> list[str]:
    """The questions an affected-only run says it asks, sorted."""
    return sorted(
        line.split("asking ")[1].split(":")[0]
        for line in stderr.splitlines()
        if "affected-only: asking " in line
    )
