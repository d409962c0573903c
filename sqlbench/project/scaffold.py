"""``sqlbench init``: write a small example project that validates and runs offline.

The files come from ``sqlbench/templates/init/``. Template files whose names start with a dot
are stored without it (``gitignore``), since packaging tools tend to drop dot-files.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from sqlbench.errors import SqlbenchError
from sqlbench.project.gitfs import PROJECT_MARKERS
from sqlbench.project.root import find_project_root

_DOT_FILES = {"gitignore": ".gitignore"}
_OPTIONAL = {".gitignore"}
"""Files skipped (with a note) when they already exist, instead of refusing."""


class Scaffold(NamedTuple):
    """What ``scaffold_project`` did."""

    root: Path
    created: list[str]
    """Files written, relative to ``root`` (posix)."""
    notes: list[str]
    """Things the user should do by hand (e.g. add ``.sqlbench/`` to an existing .gitignore)."""


def template_files() -> dict[str, bytes]:
    """The init template: relative path (posix, dot-names restored) to content."""
    base = resources.files("sqlbench") / "templates" / "init"
    found: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[prefix + _DOT_FILES.get(child.name, child.name)] = child.read_bytes()

    walk(base, "")
    if not found:
        raise SqlbenchError("the init template is missing from this sqlbench installation")
    return found


WORKFLOW_PATH = ".github/workflows/sqlbench-check.yml"
"""Where ``sqlbench init --github-actions`` writes the pull-request check workflow."""


_FIXED_PATHS = ("sqlbench.yml", "eval_questions/**", "certified_queries/**", "agents/**")
_PATHS_BLOCK = re.compile(r"(?m)^(    paths:\n)((?:      - .*\n)+)")
_SQL_STRING = re.compile(r"'((?:[^']|'')*)'")


def workflow_template() -> bytes:
    """The GitHub Actions workflow that runs ``sqlbench check`` on pull requests (docs/ci.md),
    as shipped (its ``paths:`` fit the ``sqlbench init`` example project)."""
    node = resources.files("sqlbench") / "templates" / "ci" / "sqlbench-check.yml"
    return node.read_bytes()


def render_workflow(root: Path) -> bytes:
    """The workflow for the project in ``root``: its pull-request ``paths:`` filter follows
    sqlbench.yml (``setup:`` globs of every warehouse, a local warehouse file, and the data
    files the setup SQL loads by a quoted relative path), so a PR that changes only a loaded
    CSV still runs the check.

    Raises:
        SqlbenchError: sqlbench.yml cannot be read or has errors.
    """
    paths = [*_FIXED_PATHS, *_project_paths(root), WORKFLOW_PATH]
    lines = "".join(f"      - {json.dumps(p)}\n" for p in dict.fromkeys(paths))
    text = workflow_template().decode("utf-8")
    return _PATHS_BLOCK.sub(lambda m: m.group(1) + lines, text, count=1).encode("utf-8")


def _project_paths(root: Path) -> list[str]:
    from sqlbench.errors import ProjectInvalid, Severity
    from sqlbench.project.load import read_settings

    read = read_settings(root)
    if any(problem.severity is Severity.ERROR for problem in read.problems):
        raise ProjectInvalid(read.problems)
    settings = read.settings
    globs = list(settings.setup)
    warehouses = [settings.warehouse, *(w.url for w in settings.warehouses.values())]
    for own in settings.warehouses.values():
        globs.extend(own.setup)
    found: list[str] = []
    for pattern in globs:
        found.append(pattern)
        for sql_file in sorted(p for p in root.glob(pattern) if p.is_file()):
            found.extend(
                _loaded_files(root, sql_file.read_text(encoding="utf-8", errors="replace"))
            )
    if settings.dbt is not None:
        # A dbt project is the data model (docs/dbt.md): a change to any of its files.
        base = PurePosixPath(settings.dbt.project_dir)
        for rel in ("dbt_project.yml", "packages.yml", "profiles.yml"):
            found.append((base / rel).as_posix())
        for folder in ("models", "seeds", "snapshots", "macros"):
            found.append((base / folder / "**").as_posix())
    for url in warehouses:
        if url and "://" not in url and "${" not in url and (root / url).is_file():
            found.append(Path(url).as_posix())
    return found


def _loaded_files(root: Path, sql: str) -> list[str]:
    """Quoted relative paths in ``sql`` that name files in the project (globs included)."""
    files = []
    for match in _SQL_STRING.finditer(sql):
        text = match.group(1).replace("''", "'")
        if not text or text.startswith(("/", "~")) or "://" in text or ".." in text:
            continue
        try:
            hits = [p for p in root.glob(text) if p.is_file()]
        except (ValueError, NotImplementedError):
            continue
        if hits:
            files.append(text)
    return files


def add_workflow(directory: Path | str) -> Scaffold:
    """Write only the GitHub Actions check workflow into an existing project folder.

    Raises:
        SqlbenchError: the workflow file exists already, or cannot be written.
    """
    root = Path(directory)
    target = root / WORKFLOW_PATH
    if target.exists():
        raise SqlbenchError(f"refusing to overwrite {target}; move it away first")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render_workflow(root))
    except OSError as err:
        raise SqlbenchError(f"cannot write {target}: {err.strerror or err}") from err
    return Scaffold(root, [WORKFLOW_PATH], [])


def ensure_new_project(root: Path, files: list[str]) -> None:
    """Refuse to write a project into ``root`` when it is a file, already holds a project, is
    inside one (a parent folder holds one), or holds any of ``files`` (relative paths).

    Raises:
        SqlbenchError: One of those, in one sentence.
    """
    if root.exists() and not root.is_dir():
        raise SqlbenchError(f"{root} exists and is not a folder")
    present = [marker for marker in PROJECT_MARKERS if (root / marker).exists()]
    if present:
        raise SqlbenchError(
            f"{root} already holds a sqlbench project ({', '.join(present)}); "
            "refusing to write into it"
        )
    outer = find_project_root(root.resolve().parent)
    if outer is not None:
        raise SqlbenchError(
            f"{root.resolve()} is inside the sqlbench project {outer}: refusing to nest a "
            f"project in it. sqlbench commands run anywhere below {outer} use that project; "
            "to start a separate one, init a folder outside it"
        )
    conflicts = [rel for rel in files if (root / rel).exists()]
    if conflicts:
        raise SqlbenchError(
            f"refusing to overwrite existing files in {root}: "
            f"{', '.join(conflicts)}; move them away or pick another folder"
        )


def scaffold_project(directory: Path | str, *, github_actions: bool = False) -> Scaffold:
    """Write the example project into ``directory`` (created if missing); with
    ``github_actions``, also the pull-request check workflow.

    Raises:
        SqlbenchError: ``directory`` is a file, already holds or is inside a sqlbench project
            (a parent folder holds one), or any file
            to be written exists already (nothing is written then).
    """
    root = Path(directory)
    files = template_files()
    if github_actions:
        files[WORKFLOW_PATH] = workflow_template()
    ensure_new_project(root, [rel for rel in files if rel not in _OPTIONAL])
    created: list[str] = []
    notes: list[str] = []
    for rel, content in files.items():
        target = root / rel
        if target.exists():
            notes.append(
                f"{rel} exists already and was left as it is; add `.sqlbench/` "
                "(the local run store) to it"
            )
            continue
        if rel == WORKFLOW_PATH:
            content = render_workflow(root)  # the project's files are written by now
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        except OSError as err:
            raise SqlbenchError(f"cannot write {target}: {err.strerror or err}") from err
        created.append(rel)
    return Scaffold(root, created, notes)
