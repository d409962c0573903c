"""docs/agent-behaviour.md: the agent's behaviour beyond its SQL.

Deterministic metrics (``tools``, ``trajectory``), assertions (``assertions``), how they are
applied to a graded answer (``compute``) and summarised over a run (``summary``).
"""

from sqlbench.metrics.assertions import answer_record, check_assertions
from sqlbench.metrics.compute import deterministic_metrics, with_metrics
from sqlbench.metrics.summary import MetricSummary, band, summarize_metrics
from sqlbench.metrics.tools import tool_call_success, tool_selection_accuracy
from sqlbench.metrics.trajectory import task_navigation_efficiency

__all__ = [
    "MetricSummary",
    "answer_record",
    "band",
    "check_assertions",
    "deterministic_metrics",
    "summarize_metrics",
    "task_navigation_efficiency",
    "tool_call_success",
    "tool_selection_accuracy",
    "with_metrics",
]
