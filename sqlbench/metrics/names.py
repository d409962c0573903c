"""The agent-behaviour metric names, as JSON, summaries and ``check: metrics:`` spell them."""

from __future__ import annotations

TOOL_SELECTION_ACCURACY = "tool_selection_accuracy"
TASK_NAVIGATION_EFFICIENCY = "task_navigation_efficiency"
TOOL_CALL_SUCCESS = "tool_call_success"
ANSWER_CORRECTNESS = "answer_correctness"
LOGICAL_CONSISTENCY = "logical_consistency"
TOOL_EXECUTION_ACCURACY = "tool_execution_accuracy"

DETERMINISTIC = (TOOL_SELECTION_ACCURACY, TASK_NAVIGATION_EFFICIENCY, TOOL_CALL_SUCCESS)
"""Computed on every run where a question asks for them; no model needed."""
JUDGED = (ANSWER_CORRECTNESS, LOGICAL_CONSISTENCY, TOOL_EXECUTION_ACCURACY)
"""Built-in metrics computed only when a judge is configured."""
BUILT_IN = DETERMINISTIC + JUDGED
