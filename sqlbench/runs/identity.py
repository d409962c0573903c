"""What makes two runs interchangeable (docs/runs.md): stable hashes of the run's inputs.

A run's identity is the project source (commit, plus the working-tree hash when dirty), the
hash of its question set, the agent settings hash, the sqlbench version, the compare options and
the warehouse (``warehouse_identity``). ``sqlbench compare``/``check`` reuse a completed run with
the same identity (a run against a warehouse sqlbench does not build only within
``check.reuse_max_age``); ``--resume`` refuses a run whose question set or agent settings changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as sa

from sqlbench import __version__
from sqlbench.errors import EnvVarError, SqlbenchError
from sqlbench.project import load
from sqlbench.project.dialect import url_location, url_scheme, warehouse_dialect
from sqlbench.project.envvars import resolve
from sqlbench.project.files import (
    DEFAULT_WAREHOUSE,
    AgentConfig,
    CompareOptions,
    LlmSettings,
    Project,
    Question,
    Settings,
    SourceInfo,
)
from sqlbench.records.hashes import stable_hash
from sqlbench.records.run import RunInfo

# Agent kinds whose behaviour depends on the project's `llm:` endpoint settings.
_LLM_KINDS = frozenset({"llm", "auto"})
# Compare keys added after the first stored runs, with the default those runs behaved by.
_LATER_COMPARE_KEYS: dict[str, Any] = {
    "columns": "superset",
    "variants": 0,
    "variants_seed": 0,
    # Runs before it graded constants as `allow` would; its default is left out all the same,
    # so the hash of a default configuration stays put: the sqlbench version in a run's
    # identity already keeps runs graded before the rule from being reused.
    "constant_answers": "review",
    "max_extra_columns": None,
    "decline_penalty": 1.0,
}
_CHUNK = 1 << 20


class WarehouseIdentity(NamedTuple):
    """Which warehouse a run's SQL ran on, without any secret."""

    hash: str | None
    """Hash of the resolved URL with its password removed (driver, host, port, database,
    user), the dialect, and a local file's content fingerprint; None when it cannot be told
    (an unset ``${VAR}``): such a run is never reused."""
    label: str
    """The warehouse as written in sqlbench.yml (``${VAR}`` kept), its password masked."""
    built: bool
    """True when the run's data is fixed by the identity itself: an in-memory DuckDB built by
    ``setup`` from the repository, or a local file whose content is fingerprinted. False for a
    server, whose data can change without a commit (reuse is then bounded by age)."""


class RunIdentity(NamedTuple):
    """The inputs that decide a run's results."""

    source: str | None
    """Commit sha, ``sha+working-tree-hash`` when dirty; None when unknown (not a git repo)."""
    question_set_hash: str
    agent_settings_hash: str
    sqlbench_version: str
    compare_hash: str
    warehouse_hash: str | None = None
    """``WarehouseIdentity.hash``; None for runs stored before warehouses were recorded."""

    @property
    def reusable(self) -> bool:
        """Only a run whose source and warehouse are known can stand in for another."""
        return self.source is not None and self.warehouse_hash is not None


def question_set_hash(questions: Sequence[Question]) -> str:
    """Hash of what grading the given questions depends on (the loader's hash, applied to the
    run's selection): for a run of every question it equals ``project.question_set_hash``."""
    return load.question_set_hash(questions)


def agent_settings(config: AgentConfig, llm: LlmSettings) -> dict[str, Any]:
    """The agent's settings as written in the project (``${ENV}`` references unresolved):
    name, kind, the kind's options and, for ``llm`` and ``auto``, the project's ``llm:`` keys.
    Where the agent file lives is left out, so the same agent at two refs hashes the same."""
    settings: dict[str, Any] = {
        "name": config.name,
        "kind": config.kind,
        "options": json.loads(json.dumps(config.options, sort_keys=True, default=str)),
    }
    if config.kind in _LLM_KINDS:
        settings["llm"] = llm.model_dump(mode="json")
    return settings


def compare_hash(compare: CompareOptions) -> str:
    """Hash of the project's compare defaults. Keys added after runs were first stored count
    only when set away from their default (whose behaviour those runs had), so a stored run
    keeps its identity and stays reusable."""
    options = compare.model_dump(mode="json")
    options.pop("max_work_ratio", None)  # a check rule: no result depends on it
    for key, default in _LATER_COMPARE_KEYS.items():
        if options.get(key) == default:
            del options[key]
    return stable_hash(options)


def version_key(commit: str | None, dirty: bool, working_tree_hash: str | None) -> str | None:
    """The project version a run evaluated: the commit, with the working-tree hash appended
    when dirty; None when unknown. The one rule for both a project and a stored run.

    Example:
        >>> version_key("abc", False, None), version_key("abc", True, "f00")
        ('abc', 'abc+f00')
        >>> version_key(None, False, None) is None
        True
    """
    if commit is None:
        return None
    if dirty:
        return f"{commit}+{working_tree_hash}" if working_tree_hash else None
    return commit


def source_key(source: SourceInfo) -> str | None:
    """The version of a loaded project (``version_key`` of its source)."""
    return version_key(source.commit, source.dirty, source.working_tree_hash)


def warehouse_identity(
    settings: Settings,
    project_root: Path,
    environ: Mapping[str, str] | None = None,
    *,
    folder: Path | None = None,
) -> WarehouseIdentity:
    """The identity of the warehouses ``settings`` name (the one function that decides it):
    the top-level one and each of ``warehouses:``. ``folder`` is the project folder on disk
    (``Project.folder``; default ``project_root``), whose ``.sqlbench/dbt/parsed`` keeps a dbt
    project's parse for the next command (``project_root`` of a ``--branch`` ref is a
    checkout that does not outlive the command).

    ``${VAR}`` is resolved here only to hash it: two databases behind one URL template that
    differ in one variable are two warehouses. The password never enters the hash or label.

    Example:
        >>> a = warehouse_identity(Settings(warehouse="postgresql://u:pw@h/${DB}"), Path("."),
        ...                        {"DB": "one"})
        >>> b = warehouse_identity(Settings(warehouse="postgresql://u:other@h/${DB}"), Path("."),
        ...                        {"DB": "one"})
        >>> a.hash == b.hash, a.label, a.built
        (True, 'postgresql://u:***@h/${DB}', False)
        >>> warehouse_identity(Settings(), Path(".")).built
        True
    """
    default = _one_warehouse(settings, project_root, environ, folder)
    if not settings.warehouses:
        return default
    each = {DEFAULT_WAREHOUSE: default}
    for name in sorted(settings.warehouses):
        each[name] = _one_warehouse(settings.for_warehouse(name), project_root, environ, folder)
    hashes = {name: one.hash for name, one in each.items()}
    return WarehouseIdentity(
        None if None in hashes.values() else stable_hash(hashes),
        ", ".join(f"{name}: {one.label}" for name, one in each.items()),
        all(one.built for one in each.values()),
    )


def _one_warehouse(
    settings: Settings,
    project_root: Path,
    environ: Mapping[str, str] | None,
    folder: Path | None = None,
) -> WarehouseIdentity:
    written = settings.warehouse
    dialect = settings.dialect
    parts: dict[str, Any]
    if settings.dbt is not None:
        return _dbt_warehouse(settings, project_root, environ, folder or project_root)
    if written is None:
        parts = {"kind": "duckdb-memory", "dialect": dialect}
        return WarehouseIdentity(stable_hash(parts), "in-memory DuckDB", True)
    label = _mask_password(written)
    try:
        resolved = resolve(written, os.environ if environ is None else environ)
    except EnvVarError:
        return WarehouseIdentity(None, label, False)
    dialect = dialect or warehouse_dialect(resolved, {})
    scheme = url_scheme(resolved)
    if scheme is None or scheme in ("duckdb", "sqlite"):
        location = url_location(resolved) if scheme else resolved
        if scheme and location.startswith("/"):
            location = location[1:]
        if location in ("", ":memory:"):
            parts = {"kind": "duckdb-memory", "dialect": dialect}
            return WarehouseIdentity(stable_hash(parts), label, True)
        path = Path(location).expanduser()
        path = path if path.is_absolute() else project_root / path
        content = _file_fingerprint(path)
        if content is None:
            return WarehouseIdentity(None, label, True)
        parts = {"kind": "file", "dialect": dialect, "content": content}
        return WarehouseIdentity(stable_hash(parts), label, True)
    parts = {"kind": "url", "dialect": dialect, "url": _url_without_password(resolved)}
    return WarehouseIdentity(stable_hash(parts), label, False)


def _dbt_warehouse(
    settings: Settings, project_root: Path, environ: Mapping[str, str] | None, folder: Path
) -> WarehouseIdentity:
    """The ref's dbt build (docs/dbt.md): its build key says which models the run read, and
    from which DuckDB warehouse file; on a server, on which database (its sources can change
    without a commit, as any server's data)."""
    from sqlbench.dbt.build import build_key
    from sqlbench.dbt.manifest import parse_ref
    from sqlbench.engines.open import dbt_start

    assert settings.dbt is not None
    parsed = parse_ref(settings.dbt, project_root, folder / ".sqlbench" / "dbt" / "parsed")
    written = settings.warehouse
    label = _mask_password(written or "")
    try:
        resolved = resolve(written, os.environ if environ is None else environ) if written else None
    except EnvVarError:
        return WarehouseIdentity(None, label, False)
    scheme = None if resolved is None else url_scheme(resolved)
    if resolved is not None and scheme not in (None, "duckdb", "sqlite"):
        parts = {
            "kind": "server-dbt",
            "dialect": settings.dialect or warehouse_dialect(resolved, {}),
            "url": _url_without_password(resolved),
            "dbt_build": parsed.key,
        }
        return WarehouseIdentity(stable_hash(parts), f"dbt build {parsed.key} on {label}", False)
    try:
        key = build_key(parsed, dbt_start(settings, project_root))
    except SqlbenchError:
        return WarehouseIdentity(None, label, True)
    parts = {"kind": "duckdb-dbt", "dialect": settings.dialect, "dbt_build": key}
    return WarehouseIdentity(stable_hash(parts), f"dbt build {key}", True)


def _url_without_password(url: str) -> str:
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return url.split("@", 1)[-1]  # an unparseable URL: keep only what follows any userinfo
    bare = sa.engine.URL.create(
        parsed.drivername,
        username=parsed.username,
        host=parsed.host,
        port=parsed.port,
        database=parsed.database,
        query=parsed.query,
    )
    return bare.render_as_string(hide_password=False)


def _mask_password(written: str) -> str:
    """The URL as written with its password (``${VAR}`` or literal) shown as ``***``.

    Example:
        >>> _mask_password("postgresql://u:${PW}@db/x"), _mask_password("data/w.duckdb")
        ('postgresql://u:***@db/x', 'data/w.duckdb')
    """
    if url_scheme(written) is None:
        return written
    scheme, rest = written.split("://", 1)
    userinfo, at, host = rest.rpartition("@")
    if not at or ":" not in userinfo:
        return written
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def _file_fingerprint(path: Path) -> str | None:
    """SHA-256 of a local warehouse file's content; None when it cannot be read (the engine
    reports that when it opens the file)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def run_identity(
    project: Project,
    agent: AgentConfig,
    questions: Sequence[Question] | None = None,
    warehouse: WarehouseIdentity | None = None,
) -> RunIdentity:
    """The identity a run of ``agent`` on ``questions`` (default: every question) would have;
    ``warehouse`` defaults to ``warehouse_identity`` of the project's settings."""
    selected = project.questions if questions is None else questions
    if warehouse is None:
        warehouse = warehouse_identity(project.settings, project.root, folder=project.folder)
    if _same_questions(selected, project.questions):
        set_hash = project.question_set_hash  # the loader's hash of these very questions
    else:
        set_hash = question_set_hash(selected)
    return RunIdentity(
        source=source_key(project.source),
        question_set_hash=set_hash,
        agent_settings_hash=stable_hash(agent_settings(agent, project.settings.llm)),
        sqlbench_version=__version__,
        compare_hash=compare_hash(project.settings.compare),
        warehouse_hash=warehouse.hash,
    )


def _same_questions(selected: Sequence[Question], every: Sequence[Question]) -> bool:
    """Whether ``selected`` holds the project's own question objects, all of them, in order
    (a run of every question: 9 agents' runs hashed 972 questions each, 0.1 s)."""
    return len(selected) == len(every) and all(a is b for a, b in zip(selected, every, strict=True))


def identity_fields(
    project: Project,
    agent: AgentConfig,
    questions: Sequence[Question],
    warehouse: WarehouseIdentity | None = None,
) -> dict[str, Any]:
    """The ``RunInfo`` fields that make up a new run's identity (with what they hash, for
    people to read), so that ``identity_of(info) == run_identity(project, agent, questions,
    warehouse)``; ``warehouse`` defaults as in ``run_identity``.
    """
    if warehouse is None:
        warehouse = warehouse_identity(project.settings, project.root, folder=project.folder)
    identity = run_identity(project, agent, questions, warehouse)
    source = project.source
    return {
        "branch": source.branch,
        "commit": source.commit,
        "dirty": source.dirty,
        "working_tree_hash": source.working_tree_hash,
        "environment": source.environment.value,
        "question_set_hash": identity.question_set_hash,
        "agent_name": agent.name,
        "agent_kind": agent.kind,
        "agent_settings": agent_settings(agent, project.settings.llm),
        "agent_settings_hash": identity.agent_settings_hash,
        "sqlbench_version": identity.sqlbench_version,
        "compare": project.settings.compare.model_dump(mode="json"),
        "compare_hash": identity.compare_hash,
        "warehouse": warehouse.label,
        "warehouse_hash": warehouse.hash,
        "warehouse_built": warehouse.built,
    }


def identity_of(info: RunInfo) -> RunIdentity:
    """The identity a stored run has."""
    return RunIdentity(
        source=version_key(info.commit, info.dirty, info.working_tree_hash),
        question_set_hash=info.question_set_hash,
        agent_settings_hash=info.agent_settings_hash,
        sqlbench_version=info.sqlbench_version,
        compare_hash=info.compare_hash,
        warehouse_hash=info.warehouse_hash,
    )
