"""Affected-only runs (``check --affected``, ``run --affected-by REF``): which questions a
change between a base and a head can have touched.

A question's inputs are the tables and views its ground truth reads (on either side) and
the ones the base run's agent SQL read (sqlglot lineage), each followed through the setup files
to what defines it. With ``dbt:``, the dbt models changed between the two refs' manifests
(dbt's ``state:modified``: body, config, relation or called macros) and every node downstream of
them count as changed definitions too, by model name and relation name; ``{{ ref('m') }}`` in
SQL reads model ``m``. A setup definition is changed when its statement's text changed (or a data
file it reads by quoted path did), and so is everything defined downstream of it. A question is
affected when one of its inputs changed, when its YAML entry (its certified query included)
changed, when it is new on head, when its base answer is missing, or when any of its SQL or
any setup statement cannot be parsed. Anything that changes every answer (sqlbench.yml outside
``check:``, a second warehouse; the agent's settings and the warehouse are compared by the
caller through the run identity) makes every question affected. When in
doubt, a question is asked: a wrong selection is a wrong verdict.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlbench.dbt.refs import refs_as_names
from sqlbench.errors import SqlbenchError
from sqlbench.project.files import Project, Question
from sqlbench.project.load import _hashed_question
from sqlbench.records.run import TrialResult
from sqlbench.runs.regrade import REUSED_LABEL
from sqlbench.truth import ground_truths

__all__ = ["REUSED_LABEL", "Selection", "select_affected", "sql_inputs"]

Key = tuple[str, str]

_QUOTED_PATH = re.compile(r"'([^'\n]+\.[A-Za-z0-9]{1,8})'")


@dataclass(frozen=True)
class Selection:
    """The questions to ask, and why; every other question is reused from the base run."""

    asked: Mapping[Key, str]
    """Question key -> why it is asked."""
    reused: frozenset[Key]
    changed_objects: tuple[str, ...]
    """Setup-defined tables/views whose definition changed, downstream included."""
    everything: str | None = None
    """Why every question is asked, when a change touches them all."""


@dataclass(frozen=True)
class _Setup:
    texts: dict[str, str]
    """Defined name -> the text (and read files' hashes) of its statements."""
    reads: dict[str, set[str]]
    unparsed: str | None = None


def _names(node: exp.Expr) -> set[str]:
    """Table/view names a statement reads (CTE names left out), lower-cased."""
    ctes = {cte.alias_or_name.lower() for cte in node.find_all(exp.CTE)}
    return {t.name.lower() for t in node.find_all(exp.Table) if t.name} - ctes


def sql_inputs(sql: str, dialect: str | None) -> set[str] | None:
    """The tables and views ``sql`` reads, or None when sqlglot cannot parse it.

    Example:
        >>> sorted(sql_inputs("WITH t AS (SELECT * FROM Orders) SELECT * FROM t JOIN c", None))
        ['c', 'orders']
        >>> sql_inputs("SELEC nonsense FROM", None) is None
        True
        >>> sorted(sql_inputs("SELECT * FROM {{ ref('orders') }}", None))
        ['orders']
    """
    try:
        parsed = sqlglot.parse(refs_as_names(sql), read=dialect)
    except (SqlglotError, ValueError, RecursionError):
        return None
    names: set[str] = set()
    for node in parsed:
        if node is not None:
            names |= _names(node)
    return names


def _setup(project: Project, dialect: str | None) -> _Setup:
    # Engines pull in drivers: import on use only.
    from sqlbench.engines.open import setup_files
    from sqlbench.engines.setup_sql import split_statements

    texts: dict[str, str] = {}
    reads: dict[str, set[str]] = {}
    try:
        files = setup_files(project.settings, project.root)
    except SqlbenchError as err:
        return _Setup({}, {}, f"the setup files cannot be listed: {err}")
    for path in files:
        shown = (
            path.relative_to(project.root).as_posix()
            if path.is_relative_to(project.root)
            else str(path)
        )
        try:
            text = path.read_text(encoding="utf-8")
            statements = split_statements(text, dialect or "duckdb")
        except (OSError, UnicodeDecodeError, SqlbenchError) as err:
            return _Setup({}, {}, f"{shown} cannot be read: {err}")
        for number, statement in enumerate(statements, 1):
            try:
                node = sqlglot.parse_one(statement, read=dialect)
            except (SqlglotError, ValueError, RecursionError):
                return _Setup({}, {}, f"{shown} statement {number} cannot be parsed")
            target = node.this if isinstance(node, exp.Create | exp.Insert) else None
            table = target.find(exp.Table) if isinstance(target, exp.Expr) else None
            if isinstance(target, exp.Table):
                table = target
            if table is None or not table.name:
                return _Setup(
                    {}, {}, f"{shown} statement {number} does not create or fill a named table"
                )
            name = table.name.lower()
            texts[name] = (
                texts.get(name, "")
                + " ".join(statement.split())
                + _files_read(statement, project.root)
            )
            reads.setdefault(name, set()).update(_names(node) - {name})
    return _Setup(texts, reads)


def _files_read(statement: str, root: Path) -> str:
    """Hashes of the files a statement reads by quoted path (a CSV loaded by ``read_csv``), so
    a data change counts as a change of what it defines."""
    found = []
    for quoted in _QUOTED_PATH.findall(statement):
        file = root / quoted
        if file.is_file():
            found.append(f"|{quoted}:{hashlib.sha256(file.read_bytes()).hexdigest()}")
    return "".join(found)


def _downstream(changed: set[str], reads: Mapping[str, set[str]]) -> set[str]:
    """``changed`` and every name whose definition reads one of them, transitively."""
    result = set(changed)
    grew = True
    while grew:
        grew = False
        for name, inputs in reads.items():
            if name not in result and inputs & result:
                result.add(name)
                grew = True
    return result


def _settings_key(project: Project) -> str:
    return project.settings.model_dump_json(exclude={"check"})


def select_affected(
    base: Project,
    head: Project,
    base_trials: Iterable[TrialResult],
) -> Selection:
    """The head questions a change from ``base`` to ``head`` can have touched; see the module
    docstring. ``base_trials`` are the base run's results (its agent SQL and which questions it
    answered)."""
    questions = list(head.questions)
    everything = None
    if _settings_key(base) != _settings_key(head):
        everything = "sqlbench.yml changed (outside check:)"
    elif len(head.settings.warehouses) > 0:
        everything = "the project has several warehouses (affected-only runs read one setup)"
    if everything is not None:
        return Selection(
            {(q.space, q.name): everything for q in questions}, frozenset(), (), everything
        )
    dialect = head.settings.dialect
    base_setup, head_setup = _setup(base, dialect), _setup(head, dialect)
    unparsed = base_setup.unparsed or head_setup.unparsed
    if unparsed is not None:
        reason = f"setup: {unparsed}"
        return Selection({(q.space, q.name): reason for q in questions}, frozenset(), (), reason)
    models: dict[str, str] = {}
    if head.settings.dbt is not None:
        try:
            models = _dbt_changes(base, head)
        except SqlbenchError as err:
            reason = f"the dbt projects cannot be compared: {err}"
            return Selection(
                {(q.space, q.name): reason for q in questions}, frozenset(), (), reason
            )
    names = set(base_setup.texts) | set(head_setup.texts)
    changed = {n for n in names if base_setup.texts.get(n) != head_setup.texts.get(n)}
    changed |= set(models)
    reads: dict[str, set[str]] = {}
    for setup in (base_setup, head_setup):
        for name, inputs in setup.reads.items():
            reads.setdefault(name, set()).update(inputs)
    changed = _downstream(changed, reads)

    base_questions = {(q.space, q.name): q for q in base.questions}
    agent_sql: dict[Key, list[str]] = {}
    answered: set[Key] = set()
    for trial in base_trials:
        key = (trial.space, trial.name)
        if trial.agent_sql:
            agent_sql.setdefault(key, []).append(trial.agent_sql)
        for turn in trial.turns or []:  # every turn's SQL of a conversation
            if turn.sql:
                agent_sql.setdefault(key, []).append(turn.sql)
        if _answered(trial):
            answered.add(key)
    asked: dict[Key, str] = {}
    for question in questions:
        why = _why(
            question,
            base_questions.get((question.space, question.name)),
            agent_sql,
            answered,
            changed,
            head,
        )
        if why is not None:
            asked[(question.space, question.name)] = why
    reused = frozenset((q.space, q.name) for q in questions if (q.space, q.name) not in asked)
    return Selection(asked, reused, tuple(sorted(changed)))


def _dbt_changes(base: Project, head: Project) -> dict[str, str]:
    """The relations of dbt models changed from base to head (dbt's ``state:modified``) and
    downstream of them, read from both refs' manifests (docs/dbt.md)."""
    from sqlbench.dbt.build import parse_project
    from sqlbench.dbt.manifest import changed_between

    return changed_between(parse_project(base), parse_project(head))


def _answered(trial: TrialResult) -> bool:
    return "agent_sql" in trial.timings_ms or any(
        value is not None for value in (trial.agent_sql, trial.answer, trial.agent_error)
    )


def _why(
    question: Question,
    before: Question | None,
    agent_sql: Mapping[Key, list[str]],
    answered: set[Key],
    changed: set[str],
    head: Project,
) -> str | None:
    key = (question.space, question.name)
    if before is None:
        return "new on head"
    if _hashed_question(before) != _hashed_question(question):
        return "its YAML entry (or its certified query) changed"
    if key not in answered:
        return "the base run has no answer for it"
    dialect = head.settings.dialect
    inputs: set[str] = set()
    sources = [s for s in (before.truth_sql, question.truth_sql) if s] + list(
        agent_sql.get(key, [])
    )
    sources += ground_truths(before) + ground_truths(question) if question.turns else []
    for sql in sources:
        found = sql_inputs(sql, dialect)
        if found is None:
            return "its SQL (ground truth or base answer) cannot be parsed"
        inputs |= found
    hit = sorted(inputs & changed)
    if hit:
        return f"reads changed {', '.join(hit)}"
    return None
