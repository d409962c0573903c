"""The import direction of docs/architecture.md holds: no module imports a higher layer, and
no modules import each other in a loop.

Every ``import sqlbench...`` in ``sqlbench/`` (at module level, inside a function or under
``TYPE_CHECKING``) is checked against ``LAYERS``, lowest first; a module may import its own layer
and the ones below. A new package, or a top-level module importing from sqlbench, must be placed
in a layer here (and in docs/architecture.md); a top-level module importing nothing from
sqlbench is a leaf. The same imports, module to module, may form no cycle.
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
        "sqlbench.dbt.refs",  # {{ ref('m') }} in SQL text, read by the project's checks too
    ],
    # 1: the project files, and the records a run stores
    [
        "sqlbench.project",
        "sqlbench.public",  # public benchmarks' layouts read into project files
        "sqlbench.records",  # what every upper layer reads: run records, accuracy, rates
    ],
    # 2: ground truth per question; result-set comparison; dbt projects built per ref
    ["sqlbench.truth", "sqlbench.sqlreads", "sqlbench.compare", "sqlbench.dbt"],
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


def import_graph() -> dict[str, dict[str, str]]:
    """Each module's imports of other sqlbench modules: target -> where (``path:line``). An
    import of a name from a package is an import of the package (its ``__init__``), of a
    submodule the submodule."""
    paths = {_module_name(path): path for path in _modules()}
    graph: dict[str, dict[str, str]] = {module: {} for module in paths}
    for module, path in paths.items():
        for line, target in _imports(path):
            if target not in paths:
                target = target.rsplit(".", 1)[0]
            if target in paths and target != module:
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                graph[module].setdefault(target, where)
    return graph


def import_cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan's
    algorithm, iterative), each as its modules in name order.

    Example:
        >>> import_cycles({"a": {"b": ""}, "b": {"a": ""}, "c": {"a": ""}})
        [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        walk = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while walk:
            node, targets = walk[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    walk.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            walk.pop()
            if walk:
                low[walk[-1][0]] = min(low[walk[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles = [
        " <-> ".join(members)
        + ": "
        + "; ".join(
            f"{where} {module} -> {target}"
            for module in members
            for target, where in sorted(graph[module].items())
            if target in members
        )
        for members in import_cycles(graph)
    ]
    assert not cycles, "modules importing each other in a loop:\n" + "\n".join(cycles)


def test_no_hidden_imports_by_name() -> None:
    """``importlib.import_module`` with a sqlbench module name hides an import from this test;
    only the registries (agent kinds, engines) and the lazy public API may load modules by
    name."""
    allowed = {
        "sqlbench/agents/registry.py",
        "sqlbench/agents/python.py",
        "sqlbench/engines/registry.py",
    }
    hidden = [
        str(path.relative_to(PACKAGE.parent))
        for path in _modules()
        if str(path.relative_to(PACKAGE.parent)) not in allowed
        and 'import_module("sqlbench' in path.read_text(encoding="utf-8")
    ]
    assert hidden == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [("sqlbench.text", 0), ("sqlbench.records.run", 1), ("sqlbench.runs.runner", 7)],
)
def test_the_most_specific_layer_wins(module: str, layer: int) -> None:
    assert layer_of(module) == layer
