"""Building one ref's dbt project into a DuckDB database of sqlbench's own (docs/dbt.md).

Each build lands in ``.sqlbench/dbt/builds/<build key>/<name>.duckdb`` of the project folder
(the checkout, whichever ref is evaluated; ``name`` as the profile's own ``path``, so sources and
views name the same catalog): base and head never read each other's models, the
user's own database is never written, and a ref whose build key did not change is not built
again. A build is made in a folder of its own and moved into place only when it succeeded, so
a failed or interrupted build is never taken for a finished one. dbt's log of each build is
kept in ``.sqlbench/dbt/logs/<build key>.log``.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlbench.dbt.invoke import Progress, run_dbt
from sqlbench.dbt.manifest import (
    Parsed,
    build_args,
    file_fingerprint,
    parse_failure,
    parse_ref,
)
from sqlbench.dbt.profile import database_stem, profiles_yml, read_project
from sqlbench.errors import DbtError
from sqlbench.project.files import DbtSettings, Project

_FAILED = frozenset({"error", "fail", "runtime error"})
_COMPILED_AT = re.compile(r"\s*compiled code at \S+")


@dataclass(frozen=True)
class DbtBuild:
    """One ref's dbt build, ready to query."""

    database: Path
    """The DuckDB file holding the ref's seeds, models and snapshots."""
    relations: dict[str, str]
    """Model name -> its relation as the warehouse names it (``{{ ref('m') }}``)."""
    key: str
    log: Path
    built: bool
    """False: an earlier build with the same key was used."""
    seconds: float


def dbt_home(project: Project) -> Path:
    """``.sqlbench/dbt`` in the project folder (the checkout, for every ref)."""
    return (project.folder or project.root) / ".sqlbench" / "dbt"


def parse_project(project: Project) -> Parsed:
    """The project's dbt project parsed at its ref (cached, see ``manifest.parse_ref``).

    Raises:
        DbtError: no ``dbt:`` key, dbt missing, or the project does not parse.
    """
    settings = _settings(project)
    return parse_ref(settings, project.root, dbt_home(project) / "parsed")


def build_key(parsed: Parsed, warehouse: Path | None) -> str:
    """The key of a build: the parsed project's, with the content of the DuckDB warehouse it
    starts from, if any."""
    if warehouse is None:
        return parsed.key
    return f"{parsed.key}-{file_fingerprint(warehouse)[:16]}"


def build_ref(
    project: Project, *, warehouse: Path | None = None, progress: Progress | None = None
) -> DbtBuild:
    """Build ``project``'s dbt project as its ref has it (seeds, models, snapshots; tests with
    ``dbt: {test: true}``), or find the build already made for the same build key. With a
    DuckDB ``warehouse`` file, the build starts from a copy of it (its tables are the
    project's sources; the file itself is never written).

    Every build of a ref's dbt code goes through here: it runs that ref's code.

    Raises:
        DbtError: dbt is missing, the project does not parse, or a node fails to build (one
            sentence naming it, the ref and dbt's message).
    """
    started = time.perf_counter()
    settings = _settings(project)
    dbt_project = read_project(settings, project.root)
    if dbt_project.on_server:
        raise DbtError(
            f"dbt: target {dbt_project.target!r} ({dbt_project.profile_source}) is a "
            f"{dbt_project.adapter} target, but sqlbench.yml's warehouse is "
            f"{'a DuckDB file' if warehouse is not None else 'the embedded one'}: set "
            "`warehouse:` to the database the target builds in, or use a duckdb target "
            "(`dbt: target`)"
        )
    parsed = parse_project(project)
    home = dbt_home(project)
    key = build_key(parsed, warehouse)
    name = f"{database_stem(dbt_project)}.duckdb"
    final = home / "builds" / key
    database = final / name
    log = home / "logs" / f"{key}.log"
    if (final / "done").is_file() and database.is_file():
        return DbtBuild(
            database, parsed.relations(), key, log, False, time.perf_counter() - started
        )
    ref = project.source.branch
    partial = home / "builds" / f"{key}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    partial.mkdir(parents=True)
    try:
        if warehouse is not None:
            shutil.copyfile(warehouse, partial / name)
        (partial / "profiles.yml").write_text(
            profiles_yml(dbt_project, partial / name), encoding="utf-8"
        )
        log_dir = partial / "logs"
        outcome = run_dbt(
            "build",
            dbt_project.project_dir,
            partial,
            partial,
            build_args(settings),
            log_dir=log_dir,
            progress=progress,
        )
        log.parent.mkdir(parents=True, exist_ok=True)
        if (log_dir / "dbt.log").is_file():
            shutil.copyfile(log_dir / "dbt.log", log)
        if not outcome.success:
            raise DbtError(build_failure(outcome.result, outcome.exception, ref, log, project))
        for leftover in ("target", "logs", "profiles.yml"):
            target = partial / leftover
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        (partial / "done").write_text(key, encoding="utf-8")
        try:
            partial.rename(final)
        except OSError:
            if not (final / "done").is_file():
                raise
            # Another process finished the same build first: its database is the same.
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return DbtBuild(database, parsed.relations(), key, log, True, time.perf_counter() - started)


def _settings(project: Project) -> DbtSettings:
    settings = project.settings.dbt
    if settings is None:
        raise DbtError("sqlbench.yml has no `dbt:` key")
    return settings


def build_failure(
    result: Any, exception: BaseException | None, ref: str, log: Path, project: Project
) -> str:
    """One sentence: the first node that failed, the ref and dbt's message."""
    where = f"(dbt's log: {_shown(log, project)})"
    for each in getattr(result, "results", None) or []:
        status = str(getattr(each, "status", "")).lower()
        if status in _FAILED:
            node = each.node
            message = " ".join(str(each.message or "").split())
            # dbt points at its compiled SQL in a work folder that is gone by now.
            message = _COMPILED_AT.sub("", message)
            return (
                f"dbt could not build {node.resource_type} {node.name!r} at {ref}: "
                f"{message[:500]} {where}"
            )
    if exception is not None:
        dbt_project = read_project(_settings(project), project.root)
        return f"{parse_failure(dbt_project, exception, project.root)} at {ref} {where}"
    return f"dbt's build failed at {ref} without naming a node {where}"


def _shown(path: Path, project: Project) -> str:
    folder = project.folder or project.root
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
