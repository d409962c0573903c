"""Load a project (docs/project-files.md) from the working tree or from a git ref.

``check_project`` reads every file, runs every rule and returns all problems at once;
``load_project`` returns the typed ``Project`` or raises ``ProjectInvalid``;
``sqlbench.validation`` wraps both with the agents' own checks, and its ``validate_project``
returns everything ``sqlbench validate`` prints.

Where the files come from:

- Without ``branch``: the folder as it is, uncommitted edits included (dev mode); see
  ``source`` for its ``SourceInfo`` and why it is always ``dev``.
- With ``branch=REF``: the project folder's files as committed at REF, written to a temporary
  folder (``project.root``) by ``gitfs.extract_project``; the checkout, index and uncommitted
  edits are untouched. The returned ``Project`` owns that folder: it is removed when the
  Project is garbage-collected (or at interpreter exit), or earlier by ``close_project``. Keep
  a reference to the Project while using files under its root.
- ``branch="dev"`` when no ref named ``dev`` exists: the working tree, with
  ``source.dev_mode_note`` set for the CLI to print.
"""

from __future__ import annotations

import hashlib
import json
import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from sqlbench.errors import Problem, ProjectError, ProjectInvalid, Severity
from sqlbench.project import gitfs, reftrust, rules
from sqlbench.project.confine import outside_message, outside_project
from sqlbench.project.dialect import (
    unknown_dialect_message,
    warehouse_dialect,
    warehouse_url_problem,
)
from sqlbench.project.files import (
    AgentConfig,
    CertifiedQuery,
    Project,
    Question,
    Settings,
    SourceInfo,
)
from sqlbench.project.root import find_project_root, is_project_dir, require_project
from sqlbench.project.rules import AgentValidator
from sqlbench.project.schema import (
    parse_agent_file,
    parse_certified_file,
    parse_question_file,
    parse_settings,
)
from sqlbench.project.source import environment_for, working_tree_source
from sqlbench.project.yamlload import MAX_YAML_BYTES, YamlMap, line_of, load_yaml, too_big

SETTINGS_FILES = ("sqlbench.yml", "sqlbench.yaml")
DEV_BRANCH = "dev"
_CLEANUPS: dict[int, weakref.finalize[[gitfs.ExtractedTree, int], Project]] = {}


class ProjectCheck(NamedTuple):
    """Everything ``check_project`` found."""

    project: Project | None
    """The project when there is no error, else None."""
    problems: list[Problem]
    """Every error and warning, sorted by file and line."""
    source: SourceInfo
    """Which version of the files was read."""
    files: int
    """How many project files were read."""


class _Files(NamedTuple):
    settings: Settings
    settings_data: YamlMap | None
    settings_path: str
    questions: list[Question]
    question_entries: list[YamlMap]
    certified: list[CertifiedQuery]
    certified_entries: list[YamlMap]
    agents: list[AgentConfig]
    question_files: int
    files_read: int


def _yaml_files(root: Path, folder: str) -> list[str]:
    base = root / folder
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for filename in filenames:
            if filename.endswith((".yml", ".yaml")) and not filename.startswith("."):
                found.append((Path(dirpath) / filename).relative_to(root).as_posix())
    return sorted(found)


def _read(root: Path, rel: str, problems: list[Problem]) -> Any:
    """The YAML data of one file (None when empty or broken; problems appended)."""
    if outside_project(root, root / rel):
        problems.append(Problem(Severity.ERROR, outside_message(rel), rel, None))
        return None
    try:
        size = (root / rel).stat().st_size
        if size > MAX_YAML_BYTES:  # refused before it is read into memory
            problems.append(too_big(size, rel))
            return None
        text = (root / rel).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        problems.append(Problem(Severity.ERROR, "not UTF-8 text", rel, None))
        return None
    except OSError as err:
        problems.append(Problem(Severity.ERROR, f"cannot read: {err.strerror}", rel, None))
        return None
    doc = load_yaml(text, rel)
    problems.extend(doc.problems)
    if doc.empty and not rel.startswith("sqlbench."):
        problems.append(Problem(Severity.ERROR, "empty file; add entries or delete it", rel, 1))
    return doc.data


class SettingsFile(NamedTuple):
    """``sqlbench.yml`` (or ``sqlbench.yaml``) as read by ``read_settings``."""

    settings: Settings
    """The parsed settings (defaults where the file is missing or broken)."""
    data: YamlMap | None
    """The file's YAML mapping with line marks; None when missing, empty or not a mapping."""
    path: str
    """``sqlbench.yml`` or ``sqlbench.yaml``, relative to the project root."""
    problems: list[Problem]
    """What is wrong with the file (errors and warnings)."""
    files: int
    """How many settings files exist (0, 1, or 2 with an error)."""


def read_settings(root: Path) -> SettingsFile:
    """The one reader of a project's ``sqlbench.yml``: what ``load_project`` and the store
    opener (``runs/locate.py``, which must work while question files are broken) both use.

    Args:
        root: The project folder.
    """
    problems: list[Problem] = []
    present = [name for name in SETTINGS_FILES if (root / name).is_file()]
    settings_path = present[0] if present else SETTINGS_FILES[0]
    if len(present) > 1:
        problems.append(
            Problem(
                Severity.ERROR,
                "both sqlbench.yml and sqlbench.yaml exist; keep one",
                present[1],
                None,
            )
        )
    settings_data = _read(root, settings_path, problems) if present else None
    settings, settings_problems = parse_settings(settings_data, settings_path)
    problems.extend(settings_problems)
    data = settings_data if isinstance(settings_data, YamlMap) else None
    return SettingsFile(settings, data, settings_path, problems, len(present))


def _read_files(root: Path, problems: list[Problem]) -> _Files:
    settings_file = read_settings(root)
    problems.extend(settings_file.problems)
    settings, settings_path = settings_file.settings, settings_file.path
    count = settings_file.files

    questions: list[Question] = []
    question_entries: list[YamlMap] = []
    question_files = _yaml_files(root, "eval_questions")
    for rel in question_files:
        data = _read(root, rel, problems)
        if data is not None:
            parsed = parse_question_file(data, rel)
            questions.extend(parsed.questions)
            question_entries.extend(parsed.entries)
            problems.extend(parsed.problems)
        count += 1

    certified: list[CertifiedQuery] = []
    certified_entries: list[YamlMap] = []
    for rel in _yaml_files(root, "certified_queries"):
        data = _read(root, rel, problems)
        if data is not None:
            parsed_certified = parse_certified_file(data, rel)
            certified.extend(parsed_certified.certified_queries)
            certified_entries.extend(parsed_certified.entries)
            problems.extend(parsed_certified.problems)
        count += 1

    agents, agent_problems, agent_count = _read_agent_files(root)
    problems.extend(agent_problems)
    return _Files(
        settings,
        settings_file.data,
        settings_path,
        questions,
        question_entries,
        certified,
        certified_entries,
        agents,
        len(question_files),
        count + agent_count,
    )


def _read_agent_files(root: Path) -> tuple[list[AgentConfig], list[Problem], int]:
    """Agent definitions. A YAML file that a replay agent's ``path`` points at is a recording,
    not an agent definition, and is left out."""
    per_file: dict[str, tuple[list[AgentConfig], list[Problem]]] = {}
    for rel in _yaml_files(root, "agents"):
        file_problems: list[Problem] = []
        data = _read(root, rel, file_problems)
        configs: list[AgentConfig] = []
        if data is not None:
            parsed = parse_agent_file(data, rel, (root / rel).parent)
            configs, file_problems = parsed.agents, file_problems + parsed.problems
        per_file[rel] = (configs, file_problems)
    recordings = set()
    for configs, _ in per_file.values():
        for config in configs:
            target = config.options.get("path")
            if config.kind == "replay" and isinstance(target, str):
                resolved = (config.base_dir / target).resolve()
                if resolved.is_relative_to(root.resolve()):
                    recordings.add(resolved.relative_to(root.resolve()).as_posix())
    agents: list[AgentConfig] = []
    problems: list[Problem] = []
    for rel, (configs, file_problems) in per_file.items():
        if rel in recordings:
            continue
        agents.extend(configs)
        problems.extend(file_problems)
    return agents, problems, len(per_file) - len(recordings & per_file.keys())


def _hashed_question(q: Question) -> dict[str, Any]:
    record: dict[str, Any] = {
        "space": q.space,
        "name": q.name,
        "question": q.question,
        "truth_kind": q.truth_kind.value,
        "truth_sql": q.truth_sql,
        "also_accept": list(q.also_accept),
        "compare": q.compare.model_dump(exclude_none=True) if q.compare else None,
        "skip": q.skip,
    }
    # Added only where set, so questions without them keep the hash runs were stored under.
    for key in (
        "expected_tools",
        "expected_trajectory",
        "assertions",
        "ground_truth_output",
        "warehouse",
        "expect",
    ):
        value = getattr(q, key)
        if value is not None and value != []:
            record[key] = json.loads(json.dumps(_dumped(value), default=str))
    if q.turns is not None:
        # Each turn's text and ground truth as the run grades it (certified queries resolved).
        record["turns"] = [
            _hashed_question(q.turn_question(index)) for index in range(len(q.turns))
        ]
    return record


def _dumped(value: Any) -> Any:
    if isinstance(value, list):
        return [_dumped(item) for item in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def question_set_hash(questions: Sequence[Question]) -> str:
    """sha256 over every question's space, name, text, ground truth (kind and resolved SQL),
    ``also_accept``, ``compare`` overrides and ``skip``, and the trace expectations
    (docs/agent-behaviour.md) and ``warehouse`` where set; independent of file order and tags."""
    records = sorted(
        json.dumps(_hashed_question(q), sort_keys=True, ensure_ascii=False) for q in questions
    )
    return hashlib.sha256("\n".join(records).encode("utf-8")).hexdigest()


def check_project(
    path: Path | str = ".",
    *,
    branch: str | None = None,
    validate_agent: AgentValidator | None = None,
    sql_warnings: bool = True,
    trusted_refs: Sequence[str] = (),
) -> ProjectCheck:
    """Read and check a project, collecting every problem in one pass.

    Args:
        path: The project folder (in the working tree, also for ``branch``).
        branch: A git ref to read the project from instead of the working tree.
        validate_agent: The agents package's checks of one agent's kind and keys, passed in
            from above (``sqlbench.validation`` does); None checks names and duplicates only.
        sql_warnings: False leaves out the warnings about ground-truth SQL (sqlglot cannot
            parse it; it depends on today's date), which parse every ground truth (0.7 s of
            CPU for Spider's 972): for a caller that never shows warnings (``run``).
        trusted_refs: Refs named with ``--trust-ref``: a ref's dbt project is built only when
            the ref is trusted (``project.reftrust``); otherwise every dbt call on it says so.

    Raises:
        ProjectError: ``path`` is not a folder or holds no project (at ``branch``).
        GitError: ``branch`` cannot be read (not a git repository, missing ref).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ProjectError(f"project folder {folder} does not exist")
    folder = folder.resolve()
    extracted: gitfs.ExtractedTree | None = None
    note = None
    if branch is not None and branch == DEV_BRANCH and not gitfs.ref_exists(folder, branch):
        note = (
            f"no git ref named {DEV_BRANCH!r}: using dev mode, the working tree of {folder} "
            "with uncommitted edits included"
        )
    elif branch is not None:
        extracted = gitfs.extract_project(folder, branch)
    try:
        return _check(folder, extracted, note, validate_agent, sql_warnings, trusted_refs)
    except BaseException:
        if extracted is not None:
            extracted.cleanup()
        raise


def _check(
    folder: Path,
    extracted: gitfs.ExtractedTree | None,
    note: str | None,
    validate_agent: AgentValidator | None,
    sql_warnings: bool = True,
    trusted_refs: Sequence[str] = (),
) -> ProjectCheck:
    root = extracted.root if extracted is not None else folder
    if not is_project_dir(root):
        if extracted is not None:
            raise ProjectError(
                f"ref {extracted.ref!r} has no sqlbench project in {folder} (no "
                "sqlbench.yml or eval_questions/ there)"
            )
        require_project(folder)
    problems: list[Problem] = []
    files = _read_files(root, problems)
    cross = _cross_file(files, root, validate_agent, sql_warnings)
    problems.extend(cross.problems)
    all_agents = {"auto": AgentConfig(name="auto", kind="auto", base_dir=root), **cross.agents}
    settings = files.settings
    if extracted is not None:
        name = gitfs.resolved_name(folder, extracted.ref, extracted.commit)  # not HEAD~1
        source = SourceInfo(
            branch=name,
            commit=extracted.commit,
            environment=environment_for(folder, name, settings),
        )
    else:
        source = working_tree_source(folder, note)
    problems.sort(key=lambda p: (p.path or "", p.line or 0))
    project = None
    if not any(p.severity is Severity.ERROR for p in problems):
        project = Project(
            root=root,
            checkout=folder if extracted is not None else None,
            settings=settings,
            questions=cross.questions,
            certified_queries=cross.certified,
            agents=all_agents,
            source=source,
            question_set_hash=question_set_hash(cross.questions),
            folder=folder,
            warnings=[p for p in problems if p.severity is Severity.WARNING],
        )
        _gate_dbt(project, trusted_refs)
        if extracted is not None:
            _CLEANUPS[id(project)] = weakref.finalize(project, _release, extracted, id(project))
    if project is None and extracted is not None:
        extracted.cleanup()
    return ProjectCheck(project, problems, source, files.files_read)


def _release(extracted: gitfs.ExtractedTree, key: int) -> None:
    extracted.cleanup()
    _CLEANUPS.pop(key, None)


class _CrossFile(NamedTuple):
    questions: list[Question]
    """The questions with certified queries resolved."""
    problems: list[Problem]
    certified: dict[str, CertifiedQuery]
    agents: dict[str, AgentConfig]


def _cross_file(
    files: _Files, root: Path, validate_agent: AgentValidator | None, sql_warnings: bool = True
) -> _CrossFile:
    problems = rules.duplicate_questions(files.questions)
    by_name, certified_problems = rules.certified_by_name(files.certified)
    problems += certified_problems
    questions, resolve_problems = rules.resolve_certified(
        files.questions, files.question_entries, by_name
    )
    problems += resolve_problems
    agents, agent_problems = rules.agent_problems(files.agents, validate_agent)
    problems += agent_problems
    default = rules.default_agent_problem(
        files.settings, files.settings_data, agents, files.settings_path
    )
    if default is not None:
        problems.append(default)
    problems += rules.setup_problems(files.settings, files.settings_data, root, files.settings_path)
    problems += rules.warehouse_problems(
        files.settings,
        files.settings_data,
        files.questions,
        files.question_entries,
        root,
        files.settings_path,
    )
    problems += rules.metric_gate_problems(
        files.settings,
        files.settings_data,
        files.settings_path,
        [metric.name for metric in files.settings.metrics],
    )
    groups: dict[str | None, list[int]] = {}
    for index, question in enumerate(files.questions):
        name = question.warehouse
        key = name if name in files.settings.warehouses else None
        groups.setdefault(key, []).append(index)
    for key in [None, *(k for k in groups if k is not None)]:
        dialect = _sql_dialect(files, key, problems)
        picked = groups.get(key, [])
        if not sql_warnings:
            continue
        problems += rules.ground_truth_warnings(
            [files.questions[i] for i in picked],
            [files.question_entries[i] for i in picked],
            files.certified if key is None else [],
            files.certified_entries if key is None else [],
            dialect,
        )
    if files.question_files == 0:
        problems.append(
            Problem(Severity.WARNING, "no question files: add eval_questions/*.yml", None, None)
        )
    return _CrossFile(questions, problems, by_name, agents)


def _sql_dialect(files: _Files, warehouse: str | None, problems: list[Problem]) -> str | None:
    """The dialect of the SQL run on ``warehouse`` (None: the default one), or None when it
    cannot be told (a warning is added then)."""
    settings = files.settings.for_warehouse(warehouse)
    keys: tuple[str, ...] = ("warehouse",) if warehouse is None else ("warehouses", warehouse)
    url_problem = warehouse_url_problem(settings.warehouse)
    if url_problem is not None:
        at = line_of(files.settings_data, keys) if files.settings_data else None
        problems.append(Problem(Severity.ERROR, url_problem, files.settings_path, at))
        return None
    dialect = settings.dialect or warehouse_dialect(settings.warehouse)
    if settings.dialect and unknown_dialect_message(settings.dialect):
        return None  # reported by the settings check; SQL cannot be read without one
    if dialect is None:
        line = line_of(files.settings_data, keys) if files.settings_data else None
        where = "warehouse" if warehouse is None else f"warehouses.{warehouse}"
        problems.append(
            Problem(
                Severity.WARNING,
                f"cannot tell the SQL dialect from {where}; "
                "set `dialect:` (until then ground-truth SQL is not checked)",
                files.settings_path,
                line,
            )
        )
    return dialect


def load_project(
    path: Path | str = ".",
    *,
    branch: str | None = None,
    validate_agent: AgentValidator | None = None,
    sql_warnings: bool = True,
    trusted_refs: Sequence[str] = (),
) -> Project:
    """Load a project; see the module docstring for where its files come from.
    ``sqlbench.load_project`` (``sqlbench.validation``) is this with every agent check.

    Args:
        path: The project folder (default: the current folder).
        branch: A git ref (branch, tag, commit, ``origin/main``) to load the project as
            committed there, the checkout untouched; None for the working tree.
        validate_agent: See ``check_project``.
        sql_warnings: See ``check_project``.
        trusted_refs: Refs named with ``--trust-ref``: a ref's dbt project is built only when
            the ref is trusted (``project.reftrust``); otherwise every dbt call on it says so.

    Returns:
        The project; warnings are on ``project.warnings``.

    Raises:
        ProjectInvalid: Any validation error (carries every problem).
        ProjectError: ``path`` holds no project.
        GitError: ``branch`` cannot be read.
    """
    result = check_project(
        path,
        branch=branch,
        validate_agent=validate_agent,
        sql_warnings=sql_warnings,
        trusted_refs=trusted_refs,
    )
    if result.project is None:
        raise ProjectInvalid(result.problems)
    return result.project


def _gate_dbt(project: Project, trusted_refs: Sequence[str]) -> None:
    """Mark a ref's dbt project untrusted unless ``reftrust.ref_trust`` trusts the ref for
    its dbt files (docs/security.md): building or parsing it runs its author's code."""
    dbt = project.settings.dbt
    if dbt is None or project.checkout is None:
        return
    decision = reftrust.ref_trust(
        project.checkout,
        project.source.commit,
        trusted_refs=trusted_refs,
        ref_root=project.root,
        files=sorted(
            {
                *reftrust.tree_files(project.root, dbt.project_dir),
                *reftrust.tree_files(project.checkout, dbt.project_dir),
            }
        ),
    )
    if not decision.trusted:
        dbt.mark_untrusted(reftrust.untrusted_dbt_sentence(project.source.branch))


def close_project(project: Project) -> None:
    """Remove the temporary folder of a project loaded from a ref now (no-op otherwise)."""
    cleanup = _CLEANUPS.get(id(project))
    if cleanup is not None:
        cleanup()


__all__ = [
    "ProjectCheck",
    "check_project",
    "close_project",
    "find_project_root",
    "is_project_dir",
    "load_project",
    "question_set_hash",
]
