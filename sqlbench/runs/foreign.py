"""Whether a run (imported, most often) belongs to this project: its questions are here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sqlbench.errors import SqlbenchError
from sqlbench.project.load import check_project
from sqlbench.records.run import TrialResult


def foreign_questions_note(project_dir: Path, trials: Iterable[TrialResult]) -> str | None:
    """A sentence when some of a run's questions are not in the project at ``project_dir``
    (a run of another project imported here), else None. Says nothing when the project
    cannot be read (``validate`` reports that).

    Args:
        project_dir: The project folder.
        trials: The run's results.
    """
    theirs = {(t.space, t.name) for t in trials}
    if not theirs:
        return None
    try:
        check = check_project(project_dir)
    except SqlbenchError:
        return None
    if check.project is None:
        return None
    here = {(q.space, q.name) for q in check.project.questions}
    missing = len(theirs - here)
    if missing == 0:
        return None
    if missing == len(theirs):
        return (
            f"none of this run's {len(theirs)} questions is in this project: it looks like "
            "a run of another project, and compare or check will find no question to pair"
        )
    return (
        f"{missing} of this run's {len(theirs)} questions are not in this project "
        "(another project's run, or questions since removed)"
    )
