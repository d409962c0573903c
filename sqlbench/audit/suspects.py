"""Which ground truths are suspect, and why (docs/audit.md).

Evidence per question, each with a weight in 0-1; a question's score is the chance that at
least one piece is right, taking each as independent (1 - the product of 1 - weight), so two
weak signs rank above one:

- ``agents_agree``: two or more agents (or systems of an imported benchmark) whose answers
  fail return the same result as each other, so not the ground truth's. Their SQL is run again
  on the warehouse and the results compared with each other (columns exact, rows as a
  multiset). Weight: the share of the question's agents in the largest such group, halved
  when at least as many agents pass, and 0.4 of that when the group found nothing (no rows,
  a count of 0): a literal spelled unlike the data makes every agent find nothing alike.
- ``variant``: answers that match on the original data and fail only on a data variant (the
  variant's rows of both sides are in the stored previews); 0.1 per agent, at most 0.3.
- smells of the ground truth's own result (run twice on the warehouse, as ``validate
  --execute`` does): ``empty``, ``all_null``, ``unstable``, ``tie_at_limit``; ``constant``:
  its SQL reads no table, or every output column is a literal.
- ``unread_column``: a column of a table the ground truth reads that the question names (its
  name as words, at least four letters) and the SQL never mentions.
- ``judge``: with a judge configured, its opinion of whether the ground truth's SQL answers the
  question (advisory; replies cached in the run store like every judged metric): ``no``
  weighs 0.5, ``unclear`` 0.2, ``yes`` adds nothing.

Only answers graded against the ground truth the project holds now count (a run made before
the key changed says nothing of the new key).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlbench.errors import QueryError
from sqlbench.project.files import Project, Question, RunSettings
from sqlbench.records.run import Preview, TrialResult
from sqlbench.truth import truth_dialect
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.engines.base import Engine, ResultSet
    from sqlbench.metrics.judge import Judge
    from sqlbench.runs.scores import RunResult

__all__ = ["EVIDENCE_KINDS", "AuditReport", "Evidence", "Suspect", "audit_runs"]

EVIDENCE_KINDS = (
    "agents_agree",
    "variant",
    "empty",
    "all_null",
    "constant",
    "tie_at_limit",
    "unstable",
    "unread_column",
    "judge",
)

_WEIGHTS = {
    "empty": 0.4,
    "all_null": 0.4,
    "constant": 0.3,
    "tie_at_limit": 0.3,
    "unstable": 0.3,
    "unread_column": 0.15,
}
_VARIANT_WEIGHT = 0.1
"""Weight of variant evidence per agent failing only on a variant, at most ``_VARIANT_MAX``:
measured on the public corpus (docs/verdicts.md), such fails are as often the prediction's
error as the key's."""
_VARIANT_MAX = 0.3
_NOTHING_FACTOR = 0.4
"""Agreement on finding nothing (no rows, a count of 0) weighs this share: agents that spell a
literal unlike the data ('France' where it holds 'france') all find nothing alike."""


@dataclass(frozen=True)
class Evidence:
    kind: str
    """One of ``EVIDENCE_KINDS``."""
    detail: str
    """One line a person can check."""
    weight: float


@dataclass(frozen=True)
class Suspect:
    space: str
    name: str
    score: float
    evidence: tuple[Evidence, ...]

    @property
    def full_name(self) -> str:
        return f"{self.space}/{self.name}"


@dataclass(frozen=True)
class AuditReport:
    runs: tuple[str, ...]
    """The audited runs' names."""
    agents: tuple[str, ...]
    questions: int
    """Questions audited (with a ground truth and an answer in some run)."""
    suspects: tuple[Suspect, ...]
    """Questions with any evidence, most suspect first."""
    problems: tuple[str, ...] = field(default=())
    """Ground truths that could not be run (the question is left out)."""


def score_of(weights: Sequence[float]) -> float:
    """1 - the product of (1 - weight): the chance at least one sign is right."""
    left = 1.0
    for weight in weights:
        left *= 1.0 - min(max(weight, 0.0), 1.0)
    return round(1.0 - left, 4)


def audit_runs(
    project: Project,
    runs: Sequence[RunResult],
    *,
    judge: Judge | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AuditReport:
    """Audit ``project``'s ground truths with the answers of ``runs``.

    Raises:
        EngineError: A warehouse cannot be opened or set up.
    """
    from sqlbench.engines.open import open_project_engine

    answers: dict[tuple[str, str], list[tuple[str, TrialResult]]] = {}
    for run in runs:
        for result in run.questions:
            if result.verdict is Verdict.SKIPPED or not result.trials:
                continue
            answers.setdefault((result.space, result.name), []).append(
                (run.info.agent_name, result.first)
            )
    audited = [q for q in project.questions if q.truth_sql and (q.space, q.name) in answers]
    engines: dict[str | None, Engine] = {}
    suspects: list[Suspect] = []
    problems: list[str] = []
    try:
        for done, question in enumerate(audited, start=1):
            where = project.warehouse_of(question)
            if where not in engines:
                engines[where] = open_project_engine(project, where)
            engine = engines[where]
            try:
                evidence, truth = _evidence(
                    project, question, answers[(question.space, question.name)], engine
                )
            except QueryError as err:
                problems.append(f"{question.full_name}: the ground truth fails: {err.message}")
                evidence, truth = [], None
            if judge is not None and truth is not None:
                evidence += _judged(judge, question, truth, problems)
            if evidence:
                score = score_of([e.weight for e in evidence])
                suspects.append(Suspect(question.space, question.name, score, tuple(evidence)))
            if progress is not None:
                progress(done, len(audited))
    finally:
        for engine in engines.values():
            engine.close()
    # Equal scores (several near 1): more evidence first.
    suspects.sort(key=lambda s: (-s.score, -sum(e.weight for e in s.evidence), s.full_name))
    return AuditReport(
        runs=tuple(run.info.name for run in runs),
        agents=tuple(dict.fromkeys(run.info.agent_name for run in runs)),
        questions=len(audited),
        suspects=tuple(suspects),
        problems=tuple(problems),
    )


def _evidence(
    project: Project,
    question: Question,
    answers: list[tuple[str, TrialResult]],
    engine: Engine,
) -> tuple[list[Evidence], ResultSet]:
    from sqlbench.engines.preflight import truth_smells

    settings = project.settings.for_warehouse(project.warehouse_of(question))
    dialect = truth_dialect(settings, engine.dialect)
    truth_sql = question.truth_sql or ""
    truth, smells = truth_smells(engine, truth_sql, dialect, settings.run)
    found = [Evidence(s.kind, f"the ground truth {s.message}", _WEIGHTS[s.kind]) for s in smells]
    if _reads_no_data(truth_sql, dialect):
        found.append(
            Evidence(
                "constant",
                "the ground truth reads no column: its answer is a constant",
                _WEIGHTS["constant"],
            )
        )
    current = [(agent, t) for agent, t in answers if t.truth_sql == question.truth_sql]
    found += _agreement(current, truth, engine, settings.run)
    found += _variant_fails(current, project)
    found += _unread_columns(question, truth_sql, dialect, engine)
    return found, truth


_JUDGE_WEIGHTS = {"no": 0.5, "unclear": 0.2}
_JUDGE_PROMPT = """You check the answer key of a text-to-SQL benchmark.

Question (and any evidence the benchmark gives):
{question}

Ground-truth SQL:
{sql}

Its result ({rows} rows; the first ones):
{preview}

Does this SQL answer the question as asked (the right rows, columns, filters and counts)?
Reply with JSON only: {{"verdict": "yes" | "no" | "unclear", "why": "one sentence"}}"""


def _judged(
    judge: Judge, question: Question, truth: ResultSet, problems: list[str]
) -> list[Evidence]:
    """The judge's opinion of the ground truth (advisory)."""
    from sqlbench.metrics.judge import JudgeError

    rows = truth.table.slice(0, 5).to_pylist()
    prompt = _JUDGE_PROMPT.format(
        question=question.question,
        sql=question.truth_sql,
        rows=truth.num_rows,
        preview="\n".join(str(tuple(r.values())) for r in rows) or "(none)",
    )
    messages = [{"role": "user", "content": prompt}]
    try:
        reply = judge.ask(messages, keep=lambda text: _verdict(text) is not None)
    except JudgeError as err:
        problems.append(f"{question.full_name}: the judge was not reached: {err}")
        return []
    parsed = _verdict(reply.text)
    if parsed is None:
        problems.append(f"{question.full_name}: the judge's reply did not parse")
        return []
    verdict, why = parsed
    if verdict not in _JUDGE_WEIGHTS:
        return []
    detail = f"the judge ({judge.model}) says the ground truth answers the question: {verdict}"
    return [Evidence("judge", detail + (f" ({why})" if why else ""), _JUDGE_WEIGHTS[verdict])]


def _verdict(text: str) -> tuple[str, str] | None:
    """``(yes|no|unclear, why)`` from a judge reply (JSON, maybe in a code fence)."""
    import json

    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in ("yes", "no", "unclear"):
        return None
    return verdict, " ".join(str(data.get("why") or "").split())


def _agreement(
    answers: list[tuple[str, TrialResult]], truth: ResultSet, engine: Engine, run: RunSettings
) -> list[Evidence]:
    """The largest group of failing agents whose results equal each other's."""
    from sqlbench.compare import compare_results

    failing = [
        (agent, t)
        for agent, t in answers
        if t.verdict is Verdict.FAIL
        and t.agent_sql
        and t.actual_preview is not None
        and (t.variants is None or t.variants.failed_on is None)
    ]
    passing = sum(t.verdict is Verdict.PASS for _, t in answers)
    if len(failing) < 2:
        return []
    results: dict[str, ResultSet | None] = {}
    groups: list[tuple[ResultSet, list[str]]] = []
    for agent, trial in failing:
        sql = trial.agent_sql or ""
        if sql not in results:
            try:
                results[sql] = engine.run_agent(
                    sql,
                    timeout_s=run.query_timeout_s,
                    max_rows=run.max_rows,
                    max_bytes=run.max_result_bytes,
                )
            except QueryError:
                results[sql] = None
        result = results[sql]
        if result is None:
            continue
        for representative, members in groups:
            if _same(representative, result, compare_results):
                members.append(agent)
                break
        else:
            groups.append((result, [agent]))
    if not groups:
        return []
    result, members = max(groups, key=lambda g: len(g[1]))
    if len(members) < 2:
        return []
    total = len(answers)
    weight = len(members) / total
    if passing >= len(members):
        weight /= 2
    nothing = _nothing(result)
    if nothing:
        weight *= _NOTHING_FACTOR
    names = _names(members)
    detail = (
        f"{len(members)} of {total} agents ({names}) return the same result as each other, "
        f"{_shape(result)}, not the ground truth's {_shape(truth)}"
        + (f"; {passing} pass" if passing else "; none passes")
        + (
            "; an empty answer, which a literal spelled unlike the data also gives"
            if nothing
            else ""
        )
    )
    return [Evidence("agents_agree", detail, round(weight, 4))]


def _nothing(result: ResultSet) -> bool:
    """Whether a result says nothing was found: no rows, or one row of 0s and NULLs."""
    if result.num_rows == 0:
        return True
    if result.num_rows > 1:
        return False
    return all(value in (None, 0) for value in result.table.slice(0, 1).to_pylist()[0].values())


def _names(agents: list[str], shown: int = 3) -> str:
    """``a, b, c and 2 more`` (all of them when one more would be named)."""
    if len(agents) <= shown + 1:
        return ", ".join(agents)
    more = f" and {len(agents) - shown} more"
    return ", ".join(agents[:shown]) + more


def _same(a: ResultSet, b: ResultSet, compare: Callable[..., object]) -> bool:
    if a.table.num_columns != b.table.num_columns or a.num_rows != b.num_rows:
        return False
    found = compare(a.table, b.table, columns="exact")
    return bool(getattr(found, "passed", False))


def _shape(result: ResultSet) -> str:
    rows = result.num_rows
    if rows == 1 and result.table.num_columns == 1:
        value = result.table.column(0)[0].as_py()
        return repr(value) if isinstance(value, str) else str(value)
    columns = result.table.num_columns
    return f"{rows} row{'s' if rows != 1 else ''} x {columns} column{'s' if columns != 1 else ''}"


def _variant_fails(answers: list[tuple[str, TrialResult]], project: Project) -> list[Evidence]:
    """Answers that match on the original data and fail only on a data variant, with the
    ground truth's near neighbour that gives the first one's result there."""
    found = [
        (agent, t)
        for agent, t in answers
        if t.verdict in (Verdict.FAIL, Verdict.REVIEW)
        and t.variants is not None
        and t.variants.failed_on is not None
    ]
    if not found:
        return []
    agent, first = found[0]
    number = _variant_number(first)
    where = f"data variant #{number}" if number is not None else "a data variant"
    shown = ""
    if first.expected_preview is not None and first.actual_preview is not None:
        shown = (
            f"; there the ground truth gives {_preview(first.expected_preview)} and "
            f"{agent} {_preview(first.actual_preview)}"
        )
    reading = _neighbour(project, first, number)
    if reading is not None:
        shown += f"; the ground truth's near neighbour `{reading}` gives {agent}'s result there"
    names = _names([a for a, _ in found])
    detail = (
        f"{len(found)} agent{'s' if len(found) != 1 else ''} ({names}) "
        f"{'match' if len(found) != 1 else 'matches'} the ground truth on "
        f"the original data but not on a data variant (first: {agent} on {where}{shown}; "
        f"`sqlbench show RUN {first.space}/{first.name} --variant {number}` prints its rows)"
    )
    weight = min(_VARIANT_MAX, _VARIANT_WEIGHT * len(found))
    return [Evidence("variant", detail, round(weight, 4))]


def _neighbour(project: Project, trial: TrialResult, number: int | None) -> str | None:
    """``runs.variant_view.neighbour_of``, or None where the variant cannot be rebuilt."""
    from sqlbench.errors import SqlbenchError
    from sqlbench.runs.variant_view import neighbour_of

    if number is None:
        return None
    try:
        return neighbour_of(project, trial, number)
    except SqlbenchError:  # EngineError included: the evidence stands without it
        return None


def _variant_number(trial: TrialResult) -> int | None:
    record = trial.variants
    if record is None or record.failed_on not in record.fingerprints:
        return None
    return record.numbers[record.fingerprints.index(record.failed_on)]


def _preview(preview: Preview) -> str:
    rows = [tuple(r) for r in preview.rows[:3]]
    more = "" if preview.total_rows <= 3 else f" ... ({preview.total_rows} rows)"
    return ", ".join(repr(r if len(r) > 1 else r[0]) for r in rows) + more if rows else "no rows"


def _reads_no_data(sql: str, dialect: str) -> bool:
    """Whether the SQL reads no table, or every output column of its outermost query is an
    expression of literals alone."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return False
    if not isinstance(tree, exp.Select):
        return False
    if not any(True for _ in tree.find_all(exp.Table)):
        return True
    selects = tree.expressions
    return bool(selects) and all(
        not any(True for _ in s.find_all(exp.Column, exp.AggFunc, exp.Star)) for s in selects
    )


_GENERIC = {"name", "names", "type", "date", "year", "code", "description", "title", "value"}


def _unread_columns(question: Question, sql: str, dialect: str, engine: Engine) -> list[Evidence]:
    """Columns of the tables the ground truth reads that the question names and it never
    mentions."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    read_tables = {t.name.lower() for t in tree.find_all(exp.Table)}
    mentioned = {c.name.lower() for c in tree.find_all(exp.Column)}
    if any(True for _ in tree.find_all(exp.Star)):
        return []
    text = " " + re.sub(r"[^a-z0-9]+", " ", question.question.lower()) + " "
    named: list[str] = []
    for table in engine.tables():
        if table.name.lower() not in read_tables:
            continue
        for column in table.columns:
            lower = column.name.lower()
            words = re.sub(r"[^a-z0-9]+", " ", lower).strip()
            if len(words) < 4 or lower in _GENERIC or lower in mentioned:
                continue
            if f" {words} " in text and lower not in named:
                named.append(column.name)
    if not named:
        return []
    listed = ", ".join(repr(n) for n in named[:3])
    plural = "s" if len(named) > 1 else ""
    detail = f"the question names column{plural} {listed}, which the ground truth never reads"
    return [Evidence("unread_column", detail, min(0.3, _WEIGHTS["unread_column"] * len(named)))]
