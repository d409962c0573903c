"""Checks ``sqlbench validate`` makes without running anything, so that it never passes what
``sqlbench run`` then refuses: setup files written as dbt models (Jinja), setup SQL DuckDB's
parser rejects, ``setup:`` on a warehouse that cannot build it, and a ``python`` agent whose
function is not in its module.

Nothing here runs SQL or imports the project's code: DuckDB's parser reads without executing,
and agent modules are read with ``ast``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sqlbench.engines.open import setup_files
from sqlbench.engines.profiles import profile_for
from sqlbench.errors import EngineError, Problem, Severity
from sqlbench.project.dialect import url_scheme, warehouse_dialect
from sqlbench.project.files import Project, Settings
from sqlbench.text import suggest

_JINJA = re.compile(r"\{\{|\{%")


def static_problems(project: Project) -> list[Problem]:
    """Every problem of this module's kinds in ``project``, by file and line."""
    problems: list[Problem] = []
    seen: set[Path] = set()
    settings_list = [project.settings]
    settings_list += [project.settings.for_warehouse(n) for n in project.settings.warehouses]
    for settings in settings_list:
        problems += _setup_problems(settings, project.root, seen)
    for agent in project.agents.values():
        if agent.kind == "python":
            problem = _python_function_problem(agent.options.get("function"), project.root)
            if problem is not None:
                problems.append(Problem(Severity.ERROR, problem, agent.path or None, agent.line))
    return problems


def _setup_problems(settings: Settings, root: Path, seen: set[Path]) -> list[Problem]:
    if not settings.setup:
        return []
    try:
        files = setup_files(settings, root)
    except EngineError:
        return []  # a glob that matches nothing is reported by the settings check
    problems: list[Problem] = []
    dialect = settings.dialect or warehouse_dialect(settings.warehouse)
    scheme = url_scheme(settings.warehouse or "")
    if scheme in ("mysql", "mariadb"):
        refusal = profile_for("mysql").setup_refusal()
        if refusal:
            problems.append(Problem(Severity.ERROR, refusal, "sqlbench.yml", None))
    for path in files:
        if path in seen:
            continue
        seen.add(path)
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # reading errors are the engine's to report, with its sentence
        found = _JINJA.search(text)
        if found is not None:
            line = text.count("\n", 0, found.start()) + 1
            problems.append(
                Problem(
                    Severity.ERROR,
                    "setup SQL holds Jinja templating ({{ ... }} or {% ... %}): sqlbench runs "
                    "SQL files as they are, not dbt models; point `setup` at compiled SQL "
                    "(`dbt compile` writes it under target/compiled/)",
                    rel,
                    line,
                )
            )
            continue
        if dialect == "duckdb":
            message = _duckdb_parse_error(text)
            if message is not None:
                problems.append(
                    Problem(Severity.ERROR, f"setup SQL has a syntax error: {message}", rel, None)
                )
    return problems


def _duckdb_parse_error(text: str) -> str | None:
    """DuckDB's parser message for ``text`` (parsed, never run), or None when it parses."""
    import duckdb

    with duckdb.connect() as con:
        try:
            con.extract_statements(text)
        except duckdb.ParserException as err:
            return " ".join(str(err).split("\n", 1)[0].split())
    return None


def _python_function_problem(reference: object, root: Path) -> str | None:
    """Why ``module:function`` names nothing in a module file of the project (read with
    ``ast``, not imported), or None (also when the module is not a project file)."""
    if not isinstance(reference, str) or ":" not in reference:
        return None  # the kind's own check says what is wrong with the form
    module, _, attribute = reference.strip().partition(":")
    base = root.joinpath(*module.split("."))
    source = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    if source is None:
        return None
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError) as err:
        where = source.relative_to(root).as_posix()
        return f"`function: {reference}`: {where} cannot be read as Python ({err})"
    first = attribute.split(".", 1)[0]
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
    if first in names or "*" in names:
        return None
    return (
        f"`function: {reference}`: {source.relative_to(root).as_posix()} defines no "
        f"{first!r}{suggest(first, sorted(names))}"
    )
