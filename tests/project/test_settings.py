"""Each setting is defined once: a key that overrides a project-wide one (a question's
``compare:``, a warehouse's ``run:``) accepts and refuses exactly what the project-wide key does,
and ``compare_results`` checks its options by the same definition."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel, ValidationError

from sqlbench.compare import CompareOptionError, compare_results
from sqlbench.project.files import (
    RUN_WIDE_COMPARE_KEYS,
    CompareOptions,
    CompareOverrides,
    RunSettings,
    WarehouseLimits,
)

VALUES: list[Any] = [
    -1,
    0,
    1e-12,
    0.5,
    1,
    1.5,
    7,
    50,
    51,
    86_400,
    86_401,
    10**12,
    float("inf"),
    float("nan"),
    "auto",
    "strict",
    "set",
    "exact",
    "bag",
    None,
]


def _accepts(model: type[BaseModel], key: str, value: Any) -> bool:
    try:
        model.model_validate({key: value})
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("overrides", "full"), [(CompareOverrides, CompareOptions), (WarehouseLimits, RunSettings)]
)
def test_an_override_accepts_exactly_what_the_project_wide_key_accepts(
    overrides: type[BaseModel], full: type[BaseModel]
) -> None:
    assert set(overrides.model_fields) <= set(full.model_fields)
    differ = [
        (key, value)
        for key in overrides.model_fields
        for value in VALUES
        if value is not None and _accepts(overrides, key, value) != _accepts(full, key, value)
    ]
    assert differ == []
    assert all(_accepts(overrides, key, None) for key in overrides.model_fields)  # unset


def test_every_compare_key_can_be_overridden_per_question() -> None:
    # max_work_ratio (a check rule) and decline_penalty (it weighs the run's wrong answers:
    # docs/conversations.md) are run-level only.
    per_question = set(CompareOptions.model_fields) - RUN_WIDE_COMPARE_KEYS
    assert set(CompareOverrides.model_fields) == per_question


@pytest.mark.parametrize(
    ("key", "value"),
    [("rel_tol", 1.5), ("rel_tol", 1), ("abs_tol", -0.1), ("order", "sorted"), ("rows", "list")],
)
def test_compare_results_refuses_what_sqlbench_yml_refuses(key: str, value: Any) -> None:
    assert not _accepts(CompareOptions, key, value)
    frame = pd.DataFrame({"n": [1]})
    with pytest.raises(CompareOptionError, match=f"^{key} must be "):
        compare_results(frame, frame, **{key: value})
