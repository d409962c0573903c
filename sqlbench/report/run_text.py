"""Runs as terminal text (rich): the per-question table, the run list, one question in full."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sqlbench.hygiene import SafeConsole
from sqlbench.records.accuracy import Accuracy
from sqlbench.records.run import Preview, RunInfo, RunStatus, RunSummary, TrialResult, TurnResult
from sqlbench.report.metric_format import metric_detail, metric_lines
from sqlbench.report.plain_table import Cell, Column, PlainTable, print_table
from sqlbench.report.run_format import (
    VERDICT_STYLES,
    abstention_line,
    accuracy_line,
    counts_line,
    economy_lines,
    has_conversations,
    human_line,
    latency_text,
    not_asked_line,
    question_latency,
    run_line,
    shows_abstention,
    summary_lines,
    tokens_text,
    trial_economy,
    turn_accuracy_line,
    usage_line,
    usd_text,
    verdict_text,
    warehouse_lines,
    when_text,
)
from sqlbench.runs.scores import QuestionResult, RunResult, pick_trial
from sqlbench.text import one_line, percent
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.variants.rebuild import RebuiltVariant

_STATUS_STYLES = {
    RunStatus.RUNNING: "cyan",
    RunStatus.COMPLETED: "green",
    RunStatus.INTERRUPTED: "yellow",
    RunStatus.FAILED: "red",
    RunStatus.CORRUPT: "bold red",
}
_CELL = 60
"""Widest preview cell, in characters."""


_UNWRAPPED_WIDTH = 1000
"""Console width for tables that must not wrap when no terminal width is known."""


def _render(parts: Sequence[RenderableType], *, color: bool, width: int | None) -> str:
    buffer = io.StringIO()
    console = SafeConsole(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        width=width or 120,
        highlight=False,
        soft_wrap=False,
    )
    for part in parts:
        if isinstance(part, PlainTable):
            print_table(console, part)
        else:
            console.print(part)
    return buffer.getvalue()


def render_run(
    run: RunResult,
    *,
    color: bool = False,
    width: int | None = None,
    questions: Sequence[QuestionResult] | None = None,
    summary: bool = False,
    per_question: bool = True,
) -> str:
    """The per-question table (``questions``: the ones picked by filters; default every
    question), then the accuracy, the counts and the run's identity; with ``summary``, the
    accuracy per space and tag, latency and tokens instead of the table; without
    ``per_question`` (``run --quiet``), no table, and where to find it."""
    if summary:
        return _render(
            [
                Text(accuracy_line(run.accuracy, run.info.repeat), style="bold"),
                counts_line(run),
                *_not_asked(run),
                *_conversation_lines(run),
                *summary_lines(run),
                Text(run_line(run.info), style="dim"),
            ],
            color=color,
            width=width,
        )
    shown = run.questions if questions is None else list(questions)
    repeat = run.info.repeat > 1
    # A corpus run shows thousands of rows: drawn as rich would, without rich's per-cell cost.
    columns = [Column("Question", no_wrap=True), Column("Verdict", no_wrap=True)]
    if repeat:
        columns.append(Column("Pass rate", justify="right", no_wrap=True))
    columns += [
        Column("Reason", overflow="fold", ratio=1),
        Column("Latency", justify="right", no_wrap=True),
    ]
    table = PlainTable(columns)
    for question in shown:
        cells: list[Cell] = [
            question.full_name,
            (verdict_text(question), VERDICT_STYLES[question.verdict]),
        ]
        if repeat:
            cells.append("" if question.pass_rate is None else percent(question.pass_rate))
        cells += [question.reason, latency_text(question_latency(question))]
        table.add_row(*cells)
    status = "" if run.status is RunStatus.COMPLETED else f" ({run.status.label})"
    failed = (
        [Text(f"Failed: {run.info.error}", style="red")]
        if run.status is RunStatus.FAILED and run.info.error
        else []
    )
    scope = [f"Partial run: {run.info.scope_label}"] if run.info.partial else []
    filtered = []
    if len(shown) != len(run.questions):
        filtered.append(
            f"Showing {len(shown)} of {len(run.questions)} questions; the accuracy below is "
            "the whole run's"
        )
    usage = usage_line(run)
    head: list[RenderableType] = [table, *filtered, ""] if per_question else []
    parts: list[RenderableType] = [
        *head,
        Text(accuracy_line(run.accuracy, run.info.repeat) + status, style="bold"),
        *failed,
        *scope,
        counts_line(run),
        *_not_asked(run),
        *_conversation_lines(run),
        *metric_lines(t for q in run.questions for t in q.trials),
        *warehouse_lines(run),
        *([usage] if usage else []),
        *economy_lines(run),
        Text(run_line(run.info), style="dim"),
        *([] if per_question else [Text(show_hint([run.info.name]), style="dim")]),
    ]
    return _render(parts, color=color, width=width)


def show_hint(names: Sequence[str]) -> str:
    """Where the per-question results of runs whose table was not printed are.

    Example:
        >>> show_hint(["r1"])
        'Per question: sqlbench show r1'
        >>> show_hint(["a", "b"])
        'Per question: sqlbench show RUN (a, b)'
    """
    if len(names) == 1:
        return f"Per question: sqlbench show {names[0]}"
    return f"Per question: sqlbench show RUN ({', '.join(names)})"


def _conversation_lines(run: RunResult) -> list[str]:
    """Per-turn accuracy (a run with conversations) and the answered/declined line."""
    abstention = run.abstention()
    lines = [turn_accuracy_line(abstention)] if has_conversations(run) else []
    return lines + ([abstention_line(abstention)] if shows_abstention(run) else [])


class RunTally(NamedTuple):
    """What the line of a run in ``render_agents_summary`` needs, kept once the run's
    results are dropped (``run --agent a,b`` renders and drops one run at a time)."""

    info: RunInfo
    status: RunStatus
    accuracy: Accuracy
    counts: dict[Verdict, int]
    """Questions per verdict (``RunResult.counts``)."""

    @classmethod
    def of(cls, run: RunResult) -> RunTally:
        return cls(run.info, run.status, run.accuracy, run.counts())


def render_agents_summary(runs: Sequence[RunResult | RunTally], *, width: int | None = None) -> str:
    """After ``run --agent a,b``: one row per run, with accuracy to a tenth of a percent (the
    precision papers report) and the verdict counts."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in ("Agent", "Run", "Accuracy", "Pass", "Fail", "Review", "Error"):
        table.add_column(
            header, no_wrap=True, justify="left" if header in ("Agent", "Run") else "right"
        )
    for run in runs:
        counts = run.counts if isinstance(run, RunTally) else run.counts()
        acc = run.accuracy
        human = f", {acc.human} decided by a person" if acc.human else ""
        value = "–" if acc.value is None else f"{acc.value:.1%} ({acc.passed}/{acc.total}{human})"
        if run.status is RunStatus.FAILED:
            value = "failed"
        table.add_row(
            run.info.agent_name,
            run.info.name,
            value,
            *(str(counts[v]) for v in (Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR)),
        )
    return _render([table], color=False, width=width or _UNWRAPPED_WIDTH)


def render_runs(
    runs: Sequence[RunSummary], *, color: bool = False, width: int | None = None
) -> str:
    """``sqlbench runs``: name, environment, branch@commit, agent, status, accuracy, created
    by, last updated; newest first."""
    if not runs:
        return "No runs yet: `sqlbench run` makes one.\n"
    runs, folded = _fold_unasked(runs)
    rows = []
    any_cost = any(run.cost_usd is not None for run in runs)
    for run in runs:
        info = run.info
        status = run.status.label
        if folded.get(info.id, 1) > 1:
            status += f" x{folded[info.id]}"
        if run.status is RunStatus.RUNNING:
            status += f" {run.graded}/{info.question_count * info.repeat}"
        accuracy = "–" if run.accuracy.value is None else run.accuracy.label()
        if info.partial:
            accuracy += " partial"
        rows.append(
            {
                "Name": info.name,
                "Environment": info.environment,
                "Branch": info.source_label,
                "Agent": f"{info.agent_name} ({info.agent_kind})",
                "Status": status,
                "Accuracy": accuracy,
                **(
                    {"Cost": usd_text(run.cost_usd) if run.cost_usd is not None else "–"}
                    if any_cost
                    else {}
                ),
                "Created by": info.created_by,
                "Last updated": when_text(info.updated_at),
            }
        )
    headers = _fitting_columns(rows, width)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in headers:
        # The name and branch@commit are never cut: they are what a person copies next.
        whole = header in ("Name", "Branch")
        longest = max(len(header), *(len(row[header]) for row in rows))
        table.add_column(
            header, no_wrap=True, min_width=longest if whole else None, overflow="ellipsis"
        )
    for run, row in zip(runs, rows, strict=True):
        cells: list[RenderableType] = [
            Text(row[h], style=_STATUS_STYLES[run.status]) if h == "Status" else row[h]
            for h in headers
        ]
        table.add_row(*cells)
    notes: list[RenderableType] = []
    partial = [run.info for run in runs if run.info.partial]
    if partial:
        notes.append(
            Text(
                "partial: the run covers part of the questions, so its accuracy is not "
                "comparable with a full run's ("
                + "; ".join(f"{info.name}: {info.scope_label}" for info in partial[:5])
                + ("; ..." if len(partial) > 5 else "")
                + ")",
                style="dim",
            )
        )
    for run in runs:
        if run.status is RunStatus.FAILED and run.info.error:
            many = folded.get(run.info.id, 1)
            who = (
                f"{run.info.name} and the {many - 1} run{'s' if many > 2 else ''} before it "
                "(none asked a question) failed"
                if many > 1
                else f"{run.info.name} failed"
            )
            notes.append(Text(f"{who}: {one_line(run.info.error, 300)}"))
    if any(many > 1 for many in folded.values()):
        notes.append(
            Text(
                "runs that failed before asking anything are folded into one line; "
                "`sqlbench runs prune --failed` removes them",
                style="dim",
            )
        )
    # A run whose stored record cannot be read says why, under the table.
    notes += [
        Text(f"{run.info.name}: {run.info.error}", style="red")
        for run in runs
        if run.status is RunStatus.CORRUPT and run.info.error
    ]
    # Off a terminal, a row is never wrapped: a branch@commit cut in two cannot be read or
    # copied (the table takes its natural width, not the console's).
    return _render([table, *notes], color=color, width=width or _UNWRAPPED_WIDTH)


def asked_nothing(run: RunSummary) -> bool:
    """True for a run that failed before grading any question (a missing file, an unreachable
    server): nothing to show, compare or resume."""
    return run.status is RunStatus.FAILED and run.graded == 0


def _fold_unasked(runs: Sequence[RunSummary]) -> tuple[list[RunSummary], dict[str, int]]:
    """The runs with each series of consecutive runs that asked nothing kept as its newest
    one, and how many runs each kept one stands for (by run id)."""
    kept: list[RunSummary] = []
    folded: dict[str, int] = {}
    for run in runs:
        previous = kept[-1] if kept else None
        if previous is not None and asked_nothing(run) and asked_nothing(previous):
            folded[previous.info.id] = folded.get(previous.info.id, 1) + 1
            continue
        kept.append(run)
    return kept, folded


_DROPPED_FIRST = ("Created by", "Environment", "Last updated", "Agent")
"""Columns of ``sqlbench runs`` left out, in this order, when a terminal is too narrow."""


def render_removed(names: Sequence[str], *, dry_run: bool = False, total: bool = False) -> str:
    """``Removed run NAME`` per run (``Would remove`` for a dry run), then with ``total`` how
    many.

    Example:
        >>> print(render_removed(["a", "b"], dry_run=True, total=True), end="")
        Would remove run a
        Would remove run b
        Would remove 2 runs.
    """
    verb = "Would remove" if dry_run else "Removed"
    lines = [f"{verb} run {name}" for name in names]
    if total:
        lines.append(f"{verb} {len(names)} run{'' if len(names) == 1 else 's'}.")
    return "".join(f"{line}\n" for line in lines)


def _fitting_columns(rows: list[dict[str, str]], width: int | None) -> list[str]:
    """The run-list columns that fit ``width`` (None: all of them)."""
    headers = list(rows[0])
    if width is None:
        return headers

    def natural(columns: list[str]) -> int:
        return sum(max(len(c), *(len(r[c]) for r in rows)) for c in columns) + 3 * (
            len(columns) - 1
        )

    for dropped in _DROPPED_FIRST:
        if natural(headers) <= width:
            break
        headers.remove(dropped)
    return headers


def render_question(
    run: RunResult,
    question: QuestionResult,
    *,
    trial: int | None = None,
    color: bool = False,
    width: int | None = None,
) -> str:
    """One question in full: verdict, reason, both SQL texts, both previews with the rows
    that differ marked, the agent's answer and trace, latency and tokens. With repeats, every
    trial's verdict, then the chosen trial (default: the first that did not pass) in full.

    Raises:
        SqlbenchError: The question has no trial numbered ``trial``.
    """
    shown = pick_trial(run, question, trial)
    head = Text(f"{question.full_name}  ", style="bold")
    head.append(verdict_text(question), style=VERDICT_STYLES[question.verdict])
    parts: list[RenderableType] = [head, Text(run_line(run.info), style="dim")]
    if question.human is not None:
        parts.append(Text.assemble(("Human decision: ", "bold"), human_line(question.human)))
    if len(question.trials) > 1:
        listing = ", ".join(f"#{t.trial} {t.verdict.value}" for t in question.trials)
        parts += [f"Trials: {listing}", f"Showing trial #{shown.trial}"]
    parts += _trial_parts(shown)
    return _render(parts, color=color, width=width)


def _trial_parts(trial: TrialResult) -> list[RenderableType]:
    parts: list[RenderableType] = [
        Text.assemble(("Verdict: ", "bold"), (trial.verdict.value, VERDICT_STYLES[trial.verdict])),
        Text.assemble(("Reason: ", "bold"), trial.reason),
    ]
    difference = trial.difference
    if difference is not None and difference.reason not in trial.reason:
        # The stored reason was cut to one line; the whole finding is kept beside it.
        parts.append(Text.assemble(("Full reason: ", "bold"), difference.reason))
    if trial.turns is not None:
        for turn in trial.turns:
            parts += _turn_parts(turn)
    else:
        parts += _answer_parts(trial)
    if trial.answer and trial.turns is None:
        parts += [Text("Answer:", style="bold"), Text("  " + trial.answer)]
    if trial.agent_error:
        first, *more = trial.agent_error.splitlines() or [""]
        parts.append(Text.assemble(("Agent error: ", "bold"), first))
        parts += [Text("  " + line) for line in more]  # e.g. the lines of its stderr
    if trial.tool_calls:
        parts.append(Text(f"Tool calls ({len(trial.tool_calls)}):", style="bold"))
        for number, call in enumerate(trial.tool_calls, start=1):
            timing = ""
            if call.duration_ms is not None:
                timing = f"  [{latency_text(call.duration_ms)}]"
            parts.append(f"  {number}. {call.name}({_short(call.arguments, 200)}){timing}")
            if call.output is not None:
                parts.append(f"     → {_short(call.output, 200)}")
            if call.error is not None:
                parts.append(Text(f"     ✗ {_short(call.error, 200)}", style="red"))
    if trial.metrics:
        parts.append(Text("Metrics:", style="bold"))
        for name, result in trial.metrics.items():
            parts += ["  " + line for line in metric_detail(name, result)]
    if trial.assertions:
        parts.append(Text("Assertions:", style="bold"))
        for check in trial.assertions:
            mark, style = ("✓", "green") if check.passed else ("✗", "red")
            line = Text(f"  {mark} ", style=style)
            if check.passed:
                actual = check.actual
                shown = f"{actual:.6g}" if isinstance(actual, float) else _short(actual, 120)
                line.append(f"{check.label}: actual {shown}")
            else:
                line.append(f"{check.label}: {check.reason}")
            parts.append(line)
    facts = [
        f"latency {latency_text(trial.latency_ms)} (the agent's answer, its start included)"
        if trial.latency_ms is not None
        else ""
    ]
    tokens = tokens_text(trial.input_tokens, trial.output_tokens)
    facts.append(f"tokens {tokens}" if tokens else "")
    economy = trial_economy(trial)  # its own line: the timings' meanings make theirs long
    if economy:
        parts.append(Text(" · ".join(economy), style="dim"))
    facts.append(timing_facts(trial.timings_ms))
    parts.append(Text(" · ".join(f for f in facts if f) or "no timings", style="dim"))
    return parts


def timing_facts(timings_ms: Mapping[str, float]) -> str:
    """A trial's harness timings as ``show`` prints them, each with what it measures; the
    query process's start-up said inside agent_sql, of which it is part.

    Example:
        >>> timing_facts({"agent_sql": 533.0, "query_process_start": 480.0}).split(", ")[-1]
        "of which 480 ms starting sqlbench's query process"
    """
    startup = timings_ms.get(STARTUP_TIMING)
    return " · ".join(
        f"{key} {latency_text(ms)}"
        + (f" ({TIMING_MEANINGS[key]})" if key in TIMING_MEANINGS else "")
        + (
            f", of which {latency_text(startup)} starting sqlbench's query process"
            if key == "agent_sql" and startup is not None
            else ""
        )
        for key, ms in timings_ms.items()
        if key != STARTUP_TIMING
    )


TIMING_MEANINGS = {
    "truth": "running the ground truth, or reading it from the run's cache",
    "agent_sql": "checking and running the agent's SQL",
    "compare": "comparing the two results",
    "variants": "grading the pass on the data variants",
}
"""What each of a trial's harness timings (``timings_ms``) measures, as ``show`` says it."""

STARTUP_TIMING = "query_process_start"
"""The timing that is part of ``agent_sql``: waiting for sqlbench's query process to start
(the run's first queries on a DuckDB file or a server), said with it, not beside it."""


def _answer_parts(trial: TrialResult) -> list[RenderableType]:
    """The question, both SQL texts and both results of a single question."""
    parts: list[RenderableType] = []
    if trial.question:
        parts.append(Text.assemble(("Question: ", "bold"), trial.question))
    missing = "(none: a decline is expected)" if trial.expect == "decline" else "(none)"
    parts += _sql_parts("Ground truth SQL", trial.truth_sql, missing)
    for index, sql in enumerate(trial.also_accept, start=1):
        matched = "  (matched)" if trial.matched_truth == index else ""
        parts += _sql_parts(f"also_accept #{index}{matched}", sql, "")
    parts += _sql_parts("Agent SQL", trial.agent_sql, "(no SQL)")
    parts += _preview_parts("Expected result", trial.expected_preview)
    parts += _preview_parts("Agent result", trial.actual_preview)
    return parts


def _turn_parts(turn: TurnResult) -> list[RenderableType]:
    """One turn of a conversation (docs/conversations.md): its question and verdict, then its
    SQL texts, results and answer, indented under it."""
    head = Text(f"Turn {turn.turn} ", style="bold")
    head.append(turn.verdict.value, style=VERDICT_STYLES[turn.verdict])
    head.append(f": {turn.question}")
    parts: list[RenderableType] = [Text(""), head, Text.assemble(("Reason: ", "bold"), turn.reason)]
    missing = "(none: a decline is expected)" if turn.expect == "decline" else "(none)"
    parts += _sql_parts("Ground truth SQL", turn.truth_sql, missing)
    parts += _sql_parts("Agent SQL", turn.sql, "(no SQL)")
    parts += _preview_parts("Expected result", turn.expected_preview)
    parts += _preview_parts("Agent result", turn.actual_preview)
    if turn.answer:
        parts += [Text("Answer:", style="bold"), Text("  " + turn.answer)]
    if turn.agent_error:
        parts.append(Text.assemble(("Agent error: ", "bold"), turn.agent_error))
    return parts


def _sql_parts(title: str, sql: str | None, missing: str) -> list[RenderableType]:
    if sql is None or not sql.strip():
        return [Text.assemble((f"{title}: ", "bold"), missing)] if missing else []
    body = "\n".join("  " + line for line in sql.strip().splitlines())
    return [Text(f"{title}:", style="bold"), Text(body)]


def _preview_parts(title: str, preview: Preview | None) -> list[RenderableType]:
    if preview is None:
        return []
    shown = len(preview.rows)
    rows = "row" if preview.total_rows == 1 else "rows"
    note = (
        f"{preview.total_rows} {rows}"
        if shown == preview.total_rows
        else (f"{shown} of {preview.total_rows} {rows}")
    )
    if preview.differing_rows:
        note += f"; {preview.differing_rows} with no partner, marked ✗"
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    for name in preview.columns:
        table.add_column(name, overflow="fold", max_width=_CELL)
    for number, row, differs in zip(
        preview.row_numbers, preview.rows, preview.differs, strict=True
    ):
        style = "red" if differs else ""
        table.add_row(
            Text("✗" if differs else "", style="red"),
            str(number + 1),
            *(Text(_cell(v), style=style) for v in row),
        )
    return [Text(f"{title} ({note}):", style="bold"), table]


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def _short(value: object, limit: int) -> str:
    return one_line(value if isinstance(value, str) else json.dumps(value, default=str), limit)


def _not_asked(run: RunResult) -> list[RenderableType]:
    line = not_asked_line(run)
    return [] if line is None else [Text(line, style="magenta")]


VARIANT_ROWS = 200
"""Rows shown per table of a data variant (a variant holds a few hundred at most)."""


def render_variant(
    question: str, variant: RebuiltVariant, *, color: bool, width: int | None
) -> str:
    """A data variant's tables that the ground truth and the agent's SQL read, row by row."""
    parts: list[RenderableType] = [
        Text(
            f"{question}: data variant #{variant.number} ({variant.fingerprint}), the tables "
            "the ground truth and the agent's SQL read",
            style="bold",
        )
    ]
    for table in variant.tables:
        count = len(table.rows)
        shown = table.rows[:VARIANT_ROWS]
        rows = "row" if count == 1 else "rows"
        note = f"{count} {rows}" if len(shown) == count else f"first {len(shown)} of {count} rows"
        grid = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
        columns = [c for c, _, _ in table.columns]
        for column in columns:
            grid.add_column(column, overflow="fold", max_width=_CELL)
        for row in shown:
            grid.add_row(*(_cell(_plain(row.get(c))) for c in columns))
        parts += [Text(f"{table.name} ({note}):", style="bold"), grid]
    return _render(parts, color=color, width=width or _UNWRAPPED_WIDTH)


def _plain(value: object) -> object:
    """A variant's value as ``_cell`` shows it (dates, decimals and bytes as text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
