"""The import direction of docs/architecture.md holds: no module imports a higher layer.

Every ``import sqlbench...`` in ``sqlbench/`` (at module level or inside a function) is checked
against ``LAYERS``, lowest first; a module may import its own layer and the ones below. A new
package, or a top-level module importing from sqlbench, must be placed in a layer here (and in
docs/architecture.md); a top-level module importing nothing from sqlbench is a leaf.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sqlbench

PACKAGE = Path(sqlbench.__file__).parent

LAYERS: list[list[str]] = [
    # 0: leaves, importing nothing from sqlbench
    [
        "sqlbench.errors",
        "sqlbench.exitcodes",
        "sqlbench.text",
        "sqlbench.verdicts",
        "sqlbench.secrets",
        "sqlbench.processes",
        "sqlbench.tempdirs",
        "sqlbench.hygiene",
        "sqlbench.gcpolicy",
        "sqlbench.sqlstatements",
        "sqlbench.metrics.names",
    ],
    # 1: the project files, and the records a run stores
    [
        "sqlbench.project",
        "sqlbench.public",  # public benchmarks' layouts read into project files
        "sqlbench.runs.records",
        "sqlbench.runs.accuracy",
        "sqlbench.runs.rates",
        "sqlbench.runs.provenance",
    ],
    # 2: ground truth per question; result-set comparison
    ["sqlbench.truth", "sqlbench.compare"],
    # 3: warehouses
    ["sqlbench.engines"],
    # 4: agents
    ["sqlbench.agents"],
    # 5: one question's verdict; a project loaded with every check (agents, warehouse)
    ["sqlbench.grading", "sqlbench.validation", "sqlbench.variants", "sqlbench.static_checks"],
    # 6: agent metrics (deterministic and judged)
    ["sqlbench.metrics"],
    # 7: running a benchmark and storing it
    ["sqlbench.runs"],
    # 8: run-to-run comparison
    ["sqlbench.rundiff", "sqlbench.audit"],
    # 9: rendering
    ["sqlbench.report"],
    # 10: the local viewer (`sqlbench view`'s HTTP server)
    ["sqlbench.view"],
    # 11: the command line and test helpers for plugin authors
    ["sqlbench.cli", "sqlbench.__main__", "sqlbench.testing"],
]


def layer_of(module: str) -> int:
    """The layer of ``module``: its longest prefix listed in ``LAYERS``."""
    best, best_len = -1, -1
    for index, units in enumerate(LAYERS):
        for unit in units:
            if (module == unit or module.startswith(unit + ".")) and len(unit) > best_len:
                best, best_len = index, len(unit)
    if best < 0 and _is_unlisted_leaf(module):
        return 0
    if best < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and architecture.md")
    return best


def _is_unlisted_leaf(module: str) -> bool:
    """A top-level module importing nothing from sqlbench is a leaf, listed or not."""
    path = PACKAGE / f"{module.removeprefix('sqlbench.')}.py"
    return module.count(".") == 1 and path.is_file() and not _imports(path)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "sqlbench":
                found += [(node.lineno, f"sqlbench.{alias.name}") for alias in node.names]
            elif node.module.startswith("sqlbench."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("sqlbench.")]
    return found


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if "templates" not in path.relative_to(PACKAGE).parts and path != PACKAGE / "__init__.py"
    ]


def test_no_module_imports_a_higher_layer() -> None:
    upward = []
    for path in _modules():
        module = _module_name(path)
        own = layer_of(module)
        for line, target in _imports(path):
            if target == "sqlbench.__version__":
                continue
            if layer_of(target) > own:
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} -> {target}")
    assert upward == []


def test_no_hidden_imports_by_name() -> None:
    """``importlib.import_module`` with a sqlbench module name hides an import from this test;
    only the registries (agent kinds) and the lazy public API may load modules by name."""
    allowed = {"sqlbench/agents/registry.py", "sqlbench/agents/python.py"}
    hidden = [
        str(path.relative_to(PACKAGE.parent))
        for path in _modules()
        if str(path.relative_to(PACKAGE.parent)) not in allowed
        and 'import_module("sqlbench' in path.read_text(encoding="utf-8")
    ]
    assert hidden == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [("sqlbench.text", 0), ("sqlbench.runs.records", 1), ("sqlbench.runs.runner", 7)],
)
def test_the_most_specific_layer_wins(module: str, layer: int) -> None:
    assert layer_of(module) == layer
