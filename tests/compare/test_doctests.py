"""The Example: sections of sqlbench.compare's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["api", "bipartite", "reasons", "values"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"sqlbench.compare.{name}")
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0
