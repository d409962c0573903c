"""The one helper CLI tests go through (run a command with CliRunner, assert its exit code) and
the shared branch repository."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from branch_project import make_repo
from browser import chromium, open_page  # noqa: F401  (fixtures for the page tests)
from click.testing import CliRunner, Result

from sqlbench.cli.main import get_cli
from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]


@pytest.fixture
def invoke() -> Invoke:
    """``invoke(*args, exit_code=0, input=None, env=None) -> Result``.

    Runs ``sqlbench ARGS`` in-process and asserts the exit code and that no exception escaped
    (a traceback is never the answer), showing the output and any exception otherwise.
    ``result.stdout`` and ``result.stderr`` are kept apart; ``result.output`` interleaves them.
    """
    runner = CliRunner()

    def run(
        *args: str,
        exit_code: int = 0,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Result:
        result = runner.invoke(
            get_cli(), list(args), input=input, env=dict(env or {}), catch_exceptions=True
        )
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        if result.exit_code != exit_code or crashed:
            detail = ""
            if crashed:
                assert result.exception is not None
                detail = "".join(traceback.format_exception(result.exception))
            raise AssertionError(
                f"`sqlbench {' '.join(args)}` exited {result.exit_code}, expected {exit_code}"
                f"\n--- output ---\n{result.output}{detail}"
            )
        return result

    return run


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """The branch project's repository (``branch_project.make_repo``): ``main`` checked out,
    ``dev`` and ``flaky`` branches. Modules that need another repository define their own."""
    return make_repo(tmp_path / "repo")
