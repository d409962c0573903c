"""Typed project files (docs/project-files.md). File schemas are pydantic with ``extra="forbid"``.

The loader (``sqlbench.project.load``) validates each YAML mapping against these models and
attaches where it came from (``path``, ``line``) and, for questions, the space and resolved
ground truth. Everything else in sqlbench reads projects only through these objects.
"""

from __future__ import annotations

import re
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from sqlbench.project.problems import KEY_ERROR

MAX_TIMEOUT_S = 86_400
"""Longest timeout a setting may name (one day)."""
MAX_CONCURRENCY = 256
MAX_PROCESSES = 64
MAX_RETRIES = 20
MAX_ROWS = 100_000_000
MAX_RESULT_MB = 65_536
MAX_SQL_KB = 65_536
MAX_VARIANTS = 50
"""Most data variants a question may be graded on."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


OrderMode = Literal["ignore", "strict", "auto"]
RowsMode = Literal["bag", "set"]
ColumnsMode = Literal["superset", "exact"]
ConstantAnswers = Literal["review", "fail", "allow"]
CheckRule = Literal["regression", "significant_drop", "below_floor", "must_pass", "answer_changed"]

# Each bounded setting is defined once, here, with its range; the project-wide model
# (``compare:``, ``run:``) and the places that override part of it (a question's ``compare:``,
# a warehouse's ``run:``) read the same definition, and so does ``compare_results``. A key
# overridden somewhere is thereby refused there exactly when it is refused at the top level.
Timeout = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]
"""Seconds a query or call may take."""
RowLimit = Annotated[int, Field(ge=1, le=MAX_ROWS)]
"""Rows a result may hold."""
AbsTolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""Absolute numeric tolerance."""
RelTolerance = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
"""Relative numeric tolerance: below 1, or every number would match every other of its sign."""
VariantCount = Annotated[int, Field(ge=0, le=MAX_VARIANTS)]
"""Data variants a question is graded on besides the original data."""
VariantSeed = Annotated[int, Field(ge=0, le=2**31 - 1)]
"""The seed data variants are generated from."""
WorkRatio = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""How many times what the ground truth read the agent SQL may read (a check rule)."""
Price = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""Dollars per million tokens."""
DeclinePenalty = Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)]
"""What a wrong answer costs in the reliability score (a correct answer earns 1)."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_threshold(value: str | float, where: str) -> float:
    """An accuracy threshold as a fraction of 1: ``0.9`` or ``"90%"`` (its sign says it is a
    percentage). A bare number above 1 is refused: ``90`` could mean 90% or be a typo for 0.9,
    and reading it either way silently makes a gate that never (or always) fails.

    Raises:
        ValueError: Not a number, out of range, or a bare number above 1.

    Example:
        >>> parse_threshold("90%", "--fail-under"), parse_threshold(0.9, "--fail-under")
        (0.9, 0.9)
        >>> parse_threshold("90", "--fail-under")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: --fail-under 90 is a bare number above 1: write a fraction of 1 (0.9) or ...
    """
    text = str(value).strip()
    percent = text.endswith("%")
    number_text = text[:-1].strip() if percent else text
    try:
        number = float(number_text)
    except ValueError:
        raise ValueError(
            f"{where} {text!r} is not a threshold: write a fraction of 1 (0.9) or a "
            "percentage with its sign (90%)"
        ) from None
    if number != number or number < 0:
        raise ValueError(f"{where} {text} must be between 0 and 1 (or 0% and 100%)")
    if percent:
        if number > 100:
            raise ValueError(f"{where} {text} is over 100%")
        return number / 100
    if number > 1:
        fraction = f"{number / 100:g}" if number <= 100 else "0.9"
        raise ValueError(
            f"{where} {text} is a bare number above 1: write a fraction of 1 ({fraction}) "
            f"or a percentage with its sign ({text}%)"
        )
    return number


def parse_duration(text: str) -> timedelta:
    """A duration written as a number and a unit: ``90s``, ``30m``, ``24h``, ``7d``.

    Raises:
        ValueError: Not a number followed by s, m, h or d.

    Example:
        >>> parse_duration("24h"), parse_duration("0s")
        (datetime.timedelta(days=1), datetime.timedelta(0))
    """
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a duration: write a number and a unit, like 90s, 30m, 24h or 7d"
        )
    return timedelta(seconds=float(match.group(1)) * _DURATION_UNITS[match.group(2)])


class CompareOptions(_Strict):
    """How result sets are compared (docs/verdicts.md); project defaults under ``compare:``."""

    order: OrderMode = "ignore"
    """ignore: rows are a multiset; strict: in order; auto: strict iff the gold's outer ORDER BY."""
    rows: RowsMode = "bag"
    """bag: duplicates count; set: duplicates ignored (BIRD-style)."""
    abs_tol: AbsTolerance = 1e-9
    """Absolute numeric tolerance."""
    rel_tol: RelTolerance = 1e-9
    """Relative numeric tolerance."""
    columns: ColumnsMode = "superset"
    """superset: the agent's extra columns are ignored; exact: they fail the question."""
    max_extra_columns: int | None = Field(None, ge=0, le=10_000)
    """Under ``superset``, a result that would pass with more extra agent columns than this is
    ``review`` (an answer that lists candidates); unset: more extra columns than expected ones
    and at least 3."""
    variants: VariantCount = 0
    """Also grade on this many generated data variants (0: only the original data)."""
    variants_seed: VariantSeed = 0
    """The seed the variants are generated from (recorded with the run)."""
    max_work_ratio: WorkRatio | None = None
    """A check rule when set: a head question whose agent SQL read more than this many times
    what its ground truth read fails ``sqlbench check`` (docs/cost.md); never a verdict."""
    constant_answers: ConstantAnswers = "review"
    """Agent SQL whose result cannot depend on the data (it reads no table or view, or only
    literals make its output) where the ground truth reads the data: review, fail, or allow
    (grade it as any other answer). Flagged ``constant_answer`` whatever this says."""
    decline_penalty: DeclinePenalty = 1.0
    """What a wrong answer costs in the run's reliability score, where a correct answer or
    correct decline earns 1 and a decline 0 (docs/conversations.md). Run-level only: no
    question overrides it."""

    def merged(self, overrides: CompareOverrides | None) -> CompareOptions:
        """These options with a question's overrides applied."""
        if overrides is None:
            return self
        changes = overrides.model_dump(exclude_none=True)
        return self.model_copy(update=changes)


RUN_WIDE_COMPARE_KEYS = frozenset({"max_work_ratio", "decline_penalty"})
"""``compare:`` keys that weigh or check a whole run, not how a question is compared:
set per project only (a question's ``compare:`` refuses them)."""


class CompareOverrides(_Strict):
    """Per-question ``compare:`` keys; unset keys fall back to the project's. Each key has the
    type and range of its ``CompareOptions`` namesake (``tests/project/test_settings.py``
    checks that they accept and refuse the same values), ``RUN_WIDE_COMPARE_KEYS`` aside."""

    order: OrderMode | None = None
    rows: RowsMode | None = None
    abs_tol: AbsTolerance | None = None
    rel_tol: RelTolerance | None = None
    columns: ColumnsMode | None = None
    max_extra_columns: int | None = Field(None, ge=0, le=10_000)
    variants: VariantCount | None = None
    variants_seed: VariantSeed | None = None
    constant_answers: ConstantAnswers | None = None


class Budget(_Strict):
    """``run.budget``: what a run may spend, in dollars (``usd``, priced with ``pricing:``) or
    in tokens; the run stops asking before the next question would pass it (docs/cost.md)."""

    usd: float | None = Field(None, gt=0, allow_inf_nan=False)
    tokens: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _one_unit(self) -> Budget:
        if (self.usd is None) == (self.tokens is None):
            raise PydanticCustomError(
                "budget", "give exactly one of usd or tokens, e.g. {usd: 5} or {tokens: 200000}"
            )
        return self


class ModelPrice(_Strict):
    """One model's prices in ``pricing:``, in dollars per million tokens."""

    input: Price
    output: Price
    cached: Price | None = None
    """Input tokens served from the endpoint's cache; None: priced as ``input``."""


class RunSettings(_Strict):
    """``run:`` defaults for ``sqlbench run``. Every number has a range (a timeout of ``.inf``
    or 10^12 is refused, naming the key and the range): limits only bound anything if they are
    finite."""

    concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)
    agent_timeout_s: Timeout = 120
    query_timeout_s: Timeout = 30
    """Timeout for the agent's SQL; parsing and checking it count against it too."""
    gold_timeout_s: Timeout = 300
    """Timeout for ground-truth SQL."""
    retries: int = Field(2, ge=0, le=MAX_RETRIES)
    """Agent calls retried on transient errors."""
    max_rows: RowLimit = 100_000
    max_result_mb: float = Field(128, gt=0, le=MAX_RESULT_MB, allow_inf_nan=False)
    """Bytes fetched per result (MiB), counted while fetching: past it, ``too_large``."""
    max_sql_kb: float = Field(64, gt=0, le=MAX_SQL_KB, allow_inf_nan=False)
    """Longest agent SQL text (KiB) sqlbench parses and runs: past it, the SQL is not run."""
    budget: Budget | None = None
    """What the run may spend (docs/cost.md); None: no limit."""
    explain_analyze: bool = False
    """PostgreSQL only: each answer's warehouse work from ``EXPLAIN (ANALYZE, BUFFERS)``,
    which runs the ground truth and the agent's SQL again (docs/cost.md); False: from the
    plan's cost, nothing run."""
    processes: int | Literal["auto"] = "auto"
    """Processes grading a batch of replayed answers (``run --agent a,b``, see
    ``runs/forked.py``): ``auto`` uses up to 4 cores when it is safe and worth it, 1 keeps one
    process."""

    @field_validator("processes", mode="before")
    @classmethod
    def _processes(cls, value: Any) -> Any:
        if value == "auto" or (
            isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PROCESSES
        ):
            return value
        raise PydanticCustomError(
            "processes", f"must be auto or a whole number from 1 to {MAX_PROCESSES}"
        )

    @property
    def max_result_bytes(self) -> int:
        """``max_result_mb`` in bytes."""
        return int(self.max_result_mb * 2**20)

    @property
    def max_sql_bytes(self) -> int:
        """``max_sql_kb`` in bytes."""
        return int(self.max_sql_kb * 2**10)


class WarehouseLimits(_Strict):
    """A named warehouse's own ``run:`` limits; unset keys fall back to the project's. Each key
    has the type and range of its ``RunSettings`` namesake."""

    query_timeout_s: Timeout | None = None
    gold_timeout_s: Timeout | None = None
    max_rows: RowLimit | None = None
    explain_analyze: bool | None = None


class WarehouseSettings(_Strict):
    """One entry of ``warehouses:``: a URL (or DuckDB/SQLite path) and its own setup, dialect
    and limits. Written either as the URL alone or as a mapping with ``url``."""

    url: str | None = None
    """None: a fresh in-memory DuckDB database."""
    setup: list[str] = Field(default_factory=list)
    """Globs of SQL files that build this warehouse's data model (the top-level ``setup`` is
    the default warehouse's)."""
    dialect: str | None = None
    """sqlglot dialect of this warehouse's ground truth; None: the warehouse's own."""
    run: WarehouseLimits = Field(default_factory=WarehouseLimits)

    @field_validator("run")
    @classmethod
    def _analyze_on_postgres(cls, value: WarehouseLimits, info: ValidationInfo) -> Any:
        return _explain_analyze_on_postgres(value, value.explain_analyze, info.data.get("url"))


def _explain_analyze_on_postgres(run: Any, analyze: bool | None, url: str | None) -> Any:
    """``run`` unless it sets ``explain_analyze`` on a warehouse known not to be PostgreSQL
    (one whose URL is an unset ``${VARIABLE}`` is not known)."""
    if not analyze:
        return run
    from sqlbench.project.dialect import warehouse_dialect

    dialect = warehouse_dialect(url, {})
    if dialect is None or dialect == "postgres":
        return run
    raise PydanticCustomError(
        KEY_ERROR,
        f"only a PostgreSQL warehouse reports its work through EXPLAIN ANALYZE, and this one is "
        f"{dialect}; remove the key",
        {"key": "explain_analyze"},
    )


DEFAULT_WAREHOUSE = "default"
"""The name of the top-level ``warehouse`` (with the top-level ``setup`` and ``dialect``)."""


class LlmSettings(_Strict):
    """The OpenAI-compatible endpoint for ``llm`` agents and ``auto``'s generation."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""


class JudgeSettings(_Strict):
    """``judge:``: the OpenAI-compatible endpoint that scores judged agent-behaviour metrics."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    temperature: float = Field(0.0, ge=0, le=2)
    timeout_s: Timeout = 60
    """Per judge call."""
    retries: int = Field(2, ge=0)
    """Judge calls retried on HTTP 429/5xx and refused connections."""


PLACEHOLDERS = (
    "input",
    "output",
    "ground_truth",
    "tool_info",
    "sql",
    "duration",
    "error",
    "status",
)
"""Placeholders a custom metric's prompt may use (Snowflake's names, so prompts port)."""
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class ScoreRanges(_Strict):
    """Which judge scores are low (``min_score``: [lo, hi)), medium (``median_score``:
    [lo, hi]) and high (``max_score``: (lo, hi]); they must not overlap."""

    min_score: tuple[float, float]
    median_score: tuple[float, float]
    max_score: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> ScoreRanges:
        for name in ("min_score", "median_score", "max_score"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name} [{low:g}, {high:g}] has its bounds reversed")
        (_, min_hi), (med_lo, med_hi), (max_lo, _) = (
            self.min_score,
            self.median_score,
            self.max_score,
        )
        if min_hi > med_lo:
            raise ValueError(f"min_score [.., {min_hi:g}) overlaps median_score [{med_lo:g}, ..]")
        if med_hi > max_lo:
            raise ValueError(f"median_score [.., {med_hi:g}] overlaps max_score ({max_lo:g}, ..]")
        return self

    @property
    def lowest(self) -> float:
        """The lowest score the judge may give."""
        return self.min_score[0]

    @property
    def highest(self) -> float:
        """The highest score the judge may give."""
        return self.max_score[1]


class CustomMetric(_Strict):
    """One ``metrics:`` entry of sqlbench.yml: a judged metric with its own prompt."""

    name: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    score_ranges: ScoreRanges

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, prompt: str) -> str:
        unknown = sorted({m for m in _PLACEHOLDER.findall(prompt) if m not in PLACEHOLDERS})
        if unknown:
            listed = ", ".join("{{" + name + "}}" for name in unknown)
            known = " ".join("{{" + name + "}}" for name in PLACEHOLDERS)
            raise ValueError(f"unknown placeholder(s) {listed}; known: {known}")
        return prompt


def _default_fail_on() -> list[CheckRule]:
    return ["regression", "must_pass"]


class MetricGate(_Strict):
    """A ``check: metrics:`` gate on one agent-behaviour metric (enforced whenever configured)."""

    min: float | None = Field(None, ge=0, le=1)
    """Head's mean score must be at least this (a fraction of 1)."""
    no_significant_drop: bool = False
    """Head's scores must not be significantly lower than base's (paired test at ``alpha``)."""


class CheckSettings(_Strict):
    """The pull-request check policy (``sqlbench check``)."""

    fail_on: list[CheckRule] = Field(default_factory=_default_fail_on)
    floor: float | None = None
    """Minimum head accuracy as a fraction of 1; written ``0.8`` or ``80%`` (a bare number
    above 1 is refused)."""
    alpha: float = Field(0.05, gt=0, lt=1)
    must_pass_tag: str = "must-pass"
    metrics: dict[str, MetricGate] = Field(default_factory=dict)
    """Gates on agent-behaviour metrics, by metric name."""
    reuse_max_age: str = "24h"
    """How old a stored run against a warehouse sqlbench does not build (a server) may be and
    still be reused by ``compare``/``check``: ``90s``, ``30m``, ``24h``, ``7d``; ``0s``
    never reuses one."""

    @field_validator("floor", mode="before")
    @classmethod
    def _floor(cls, value: Any) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float | str):
            return parse_threshold(value, "check.floor")
        return value

    @field_validator("reuse_max_age")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @property
    def reuse_max_age_delta(self) -> timedelta:
        """``reuse_max_age`` as a ``timedelta``."""
        return parse_duration(self.reuse_max_age)


class DbtSettings(_Strict):
    """``dbt:``: the project's data model is a dbt project, built for each evaluated ref
    (docs/dbt.md)."""

    project_dir: str = "."
    """Where ``dbt_project.yml`` is, relative to the project root."""
    profiles_dir: str | None = None
    """Where ``profiles.yml`` is, relative to the project root; None: ``project_dir``, then
    dbt's usual place (``DBT_PROFILES_DIR``, else ``~/.dbt``)."""
    target: str | None = None
    """The profile's target to build with; None: the profile's ``target:``."""
    select: list[str] = Field(default_factory=list)
    """dbt node selection (``--select``); empty: every seed, model and snapshot."""
    exclude: list[str] = Field(default_factory=list)
    vars: dict[str, Any] = Field(default_factory=dict)
    """``--vars`` for the build."""
    test: bool = False
    """Also run the project's data tests (``dbt build``); a failing test fails the build."""
    keep_schemas: bool = False
    """On a server warehouse: keep each ref's schemas (``<schema>_sqlb_<key>...``) when the
    command is done, for a later command to reuse; False: drop them then."""
    _untrusted: str | None = PrivateAttr(None)

    @property
    def untrusted(self) -> str | None:
        """Why this ref's dbt project may not run (its macros, SQL and Python models are its
        author's code: docs/security.md); None when it may. Set by the loader
        (``project.load.load_project``), never from sqlbench.yml."""
        return self._untrusted

    def mark_untrusted(self, why: str) -> None:
        """Refuse every dbt invocation on this ref's project, with ``why``."""
        self._untrusted = why

    @field_validator("select", "exclude", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """``select: marts`` is short for ``select: [marts]``."""
        return [value] if isinstance(value, str) else value


class Settings(_Strict):
    """``sqlbench.yml``. Every key optional. String values may hold ``${ENV_VAR}``; they are
    kept in that form here and resolved only where used (``sqlbench.project.envvars``)."""

    warehouse: str | None = None
    """None: fresh in-memory DuckDB. Else a DuckDB file path or a SQLAlchemy URL."""
    warehouses: dict[str, WarehouseSettings] = Field(default_factory=dict)
    """Further named warehouses; questions pick one with ``warehouse: NAME``."""
    dialect: str | None = None
    """sqlglot dialect of the ground truth; None: the warehouse's."""
    setup: list[str] = Field(default_factory=list)
    """Globs of SQL files, relative to the project root, run in order before a run."""
    deploy_branch: str | None = None
    """None: ``main``, else ``master``."""
    staging_branch: str | None = None
    default_agent: str = "auto"
    store: str | None = None
    """None: ``.sqlbench/`` in the project. Else a SQLAlchemy URL."""
    compare: CompareOptions = Field(default_factory=CompareOptions)
    run: RunSettings = Field(default_factory=RunSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    check: CheckSettings = Field(default_factory=CheckSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    metrics: list[CustomMetric] = Field(default_factory=list)
    """Custom judged metrics (docs/agent-behaviour.md)."""
    dbt: DbtSettings | None = None
    """The data model as a dbt project (docs/dbt.md); None: ``setup`` SQL only."""
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    """Dollars per million tokens by model name (docs/cost.md); none built in."""

    @field_validator("run")
    @classmethod
    def _analyze_on_postgres(cls, value: RunSettings, info: ValidationInfo) -> Any:
        return _explain_analyze_on_postgres(
            value, value.explain_analyze, info.data.get("warehouse")
        )

    @field_validator("warehouses", mode="before")
    @classmethod
    def _url_alone(cls, value: Any) -> Any:
        """``name: url`` is short for ``name: {url: url}``."""
        if isinstance(value, dict):
            return {k: {"url": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    def for_warehouse(self, name: str | None) -> Settings:
        """These settings as one warehouse sees them: its URL, setup, dialect and limits in
        place of the top-level ones (``default`` or None: the settings unchanged).

        Example:
            >>> pg = {"url": "postgresql://h/db", "run": {"max_rows": 5}}
            >>> s = Settings(warehouses={"pg": pg})
            >>> w = s.for_warehouse("pg")
            >>> (w.warehouse, w.run.max_rows, w.run.concurrency)
            ('postgresql://h/db', 5, 8)
        """
        if name is None or name == DEFAULT_WAREHOUSE:
            return self
        own = self.warehouses[name]
        limits = own.run.model_dump(exclude_none=True)
        return self.model_copy(
            update={
                "warehouse": own.url,
                "setup": list(own.setup),
                "dialect": own.dialect,
                "run": self.run.model_copy(update=limits),
                "warehouses": {},
                "dbt": None,  # a dbt project is the default warehouse's data model
            }
        )


class CertifiedQuery(_Strict):
    """One entry of ``certified_queries/**.yml``."""

    name: str
    question: str | None = None
    """Optional natural-language description."""
    sql: str
    _path: str = PrivateAttr("")
    _line: int = PrivateAttr(0)

    @property
    def path(self) -> str:
        """File path relative to the project root."""
        return self._path

    @property
    def line(self) -> int:
        """Line of the entry's ``name`` key."""
        return self._line


class TruthKind(StrEnum):
    """Where a question's ground truth comes from."""

    CERTIFIED_QUERY = "certified_query"
    SQL = "sql"
    NONE = "none"


class ExpectedTool(_Strict):
    """One ``expected_tools`` entry (docs/agent-behaviour.md; Snowflake's ground-truth
    invocations)."""

    tool_name: str = Field(min_length=1)
    tool_input: Any = None
    """What the call should receive (judged by tool execution accuracy); None: not judged."""
    tool_output: Any = None
    """What the call should return (judged by tool execution accuracy); None: not judged."""


TrajectoryMatch = Literal["exact", "in_order", "any_order"]


class TrajectoryStep(_Strict):
    """One expected step with its arguments (compared as values)."""

    name: str = Field(min_length=1)
    arguments: Any = None
    """None: any arguments."""


class ExpectedTrajectory(_Strict):
    """``expected_trajectory``: the tool calls expected, and how to match them (Azure's task
    navigation efficiency)."""

    steps: list[str | TrajectoryStep]
    match: TrajectoryMatch = "exact"

    @field_validator("steps")
    @classmethod
    def _names(cls, steps: list[str | TrajectoryStep]) -> list[str | TrajectoryStep]:
        for step in steps:
            if isinstance(step, str) and not step.strip():
                raise ValueError("a step name is empty")
        return steps


StringOperator = Literal["equals", "contains", "startswith", "endswith"]
NumericOperator = Literal[
    "equals", "greater_than", "greater_than_or_equal", "less_than", "less_than_or_equal"
]
STRING_OPERATORS: tuple[str, ...] = ("equals", "contains", "startswith", "endswith")
NUMERIC_OPERATORS: tuple[str, ...] = (
    "equals",
    "greater_than",
    "greater_than_or_equal",
    "less_than",
    "less_than_or_equal",
)


class Assertion(_Strict):
    """One ``assertions`` entry: a JSONPath into the answer record, an operator, a value
    (Salesforce Agentforce semantics; ``sqlbench.metrics.assertions``)."""

    label: str = Field(min_length=1)
    actual: str = Field(min_length=1)
    """JSONPath into the answer record, e.g. ``$.latency_ms`` or ``$.tool_calls[0].name``."""
    operator: str
    expected: str | int | float
    type: Literal["string", "numeric"] = "string"

    @field_validator("actual")
    @classmethod
    def _jsonpath(cls, path: str) -> str:
        # Imported here: jsonpath parsing is only needed by projects that use assertions.
        from jsonpath_ng.exceptions import JSONPathError
        from jsonpath_ng.ext.parser import parse

        try:
            parse(path)
        except (JSONPathError, Exception) as err:  # jsonpath-ng raises bare Exception too
            raise ValueError(f"{path!r} is not a valid JSONPath: {err}") from err
        return path

    @model_validator(mode="after")
    def _operator(self) -> Assertion:
        allowed = STRING_OPERATORS if self.type == "string" else NUMERIC_OPERATORS
        if self.operator not in allowed:
            raise ValueError(
                f"operator {self.operator!r} is not a {self.type} operator; "
                f"expected one of: {', '.join(allowed)}"
            )
        if self.type == "numeric" and (
            isinstance(self.expected, bool) or not isinstance(self.expected, int | float)
        ):
            raise ValueError(
                f"a numeric assertion needs a number as expected, got {self.expected!r}"
            )
        if self.type == "string" and not isinstance(self.expected, str):
            raise ValueError(
                f"a string assertion needs text as expected, got {self.expected!r} "
                "(quote it, or use type: numeric)"
            )
        return self


def _private(model: BaseModel, name: str) -> Any:
    """A private attribute's value, read from pydantic's dict of them: ``model._name`` goes
    through ``BaseModel.__getattr__`` (7 us against 0.2 us here), and a run reads a question's
    space and ground truth several times per answer (61,000 reads before a Spider batch
    starts)."""
    return model.__pydantic_private__[name]  # type: ignore[index]


Expect = Literal["decline"]
"""``expect: decline``: the right answer is no SQL (docs/conversations.md)."""


class Turn(_Strict):
    """One turn of a conversation (``turns:``): its question and its own ground truth, or
    ``expect: decline`` (docs/conversations.md)."""

    question: str
    certified_query: str | None = Field(None, alias="certifiedQuery")
    sql: str | None = None
    also_accept: list[str] = Field(default_factory=list)
    expect: Expect | None = None
    _truth_sql: str | None = PrivateAttr(None)

    def with_truth_sql(self, truth_sql: str | None) -> Turn:
        """A copy whose ground-truth SQL is ``truth_sql`` (a resolved certified query's)."""
        copy = self.model_copy()
        copy._truth_sql = truth_sql
        return copy


class Question(_Strict):
    """One entry of ``eval_questions/**.yml``. The loader fills the private attributes.

    A conversation (``turns:``) holds its turns; its ``question`` is its first turn's (how it
    is listed), and ``turn_question`` gives each turn as a question of its own to ask and
    grade (docs/conversations.md)."""

    name: str
    question: str
    certified_query: str | None = Field(None, alias="certifiedQuery")
    sql: str | None = None
    expect: Expect | None = None
    """``decline``: the right answer is no SQL."""
    turns: list[Turn] | None = None
    tags: list[str] = Field(default_factory=list)
    compare: CompareOverrides | None = None
    also_accept: list[str] = Field(default_factory=list)
    skip: str | None = None
    expected_tools: list[ExpectedTool] | None = None
    """None: not measured; ``[]``: no tool should be called."""
    expected_trajectory: ExpectedTrajectory | None = None
    assertions: list[Assertion] = Field(default_factory=list)
    ground_truth_output: str | int | float | list[Any] | dict[str, Any] | None = None
    """The expected answer in words (for the judge's answer correctness)."""
    warehouse: str | None = None
    """A name from ``warehouses:`` (or ``default``); None: the file's, else the default."""
    _space: str = PrivateAttr("auto")
    _path: str = PrivateAttr("")
    _line: int = PrivateAttr(0)
    _truth_sql: str | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _conversation_listed_by_first_turn(cls, data: Any) -> Any:
        # A conversation writes no `question:` of its own; it is listed by its first turn's.
        # Where the turns are malformed, their own errors say so (not a missing `question`).
        if isinstance(data, dict) and "question" not in data and "turns" in data:
            turns = data["turns"]
            first = None
            if isinstance(turns, list) and turns and isinstance(turns[0], dict):
                first = turns[0].get("question")
            return {**data, "question": first if isinstance(first, str) else ""}
        return data

    @property
    def is_conversation(self) -> bool:
        """True for a question written as ``turns:``."""
        return self.turns is not None

    def turn_question(self, index: int) -> Question:
        """Turn ``index`` (from 0) as a question of its own: its text and ground truth (or
        ``expect``), with the conversation's name, space, place, compare overrides and
        expectations of the agent's behaviour."""
        assert self.turns is not None
        turn = self.turns[index]
        copy = self.model_copy(
            update={
                "question": turn.question,
                "certified_query": turn.certified_query,
                "sql": turn.sql,
                "also_accept": list(turn.also_accept),
                "expect": turn.expect,
                "turns": None,
            }
        )
        truth = turn.sql if turn.sql is not None else _private(turn, "_truth_sql")
        return copy._placed(self._space, self._path, self._line, truth)

    @property
    def space(self) -> str:
        """The file's ``space:`` (default ``auto``)."""
        return _private(self, "_space")  # type: ignore[no-any-return]

    @property
    def full_name(self) -> str:
        """``space/name``: how a question is picked out everywhere."""
        return f"{_private(self, '_space')}/{self.name}"

    @property
    def path(self) -> str:
        """File path relative to the project root."""
        return self._path

    @property
    def line(self) -> int:
        """Line of the entry's ``name`` key."""
        return self._line

    @property
    def truth_kind(self) -> TruthKind:
        """certified_query, sql or none."""
        if self.certified_query is not None:
            return TruthKind.CERTIFIED_QUERY
        if self.sql is not None:
            return TruthKind.SQL
        return TruthKind.NONE

    @property
    def truth_sql(self) -> str | None:
        """The ground-truth SQL: inline, or the resolved certified query's; None if none."""
        return _private(self, "_truth_sql")  # type: ignore[no-any-return]

    @classmethod
    def build(
        cls, data: Any, *, space: str, path: str, line: int, truth_sql: str | None = None
    ) -> Question:
        """A question from its entry's data with the loader's attributes, built once: its
        ``space``, file ``path`` and ``line``, and the ground-truth SQL (default: ``sql``).

        Raises:
            pydantic.ValidationError: The entry's keys or values are wrong.

        Example:
            >>> q = Question.build({"name": "n", "question": "?", "sql": "SELECT 1"},
            ...                    space="sales", path="eval_questions/q.yml", line=3)
            >>> q.full_name, q.truth_sql
            ('sales/n', 'SELECT 1')
        """
        question = cls.model_validate(data)
        return question._placed(space, path, line, question.sql if truth_sql is None else truth_sql)

    def with_truth_sql(self, truth_sql: str | None) -> Question:
        """A copy whose ground-truth SQL is ``truth_sql`` (a resolved certified query's)."""
        return self.model_copy()._placed(self._space, self._path, self._line, truth_sql)

    def with_turns(self, turns: list[Turn]) -> Question:
        """A copy holding ``turns`` (their certified queries resolved)."""
        copy = self.model_copy(update={"turns": turns})
        return copy._placed(self._space, self._path, self._line, self._truth_sql)

    def with_warehouse(self, warehouse: str) -> Question:
        """A copy evaluated on the named warehouse (a file's ``warehouse:`` default)."""
        copy = self.model_copy(update={"warehouse": warehouse})
        return copy._placed(self._space, self._path, self._line, self._truth_sql)

    def _placed(self, space: str, path: str, line: int, truth_sql: str | None) -> Question:
        # Only on a question no one else holds yet (build and the copies above).
        self._space, self._path, self._line, self._truth_sql = space, path, line, truth_sql
        return self


class AgentConfig(BaseModel):
    """One entry of ``agents/**.yml``: ``name``, ``kind`` and the kind's own keys in ``options``.

    Kind-specific keys are checked by the agent kind's own pydantic model
    (``sqlbench.agents.registry``), so this model only holds them.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str
    options: dict[str, Any] = Field(default_factory=dict)
    path: str = ""
    """Agent file path relative to the project root (empty for the implicit ``auto``)."""
    line: int = 0
    base_dir: Path = Path(".")
    """Absolute folder of the agent file; relative paths in options (replay ``path``) resolve
    here."""


class Environment(StrEnum):
    """Which environment a branch maps to."""

    PROD = "prod"
    STAGING = "staging"
    DEV = "dev"


class SourceInfo(BaseModel):
    """Which version of the project was loaded: a git ref's commit, or the working tree."""

    model_config = ConfigDict(frozen=True)

    branch: str
    """The ref as given (``main``, ``origin/main``, a tag, a sha), or ``working tree``; for the
    working tree of a git repository, the checked-out branch name when there is one."""
    commit: str | None
    """Full commit sha of the ref (for the working tree: HEAD's, or None outside git)."""
    dirty: bool = False
    """True when loaded from a working tree with uncommitted changes."""
    working_tree_hash: str | None = None
    """Hash of the uncommitted changes (dirty working trees only)."""
    environment: Environment = Environment.DEV
    dev_mode_note: str | None = None
    """Set when ``--branch dev`` fell back to the working tree; printed by the CLI."""


class Project(BaseModel):
    """A loaded, validated project. ``root`` is where its files are on disk: the checkout for the
    working tree, or a temporary extraction of the ref for ``--branch REF``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    root: Path
    checkout: Path | None = None
    """For a project loaded from a git ref: the working tree's project folder it was read from
    (``sqlbench.project.reftrust`` decides whether the ref's code may run); None for the
    working tree itself."""
    settings: Settings
    questions: list[Question]
    certified_queries: dict[str, CertifiedQuery]
    agents: dict[str, AgentConfig]
    source: SourceInfo
    question_set_hash: str
    """Stable hash of every question's name, space, text, ground truth and compare options."""
    folder: Path | None = None
    """The project folder on disk (the checkout), whose ``.sqlbench/`` holds sqlbench's own
    files such as dbt builds; None: ``root``."""
    warnings: list[Any] = Field(default_factory=list)
    """``sqlbench.errors.Problem`` warnings found while loading (errors raise instead)."""

    def warehouse_of(self, question: Question) -> str | None:
        """The name of the warehouse ``question`` runs on: a name from ``warehouses:``, or None
        for the default (top-level) warehouse."""
        name = question.warehouse
        if name is None or name == DEFAULT_WAREHOUSE or name not in self.settings.warehouses:
            return None
        return name
