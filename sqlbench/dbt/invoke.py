"""Every dbt invocation sqlbench makes goes through ``run_dbt``: dbt's programmatic runner
(``dbtRunner``), one invocation at a time (dbt keeps per-process state), never writing into the
dbt project (``--target-path`` and ``--log-path`` point at sqlbench's folders), without usage
statistics or version checks (no network), its progress lines passed to a callback.

Running dbt at a ref runs that ref's code (Jinja macros, Python models, adapter plugins): this
is the one place to gate it on the ref being trusted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from sqlbench.dbt.profile import ADAPTERS
from sqlbench.errors import DbtError

Progress = Callable[[str], None]
"""Receives one line of dbt's progress (``1 of 7 OK created sql view model main.x``)."""

_LOCK = threading.Lock()
_PROGRESS_EVENTS = frozenset(
    {
        "LogStartLine",
        "LogModelResult",
        "LogSeedResult",
        "LogSnapshotResult",
        "LogTestResult",
        "LogNodeResult",
        "SkippingDetails",
    }
)
INSTALL_HINT = "pip install 'sqlbench[dbt]'"


class DbtOutcome(NamedTuple):
    """What one dbt invocation returned."""

    success: bool
    result: Any
    """The command's result object (a ``Manifest`` for ``parse``, ``RunExecutionResult`` for
    ``build``); None when dbt stopped before running anything."""
    exception: BaseException | None
    """What stopped dbt (a compilation or project error), if anything."""


def versions(adapter: str = "duckdb") -> dict[str, str]:
    """The installed dbt-core and adapter versions (part of every build key): dbt-duckdb for
    a duckdb target, dbt-postgres for a postgres one.

    Raises:
        DbtError: dbt or the adapter is not installed.
    """
    found = {}
    for package in ("dbt-core", ADAPTERS.get(adapter, f"dbt-{adapter}")):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError as err:
            hint = INSTALL_HINT if adapter == "duckdb" else f"pip install '{package}>=1.11,<1.12'"
            raise DbtError(
                f"sqlbench.yml has `dbt:` but {package} is not installed: {hint}"
            ) from err
    return found


def run_dbt(
    command: str,
    project_dir: Path,
    profiles_dir: Path,
    work_dir: Path,
    args: Sequence[str] = (),
    *,
    log_dir: Path | None = None,
    progress: Progress | None = None,
    adapter: str = "duckdb",
) -> DbtOutcome:
    """Run ``dbt COMMAND`` on the project in ``project_dir`` with the profiles.yml in
    ``profiles_dir`` (sqlbench's), writing dbt's target files under ``work_dir`` and its log
    under ``log_dir`` (default: ``work_dir``); ``adapter`` is the target's type.

    Raises:
        DbtError: dbt or the adapter is not installed.
    """
    versions(adapter)
    from dbt.cli.main import dbtRunner

    failed: list[BaseException] = []
    callbacks = [] if progress is None else [_forwarder(progress, failed)]
    argv = [
        command,
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(profiles_dir),
        "--profile",
        "sqlbench",
        "--target-path",
        str(work_dir / "target"),
        "--log-path",
        str(log_dir or work_dir),
        # Nothing on sqlbench's stdout or stderr (a JSON report may be there): progress goes
        # through the callback, everything to the log file.
        "--log-level",
        "none",
        "--log-level-file",
        "debug",
        "--no-use-colors",
        "--no-send-anonymous-usage-stats",
        "--no-version-check",
        "--no-partial-parse",
        *args,
    ]
    with _LOCK:
        outcome = dbtRunner(callbacks=callbacks).invoke(argv)
    if failed:
        raise failed[0]  # the callback's own error (a closed pipe), after dbt finished
    return DbtOutcome(bool(outcome.success), outcome.result, outcome.exception)


def _forwarder(progress: Progress, failed: list[BaseException]) -> Callable[[Any], None]:
    """A dbt event callback passing progress lines on. An error of ``progress`` must not reach
    dbt, whose worker threads then wait forever: the first one is kept for ``run_dbt`` to
    raise once dbt is done, and nothing more is forwarded."""

    def forward(event: Any) -> None:
        info = event.info
        if failed or not (info.name in _PROGRESS_EVENTS or info.level in ("warn", "error")):
            return
        text = str(info.msg).strip()
        if not text:
            return
        try:
            progress(text)
        except BaseException as err:  # kept and raised by run_dbt, see above
            failed.append(err)

    return forward
