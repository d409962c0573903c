"""The ``python`` kind: ``module:function`` importable from the project folder.

The function takes the request as a plain mapping and returns SQL text or an answer mapping;
it may be ``async``. Modules are imported from the project root of the version being evaluated,
and every module loaded from that root is removed from ``sys.modules`` right after the import:
two roots (two git refs in one process) therefore never share a module, and a project module
named like an installed one (``utils``) shadows it only while the project is imported.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import threading
from collections.abc import Callable
from importlib.machinery import PathFinder
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import Field

from sqlbench.agents.base import Answer, Request
from sqlbench.agents.call import parse_answer
from sqlbench.agents.context import AgentContext
from sqlbench.agents.kinds import AgentKind, KindOptions, problem, project_root_of
from sqlbench.errors import AgentError, Problem
from sqlbench.project.files import AgentConfig
from sqlbench.text import one_line

_REFERENCE = re.compile(
    r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*):([A-Za-z_][\w]*(?:\.[A-Za-z_]"
    r"[\w]*)*)$"
)
_IMPORT_LOCK = threading.Lock()
"""sys.path and sys.modules are process-wide: one project import at a time."""


class PythonOptions(KindOptions):
    """Keys of a ``python`` agent."""

    function: str = Field(min_length=1)
    """``module:function`` (``agents.sql_agent:answer``); the function may be async."""


def split_reference(reference: str) -> tuple[str, str]:
    """Split ``module:function`` into its parts.

    Raises:
        ValueError: Not of the form ``module:function``.

    Example:
        >>> split_reference("agents.sql_agent:Agent.answer")
        ('agents.sql_agent', 'Agent.answer')
    """
    match = _REFERENCE.match(reference.strip())
    if match is None:
        raise ValueError(f"`function` must look like module:function, got {reference!r}")
    return match.group(1), match.group(2)


def load_function(reference: str, root: Path) -> Callable[..., Any]:
    """Import ``module:function`` from ``root`` without leaving modules of ``root`` cached.

    Raises:
        AgentError: The module cannot be imported, or it has no such callable.
    """
    module_name, attribute = split_reference(reference)
    module = _import_isolated(module_name, root.resolve())
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AgentError(
                f"{module_name} has no attribute {attribute!r} (from `function: {reference}`)"
            ) from None
    if not callable(target):
        raise AgentError(f"{reference} is a {type(target).__name__}, not a function")
    return target  # type: ignore[no-any-return]


def _import_isolated(module_name: str, root: Path) -> ModuleType:
    top = module_name.split(".")[0]
    with _IMPORT_LOCK:
        # An installed (or earlier) module of the same top-level name must not answer for
        # the project's: set it aside during the import and put it back afterwards.
        shadowed = {
            name: sys.modules.pop(name) for name in list(sys.modules) if _in_package(name, top)
        }
        before = set(sys.modules)
        sys.path.insert(0, str(root))
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module_name)
        except Exception as err:  # the user's module failed to import: say which and why
            raise AgentError(
                f"cannot import {module_name} from {root}: "
                f"{one_line(f'{type(err).__name__}: {err}', 300)}"
            ) from err
        finally:
            sys.path.remove(str(root))
            for name in set(sys.modules) - before:
                if _in_package(name, top) or _is_under(sys.modules[name], root):
                    del sys.modules[name]
            sys.modules.update(shadowed)


def _in_package(name: str, top: str) -> bool:
    return name == top or name.startswith(top + ".")


def _is_under(module: ModuleType | None, root: Path) -> bool:
    locations = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
    return any(location and Path(location).resolve().is_relative_to(root) for location in locations)


class PythonAgent:
    """Calls a project function per question; see the module docstring."""

    notice: str | None = None

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self.name = name
        self.function = function

    async def answer(self, request: Request) -> Answer:
        """Call the function with the request mapping (awaiting it when async)."""
        result = self.function(request.model_dump())
        if inspect.isawaitable(result):
            result = await result
        if result is None:
            raise AgentError("the function returned None; return SQL text or an answer mapping")
        return parse_answer(result)


def _check(config: AgentConfig, options: PythonOptions) -> list[Problem]:
    try:
        module_name, _ = split_reference(options.function)
    except ValueError as err:
        return [problem(config, str(err))]
    top = module_name.split(".")[0]
    root = project_root_of(config)
    if root is None:
        return []  # made in code, not from a file: building it imports it and says so
    if PathFinder.find_spec(top, [str(root)]) is None and find_spec(top) is None:
        return [
            problem(
                config,
                f"module {top!r} is found neither in the project folder nor "
                "among installed packages",
            )
        ]
    return []


def _build(config: AgentConfig, options: PythonOptions, context: AgentContext) -> PythonAgent:
    return PythonAgent(config.name, load_function(options.function, context.project_root))


KIND = AgentKind(
    "python",
    PythonOptions,
    _build,
    _check,
    "module:function from the project folder, sync or async",
)
