"""Schema checks of one YAML file: data in, typed objects and located problems out.

Each ``parse_*`` function takes what ``yamlload.load_yaml`` returned for one file and checks it
against its pydantic model (``extra="forbid"``), mapping every pydantic error back to the line
of the key it concerns, with the closest valid key suggested for unknown keys. Rules that need
more than one file (duplicate names, unresolved references) live in ``rules``; how problems
are worded and located lives in ``problems``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from sqlbench.errors import Problem, Severity
from sqlbench.project.dialect import unknown_dialect_message
from sqlbench.project.envvars import template_error
from sqlbench.project.files import AgentConfig, CertifiedQuery, Question, Settings
from sqlbench.project.names import name_problem
from sqlbench.project.problems import describe, error, pydantic_problems, validate_partial
from sqlbench.project.yamlload import YamlList, YamlMap, line_of, plain
from sqlbench.text import suggest

QUESTION_FILE_KEYS = ("space", "warehouse", "eval_questions")
CERTIFIED_FILE_KEYS = ("certified_queries",)
AGENT_FILE_KEYS = ("agents",)
DEFAULT_SPACE = "auto"


class QuestionFile(NamedTuple):
    """One ``eval_questions/**.yml`` file."""

    space: str
    questions: list[Question]
    entries: list[YamlMap]
    """Each question's YAML mapping (same order), for the lines of its keys."""
    problems: list[Problem]


class CertifiedFile(NamedTuple):
    """One ``certified_queries/**.yml`` file."""

    certified_queries: list[CertifiedQuery]
    entries: list[YamlMap]
    """Each certified query's YAML mapping (same order), for the lines of its keys."""
    problems: list[Problem]


class AgentFile(NamedTuple):
    """One ``agents/**.yml`` file."""

    agents: list[AgentConfig]
    problems: list[Problem]


def parse_settings(data: Any, path: str) -> tuple[Settings, list[Problem]]:
    """``sqlbench.yml``: the settings (from the valid keys when some are wrong) and problems.

    An empty file means every default.
    """
    if data is None:
        return Settings(), []
    if not isinstance(data, YamlMap):
        return Settings(), [
            error(
                f"sqlbench.yml must be a mapping of settings, not {describe(data)}",
                path,
                getattr(data, "line", 1),
            )
        ]
    problems: list[Problem] = []
    try:
        settings = Settings.model_validate(plain(data))
    except ValidationError as err:
        problems.extend(pydantic_problems(err, data, path, Settings))
        settings = Settings.model_validate(validate_partial(Settings, data).model_dump())
    problems.extend(_settings_rules(settings, data, path))
    return settings, problems


def _settings_rules(settings: Settings, data: YamlMap, path: str) -> list[Problem]:
    problems: list[Problem] = []
    if settings.dialect is not None:
        message = unknown_dialect_message(settings.dialect)
        if message:
            problems.append(error(message, path, line_of(data, ("dialect",))))
    templates = {
        "warehouse": settings.warehouse,
        "store": settings.store,
        "llm.base_url": settings.llm.base_url,
        "llm.model": settings.llm.model,
    }
    for key, value in templates.items():
        message = template_error(value) if value else None
        if message:
            problems.append(error(f"{key}: {message}", path, line_of(data, tuple(key.split(".")))))
    key_env = settings.llm.api_key_env
    if key_env is not None and not key_env.replace("_", "").isalnum():
        problems.append(
            error(
                "llm.api_key_env is the NAME of the environment variable holding the key (like "
                "OPENAI_API_KEY), never the key itself",
                path,
                line_of(data, ("llm", "api_key_env")),
            )
        )
    if settings.deploy_branch and settings.deploy_branch == settings.staging_branch:
        problems.append(
            error(
                "staging_branch is the same as deploy_branch",
                path,
                line_of(data, ("staging_branch",)),
            )
        )
    if "below_floor" in settings.check.fail_on and settings.check.floor is None:
        problems.append(
            Problem(
                Severity.WARNING,
                "check.fail_on has below_floor but no check.floor is set, so that rule never fails",
                path,
                line_of(data, ("check", "fail_on")),
            )
        )
    return problems


def _top_level(
    data: Any, path: str, list_key: str, allowed: tuple[str, ...], what: str
) -> tuple[YamlList | None, list[Problem]]:
    """The file's entry list under ``list_key`` and problems with the file's top level."""
    if not isinstance(data, YamlMap):
        return None, [
            error(
                f"{what} file must be a mapping with a `{list_key}:` list at the "
                f"top, not {describe(data)}",
                path,
                getattr(data, "line", 1),
            )
        ]
    problems = [
        error(
            f"unknown key {key!r}{suggest(str(key), allowed, listing=True)}",
            path,
            data.key_lines[key],
        )
        for key in data
        if key not in allowed
    ]
    if list_key not in data:
        problems.append(
            error(f"missing `{list_key}:` (the list of {what} entries)", path, data.line)
        )
        return None, problems
    entries = data[list_key]
    if entries is None:
        entries = YamlList(data.key_lines[list_key])
    if not isinstance(entries, YamlList):
        problems.append(
            error(
                f"{list_key} must be a list, not {describe(entries)}",
                path,
                data.key_lines[list_key],
            )
        )
        return None, problems
    if not entries:
        problems.append(
            Problem(Severity.WARNING, f"{list_key} is empty", path, data.key_lines[list_key])
        )
    return entries, problems


def _entry_context(entry: YamlMap, index: int, what: str) -> str:
    name = entry.get("name")
    return f"{what} {name!r}: " if isinstance(name, str) else f"{what} #{index + 1}: "


def _mapping_entries(
    entries: YamlList | None, path: str, what: str, needs: str, problems: list[Problem]
) -> Iterator[tuple[YamlMap, str]]:
    """The one entry loop of every project file: each entry that is a mapping, with the
    context its messages start with (``question 'x': ``); any other entry is one problem
    (``each question must be a mapping with name and question, not ...``) appended to
    ``problems``."""
    for index, entry in enumerate(entries or []):
        if not isinstance(entry, YamlMap):
            line = entries.item_lines[index] if entries is not None else None
            problems.append(
                error(
                    f"each {what} must be a mapping with {needs}, not {describe(entry)}", path, line
                )
            )
            continue
        yield entry, _entry_context(entry, index, what)


def parse_question_file(data: Any, path: str) -> QuestionFile:
    """An ``eval_questions`` file: its space, its questions (located) and problems."""
    entries, problems = _top_level(data, path, "eval_questions", QUESTION_FILE_KEYS, "question")
    space = DEFAULT_SPACE
    if isinstance(data, YamlMap) and "space" in data:
        raw = data["space"]
        message = (
            f"space must be a string, not {describe(raw)}"
            if not isinstance(raw, str)
            else name_problem(raw, "space")
        )
        if message:
            problems.append(error(message, path, data.key_lines["space"]))
        else:
            space = raw
    file_warehouse: str | None = None
    if isinstance(data, YamlMap) and "warehouse" in data:
        raw = data["warehouse"]
        if isinstance(raw, str) and raw.strip():
            file_warehouse = raw
        else:
            problems.append(
                error(
                    f"warehouse must be a warehouse name, not {describe(raw)}",
                    path,
                    data.key_lines["warehouse"],
                )
            )
    questions: list[Question] = []
    kept: list[YamlMap] = []
    for entry, context in _mapping_entries(
        entries, path, "question", "name and question", problems
    ):
        name_line = entry.key_lines.get("name", entry.line)
        try:
            question = Question.build(plain(entry), space=space, path=path, line=name_line)
        except ValidationError as err:
            problems.extend(pydantic_problems(err, entry, path, Question, context))
            continue
        problems.extend(_question_rules(question, entry, path, context))
        if question.warehouse is None and file_warehouse is not None:
            question = question.with_warehouse(file_warehouse)
        questions.append(question)
        kept.append(entry)
    return QuestionFile(space, questions, kept, problems)


def _question_rules(question: Question, entry: YamlMap, path: str, context: str) -> list[Problem]:
    problems: list[Problem] = []
    message = name_problem(question.name, "question name")
    if message:
        problems.append(error(message, path, line_of(entry, ("name",))))
    truth_keys = [key for key in ("certifiedQuery", "certified_query", "sql") if key in entry]
    if question.certified_query is not None and question.sql is not None:
        later = max(entry.key_lines[key] for key in truth_keys)
        problems.append(
            error(
                f"{context}has both certifiedQuery and sql; keep one (a second "
                "right answer goes under also_accept)",
                path,
                later,
            )
        )
    if question.sql is not None and not question.sql.strip():
        problems.append(error(f"{context}sql is empty", path, line_of(entry, ("sql",))))
    for index, sql in enumerate(question.also_accept):
        if not sql.strip():
            problems.append(
                error(
                    f"{context}also_accept item {index + 1} is empty",
                    path,
                    line_of(entry, ("also_accept", index)),
                )
            )
    problems.extend(_decline_and_turn_rules(question, entry, path, context))
    if question.truth_kind.value == "none" and not question.is_conversation:
        if question.also_accept:
            problems.append(
                error(
                    f"{context}also_accept needs a ground truth (sql or certifiedQuery) next to it",
                    path,
                    line_of(entry, ("also_accept",)),
                )
            )
        elif question.skip is None and question.expect is None:
            problems.append(
                Problem(
                    Severity.WARNING,
                    f"{context}no ground truth (neither sql "
                    "nor certifiedQuery): it will always be graded review",
                    path,
                    line_of(entry, ("name",)),
                )
            )
    if question.skip is not None and not question.skip.strip():
        problems.append(
            error(f'{context}skip needs a reason (skip: "why")', path, line_of(entry, ("skip",)))
        )
    return problems


_TRUTH_KEYS = ("sql", "certifiedQuery", "certified_query", "also_accept")


def _decline_and_turn_rules(
    question: Question, entry: YamlMap, path: str, context: str
) -> list[Problem]:
    """``expect: decline`` stands without a ground truth; a conversation's truths are in its
    turns, each with exactly one of sql, certifiedQuery or expect (docs/conversations.md)."""
    problems: list[Problem] = []
    if question.expect is not None:
        for key in _TRUTH_KEYS:
            if key in entry:
                problems.append(
                    error(
                        f"{context}expect: decline means no SQL is the right answer; remove "
                        f"{key} (or remove expect)",
                        path,
                        line_of(entry, (key,)),
                    )
                )
    if question.turns is None:
        return problems
    if not question.turns:
        problems.append(
            error(
                f"{context}turns is empty: a conversation needs at least one turn",
                path,
                line_of(entry, ("turns",)),
            )
        )
    for key in ("question", *_TRUTH_KEYS, "expect"):
        if key in entry:
            problems.append(
                error(
                    f"{context}a conversation (turns:) keeps its {key} in each turn, not "
                    "beside turns",
                    path,
                    line_of(entry, (key,)),
                )
            )
    for index, turn in enumerate(question.turns):
        where = f"{context}turn {index + 1}: "
        truths = [
            key
            for key, value in (
                ("sql", turn.sql),
                ("certifiedQuery", turn.certified_query),
                ("expect", turn.expect),
            )
            if value is not None
        ]
        line = line_of(entry, ("turns", index))
        if not turn.question.strip():
            problems.append(
                error(
                    f"{where}question is empty", path, line_of(entry, ("turns", index, "question"))
                )
            )
        if len(truths) != 1:
            problems.append(
                error(
                    f"{where}needs exactly one of sql, certifiedQuery or expect: decline"
                    + (f" (it has {' and '.join(truths)})" if truths else ""),
                    path,
                    line,
                )
            )
        if turn.sql is not None and not turn.sql.strip():
            problems.append(
                error(f"{where}sql is empty", path, line_of(entry, ("turns", index, "sql")))
            )
        if turn.also_accept and turn.expect is not None:
            problems.append(
                error(f"{where}also_accept needs a ground truth, not expect", path, line)
            )
    return problems


def parse_certified_file(data: Any, path: str) -> CertifiedFile:
    """A ``certified_queries`` file: its certified queries (located) and problems."""
    entries, problems = _top_level(
        data, path, "certified_queries", CERTIFIED_FILE_KEYS, "certified query"
    )
    found: list[CertifiedQuery] = []
    kept: list[YamlMap] = []
    for entry, context in _mapping_entries(
        entries, path, "certified query", "name and sql", problems
    ):
        try:
            certified = CertifiedQuery.model_validate(plain(entry))
        except ValidationError as err:
            problems.extend(pydantic_problems(err, entry, path, CertifiedQuery, context))
            continue
        message = name_problem(certified.name, "certified query name")
        if message:
            problems.append(error(message, path, line_of(entry, ("name",))))
        if not certified.sql.strip():
            problems.append(error(f"{context}sql is empty", path, line_of(entry, ("sql",))))
        certified._path = path
        certified._line = entry.key_lines.get("name", entry.line)
        found.append(certified)
        kept.append(entry)
    return CertifiedFile(found, kept, problems)


def parse_agent_file(data: Any, path: str, base_dir: Path) -> AgentFile:
    """An ``agents`` file: one ``AgentConfig`` per entry (kind keys unchecked) and problems.

    Kinds and their own keys are checked by the agents package's validator, passed in from
    above (``rules.agent_problems``, ``sqlbench.validation``).
    """
    entries, problems = _top_level(data, path, "agents", AGENT_FILE_KEYS, "agent")
    found: list[AgentConfig] = []
    for entry, context in _mapping_entries(entries, path, "agent", "name and kind", problems):
        before = len(problems)
        for key in ("name", "kind"):
            if key not in entry:
                problems.append(error(f"{context}missing required key {key!r}", path, entry.line))
            elif not isinstance(entry[key], str):
                problems.append(
                    error(
                        f"{context}{key} must be a string, not {describe(entry[key])}",
                        path,
                        entry.key_lines[key],
                    )
                )
        if len(problems) > before:
            continue
        name, kind = entry["name"], entry["kind"]
        message = name_problem(name, "agent name")
        if message is None and name == "auto":
            message = "'auto' is the built-in agent and cannot be redefined; pick another name"
        if message:
            problems.append(error(message, path, entry.key_lines["name"]))
            continue
        options = {key: value for key, value in plain(entry).items() if key not in ("name", "kind")}
        found.append(
            AgentConfig(
                name=name,
                kind=kind,
                options=options,
                path=path,
                line=entry.key_lines["name"],
                base_dir=base_dir,
            )
        )
    return AgentFile(found, problems)
