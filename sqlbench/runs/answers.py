"""One answer, start to finish: ground truth, the agent, its SQL, the grade, the stored record.

``grade_answer`` is what each of the run loop's workers does per question and trial; it never
raises for a failing query or agent (those become verdicts), only for sqlbench's own bugs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlbench.agents.base import Agent, Answer, Request
from sqlbench.agents.call import ask
from sqlbench.engines.agent_process import take_startup_ms
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.limits import run_agent_sql
from sqlbench.errors import QueryError, QueryProcessError
from sqlbench.grading import (
    LIMITS_REACHED,
    AgentOutcome,
    Grade,
    TruthOutcome,
    agent_sql_reason,
    grade,
    grade_skipped,
    truth_problem,
)
from sqlbench.metrics.compute import with_metrics
from sqlbench.metrics.judge import Judge
from sqlbench.metrics.judged import with_judged_metrics
from sqlbench.project.files import CompareOptions, CustomMetric, Question, RunSettings
from sqlbench.records.hashes import stable_hash
from sqlbench.records.run import ToolCallRecord, TrialResult, TurnResult, VariantsRecord
from sqlbench.runs.credit import credit_of, work_record
from sqlbench.runs.faults import fault_reason, stage_error
from sqlbench.runs.orderprobe import decide_order, needs_order_probe
from sqlbench.runs.previews import (
    difference_of,
    json_safe,
    make_preview,
    result_fingerprint,
    unmatched_rows,
)
from sqlbench.runs.shared_sql import SharedSql
from sqlbench.runs.truth_cache import TruthCache
from sqlbench.text import one_line
from sqlbench.truth import ground_truths
from sqlbench.verdicts import MAX_REASON, Verdict

if TYPE_CHECKING:  # data variants (DuckDB) load only for a run that grades on them
    from sqlbench.variants.suite import VariantCache


TRACE_TEXT_LIMIT = 4000
"""Longest tool-call argument/output (as JSON text) kept in a run; longer ones are cut."""
ANSWER_LIMIT = 20_000
"""Longest text answer kept in a run."""


@dataclass(frozen=True)
class Asking:
    """Which question, which trial (from 0), and its place in the run's selection."""

    question: Question
    trial: int
    position: int


@dataclass(frozen=True)
class GradingContext:
    """What every answer of a run is graded with."""

    engine: Engine
    agent: Agent
    truths: TruthCache
    settings: RunSettings
    compare: CompareOptions
    """The project's compare defaults (a question's overrides are applied here)."""
    truth_dialect: str
    """sqlglot dialect of the ground-truth SQL."""
    branch: str
    """Sent to the agent with each request."""
    warehouse: str | None = None
    """Recorded with each result in a project with ``warehouses:`` (None: only one)."""
    judge: Judge | None = None
    """Scores the judged metrics; None: none configured (they are not computed)."""
    custom_metrics: tuple[CustomMetric, ...] = ()
    variants: VariantCache | None = None
    """Data variants of this warehouse; None: no question asks for them."""
    shared: SharedSql | None = None
    """Agent SQL this question's answers share (``run --agent a,b``): the same text runs and
    is compared once; None: every answer runs its own."""


def grade_answer(asking: Asking, context: GradingContext) -> TrialResult:
    """Ground truth (cached per SQL), then the agent (only when the ground truth is usable),
    then the agent's SQL, then the grade; the result with previews, trace and timings."""
    question = asking.question
    base: dict[str, Any] = {
        "space": question.space,
        "name": question.name,
        "trial": asking.trial,
        "position": asking.position,
        "question": question.question,
        "tags": list(question.tags),
        "expect": question.expect,
        "truth_sql": question.truth_sql,
        "also_accept": list(question.also_accept),
        "warehouse": context.warehouse,
    }
    if question.skip is not None:
        skipped = grade_skipped(question)
        return TrialResult(**base, verdict=skipped.verdict, reason=skipped.reason)
    if question.turns is not None:
        return _grade_conversation(question, base, context)
    sqls = ground_truths(question)
    try:
        return _grade_one(question, base, context, turn=1, messages=None)
    finally:
        context.truths.release(sqls)


def _grade_conversation(
    question: Question, base: dict[str, Any], context: GradingContext
) -> TrialResult:
    """Ask a conversation turn by turn, each request carrying the thread so far, and grade
    each turn on its own; it passes only if every turn passes (docs/conversations.md). A turn
    graded ``error`` (the agent or its ground truth failed) ends it: later turns would be
    asked without the thread they follow."""
    assert question.turns is not None
    # Turns differ in ground truth: an outcome graded once per question would be wrong here.
    context = replace(context, shared=None)
    count = len(question.turns)
    messages: list[dict[str, str]] = []
    turns: list[TurnResult] = []
    graded: list[TrialResult] = []
    try:
        for index in range(count):
            asked = question.turn_question(index)
            messages.append({"role": "user", "content": asked.question})
            trial = _grade_one(
                asked,
                {**base, "question": asked.question, "expect": asked.expect},
                context,
                turn=index + 1,
                messages=list(messages),
            )
            graded.append(trial)
            turns.append(_turn_result(index + 1, asked, trial))
            messages.append({"role": "assistant", "content": _said(trial)})
            if trial.verdict is Verdict.ERROR:
                break
    finally:
        context.truths.release(ground_truths(question))
    return _conversation_result(base, turns, graded, count)


def _said(trial: TrialResult) -> str:
    """The agent's answer as the thread's assistant message: its SQL, else its words."""
    if trial.agent_sql and trial.agent_sql.strip():
        return trial.agent_sql
    return trial.answer or ""


def _turn_result(number: int, asked: Question, trial: TrialResult) -> TurnResult:
    return TurnResult(
        turn=number,
        question=asked.question,
        verdict=trial.verdict,
        reason=trial.reason,
        sql=trial.agent_sql,
        expect=asked.expect,
        truth_sql=asked.truth_sql,
        also_accept=list(asked.also_accept),
        answer=trial.answer,
        agent_error=trial.agent_error,
        tool_calls=trial.tool_calls,
        difference=trial.difference,
        expected_preview=trial.expected_preview,
        actual_preview=trial.actual_preview,
        truth_fingerprint=trial.truth_fingerprint,
        latency_ms=trial.latency_ms,
        input_tokens=trial.input_tokens,
        output_tokens=trial.output_tokens,
        metrics=trial.metrics,
        assertions=trial.assertions,
    )


_WORST_FIRST = (Verdict.ERROR, Verdict.FAIL, Verdict.REVIEW)


def _conversation_result(
    base: dict[str, Any], turns: list[TurnResult], graded: list[TrialResult], count: int
) -> TrialResult:
    """The conversation's own result: pass when every turn passed; else the worst turn
    verdict (error, fail, review), the reason naming the first turn that did not pass. Its
    SQL, previews and trace are that turn's (the last one's when all passed)."""
    missed = next((t for t in turns if t.verdict is not Verdict.PASS), None)
    unasked = next((t for t in graded if t.not_asked), None)
    if unasked is not None:
        # The endpoint could not be reached mid-thread: the conversation was not asked as a
        # whole (counted apart, asked again by --resume); the reason keeps NOT_ASKED first.
        verdict = Verdict.ERROR
        reason = f"{unasked.reason} (at turn {len(graded)} of {count})"
        shown = unasked
    elif missed is None:
        verdict = Verdict.PASS
        reason = f"all {count} turns pass"
        shown = graded[-1]
    else:
        verdict = next(v for v in _WORST_FIRST if any(t.verdict is v for t in turns))
        reason = f"turn {missed.turn} of {count} {missed.verdict.value}: {missed.reason}"
        first_unasked = len(turns) + 1
        if first_unasked < count:
            reason += f" (turns {first_unasked}-{count} not asked)"
        elif first_unasked == count:
            reason += f" (turn {count} not asked)"
        shown = graded[missed.turn - 1]
    fingerprints = [t.truth_fingerprint for t in turns]
    latencies = [t.latency_ms for t in turns if t.latency_ms is not None]
    timings: dict[str, float] = {}
    for trial in graded:
        for key, value in trial.timings_ms.items():
            timings[key] = round(timings.get(key, 0.0) + value, 3)
    return TrialResult(
        **base,
        verdict=verdict,
        reason=one_line(reason, MAX_REASON),
        turns=turns,
        matched_truth=shown.matched_truth,
        agent_sql=shown.agent_sql,
        difference=shown.difference,
        expected_preview=shown.expected_preview,
        actual_preview=shown.actual_preview,
        truth_fingerprint=(
            None if all(f is None for f in fingerprints) else stable_hash(fingerprints)
        ),
        answer=shown.answer,
        tool_calls=[call for trial in graded for call in trial.tool_calls],
        agent_error=shown.agent_error,
        latency_ms=sum(latencies) if latencies else None,
        input_tokens=_total(t.input_tokens for t in turns),
        output_tokens=_total(t.output_tokens for t in turns),
        timings_ms=timings,
        error_kind=shown.error_kind if verdict is Verdict.ERROR else None,
        flags=list(dict.fromkeys(flag for trial in graded for flag in trial.flags)),
        retries=sum(trial.retries for trial in graded),
    )


def _total(values: Any) -> int | None:
    found = [v for v in values if v is not None]
    return sum(found) if found else None


def _grade_one(
    question: Question,
    base: dict[str, Any],
    context: GradingContext,
    *,
    turn: int,
    messages: list[dict[str, str]] | None,
) -> TrialResult:
    """One question (or one turn of a conversation) asked and graded; its ground truths are
    released by the caller."""
    sqls = ground_truths(question)
    truths, truth_ms = context.truths.get(sqls)
    problem = truth_problem(question, truths)
    if problem is not None:
        return TrialResult(
            **base,
            verdict=problem.verdict,
            reason=problem.reason,
            timings_ms={"truth": round(truth_ms, 3)},
        )
    request = Request(
        name=question.name,
        space=question.space,
        question=question.question,
        dialect=context.engine.dialect,
        branch=context.branch,
        turn=turn,
        messages=messages or [],
    )
    answer = _ask(context, request)
    shared = context.shared
    if shared is not None and answer.error is None and (answer.sql or "").strip():
        # Same question, same SQL text, same database: the same outcome.
        outcome, sql_ms, startup_ms = shared.once(
            answer.sql or "", lambda: _run_agent_sql(context.engine, answer, context.settings)
        )
    else:
        outcome, sql_ms, startup_ms = _run_agent_sql(context.engine, answer, context.settings)
    if shared is not None and isinstance(outcome, ResultSet):
        # Another SQL text with exactly the same result (names, types, rows in order) is
        # graded the same: the grade reads the result, never the SQL.
        graded, compare_ms = shared.graded_once(
            outcome.table, lambda: _grade_outcome(question, truths, answer, outcome, context)
        )
    else:
        graded, compare_ms = _grade_outcome(question, truths, answer, outcome, context)
    timings = {
        "truth": round(truth_ms, 3),
        "agent_sql": round(sql_ms, 3),
        "compare": round(compare_ms, 3),
    }
    if startup_ms >= 0.001:
        # Of agent_sql, the time spent starting sqlbench's query process (docs/runs.md).
        timings["query_process_start"] = round(startup_ms, 3)
    options = context.compare.merged(question.compare)
    on_variant: OnVariant | None = None
    if (
        graded.verdict is Verdict.PASS
        and options.variants > 0
        and context.variants is not None
        and answer.sql is not None
    ):
        start = time.perf_counter()
        try:
            on_variant = grade_on_variants(
                graded, truths, answer.sql, context.variants, options, context
            )
            graded = on_variant.grade
        except Exception as err:  # this answer's fault, not the run's
            graded = Grade(Verdict.ERROR, fault_reason("grading on data variants", err))
        timings["variants"] = round((time.perf_counter() - start) * 1000.0, 3)
    try:
        trial = _trial(
            base,
            graded,
            truths,
            answer,
            outcome,
            timings,
            on_variant,
            context.truths,
            shared,
        )
    except Exception as err:  # keep the verdict, leave out what failed
        reason = f"{graded.reason} ({fault_reason('building the previews', err)})"
        trial = TrialResult(
            **base,
            verdict=graded.verdict,
            reason=one_line(reason, MAX_REASON),
            matched_truth=graded.matched_truth,
            agent_sql=answer.sql,
            agent_error=answer.error,
            timings_ms=timings,
            error_kind=graded.error_kind,
            flags=list(graded.flags),
            retries=answer.retries,
        )
    truth = truths[graded.compared_truth or 0] if truths else None
    work = work_record(context.engine, truth, context.truth_dialect, outcome, answer.sql)
    if work is not None:
        trial = trial.model_copy(update={"work": work})
    trial = with_metrics(question, trial)
    if context.judge is not None:
        trial = with_judged_metrics(question, trial, context.judge, context.custom_metrics)
    return trial


def _grade_outcome(
    question: Question,
    truths: list[TruthOutcome],
    answer: Answer,
    outcome: AgentOutcome,
    context: GradingContext,
) -> tuple[Grade, float]:
    """The grade of the agent's SQL outcome and the milliseconds comparing took."""
    start = time.perf_counter()
    try:
        graded = grade(
            question,
            truths,
            answer,
            outcome,
            options=context.compare.merged(question.compare),
            dialect=context.truth_dialect,
        )
        if needs_order_probe(graded) and isinstance(outcome, ResultSet):
            graded = _probe_order(graded, truths, outcome, context)
    except Exception as err:  # this answer's fault, not the run's
        graded = Grade(Verdict.ERROR, fault_reason("comparing the results", err))
    return graded, (time.perf_counter() - start) * 1000.0


def _ask(context: GradingContext, request: Request) -> Answer:
    """The agent's answer; ``ask`` turns agent failures into ``Answer.error`` already, and
    anything else it raises is this answer's agent error too."""
    try:
        return ask(
            context.agent,
            request,
            timeout_s=context.settings.agent_timeout_s,
            retries=context.settings.retries,
        )
    except Exception as err:  # this answer's fault, not the run's
        return Answer(error=fault_reason("reading the agent's answer", err))


def _probe_order(
    graded: Grade, truths: list[TruthOutcome], actual: ResultSet, context: GradingContext
) -> Grade:
    """A review that only the ground truth's ORDER BY keys can decide, decided by running the
    ground truth again with them (``sqlbench.runs.orderprobe``); unchanged when it cannot be."""
    index = graded.compared_truth or 0
    truth = truths[index]
    if graded.comparison is None or truth.result is None:
        return graded
    decided = decide_order(
        context.engine,
        truth.sql,
        context.truth_dialect,
        truth.result,
        actual,
        graded.comparison,
        context.settings,
    )
    if decided is None:
        return graded
    verdict, reason = decided
    if verdict is Verdict.PASS and index > 0:
        reason = f"matches also_accept #{index}: {reason}"
    return replace(
        graded,
        verdict=verdict,
        reason=reason,
        matched_truth=index if verdict is Verdict.PASS else None,
    )


@dataclass(frozen=True)
class OnVariant:
    """A pass graded again on data variants."""

    grade: Grade
    record: VariantsRecord
    expected: ResultSet | None = None
    """The ground truth's result on the variant that decided a fail or review."""
    actual: ResultSet | None = None
    """The agent's result there."""


def grade_on_variants(
    graded: Grade,
    truths: list[TruthOutcome],
    agent_sql: str,
    cache: VariantCache,
    options: CompareOptions,
    context: GradingContext,
) -> OnVariant:
    """A pass on the original data checked on the ground truth's kept variants: it stays a pass
    only if the agent's SQL matches there too (the truth it matched is the one used)."""
    from sqlbench.variants.suite import check

    index = graded.matched_truth or 0
    truth_sql = truths[index].sql
    suite = cache.suite(
        truth_sql, truth_dialect=context.truth_dialect, options=options, settings=context.settings
    )
    found = check(
        suite,
        agent_sql,
        truth_sql,
        truth_dialect=context.truth_dialect,
        options=options,
        settings=context.settings,
    )
    record = VariantsRecord(
        seed=suite.seed,
        numbers=[v.number for v in suite.variants],
        fingerprints=[v.fingerprint for v in suite.variants],
        checked=found.checked,
        failed_on=found.variant.fingerprint if found.variant is not None else None,
        neighbours=suite.neighbours,
        told_apart=suite.told_apart,
    )
    count = len(suite.variants)
    if found.variant is None:
        if count == 0:
            note = (
                "checked on no data variant: none told the ground truth from its near "
                "neighbours, so graded on the original data only"
            )
        else:
            # Kept variants are distinct databases, none the original data (variants/suite.py).
            note = f"and on {count} distinct data variant{'s' if count != 1 else ''}"
        reason = one_line(f"{graded.reason} ({note})", MAX_REASON)
        return OnVariant(replace(graded, reason=reason), record)
    where = f"data variant #{found.variant.number} ({found.variant.fingerprint})"
    if found.error is not None and found.error.kind in LIMITS_REACHED:
        # A limit reached there fails the answer, as on the original data (a query that blows
        # up only on some data is wrong for that data).
        reason = f"matches on the original data, but on {where} {agent_sql_reason(found.error)}"
        failed = Grade(Verdict.FAIL, one_line(reason, MAX_REASON), compared_truth=index)
        return OnVariant(failed, record, found.variant.truth)
    if found.error is not None:
        reason = (
            f"matches on the original data, but on {where} the agent's SQL did not run "
            f"where the ground truth did: {found.error.message}"
        )
        review = Grade(Verdict.REVIEW, one_line(reason, MAX_REASON), compared_truth=index)
        return OnVariant(review, record, found.variant.truth)
    comparison = found.comparison
    assert comparison is not None
    verdict = Verdict.FAIL if comparison.verdict is Verdict.FAIL else Verdict.REVIEW
    reason = f"matches on the original data, but not on {where}: {comparison.reason}"
    changed = Grade(
        verdict, one_line(reason, MAX_REASON), compared_truth=index, comparison=comparison
    )
    return OnVariant(changed, record, found.variant.truth, found.actual)


def _run_agent_sql(
    engine: Engine, answer: Answer, settings: RunSettings
) -> tuple[AgentOutcome, float, float]:
    """Run the answer's SQL (if it has any); the outcome, the milliseconds it took, and of
    those the milliseconds spent waiting for sqlbench's query process to start."""
    if answer.error is not None or answer.sql is None or not answer.sql.strip():
        return None, 0.0, 0.0
    take_startup_ms()  # what an earlier call on this thread left is not this answer's
    start = time.perf_counter()
    try:
        outcome: AgentOutcome = run_agent_sql(engine, answer.sql, settings)
    except QueryError as err:
        outcome = err
    except QueryProcessError:
        raise  # the run's fault (no query can run), not this answer's verdict
    except Exception as err:  # parse, guard, execute, fetch or convert
        outcome = stage_error("running it", err)
    return outcome, (time.perf_counter() - start) * 1000.0, take_startup_ms()


def _trial(
    base: dict[str, Any],
    graded: Grade,
    truths: list[TruthOutcome],
    answer: Answer,
    outcome: AgentOutcome,
    timings: dict[str, float],
    on_variant: OnVariant | None = None,
    cache: TruthCache | None = None,
    shared: SharedSql | None = None,
) -> TrialResult:
    """The stored result: verdict, reason, both previews (differing rows marked), trace.
    A verdict decided on a data variant shows that variant's results. The ground truth's
    fingerprint comes from ``cache`` (made once for every answer sharing that ground truth)
    when given; the previews from ``shared`` (made once per result object and marks for the
    question's answers) when given."""
    preview = make_preview if shared is None else shared.preview
    unmatched = unmatched_rows(graded.comparison)
    expected = truths[graded.compared_truth or 0].result if truths else None
    if on_variant is not None and on_variant.expected is not None:
        expected = on_variant.expected
        outcome = on_variant.actual if on_variant.actual is not None else outcome
    expected_preview = actual_preview = None
    fingerprint = None
    if expected is not None:
        expected_preview = preview(
            expected, unmatched.expected, differing_count=unmatched.expected_count
        )
    main = truths[0].result if truths else None
    if main is not None:
        # The main ground truth's answer, whichever truth the agent matched: the answer a
        # comparison of two runs checks for changes.
        fingerprint = (
            cache.fingerprint(truths[0]) if cache is not None else result_fingerprint(main)
        )
    if isinstance(outcome, ResultSet):
        actual_preview = preview(outcome, unmatched.actual, differing_count=unmatched.actual_count)
    return TrialResult(
        **base,
        verdict=graded.verdict,
        reason=graded.reason,
        error_kind=graded.error_kind,
        flags=list(graded.flags),
        retries=answer.retries,
        matched_truth=graded.matched_truth,
        agent_sql=answer.sql,
        difference=difference_of(graded.comparison),
        partial_credit=credit_of(graded.comparison, expected is not None),
        expected_preview=expected_preview,
        actual_preview=actual_preview,
        truth_fingerprint=fingerprint,
        **_trace(answer),
        timings_ms=timings,
        variants=on_variant.record if on_variant is not None else None,
    )


def _trace(answer: Answer) -> dict[str, Any]:
    usage = answer.usage
    text = answer.answer
    if text is not None and len(text) > ANSWER_LIMIT:
        text = text[: ANSWER_LIMIT - 1] + "…"
    return {
        "answer": text,
        "tool_calls": [
            ToolCallRecord(
                name=call.name,
                arguments=_capped(call.arguments),
                output=_capped(call.output),
                error=call.error,
                started_ms=call.started_ms,
                duration_ms=call.duration_ms,
            )
            for call in answer.tool_calls
        ],
        "agent_error": answer.error,
        "latency_ms": answer.latency_ms,
        "input_tokens": usage.input_tokens if usage is not None else None,
        "output_tokens": usage.output_tokens if usage is not None else None,
        "cached_tokens": usage.cached_tokens or None if usage is not None else None,
        "usage_model": usage.model if usage is not None else None,
    }


def _capped(value: Any) -> Any:
    safe = json_safe(value)
    text = json.dumps(safe, ensure_ascii=False)
    if len(text) <= TRACE_TEXT_LIMIT:
        return safe
    return text[: TRACE_TEXT_LIMIT - 1] + "…"
