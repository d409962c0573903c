"""What a run records (docs/runs.md): the run's metadata, one result per question and trial.

Everything here is JSON-safe and is what the store persists, ``sqlbench show`` prints and
``sqlbench export`` writes. Timestamps are timezone-aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sqlbench.records.accuracy import Accuracy
from sqlbench.records.provenance import ImportOrigin
from sqlbench.verdicts import NOT_ASKED, ErrorKind, ResultFlag, Verdict

JsonValue = Any
"""A value that ``json.dumps`` accepts (None, bool, int, float, str, lists and dicts of them)."""


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class RunStatus(StrEnum):
    """Where a run is in its life. ``label`` is how ``sqlbench runs`` shows it."""

    RUNNING = "running"
    """Its process is asking questions (and beating its heartbeat)."""
    COMPLETED = "completed"
    """Every selected question was graded."""
    INTERRUPTED = "interrupted"
    """Stopped early (Ctrl-C, or its process died); what was graded is kept; ``--resume``."""
    FAILED = "failed"
    """Could not run (setup error, internal error); ``error`` says why."""
    CORRUPT = "corrupt"
    """Its stored record cannot be read (a damaged row); ``error`` says why. Other runs are
    unaffected."""

    @property
    def label(self) -> str:
        """``Running``, ``Completed``, ``Interrupted``, ``Failed`` or ``Corrupt``."""
        return self.value.capitalize()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return value.astimezone(UTC)


class Preview(_Model):
    """The first rows of a result (capped), JSON-safe, with the rows that differ marked."""

    columns: list[str]
    """Column names, duplicates kept."""
    types: list[str]
    """Arrow type of each column, as text."""
    rows: list[list[JsonValue]]
    """The previewed rows; Decimal and dates as strings, NaN as ``"NaN"``."""
    row_numbers: list[int]
    """0-based position of each previewed row in the full result."""
    differs: list[bool]
    """True where the row found no partner on the other side."""
    total_rows: int
    """Rows in the full result."""
    differing_rows: int = 0
    """How many rows of the full result found no partner (previewed or not)."""

    @property
    def truncated(self) -> bool:
        """True when some rows of the full result are not shown."""
        return len(self.rows) < self.total_rows


class ToolCallRecord(_Model):
    """One tool call of the agent's trace, JSON-safe."""

    name: str
    arguments: JsonValue = None
    output: JsonValue = None
    error: str | None = None
    """Why the call failed; None when it succeeded."""
    started_ms: float | None = None
    """Start, in milliseconds from the start of the answer."""
    duration_ms: float | None = None


class MetricResult(_Model):
    """One agent-behaviour metric of one answer (``sqlbench.metrics``)."""

    score: float | None = None
    """0–1; None where the metric does not apply (or could not be computed: ``error``)."""
    detail: dict[str, JsonValue] = Field(default_factory=dict)
    """The metric's own detail (matched and missing tools, precision/recall/F1, ...)."""
    error: str | None = None
    """Why the metric has no score (a judge reply that did not parse, no judge, ...)."""
    band: str | None = None
    """Judged metrics: ``high``, ``medium`` or ``low``."""
    explanation: str | None = None
    """Judged metrics: the judge's explanation."""
    judge_model: str | None = None
    prompt_hash: str | None = None
    judge_tokens: int | None = None
    judge_input_tokens: int | None = None
    """Prompt tokens this metric's judge calls spent (None: answered from the cache, or not
    reported), priced with ``pricing:`` (docs/cost.md)."""
    judge_output_tokens: int | None = None


class AssertionResult(_Model):
    """One ``assertions`` entry checked against the answer record."""

    label: str
    passed: bool
    actual: JsonValue = None
    """The value the JSONPath found (a list when it found several; None when none)."""
    reason: str = ""
    """Why it failed; empty when it passed."""


class HumanReview(_Model):
    """A person's decision on a question of a run (``sqlbench review``), kept beside the
    automatic verdict, which it never overwrites."""

    verdict: Verdict
    """``pass`` or ``fail``; for decisions on turns of a conversation (``turns``), the
    conversation's verdict with them (``review`` while a turn is still to decide)."""
    turns: dict[int, Verdict] = Field(default_factory=dict)
    """Decisions on single turns of a conversation (``sqlbench review --turn N``), by turn
    number; empty for a decision on the whole question (docs/conversations.md)."""
    note: str | None = None
    decided_by: str
    decided_at: datetime
    truth_hash: str
    """``sqlbench.records.hashes.review_hashes`` of the question's ground truth when decided."""
    sql_hash: str
    """The same of the agent's SQL (or its text answer, when it gave no SQL)."""
    carried_from: str | None = None
    """The name of the run where the person decided, when carried to this run (the ground truth
    and the agent's SQL hashed the same); None when decided on this run."""
    imported: str | None = None
    """Set by ``import`` (never taken from the file): the decision came in an imported run,
    labelled with the import (``imported sha256:0123456789ab``, ``, signed`` when its signature
    was checked). Only a signed import's decisions are ever carried (docs/security.md)."""

    _aware_decided = field_validator("decided_at")(_aware)


class Dispute(_Model):
    """A person's dispute of a question's ground truth (``sqlbench review QUESTION --dispute``):
    the question leaves accuracy on every run graded against that ground truth, until its
    question text or ground truth changes (``truth_hash``, ``records.hashes.dispute_hash``)."""

    space: str
    name: str
    truth_hash: str
    reason: str
    disputed_by: str
    disputed_at: datetime

    _aware_disputed = field_validator("disputed_at")(_aware)


class Difference(_Model):
    """What a failing comparison found, whole: the reason may be cut to one short line, this
    never is (JSON and ``show`` carry it)."""

    problem: str
    """The main finding (``rows_differ``, ``row_count``, ``no_partner``, ``column_count``...)."""
    reason: str
    """The comparison's reason, untruncated."""
    expected_rows: int
    actual_rows: int
    expected_missing: int = 0
    """Expected rows with no partner in the agent's result."""
    agent_unexpected: int = 0
    """Agent rows with no partner in the expected result."""
    expected_example: str | None = None
    """The first differing expected row, rendered."""
    agent_example: str | None = None
    """The agent row closest to it, rendered."""
    missing_columns: list[str] = Field(default_factory=list)
    """Expected columns no agent column matched."""
    near_misses: list[str] = Field(default_factory=list)


class VariantsRecord(_Model):
    """How an answer was graded on data variants (``compare: variants``): enough to rebuild
    them (seed and numbers) and to check they are the same data (fingerprints)."""

    seed: int
    numbers: list[int] = Field(default_factory=list)
    """The kept candidates' numbers."""
    fingerprints: list[str] = Field(default_factory=list)
    """The kept variants' content hashes, in the order of ``numbers``."""
    checked: int = 0
    """Variants the agent's SQL ran on (it stops at the first that does not pass)."""
    failed_on: str | None = None
    """The fingerprint of the variant that decided a fail or review; None: none did."""
    neighbours: int = 0
    """Near neighbours of the ground truth tried."""
    told_apart: int = 0
    """Of those, how many the kept variants tell from the ground truth."""


class PartialCreditRecord(_Model):
    """How many of the expected result's cells the agent's result holds (docs/verdicts.md,
    "Partial credit"): never a verdict."""

    precision: float
    """Matched cells over the agent's cells."""
    recall: float
    """Matched cells over the expected cells."""
    f1: float


class CostRecord(_Model):
    """What an answer cost (docs/cost.md): the agent's tokens and, where judged, the judge's,
    priced with ``pricing:``."""

    usd: float | None = None
    """Agent and judge usage priced; None when some of it has no price (``unpriced``) or no
    usage was reported."""
    tokens: int | None = None
    """Agent input and output tokens plus judge tokens; None when none were reported."""
    model: str | None = None
    """The model the agent's usage was priced as (``usage.model``, else the agent's
    ``model:``)."""
    judge_usd: float | None = None
    """The judge's share of ``usd``."""
    unpriced: list[str] = Field(default_factory=list)
    """Why ``usd`` is None: the models (or "the agent's model") with usage but no price."""


class WorkRecord(_Model):
    """What the warehouse reported each query read (docs/cost.md, "Warehouse work")."""

    truth: float | None = None
    """The ground truth's work; None where the engine reports nothing."""
    agent: float | None = None
    """The agent SQL's work."""
    ratio: float | None = None
    """agent / truth; None where either is unknown or the truth's is 0."""
    unit: str | None = None
    """What the numbers count (``rows scanned``, ``plan cost``, ``table scans``)."""


class TurnResult(_Model):
    """One turn of a conversation as asked and graded (docs/conversations.md)."""

    turn: int
    """1-based."""
    question: str
    verdict: Verdict
    reason: str
    sql: str | None = None
    """The agent's SQL for this turn."""
    expect: str | None = None
    truth_sql: str | None = None
    also_accept: list[str] = Field(default_factory=list)
    answer: str | None = None
    """The agent's text answer (or why it declined)."""
    agent_error: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    difference: Difference | None = None
    expected_preview: Preview | None = None
    actual_preview: Preview | None = None
    truth_fingerprint: str | None = None
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    """This turn's agent-behaviour metrics (docs/agent-behaviour.md)."""
    assertions: list[AssertionResult] = Field(default_factory=list)
    """The conversation's ``assertions`` checked on this turn's answer."""


class TrialResult(_Model):
    """One graded answer: a question asked once (``trial`` counts from 0 under ``--repeat``)."""

    space: str
    name: str
    trial: int = 0
    position: int = 0
    """The question's place in the run's selection (for the report's order)."""
    verdict: Verdict
    reason: str
    """One line a person can act on."""
    error_kind: ErrorKind | None = None
    """Why an ``error`` is no failure of the agent: ``unreachable`` (its endpoint could not be
    reached, so the question was not asked; left out of accuracy; ``run --resume`` asks it
    again). None for every other verdict and error."""
    flags: list[ResultFlag] = Field(default_factory=list)
    """Facts about the answer beside its verdict: ``constant_answer``, ``ground_truth_seen``,
    ``from_certified_query`` (docs/verdicts.md)."""
    retries: int = 0
    """How many times the agent was asked again after a transient endpoint failure."""
    question: str = ""
    """The question text as asked (a conversation's: its first turn's)."""
    tags: list[str] = Field(default_factory=list)
    expect: str | None = None
    """``decline`` where no SQL is the right answer (docs/conversations.md)."""
    turns: list[TurnResult] | None = None
    """A conversation's turns, each graded; None for a single question."""
    truth_sql: str | None = None
    """The ground-truth SQL (certified query resolved), as written in the project."""
    also_accept: list[str] = Field(default_factory=list)
    warehouse: str | None = None
    """The ``warehouses:`` name it ran on (``default``: the top-level one); None in a project
    with a single warehouse."""
    matched_truth: int | None = None
    """Which ground truth matched: 0 the main one, n the n-th ``also_accept``; None if none."""
    agent_sql: str | None = None
    difference: Difference | None = None
    """For a fail or review decided by comparing results: what differs, untruncated."""
    expected_preview: Preview | None = None
    actual_preview: Preview | None = None
    truth_fingerprint: str | None = None
    """Hash of the compared ground-truth result's rows (order, column names and value types
    aside): a change between two runs means the expected answer changed. None when there was
    no result (no ground truth, or it failed) or in runs stored before it was recorded."""
    answer: str | None = None
    """The agent's text answer, if any."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    agent_error: str | None = None
    latency_ms: float | None = None
    """The agent call's latency (retries included)."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    """Input tokens the agent's endpoint served from its cache (part of ``input_tokens``)."""
    usage_model: str | None = None
    """The model the agent said it used (``usage.model``)."""
    cost: CostRecord | None = None
    """What the answer cost; None in runs stored before it was recorded."""
    work: WorkRecord | None = None
    """What the ground truth and the agent's SQL read; None where not recorded."""
    partial_credit: PartialCreditRecord | None = None
    """Cells of the expected result the agent's result holds; None where there was no ground
    truth result to hold (no ground truth, it failed, the question was skipped)."""
    timings_ms: dict[str, float] = Field(default_factory=dict)
    """Harness timings: ``truth``, ``agent_sql``, ``compare``, ``variants`` (milliseconds)."""
    variants: VariantsRecord | None = None
    """Grading on data variants; None when ``compare: variants`` is 0 or it did not apply."""
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    """Agent-behaviour metrics by name (only those the question and project ask for)."""
    assertions: list[AssertionResult] = Field(default_factory=list)
    graded_at: datetime = Field(default_factory=utc_now)

    _aware_graded = field_validator("graded_at")(_aware)

    @property
    def full_name(self) -> str:
        """``space/name``."""
        return f"{self.space}/{self.name}"

    @property
    def not_asked(self) -> bool:
        """The question was not asked: the agent's endpoint could not be reached."""
        return self.error_kind is ErrorKind.UNREACHABLE

    @property
    def endpoint_fault(self) -> str | None:
        """What the agent's endpoint did when the question was not asked (``answered 429``,
        ``refused or reset the connection``); None when it was asked."""
        if not self.not_asked:
            return None
        return self.reason.removeprefix(NOT_ASKED).partition(" (")[0]


class RunInfo(_Model):
    """A run's metadata: what was evaluated, with which agent, by whom, and how it went."""

    id: str
    """Unique id (32 hex characters)."""
    name: str
    """Unique, human-friendly name; default: creation time plus a short suffix."""
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    """Last heartbeat or graded result."""
    finished_at: datetime | None = None
    created_by: str
    host: str = ""
    """Host of the process that ran it (with ``pid``, to tell a dead run from a live one)."""
    pid: int = 0
    pid_started: int | None = None
    """When that process started (``liveness.process_started``), so that another process
    given the same pid later is not taken for the run's owner; None where unknown."""
    branch: str
    commit: str | None = None
    dirty: bool = False
    working_tree_hash: str | None = None
    environment: str
    question_set_hash: str
    """Hash of the selected questions (``sqlbench.runs.identity.question_set_hash``)."""
    question_count: int
    """Selected questions (skipped ones included)."""
    agent_name: str
    agent_kind: str
    agent_settings: dict[str, JsonValue] = Field(default_factory=dict)
    """The agent's settings as written: secrets stay in ``${ENV}`` form."""
    agent_settings_hash: str
    sqlbench_version: str
    compare: dict[str, JsonValue] = Field(default_factory=dict)
    """The project's ``compare:`` defaults."""
    compare_hash: str
    warehouse: str | None = None
    """The warehouse as written in sqlbench.yml (``${VAR}`` kept, password masked); None for
    runs stored before it was recorded."""
    warehouse_hash: str | None = None
    """``sqlbench.runs.identity.WarehouseIdentity.hash`` (never the resolved URL); None:
    unknown, so the run is never reused."""
    warehouse_built: bool = False
    """True when the warehouse's data is fixed by the run's identity (built by ``setup``, or a
    fingerprinted file); False for a server, whose runs are reused only within
    ``check.reuse_max_age``."""
    repeat: int = 1
    shard: str | None = None
    """``I/N`` when the run covers one shard of the question set."""
    select: list[str] = Field(default_factory=list)
    spaces: list[str] = Field(default_factory=list)
    error: str | None = None
    """Why a Failed run failed."""
    imported: bool = False
    """True when the run came from ``sqlbench import``."""
    origin: ImportOrigin | None = None
    """For an imported run: the file's hash, when and from where (``provenance``)."""
    regraded_from: str | None = None
    """``sqlbench regrade``: the name of the run whose agent SQL this run graded again."""

    _aware_times = field_validator("created_at", "updated_at", "finished_at")(_aware)

    @property
    def partial(self) -> bool:
        """The run covers part of the questions (``--select``, ``--space`` or ``--shard``), so
        its accuracy is not comparable with a full run's."""
        return bool(self.select or self.spaces or self.shard)

    @property
    def scope_label(self) -> str:
        """What part of the questions a partial run covers (``--select rev* --shard 1/2``);
        empty for a full run."""
        parts = [f"--select {' '.join(self.select)}"] if self.select else []
        parts += [f"--space {' '.join(self.spaces)}"] if self.spaces else []
        parts += [f"--shard {self.shard}"] if self.shard else []
        return " ".join(parts)

    @property
    def source_label(self) -> str:
        """``branch@commit7`` (``+dirty`` for uncommitted edits)."""
        commit = (self.commit or "")[:7]
        label = f"{self.branch}@{commit}" if commit and self.branch != commit else self.branch
        label += "+dirty" if self.dirty else ""
        if self.origin is not None:
            label += f" ({self.origin.label})"
        elif self.imported:
            label += " (imported)"
        return label


class RunSummary(_Model):
    """A line of ``sqlbench runs``: the run with its effective status and its counts so far."""

    info: RunInfo
    status: RunStatus
    """Effective status: a Running run whose process died reads Interrupted."""
    passed: int
    """Passed trials."""
    total: int
    """Graded trials, skipped ones excluded."""
    graded: int
    """Graded trials, skipped ones included (progress of a running run)."""
    human: int = 0
    """Questions a person decided (``sqlbench review``); ``passed`` counts their decisions."""
    disputed: int = 0
    """Questions left out of ``passed`` and ``total`` because a person disputes the ground
    truth they were graded against (``review --dispute``)."""
    cost_usd: float | None = None
    """What the run's answers cost (``pricing:``); None when none recorded a cost or some
    usage has no price (docs/cost.md)."""

    @property
    def accuracy(self) -> Accuracy:
        """passed / total (human decisions counted, disputed questions left out; value None
        before anything was graded)."""
        return Accuracy.of_trials(self.passed, self.total, human=self.human, disputed=self.disputed)
