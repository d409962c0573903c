"""sqlbench: an execution-based benchmark harness for text-to-SQL agents."""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlbench.agents import AgentContext, ask, build_agent
    from sqlbench.compare import Comparison, compare_results
    from sqlbench.metrics import summarize_metrics
    from sqlbench.runs.judging import judge_run
    from sqlbench.runs.plan import RunOptions
    from sqlbench.runs.runner import run_benchmark
    from sqlbench.validation import Validation, load_project, validate_project

# Public names imported on first use, so `import sqlbench` stays light: name -> module.
_LAZY: dict[str, str] = {
    "AgentContext": "sqlbench.agents",
    "ask": "sqlbench.agents",
    "build_agent": "sqlbench.agents",
    "load_project": "sqlbench.validation",
    "validate_project": "sqlbench.validation",
    "Validation": "sqlbench.validation",
    "compare_results": "sqlbench.compare",
    "run_benchmark": "sqlbench.runs.runner",
    "RunOptions": "sqlbench.runs.plan",
    "Comparison": "sqlbench.compare",
    "judge_run": "sqlbench.runs.judging",
    "summarize_metrics": "sqlbench.metrics",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sqlbench' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentContext",
    "Comparison",
    "RunOptions",
    "Validation",
    "__version__",
    "ask",
    "build_agent",
    "compare_results",
    "judge_run",
    "load_project",
    "run_benchmark",
    "summarize_metrics",
    "validate_project",
]
