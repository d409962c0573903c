"""Project files stay inside the project: a file that is (or sits under) a symlink to somewhere
outside the project folder is refused with one sentence, never read (docs/security.md).

Applies to the working tree and to a branch's extracted files alike: question, certified-query
and agent files, ``sqlbench.yml``, setup SQL and replay recordings.
"""

from __future__ import annotations

from pathlib import Path


def outside_project(root: Path, path: Path) -> bool:
    """Whether ``path``, with every symlink followed, lies outside ``root``.

    Example:
        >>> import tempfile, os
        >>> root = Path(tempfile.mkdtemp())
        >>> os.symlink("/etc/hostname", root / "x.yml")
        >>> outside_project(root, root / "x.yml"), outside_project(root, root / "y.yml")
        (True, False)
    """
    return not path.resolve().is_relative_to(root.resolve())


def outside_message(rel: str) -> str:
    """The one sentence for a refused file.

    Example:
        >>> outside_message("eval_questions/pg.yml")  # doctest: +ELLIPSIS
        'eval_questions/pg.yml links outside the project; sqlbench reads only files inside ...'
    """
    return (
        f"{rel} links outside the project; sqlbench reads only files inside the project "
        "folder (copy the file in instead of linking it)"
    )
