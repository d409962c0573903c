"""Progress events the run loop reports through its callback (the library never prints).

The callback is always called from the thread that called ``run_benchmark``, one event at a
time, so a renderer needs no locking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlbench.records.run import RunInfo, TrialResult
from sqlbench.verdicts import Verdict


@dataclass(frozen=True)
class RunCreated:
    """The run is stored (status Running), before its warehouse and agent are set up: from
    here on, Ctrl-C leaves a run that ``--resume`` can finish."""

    info: RunInfo


@dataclass(frozen=True)
class RunStarted:
    """The run is set up and about to ask its first question."""

    info: RunInfo
    total: int
    """Answers the run needs in all (questions x repeat, skipped questions once)."""
    done: int
    """Answers already stored (a resumed run); they are not asked again."""
    counts: Mapping[Verdict, int]
    """Verdicts of the answers already stored."""
    resumed: bool
    together: bool = False
    """Runs alongside other agents' runs (``run --agent a,b``): their answers are graded
    interleaved, and each ``QuestionGraded`` names its run."""


@dataclass(frozen=True)
class QuestionGraded:
    """One answer was graded and committed to the store."""

    result: TrialResult
    done: int
    total: int
    counts: Mapping[Verdict, int]
    """Verdicts so far (resumed answers included)."""
    info: RunInfo | None = None
    """The run the answer belongs to when several run together; None: the only one."""


@dataclass(frozen=True)
class RunNotice:
    """Something the user should read once (an agent's note, a resume caveat)."""

    message: str


@dataclass(frozen=True)
class RunWaiting:
    """No answer was graded for a while (half a second): a renderer that holds lines back
    writes them now."""


ProgressEvent = RunCreated | RunStarted | QuestionGraded | RunNotice | RunWaiting
ProgressCallback = Callable[[ProgressEvent], None]
