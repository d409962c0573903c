"""Live progress of a run on stderr: a rich progress bar with counts per verdict on a terminal,
one plain line per graded question otherwise (CI logs, pipes)."""

from __future__ import annotations

import time
from typing import TextIO

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from sqlbench.hygiene import SafeConsole
from sqlbench.report.run_format import VERDICT_STYLES, latency_text
from sqlbench.runs.events import (
    ProgressEvent,
    QuestionGraded,
    RunCreated,
    RunNotice,
    RunStarted,
    RunWaiting,
)
from sqlbench.text import one_line
from sqlbench.verdicts import Verdict

_REASON_WIDTH = 100
_HELD_LINES = 100
_HELD_S = 0.5


class RateColumn(ProgressColumn):
    """Answers per minute and the time left at that rate: ``12.5/min · ETA 0:04:10``."""

    def render(self, task: Task) -> Text:
        return Text(rate_text(task.speed, task.remaining), style="progress.remaining")


def rate_text(per_second: float | None, remaining: float | None) -> str:
    """``12.5/min · ETA 0:04:10``; ``–/min · ETA –`` before the rate is known.

    Example:
        >>> rate_text(0.5, 125), rate_text(None, 10)
        ('30.0/min · ETA 0:04:10', '–/min · ETA –')
    """
    if not per_second:
        return "–/min · ETA –"
    left = round((remaining or 0) / per_second)
    hours, rest = divmod(left, 3600)
    return f"{per_second * 60:.1f}/min · ETA {hours}:{rest // 60:02d}:{rest % 60:02d}"


def _counts_markup(counts: dict[Verdict, int]) -> str:
    parts = [f"[{VERDICT_STYLES[v]}]{v.value} {counts[v]}[/]" for v in Verdict if counts.get(v)]
    return "  ".join(parts)


class RunProgress:
    """A progress callback for ``run_benchmark``; use as a context manager.

    Args:
        stream: Where to write (stderr in the CLI).
        live: A live progress bar (True on a terminal) or plain lines.
        quiet: Without a live bar, no line per graded question (``run --quiet``, several
            agents): only the runs starting and their notes.
    """

    def __init__(self, stream: TextIO, *, live: bool, quiet: bool = False) -> None:
        self.live = live
        self.quiet = quiet
        self.console = SafeConsole(
            file=stream, force_terminal=live, no_color=not live, highlight=False, soft_wrap=True
        )
        self.run_name: str | None = None
        """The run's name once it started (for the Ctrl-C hint)."""
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._tasks: dict[str, TaskID] = {}
        """Run id -> its bar, for runs started together (``run --agent a,b``)."""
        self._agents: dict[str, str] = {}
        """Run id -> agent name, for runs started together."""
        self.run_names: list[str] = []
        """Every run started, in order (the Ctrl-C hint under ``run --agent a,b``)."""
        self._width = 0
        self._held: list[str] = []
        """Plain lines not written yet: written together (one write, not one per answer, which
        under a busy run waits for the interpreter lock each time)."""
        self._written_at = time.monotonic()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the live display (leaves the last state on screen); write held lines."""
        self.flush()
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def flush(self) -> None:
        """Write the plain lines held back."""
        if self._held:
            self.console.file.write("".join(self._held))
            self.console.file.flush()
            self._held.clear()
        self._written_at = time.monotonic()

    def _hold(self, text: str) -> None:
        """A plain line, written with others at most half a second (or 100 lines) later."""
        if text.isprintable():
            # No control code, tab or line break: rich would print it unchanged (soft wrap,
            # no colour), at a fraction of the cost (8,748 lines in a corpus run).
            self._held.append(text + "\n")
        else:
            with self.console.capture() as captured:
                self.console.print(text, markup=False)
            self._held.append(captured.get())
        if len(self._held) >= _HELD_LINES or time.monotonic() - self._written_at >= _HELD_S:
            self.flush()

    def __call__(self, event: ProgressEvent) -> None:
        if isinstance(event, RunWaiting):
            self.flush()
            return
        if not isinstance(event, QuestionGraded):
            self.flush()  # keep the lines in order
        if isinstance(event, RunCreated):
            self.run_name = event.info.name
        elif isinstance(event, RunStarted):
            self._started(event)
        elif isinstance(event, QuestionGraded):
            self._graded(event)
        elif isinstance(event, RunNotice):
            self.console.print(f"Note: {event.message}", markup=False)

    def _started(self, event: RunStarted) -> None:
        if not event.together:
            self.close()
        info = event.info
        self.run_name = info.name
        self.run_names.append(info.name)
        self._width = max(self._width, len(str(event.total)))
        verb = "Resuming" if event.resumed else "Starting"
        left = event.total - event.done
        done = f" ({event.done} already graded)" if event.resumed else ""
        repeat = f" x{info.repeat}" if info.repeat > 1 else ""
        self.console.print(
            f"{verb} run {info.name}: {left} of {event.total} answers{done}{repeat} · agent "
            f"{info.agent_name} ({info.agent_kind}) · {info.source_label} ({info.environment})",
            markup=False,
        )
        if event.together:
            self._agents[info.id] = info.agent_name
        if not self.live:
            return
        if event.together and self._progress is not None:
            self._tasks[info.id] = self._progress.add_task(
                info.agent_name, total=event.total, completed=event.done, counts=""
            )
            return
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            RateColumn(),
            TextColumn("{task.fields[counts]}"),
            console=self.console,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            info.agent_name if event.together else "sqlbench",
            total=event.total,
            completed=event.done,
            counts=_counts_markup(dict(event.counts)),
        )
        if event.together:
            self._tasks[info.id] = self._task

    def _graded(self, event: QuestionGraded) -> None:
        result = event.result
        task = self._task
        if event.info is not None and event.info.id in self._tasks:
            task = self._tasks[event.info.id]
        if self._progress is not None and task is not None:
            self._progress.update(
                task, completed=event.done, counts=_counts_markup(dict(event.counts))
            )
            return
        if self.quiet:
            return
        agent = ""
        if event.info is not None and event.info.id in self._agents:
            agent = f"{self._agents[event.info.id]} "
        trial = f" #{result.trial}" if result.trial else ""
        reason = one_line(result.reason, _REASON_WIDTH)
        latency = latency_text(result.latency_ms)
        self._hold(
            f"[{event.done:>{self._width}}/{event.total}] {agent}{result.verdict.value:<7} "
            f"{result.full_name}{trial}"
            + (f" ({latency})" if latency else "")
            + (f": {reason}" if result.verdict is not Verdict.PASS else "")
        )
