"""What makes two runs interchangeable (SPEC section 5): stable hashes of the run's inputs.

A run's identity is the project source (commit, plus the working-tree hash when dirty), the
hash of its question set, the agent settings hash, the sqlbench version and the compare
options. ``sqlbench compare``/``check`` reuse a completed run with the same identity; ``--resume``
refuses a run whose question set or agent settings changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlbench import __version__
from sqlbench.project import load
from sqlbench.project.models import (
    AgentConfig,
    CompareOptions,
    LlmSettings,
    Project,
    Question,
    SourceInfo,
)
from sqlbench.runs.models import RunInfo

# Agent kinds whose behaviour depends on the project's `llm:` endpoint settings.
_LLM_KINDS = frozenset({"llm", "auto"})
# Compare keys added after the first stored runs, with the default those runs behaved by.
_LATER_COMPARE_KEYS: dict[str, Any] = {"columns": "superset"}


class RunIdentity(NamedTuple):
    """The inputs that decide a run's results."""

    source: str | None
    """Commit sha, ``sha+working-tree-hash`` when dirty; None when unknown (not a git repo)."""
    question_set_hash: str
    agent_settings_hash: str
    sqlbench_version: str
    compare_hash: str

    @property
    def reusable(self) -> bool:
        """Only a run whose source is known can stand in for another."""
        return self.source is not None


def stable_hash(value: Any) -> str:
    """A short (16 hex) SHA-256 of ``value``'s canonical JSON (sorted keys, no spaces).

    Example:
        >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
        True
        >>> len(stable_hash("x"))
        16
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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
    for key, default in _LATER_COMPARE_KEYS.items():
        if options.get(key) == default:
            del options[key]
    return stable_hash(options)


def source_key(source: SourceInfo) -> str | None:
    """The project version: the commit, with the working-tree hash appended when dirty."""
    if source.commit is None:
        return None
    if source.dirty:
        if source.working_tree_hash is None:
            return None
        return f"{source.commit}+{source.working_tree_hash}"
    return source.commit


def run_identity(
    project: Project, agent: AgentConfig, questions: Sequence[Question] | None = None
) -> RunIdentity:
    """The identity a run of ``agent`` on ``questions`` (default: every question) would have."""
    selected = project.questions if questions is None else questions
    return RunIdentity(
        source=source_key(project.source),
        question_set_hash=question_set_hash(selected),
        agent_settings_hash=stable_hash(agent_settings(agent, project.settings.llm)),
        sqlbench_version=__version__,
        compare_hash=compare_hash(project.settings.compare),
    )


def identity_of(info: RunInfo) -> RunIdentity:
    """The identity a stored run has."""
    source: str | None
    if info.commit is None:
        source = None
    elif info.dirty:
        source = f"{info.commit}+{info.working_tree_hash}" if info.working_tree_hash else None
    else:
        source = info.commit
    return RunIdentity(
        source=source,
        question_set_hash=info.question_set_hash,
        agent_settings_hash=info.agent_settings_hash,
        sqlbench_version=info.sqlbench_version,
        compare_hash=info.compare_hash,
    )
