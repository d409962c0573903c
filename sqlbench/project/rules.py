"""Validation rules across files, and warnings about ground truth.

Duplicate names, unresolved certified queries, agents (duplicates, kind-specific keys via the
agents package, ``default_agent``), ``setup`` globs, ground truth that sqlglot cannot parse,
and ground truth that will drift because it is relative to today.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from sqlbench.dbt.refs import refs_as_names
from sqlbench.errors import Problem, Severity
from sqlbench.project.dialect import unknown_dialect_message
from sqlbench.project.envvars import template_error
from sqlbench.project.files import (
    DEFAULT_WAREHOUSE,
    AgentConfig,
    CertifiedQuery,
    Question,
    Settings,
    Turn,
)
from sqlbench.project.yamlload import YamlMap, line_of
from sqlbench.sqlstatements import statements
from sqlbench.text import suggest

if TYPE_CHECKING:
    from sqlglot import Token

# sqlglot is imported where SQL is read (_tokens, parse_problem, sql_drift), not with this
# module: the project's loader imports it, and commands that read no SQL (`runs`, `show`)
# load the project too.


def _warning(message: str, path: str | None, line: int | None) -> Problem:
    return Problem(Severity.WARNING, message, path, line)


def _error(message: str, path: str | None, line: int | None) -> Problem:
    return Problem(Severity.ERROR, message, path, line)


def duplicate_questions(questions: Sequence[Question]) -> list[Problem]:
    """A question name used twice in one space (reported at the second)."""
    seen: dict[str, Question] = {}
    problems = []
    for question in questions:
        first = seen.setdefault(question.full_name, question)
        if first is not question:
            problems.append(
                _error(
                    f"duplicate question {question.name!r} in space {question.space!r} (first at "
                    f"{first.path}:{first.line}); names are unique per space",
                    question.path,
                    question.line,
                )
            )
    return problems


def certified_by_name(
    certified: Sequence[CertifiedQuery],
) -> tuple[dict[str, CertifiedQuery], list[Problem]]:
    """Certified queries by name; a name used twice (anywhere) is an error."""
    by_name: dict[str, CertifiedQuery] = {}
    problems = []
    for query in certified:
        first = by_name.setdefault(query.name, query)
        if first is not query:
            problems.append(
                _error(
                    f"duplicate certified query {query.name!r} (first at "
                    f"{first.path}:{first.line}); certified-query names are global",
                    query.path,
                    query.line,
                )
            )
    return by_name, problems


def resolve_certified(
    questions: Sequence[Question], entries: Sequence[YamlMap], by_name: dict[str, CertifiedQuery]
) -> tuple[list[Question], list[Problem]]:
    """The questions with each ``certifiedQuery`` question's SQL resolved (new objects; the
    given ones are not changed); a name that does not resolve is an error."""
    problems = []
    resolved: list[Question] = []
    for question, entry in zip(questions, entries, strict=True):
        if question.turns is not None:
            turns, turn_problems = _resolve_turns(question, entry, by_name)
            resolved.append(question.with_turns(turns))
            problems.extend(turn_problems)
            continue
        name = question.certified_query
        if name is None:
            resolved.append(question)
            continue
        found = by_name.get(name)
        if found is None:
            key = "certifiedQuery" if "certifiedQuery" in entry else "certified_query"
            problems.append(
                _error(
                    f"question {question.name!r}: certifiedQuery {name!r} is not defined in "
                    f"certified_queries/{suggest(name, sorted(by_name), listing=True)}",
                    question.path,
                    line_of(entry, (key,)),
                )
            )
            resolved.append(question)
            continue
        resolved.append(
            question if question.sql is not None else question.with_truth_sql(found.sql)
        )
    return resolved, problems


def _resolve_turns(
    question: Question, entry: YamlMap, by_name: dict[str, CertifiedQuery]
) -> tuple[list[Turn], list[Problem]]:
    """A conversation's turns with each certified query's SQL resolved."""
    turns: list[Turn] = []
    problems: list[Problem] = []
    for index, turn in enumerate(question.turns or []):
        name = turn.certified_query
        if name is None or turn.sql is not None:
            turns.append(turn)
            continue
        found = by_name.get(name)
        if found is None:
            hint = suggest(name, sorted(by_name), listing=True)
            problems.append(
                _error(
                    f"question {question.name!r} turn {index + 1}: certifiedQuery {name!r} is "
                    f"not defined in certified_queries/{hint}",
                    question.path,
                    line_of(entry, ("turns", index, "certifiedQuery")),
                )
            )
            turns.append(turn)
            continue
        turns.append(turn.with_truth_sql(found.sql))
    return turns, problems


AgentValidator = Callable[[AgentConfig], list[Problem]]
"""Checks of one agent's kind and keys; the agents package's ``validate_agent_config``, passed
in from above (``sqlbench.validation``) because agents/ imports project/, not the reverse."""


def agent_problems(
    agents: Sequence[AgentConfig], validate_agent: AgentValidator | None = None
) -> tuple[dict[str, AgentConfig], list[Problem]]:
    """Agents by name; duplicate names, and each agent's kind checks by ``validate_agent``
    (none when None)."""
    by_name: dict[str, AgentConfig] = {}
    problems: list[Problem] = []
    for agent in agents:
        first = by_name.setdefault(agent.name, agent)
        if first is not agent:
            problems.append(
                _error(
                    f"duplicate agent {agent.name!r} (first at {first.path}:{first.line})",
                    agent.path,
                    agent.line,
                )
            )
            continue
        if validate_agent is not None:
            problems.extend(validate_agent(agent))
    return by_name, problems


def default_agent_problem(
    settings: Settings, data: YamlMap | None, agents: Iterable[str], path: str
) -> Problem | None:
    """``default_agent`` naming no agent (``auto`` always exists)."""
    names = sorted(set(agents) | {"auto"})
    if settings.default_agent in names:
        return None
    line = line_of(data, ("default_agent",)) if data is not None else None
    return _error(
        f"default_agent {settings.default_agent!r} is not defined in agents/"
        f"{suggest(settings.default_agent, names, listing=True)}",
        path,
        line,
    )


def metric_gate_problems(
    settings: Settings, data: YamlMap | None, path: str, custom: Iterable[str] = ()
) -> list[Problem]:
    """``check: metrics:`` naming a metric that is neither built in nor a custom one; custom
    ``metrics:`` named like a built-in metric or twice."""
    from sqlbench.metrics.names import BUILT_IN  # a leaf module of names

    known = [*BUILT_IN, *custom]
    problems = []
    seen: set[str] = set()
    for index, metric in enumerate(settings.metrics):
        line = line_of(data, ("metrics", index, "name")) if data is not None else None
        if metric.name in BUILT_IN:
            problems.append(
                _error(f"metrics: {metric.name!r} is a built-in metric; rename yours", path, line)
            )
        elif metric.name in seen:
            problems.append(_error(f"metrics: {metric.name!r} is defined twice", path, line))
        seen.add(metric.name)
    for name in settings.check.metrics:
        if name in known:
            continue
        line = line_of(data, ("check", "metrics", name)) if data is not None else None
        problems.append(
            _error(f"check.metrics: unknown metric {name!r}{suggest(name, known)}", path, line)
        )
    return problems


def setup_problems(
    settings: Settings, data: YamlMap | None, root: Path, path: str
) -> list[Problem]:
    """Each ``setup`` glob must stay inside the project and match at least one file."""
    problems = []
    for index, pattern in enumerate(settings.setup):
        line = line_of(data, ("setup", index)) if data is not None else None
        posix = PurePosixPath(pattern)
        if not pattern.strip():
            problems.append(_error("setup: an empty entry; remove it", path, line))
        elif posix.is_absolute() or ".." in posix.parts:
            problems.append(
                _error(
                    f"setup: {pattern!r} must be a path inside the project (relative, without ..)",
                    path,
                    line,
                )
            )
        elif not any(p.is_file() for p in root.glob(pattern)):
            problems.append(_error(f"setup: {pattern!r} matches no file", path, line))
    return problems


def warehouse_problems(
    settings: Settings,
    data: YamlMap | None,
    questions: Sequence[Question],
    entries: Sequence[YamlMap],
    root: Path,
    path: str,
) -> list[Problem]:
    """``warehouses:`` entries (names, URLs, dialects, setup) and every question's
    ``warehouse:`` naming one of them (or ``default``)."""
    problems: list[Problem] = []
    for name, warehouse in settings.warehouses.items():
        where = ("warehouses", name)
        line = line_of(data, where) if data is not None else None
        if name == DEFAULT_WAREHOUSE:
            problems.append(
                _error(
                    f"warehouses: {DEFAULT_WAREHOUSE!r} names the top-level `warehouse` (with "
                    "the top-level setup and dialect); give this one another name",
                    path,
                    line,
                )
            )
        message = template_error(warehouse.url) if warehouse.url else None
        if message:
            problems.append(_error(f"warehouses.{name}: {message}", path, line))
        if warehouse.dialect is not None:
            message = unknown_dialect_message(warehouse.dialect)
            if message:
                problems.append(
                    _error(
                        f"warehouses.{name}: {message}",
                        path,
                        line_of(data, (*where, "dialect")) if data is not None else None,
                    )
                )
        own = settings.model_copy(update={"setup": list(warehouse.setup)})
        sub = data.get("warehouses") if data is not None else None
        sub = sub.get(name) if isinstance(sub, YamlMap) else None
        for problem in setup_problems(own, sub if isinstance(sub, YamlMap) else None, root, path):
            problems.append(replace(problem, message=f"warehouses.{name}: {problem.message}"))
    known = [DEFAULT_WAREHOUSE, *settings.warehouses]
    for question, entry in zip(questions, entries, strict=True):
        wanted = question.warehouse
        if wanted is None or wanted in known:
            continue
        own_key = "warehouse" in entry
        origin = "" if own_key else " (the file's `warehouse:`)"
        problems.append(
            _error(
                f"question {question.name!r}: warehouse {wanted!r}{origin} is not defined in "
                f"sqlbench.yml `warehouses:`{suggest(wanted, known)}",
                question.path,
                line_of(entry, ("warehouse",)) if own_key else question.line,
            )
        )
    return problems


def _tokens(sql: str, dialect: str) -> tuple[list[Token] | None, str | None]:
    import sqlglot
    from sqlglot.errors import TokenError

    try:
        return sqlglot.Dialect.get_or_raise(dialect).tokenize(sql), None
    except TokenError as err:
        return None, str(err).splitlines()[0]


def parse_problem(sql: str, dialect: str, tokens: list[Token] | None = None) -> str | None:
    """Why sqlglot cannot read ``sql`` as one statement in ``dialect``; None when it can.

    Args:
        sql: The SQL text.
        dialect: A sqlglot dialect name.
        tokens: ``sql`` already tokenized in ``dialect`` (tokenizing is the slow part).

    Example:
        >>> parse_problem("SELECT 1", "duckdb") is None
        True
        >>> parse_problem("SELECT 1; SELECT 2", "duckdb")
        'it holds 2 statements, not one query'
    """
    import sqlglot
    from sqlglot.errors import ParseError

    if tokens is None:
        tokens, problem = _tokens(sql, dialect)
        if tokens is None:
            return problem
    try:
        parser = sqlglot.Dialect.get_or_raise(dialect).parser()
        found = statements(parser.parse(tokens, sql))
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        where = (
            f" at line {first['line']}, column {first['col']} of the SQL" if "line" in first else ""
        )
        return f"{first.get('description', str(err).splitlines()[0])}{where}"
    if len(found) != 1:
        return f"it holds {len(found)} statements, not one query"
    return None


_NOW_TOKEN_NAMES = (
    "CURRENT_DATE",
    "CURRENT_DATETIME",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "SYSTIMESTAMP",
)
"""sqlglot's token types (``TokenType`` members) of the current date or time."""


@functools.cache
def _now_tokens() -> frozenset[object]:
    from sqlglot import TokenType

    return frozenset(TokenType[name] for name in _NOW_TOKEN_NAMES)


_NOW_BARE = {
    "CURRENT_DATE",
    "CURRENT_TIMESTAMP",
    "CURRENT_TIME",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "SYSDATE",
    "SYSTIMESTAMP",
    "CURRENT_DATETIME",
}
_NOW_CALLS = {
    "NOW",
    "GETDATE",
    "GETUTCDATE",
    "SYSDATETIME",
    "CURDATE",
    "CURTIME",
    "TODAY",
    "TRANSACTION_TIMESTAMP",
    "STATEMENT_TIMESTAMP",
    "CLOCK_TIMESTAMP",
    "UTC_DATE",
    "UTC_TIMESTAMP",
    "CURRENT_DATE",
    "CURRENT_TIMESTAMP",
    "UNIX_TIMESTAMP",
}
_NOW_STRINGS = {"now", "today", "yesterday", "tomorrow"}


def sql_drift(sql: str, dialect: str, tokens: list[Token] | None = None) -> str | None:
    """The first reference to the current date or time in ``sql`` (read by sqlglot's
    tokenizer, so strings, comments and quoted names do not count); None if there is none.
    ``tokens``: ``sql`` already tokenized in ``dialect``.

    Example:
        >>> sql_drift("SELECT * FROM t WHERE d > CURRENT_DATE - INTERVAL 1 YEAR", "duckdb")
        'CURRENT_DATE'
        >>> sql_drift("SELECT now() AS t", "duckdb"), sql_drift("SELECT 'now()' AS t", "duckdb")
        ('now()', None)
    """
    from sqlglot import TokenType

    if tokens is None:
        tokens, _ = _tokens(sql, dialect)
        if tokens is None:
            return None  # cannot be read: parse_problem reports it
    now_tokens = _now_tokens()
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        call = following is not None and following.token_type is TokenType.L_PAREN
        upper = token.text.upper()
        if token.token_type is TokenType.STRING:
            if token.text.strip().lower() in _NOW_STRINGS:
                return f"'{token.text}'"
            continue
        if token.token_type is TokenType.IDENTIFIER:
            continue  # a quoted name
        if upper == "UNIX_TIMESTAMP":
            closing = tokens[index + 2] if index + 2 < len(tokens) else None
            if call and closing is not None and closing.token_type is TokenType.R_PAREN:
                return "UNIX_TIMESTAMP()"
            continue
        if call and upper in _NOW_CALLS:
            return f"{token.text}()"
        if token.token_type in now_tokens or upper in _NOW_BARE:
            return token.text.upper()
    return None


_UNIT = r"(?:days?|weeks?|months?|quarters?|years?|yrs?|fiscal\s+years?)"
_RELATIVE_TEXT = re.compile(
    rf"""\b(?:
        (?:last|past|trailing)\s+(?:[\w-]+\s+)?{_UNIT}(?!\s+(?:of|before|after)\b)
      | (?:this|current)\s+(?:day|week|month|quarter|year|fiscal\s+year)
      | yesterday|today|tonight|tomorrow
      | ytd|mtd|qtd|wtd|(?:year|month|quarter)[\s-]to[\s-]date
      | (?:\d+|a|an|one|two|three|four|five|six|a\s+few|few|several)\s+{_UNIT}\s+ago
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)


def text_drift(text: str) -> str | None:
    """The first phrase in a question that is relative to today; None if there is none.

    Example:
        >>> text_drift("Revenue over the last two years by region")
        'last two years'
        >>> text_drift("Who placed the last order in 2023?") is None
        True
    """
    match = _RELATIVE_TEXT.search(text)
    return match.group(0) if match else None


def ground_truth_warnings(
    questions: Sequence[Question],
    entries: Sequence[YamlMap],
    certified: Sequence[CertifiedQuery],
    certified_entries: Sequence[YamlMap],
    dialect: str | None,
) -> list[Problem]:
    """Warnings: SQL sqlglot cannot parse in ``dialect`` and SQL or questions relative to today.

    With ``dialect`` None (it cannot be told), SQL is not checked; the caller warns about that.
    """
    problems: list[Problem] = []
    for question, entry in zip(questions, entries, strict=True):
        phrase = text_drift(question.question)
        if phrase:
            problems.append(
                _warning(
                    f"question {question.name!r} says {phrase!r}, which is relative to today: its "
                    "ground truth will drift; use absolute dates",
                    question.path,
                    line_of(entry, ("question",)),
                )
            )
        sqls: list[tuple[str, tuple[str | int, ...], str]] = []
        if question.sql is not None:
            sqls.append((question.sql, ("sql",), "its sql"))
        sqls.extend(
            (sql, ("also_accept", i), f"also_accept item {i + 1}")
            for i, sql in enumerate(question.also_accept)
        )
        for sql, loc, what in sqls:
            problems.extend(
                _sql_warnings(
                    sql,
                    dialect,
                    f"question {question.name!r}: {what}",
                    question.path,
                    line_of(entry, loc),
                )
            )
    for query, entry in zip(certified, certified_entries, strict=True):
        problems.extend(
            _sql_warnings(
                query.sql,
                dialect,
                f"certified query {query.name!r}",
                query.path,
                line_of(entry, ("sql",)),
            )
        )
    return problems


def _sql_warnings(
    sql: str, dialect: str | None, what: str, path: str, line: int | None
) -> list[Problem]:
    if dialect is None or not sql.strip():
        return []
    problems = []
    sql = refs_as_names(sql)  # a dbt model named with {{ ref('m') }} (docs/dbt.md)
    tokens, reason = _tokens(sql, dialect)
    if tokens is not None:
        reason = parse_problem(sql, dialect, tokens)
    if reason:
        problems.append(
            _warning(
                f"{what} does not parse as {dialect} SQL ({reason}); it will still be run, but "
                "sqlbench cannot read its ORDER BY or transpile it",
                path,
                line,
            )
        )
    drift = sql_drift(sql, dialect, tokens) if tokens is not None else None
    if drift:
        problems.append(
            _warning(
                f"{what} uses {drift}, so its answer changes with the day it runs; use absolute "
                "dates",
                path,
                line,
            )
        )
    return problems
