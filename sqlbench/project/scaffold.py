"""``sqlbench init``: write a small example project that validates and runs offline.

The files come from ``sqlbench/templates/init/``. Template files whose names start with a dot
are stored without it (``gitignore``), since packaging tools tend to drop dot-files.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import NamedTuple

from sqlbench.errors import SqlbenchError
from sqlbench.project.gitfs import PROJECT_MARKERS

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


def scaffold_project(directory: Path | str) -> Scaffold:
    """Write the example project into ``directory`` (created if missing).

    Raises:
        SqlbenchError: ``directory`` is a file, already holds a sqlbench project, or any file
            to be written exists already (nothing is written then).
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise SqlbenchError(f"{root} exists and is not a folder")
    present = [marker for marker in PROJECT_MARKERS if (root / marker).exists()]
    if present:
        raise SqlbenchError(
            f"{root} already holds a sqlbench project ({', '.join(present)}); "
            "refusing to write into it"
        )
    files = template_files()
    conflicts = [rel for rel in files if (root / rel).exists() and rel not in _OPTIONAL]
    if conflicts:
        raise SqlbenchError(
            f"refusing to overwrite existing files in {root}: "
            f"{', '.join(conflicts)}; move them away or pick another folder"
        )
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
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            target.write_bytes(content)
        except OSError as err:
            raise SqlbenchError(f"cannot write {target}: {err.strerror or err}") from err
        created.append(rel)
    return Scaffold(root, created, notes)
