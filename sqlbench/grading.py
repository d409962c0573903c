"""From a question's ground truth and the agent's answer to a verdict and its reason
(docs/verdicts.md).

The decision, in order (the first that applies wins):

1. ``skip:`` -> skipped (the agent is not asked).
2. A certified query that does not resolve, or ground-truth SQL (main or any ``also_accept``)
   that fails or exceeds max_rows -> error (the agent is not asked).
3. The agent's endpoint could not be reached (429/5xx, refused or reset, after the retries)
   -> error with ``error_kind: unreachable`` (not asked); the agent failed (exception, exit
   status, timeout, bad answer format) -> error.
4. ``expect: decline`` -> pass when the agent gave no SQL (a decline, or words), else fail
   "answered a question that should be declined" (docs/conversations.md).
   No ground truth -> review (the agent's answer and SQL are kept for a person to judge).
5. No SQL (answered in words, or declined) -> review.
6. The agent's SQL did not run -> fail, saying why (syntax, runtime, timeout, over max_rows,
   not read-only); a warehouse connection lost twice -> error (not the agent's fault).
7. The result matches the ground truth or any ``also_accept`` -> pass; else review when any of
   those comparisons was ambiguous (with its reason), else fail with the main one's reason.
8. The answer's flags: a pass whose SQL does not read the data where the ground truth does ->
   review (``compare: constant_answers``), ``constant_answer``; a trace whose tool calls name
   the question or certified-query files or the store -> review, ``ground_truth_seen``; SQL
   that reproduces the certified query of its question -> ``from_certified_query``.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlbench.agents.base import Answer
from sqlbench.compare import Comparison, compare_results
from sqlbench.engines.base import ResultSet
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import CompareOptions, Question, TruthKind
from sqlbench.project.gitfs import STORE_DIR
from sqlbench.sqlreads import reads_data, same_query
from sqlbench.text import joined_lines, one_line
from sqlbench.verdicts import MAX_REASON, NOT_ASKED, ErrorKind, ResultFlag, Verdict

__all__ = [
    "LIMITS_REACHED",
    "AgentOutcome",
    "Grade",
    "TruthOutcome",
    "Verdict",
    "agent_problem",
    "agent_sql_reason",
    "grade",
    "grade_skipped",
    "truth_problem",
]

_LARGE_COMPARISON_BYTES = 64 * 2**20
"""Results holding this many bytes together are compared one pair at a time: comparing adds up
to about 0.7 times its inputs (two 256 MB results of narrow rows: 333 MB more; long text is
coded by rank, not copied), so eight at once would hold eight times that."""
_LARGE_COMPARISON = threading.Lock()
_NOTHING_HELD = contextlib.nullcontext()

LIMITS_REACHED = frozenset(
    {QueryErrorKind.TIMEOUT, QueryErrorKind.TOO_MANY_ROWS, QueryErrorKind.TOO_LARGE}
)
"""Limits that make agent SQL ``fail`` when it reaches them (docs/verdicts.md)."""

_AGENT_SQL_PROBLEM = {
    QueryErrorKind.SYNTAX: "the agent's SQL has a syntax error",
    QueryErrorKind.RUNTIME: "the agent's SQL failed",
    QueryErrorKind.TIMEOUT: "the agent's SQL timed out",
    QueryErrorKind.TOO_MANY_ROWS: "the agent's SQL returned more rows than max_rows",
    QueryErrorKind.TOO_LARGE: "the agent's SQL result is too large",
    QueryErrorKind.SQL_LIMIT: "the agent's SQL is over sqlbench's size limits",
    QueryErrorKind.NOT_READ_ONLY: "not a read-only query",
    QueryErrorKind.CONNECTION: "the warehouse connection was lost running the agent's SQL",
}
_TRUTH_PROBLEM = {
    QueryErrorKind.SYNTAX: "has a syntax error",
    QueryErrorKind.RUNTIME: "failed",
    QueryErrorKind.TIMEOUT: "timed out",
    QueryErrorKind.TOO_MANY_ROWS: "returned more rows than max_rows",
    QueryErrorKind.TOO_LARGE: "is too large",
    QueryErrorKind.SQL_LIMIT: "is over sqlbench's size limits",
    QueryErrorKind.NOT_READ_ONLY: "was refused",
    QueryErrorKind.CONNECTION: "lost the warehouse connection",
}


@dataclass(frozen=True)
class TruthOutcome:
    """One ground-truth SQL (the main one or an ``also_accept``) and what running it gave."""

    sql: str
    result: ResultSet | None = None
    """The result, when it ran (shared by every question using this SQL; never modified)."""
    error: QueryError | None = None
    """Why it did not run."""


AgentOutcome = ResultSet | QueryError | None
"""What running the agent's SQL gave: a result, the error, or None when there was no SQL."""


@dataclass(frozen=True)
class Grade:
    """A verdict with its one-line reason and what it was decided from."""

    verdict: Verdict
    reason: str
    matched_truth: int | None = None
    """Which ground truth matched: 0 the main one, n the n-th ``also_accept``."""
    compared_truth: int | None = None
    """Which ground truth ``comparison`` (and the reason) is about."""
    comparison: Comparison | None = None
    """The comparison behind a pass/fail/review of two results."""
    error_kind: ErrorKind | None = None
    """Why an ``error`` is no failure of the agent (its endpoint was unreachable)."""
    flags: tuple[ResultFlag, ...] = ()
    """Facts about the answer beside the verdict (``constant_answer``, ...)."""


def grade_skipped(question: Question) -> Grade:
    """The grade of a question that carries ``skip:``."""
    return Grade(Verdict.SKIPPED, one_line(f"skipped: {question.skip}", MAX_REASON))


def truth_problem(question: Question, truths: Sequence[TruthOutcome]) -> Grade | None:
    """An error grade when the ground truth cannot be used (the agent need not be asked).

    Args:
        question: The question.
        truths: Its ground truths run: the main one first, then each ``also_accept``.
    """
    if question.truth_kind is TruthKind.CERTIFIED_QUERY and question.truth_sql is None:
        return Grade(Verdict.ERROR, f"certified query '{question.certified_query}' was not found")
    for index, truth in enumerate(truths):
        if truth.error is None:
            continue
        which = "the ground truth" if index == 0 else f"also_accept #{index}"
        problem = _TRUTH_PROBLEM.get(truth.error.kind, "failed")
        return Grade(
            Verdict.ERROR, one_line(f"{which} {problem}: {truth.error.message}", MAX_REASON)
        )
    return None


def agent_problem(answer: Answer) -> Grade | None:
    """An error grade when the agent itself failed, or when its endpoint could not be reached
    (``error_kind: unreachable``: the question was not asked)."""
    if answer.unreachable is not None:
        reason = f"{NOT_ASKED}{answer.unreachable} ({answer.error})"
        return Grade(Verdict.ERROR, one_line(reason, MAX_REASON), error_kind=ErrorKind.UNREACHABLE)
    if answer.error is not None:
        return Grade(Verdict.ERROR, joined_lines(f"agent error: {answer.error}", MAX_REASON))
    return None


def grade(
    question: Question,
    truths: Sequence[TruthOutcome],
    answer: Answer,
    agent_outcome: AgentOutcome,
    *,
    options: CompareOptions,
    dialect: str,
) -> Grade:
    """Decide a question's verdict (the order is in the module docstring).

    Args:
        question: The question (its ``skip``, truth kind and certified query are read).
        truths: Ground truths run: the main one first, then each ``also_accept``; empty when
            the question has none.
        answer: The agent's answer (``sqlbench.agents.call.ask`` never raises).
        agent_outcome: What running ``answer.sql`` gave (None when there was no SQL).
        options: Compare options with the question's overrides applied.
        dialect: sqlglot dialect of the ground-truth SQL (for ``order: auto``).
    """
    graded = _grade(question, truths, answer, agent_outcome, options=options, dialect=dialect)
    if graded.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.REVIEW):
        graded = _answer_facts(graded, question, truths, answer, options, dialect)
    if answer.replaced_chars and question.skip is None:
        chars, verb = ("character", "was") if answer.replaced_chars == 1 else ("characters", "were")
        note = (
            f" ({answer.replaced_chars} {chars} of the agent's answer that {verb} not valid text "
            f"{verb} replaced with U+FFFD)"
        )
        if "U+FFFD" not in graded.reason:  # an agent error may already say so
            reason = one_line(graded.reason, MAX_REASON - len(note)) + note
            graded = replace(graded, reason=reason)
    return graded


def _grade(
    question: Question,
    truths: Sequence[TruthOutcome],
    answer: Answer,
    agent_outcome: AgentOutcome,
    *,
    options: CompareOptions,
    dialect: str,
) -> Grade:
    if question.skip is not None:
        return grade_skipped(question)
    early = truth_problem(question, truths) or agent_problem(answer)
    if early is not None:
        return early
    has_sql = answer.sql is not None and answer.sql.strip() != ""
    if question.expect == "decline":
        return _expected_decline(answer, has_sql)
    if not truths:
        return Grade(Verdict.REVIEW, _no_truth_reason(has_sql, agent_outcome))
    if not has_sql:
        return Grade(Verdict.REVIEW, _no_sql_reason(answer))
    if isinstance(agent_outcome, QueryError):
        verdict = Verdict.ERROR if agent_outcome.kind is QueryErrorKind.CONNECTION else Verdict.FAIL
        return Grade(verdict, agent_sql_reason(agent_outcome))
    if agent_outcome is None:
        raise ValueError("grade() needs the agent's SQL outcome when the answer has SQL")
    return _compare_all(truths, agent_outcome, options, dialect)


CONSTANT_REASON = "the agent's SQL does not read the data: its result is a constant"
_ANSWER_KEY = re.compile(
    r"(?:^|[\\/\s\"'`=:,(\[])(eval_questions|certified_queries|" + re.escape(STORE_DIR) + r")"
    r"(?=$|[\\/\s\"'`),\]])"
)
"""A path naming the project's question files, certified queries or run store (the folder's
name as a whole path component: ``eval_questions/q.yml``, ``../certified_queries``)."""


def _answer_facts(
    graded: Grade,
    question: Question,
    truths: Sequence[TruthOutcome],
    answer: Answer,
    options: CompareOptions,
    dialect: str,
) -> Grade:
    """The grade with the answer's flags (docs/verdicts.md, "Flags"): a trace that reads the
    answer key makes a pass or fail ``review``; a constant pass is ``review`` (or what
    ``compare: constant_answers`` says); a reproduction of the certified query is marked."""
    flags = list(graded.flags)
    sql = answer.sql if answer.sql is not None and answer.sql.strip() else None
    if (
        sql is not None
        and question.truth_kind is TruthKind.CERTIFIED_QUERY
        and question.truth_sql is not None
        and same_query(sql, question.truth_sql, dialect)
    ):
        flags.append(ResultFlag.FROM_CERTIFIED_QUERY)
    if (
        graded.verdict is Verdict.PASS
        and sql is not None
        and _constant(sql, truths, graded, dialect)
    ):
        flags.append(ResultFlag.CONSTANT_ANSWER)
        if options.constant_answers != "allow":
            verdict = Verdict.REVIEW if options.constant_answers == "review" else Verdict.FAIL
            graded = replace(graded, verdict=verdict, reason=CONSTANT_REASON, matched_truth=None)
    seen = _answer_key_call(answer)
    if seen is not None:
        flags.append(ResultFlag.GROUND_TRUTH_SEEN)
        if graded.verdict is not Verdict.REVIEW:
            reason = (
                f"the agent's trace reads the answer key ({seen}): a person must judge this "
                f"answer; graded {graded.verdict.value}: {graded.reason}"
            )
            graded = replace(
                graded,
                verdict=Verdict.REVIEW,
                reason=one_line(reason, MAX_REASON),
                matched_truth=None,
            )
    return replace(graded, flags=tuple(dict.fromkeys(flags))) if flags else graded


def _constant(sql: str, truths: Sequence[TruthOutcome], graded: Grade, dialect: str) -> bool:
    """Whether the agent's ``sql`` cannot depend on the data while the ground truth it matched
    does (a ground truth that is itself a constant makes no claim)."""
    truth = truths[graded.matched_truth or 0].sql if truths else None
    if truth is None or reads_data(truth, dialect) is not True:
        return False
    return reads_data(sql, dialect) is False


def _answer_key_call(answer: Answer) -> str | None:
    """``tool call read_file names eval_questions/q.yml``: the first tool call of the trace
    whose arguments name the answer key's files; None when none does."""
    for call in answer.tool_calls:
        text = (
            call.arguments
            if isinstance(call.arguments, str)
            else json.dumps(call.arguments, default=str)
        )
        found = _ANSWER_KEY.search(text or "")
        if found is not None:
            start = max(0, found.start(1) - 40)
            named = one_line(text[start : found.end(1) + 40], 100)
            return f"tool call {call.name!r} names {found.group(1)}: {named}"
    return None


def compare_under(
    expected: ResultSet, actual: ResultSet, options: CompareOptions, sql: str, dialect: str
) -> Comparison:
    """``compare_results`` under a question's compare options, on the two Arrow tables (every
    type kept, no pandas detour); large pairs one at a time across the run's threads. The one
    place options become a comparison (grading and data variants alike)."""
    large = expected.table.nbytes + actual.table.nbytes >= _LARGE_COMPARISON_BYTES
    with _LARGE_COMPARISON if large else _NOTHING_HELD:
        return compare_results(
            expected.table,
            actual.table,
            order=options.order,
            rows=options.rows,
            abs_tol=options.abs_tol,
            rel_tol=options.rel_tol,
            columns=options.columns,
            max_extra_columns=options.max_extra_columns,
            expected_sql=sql,
            dialect=dialect,
        )


def _compare_all(
    truths: Sequence[TruthOutcome], actual: ResultSet, options: CompareOptions, dialect: str
) -> Grade:
    first: Comparison | None = None
    ambiguous: tuple[int, Comparison] | None = None
    for index, truth in enumerate(truths):
        if truth.result is None:
            raise ValueError("every ground truth must have run before grading")
        comparison = compare_under(truth.result, actual, options, truth.sql, dialect)
        if comparison.passed:
            reason = (
                comparison.reason
                if index == 0
                else (f"matches also_accept #{index}: {comparison.reason}")
            )
            return Grade(
                Verdict.PASS,
                one_line(reason, MAX_REASON),
                matched_truth=index,
                compared_truth=index,
                comparison=comparison,
            )
        if first is None:
            first = comparison
        if ambiguous is None and comparison.verdict is Verdict.REVIEW:
            ambiguous = (index, comparison)
    assert first is not None  # truths is never empty here
    if ambiguous is not None:
        # No ground truth matched, but one comparison could not decide: a person must look.
        # Calling it fail would be a guess (docs/verdicts.md: "never a guess").
        index, comparison = ambiguous
        which = "" if index == 0 else f"also_accept #{index}: "
        return Grade(
            Verdict.REVIEW,
            one_line(f"{which}{comparison.reason}", MAX_REASON),
            compared_truth=index,
            comparison=comparison,
        )
    reason = first.reason
    if len(truths) > 1:
        reason = f"{reason} (no also_accept matched either)"
    return Grade(first.verdict, one_line(reason, MAX_REASON), compared_truth=0, comparison=first)


DECLINE_EXPECTED_FAIL = "answered a question that should be declined"


def _expected_decline(answer: Answer, has_sql: bool) -> Grade:
    if has_sql:
        return Grade(
            Verdict.FAIL,
            one_line(f"{DECLINE_EXPECTED_FAIL}: {(answer.sql or '').strip()}", MAX_REASON),
        )
    said = (answer.declined or answer.answer or "").strip()
    reason = "declined as expected" + (f": {said}" if said else " (no SQL, no answer)")
    return Grade(Verdict.PASS, one_line(reason, MAX_REASON))


def _no_truth_reason(has_sql: bool, outcome: AgentOutcome) -> str:
    base = "no ground truth to compare with (the question has neither certifiedQuery nor sql)"
    if not has_sql:
        return f"{base}; the agent gave no SQL either"
    if isinstance(outcome, QueryError):
        return one_line(f"{base}; the agent's SQL did not run: {outcome.message}", MAX_REASON)
    return f"{base}: review the agent's SQL and result"


def _no_sql_reason(answer: Answer) -> str:
    if answer.declined:
        return one_line(f"the agent declined: {answer.declined}", MAX_REASON)
    if answer.answer and answer.answer.strip():
        return one_line(
            f"the answer is not SQL (the agent answered in words): {answer.answer.strip()}",
            MAX_REASON,
        )
    return "the agent gave no SQL and no answer (declined)"


def agent_sql_reason(error: QueryError) -> str:
    """Why the agent's SQL did not run, one line led by what kind of problem it is ("the
    agent's SQL result is too large: ...")."""
    problem = _AGENT_SQL_PROBLEM.get(error.kind, "the agent's SQL did not run")
    message = error.message.strip()
    if message.lower().startswith(problem.lower()):
        return one_line(message, MAX_REASON)
    return one_line(f"{problem}: {message}", MAX_REASON)
