"""Shared fixtures. Autouse fixtures keep the user's sqlbench environment variables (LLM
endpoint, CI summary file) out of every test, and each test's registered secrets in it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from benchmark_corpus import BENCHMARKS_VARIABLE, benchmarks_dir
from hypothesis import settings

from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.registry import register_kind, unregister_kind
from sqlbench.testing import FakeAgent

# Property tests check results, not speed: hypothesis's default 200 ms per example fails them
# on a busy 2-core machine (seen in CI under load), so no per-example deadline.
settings.register_profile("sqlbench", deadline=None)
settings.load_profile("sqlbench")


OPT_IN = {
    "hostile": (
        "SQLBENCH_TEST_HOSTILE",
        "hostile-input tests: set SQLBENCH_TEST_HOSTILE=1 (.ci/run runs them as a step)",
    ),
    "security": ("SQLBENCH_TEST_SECURITY", "security tests: set SQLBENCH_TEST_SECURITY=1"),
}
"""Markers whose tests run only when their variable is ``1``, and the reason they skip
otherwise. Each is a minute or so of subprocesses and servers pushed to their limits on 2 cores:
``.ci/run`` runs them in steps of their own, and the README's test command stays within its 4
minutes. (``tests/security/conftest.py`` marks every test under it ``security``.)"""


@pytest.hookimpl(trylast=True)  # after the conftest files that add the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the tests of each ``OPT_IN`` marker whose variable is not ``1``, saying how to
    run them."""
    for marker, (variable, reason) in OPT_IN.items():
        if os.environ.get(variable) == "1":
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "SQLBENCH_LLM_BASE_URL",
        "SQLBENCH_LLM_MODEL",
        "SQLBENCH_LLM_API_KEY",
        "GITHUB_STEP_SUMMARY",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _secrets_stay_in_their_test() -> Iterator[None]:
    """A secret a test registers (its environment's tokens and passwords) is forgotten after it:
    under pytest-xdist, one worker runs many tests, and a value registered by one masked part of
    another's expected text (seen in CI: 's3cr3t-t0ken', 'hunter2')."""
    from sqlbench import secrets

    with secrets.registered_within():
        yield


@pytest.fixture(autouse=True)
def _guard_checks_afresh() -> None:
    """The guard remembers each SQL text's outcome for the process; a test that patches the
    guard's parse (to fail, or to count) sees it called whatever another test of its pytest-xdist
    worker checked before."""
    from sqlbench.engines import guard

    guard._REMEMBERED.clear()


@pytest.fixture
def shared_benchmarks() -> Path:
    """The public-benchmark corpus: ``$SQLBENCH_BENCHMARKS_DIR``, else ``../shared/benchmarks``
    beside the repository; skips when neither is there (a user's clone), fails when the
    variable names a folder that is not there (a wrong path must not pass as a skip)."""
    folder, named = benchmarks_dir()
    if not folder.is_dir():
        if named:
            pytest.fail(f"{BENCHMARKS_VARIABLE}={folder} is not a folder")
        pytest.skip(
            f"../shared/benchmarks is not present in this checkout; set {BENCHMARKS_VARIABLE} "
            "to the corpus folder to run these tests"
        )
    return folder


class _FakeOptions(KindOptions):
    pass


@pytest.fixture
def fake_agent() -> Iterator[Callable[[FakeAgent], None]]:
    """Register the agent kind ``fake``; ``use(agent)`` picks the FakeAgent it builds."""
    holder: dict[str, FakeAgent] = {}
    register_kind(
        AgentKind(
            name="fake",
            options=_FakeOptions,
            build=lambda config, options, context: holder["agent"],
        ),
        replace=True,
    )
    yield lambda agent: holder.__setitem__("agent", agent)
    unregister_kind("fake")
