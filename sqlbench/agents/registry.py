"""Agent kinds by name: validating agent files and building agents for a run.

Built-in kinds: ``command``, ``http``, ``python``, ``replay``, ``llm`` and ``auto`` (the
implicit default agent, also usable as ``kind: auto`` to set its routing ``threshold``). Third
parties add kinds through the entry-point group ``sqlbench.agents``: the entry point's name is
the kind's name and its object an ``AgentKind`` (or a function returning one).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sqlbench.agents.base import Agent
from sqlbench.agents.context import AgentContext
from sqlbench.agents.kinds import AgentKind, problem
from sqlbench.errors import AgentError, Problem, ProjectInvalid, Severity, SqlbenchError
from sqlbench.project.files import AgentConfig
from sqlbench.project.problems import RANGE_ERRORS, allowed_values
from sqlbench.text import closest, one_line, suggest

ENTRY_POINT_GROUP = "sqlbench.agents"
AUTO = "auto"
_BUILTIN_MODULES = ("command", "http", "python", "replay", "llm", "auto")

_lock = threading.RLock()
"""Re-entrant: a plugin imported while kinds load may call ``register_kind``."""
_kinds: dict[str, AgentKind] = {}
_plugin_errors: dict[str, str] = {}
_loaded = False
_loading = False


def register_kind(kind: AgentKind, *, replace: bool = False) -> None:
    """Register an agent kind under ``kind.name``.

    Raises:
        ValueError: A different kind already has that name and ``replace`` is False.
    """
    _ensure_loaded()
    with _lock:
        existing = _kinds.get(kind.name)
        if existing is not None and existing is not kind and not replace:
            raise ValueError(f"an agent kind named {kind.name!r} is already registered")
        _kinds[kind.name] = kind


def unregister_kind(name: str) -> None:
    """Remove a kind (for tests and plugins replacing one)."""
    _ensure_loaded()
    with _lock:
        _kinds.pop(name, None)


def reload_kinds() -> None:
    """Forget every kind and load the built-ins and entry points afresh on next use (after a
    plugin was installed into a running process, and in tests)."""
    global _loaded
    with _lock:
        _kinds.clear()
        _plugin_errors.clear()
        _loaded = False


def kind_names() -> list[str]:
    """Every registered kind's name, sorted."""
    _ensure_loaded()
    return sorted(_kinds)


def get_kind(name: str) -> AgentKind | None:
    """The kind registered as ``name``, or None."""
    _ensure_loaded()
    return _kinds.get(name)


def validate_agent_config(config: AgentConfig) -> list[Problem]:
    """Check an agent's kind and kind-specific keys; every problem is located at the agent.

    Unknown kinds list the known ones (and suggest the closest); unknown keys suggest the
    closest valid key; missing and wrongly typed keys say which; kinds add their own checks
    (the replay file parses, the JSONPaths parse, the module exists, ...).

    Returns:
        Errors and warnings (empty when the agent is fine).
    """
    kind = get_kind(config.kind)
    if kind is None:
        return [problem(config, _unknown_kind_message(config.kind))]
    try:
        options = kind.options.model_validate(config.options)
    except ValidationError as err:
        return _option_problems(config, kind, err)
    if kind.check is None:
        return []
    return list(kind.check(config, options))


def build_agent(config: AgentConfig | str, context: AgentContext) -> Agent:
    """Build an agent ready to ``ask``.

    Args:
        config: An agent's config, or a name: ``"auto"`` (the implicit agent, unless the
            project defines one by that name) or the name of one of ``context.agents``.
        context: The run's project root, certified queries, LLM settings, environment,
            engine, run settings and dialect.

    Raises:
        AgentError: Unknown agent name, or the agent cannot be made (its module does not
            import, no model for a configured endpoint, ...).
        ProjectInvalid: The config has errors (see ``validate_agent_config``).
        ProjectError: A file the agent reads (a replay file) is broken.
    """
    if isinstance(config, str):
        config = named_agent(context.agents, config, context.project_root)
    problems = validate_agent_config(config)
    if any(p.severity is Severity.ERROR for p in problems):
        raise ProjectInvalid(problems)
    kind = get_kind(config.kind)
    assert kind is not None  # validated above
    options = kind.options.model_validate(config.options)
    try:
        return kind.build(config, options, context)
    except SqlbenchError:
        raise
    except Exception as err:  # a plugin's builder failed: name the agent and the cause
        raise AgentError(
            f"agent '{config.name}' (kind {config.kind}) could not be built: "
            f"{one_line(f'{type(err).__name__}: {err}', 300)}"
        ) from err


def agent_notice(agent: Agent) -> str | None:
    """The one-time note an agent wants shown once per run (``auto`` without an endpoint)."""
    notice = getattr(agent, "notice", None)
    return notice if isinstance(notice, str) and notice else None


def named_agent(agents: Mapping[str, AgentConfig], name: str, root: Path) -> AgentConfig:
    """The agent called ``name`` among a project's ``agents``; ``auto`` (the implicit agent,
    based in the project ``root``) unless the project defines one by that name.

    Raises:
        AgentError: No such agent; the closest name is suggested.
    """
    if name in agents:
        return agents[name]
    if name == AUTO:
        return AgentConfig(name=AUTO, kind=AUTO, base_dir=root)
    known = sorted({AUTO, *agents})
    raise AgentError(f"unknown agent {name!r}{suggest(name, known)} (agents: {', '.join(known)})")


def _unknown_kind_message(name: str) -> str:
    names = kind_names()
    if name in _plugin_errors:
        return f"kind {name!r} comes from a plugin that failed to load: {_plugin_errors[name]}"
    return f"unknown kind {name!r}{suggest(name, names)} (kinds: {', '.join(names)})"


def _option_problems(config: AgentConfig, kind: AgentKind, err: ValidationError) -> list[Problem]:
    valid = list(kind.options.model_fields)
    errors = err.errors()
    unknown = [str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden" and e["loc"]]
    # A misspelt required key is one problem (the typo), not also "needs the key".
    suggested = {closest(key, valid) for key in unknown} - {None}
    problems: list[Problem] = []
    seen: set[str] = set()
    for item in errors:
        key = str(item["loc"][0]) if item["loc"] else ""
        if key in seen:
            continue  # one message per key (a union type reports once per member)
        seen.add(key)
        if item["type"] == "extra_forbidden":
            message = (
                f"unknown key {key!r} for kind {kind.name}{suggest(key, valid)} "
                f"(keys: {', '.join(valid)})"
            )
        elif item["type"] == "missing":
            if key in suggested:
                continue
            message = f"kind {kind.name} needs the key '{key}'"
        else:
            where = ".".join(str(part) for part in item["loc"][:2] if not _is_type_name(part))
            got = one_line(repr(item.get("input")), 40)
            what = item["msg"].lower()
            if item["type"] in RANGE_ERRORS and key in kind.options.model_fields:
                what = f"must be {allowed_values(kind.options, key)}"
            message = f"key '{where}': {what} (got {got})"
        problems.append(problem(config, message))
    return problems


def _is_type_name(part: Any) -> bool:
    """Pydantic puts union members (``str``, ``list[str]``) into ``loc``."""
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool"})


def _ensure_loaded() -> None:
    global _loaded, _loading
    if _loaded:
        return
    with _lock:
        if _loaded or _loading:
            return  # loaded meanwhile, or a plugin registering itself while we load it
        _loading = True
        try:
            _load_kinds()
        finally:
            _loading = False
        _loaded = True


def _load_kinds() -> None:
    for module in _BUILTIN_MODULES:
        kind = importlib.import_module(f"sqlbench.agents.{module}").KIND
        _kinds[kind.name] = kind
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry.load()
            kind = loaded if isinstance(loaded, AgentKind) else loaded()
            if not isinstance(kind, AgentKind):
                raise TypeError(f"{entry.value} is not an AgentKind")
        except Exception as err:  # a broken plugin must not break the other kinds
            _plugin_errors[entry.name] = one_line(f"{type(err).__name__}: {err}", 200)
            continue
        _kinds.setdefault(entry.name, kind)
