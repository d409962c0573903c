"""What every public benchmark reader hands the project writer: questions, databases,
predictions, and how the benchmark's official evaluator grades."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlbench.errors import PublicBenchmarkError


@dataclass(frozen=True)
class PublicQuestion:
    """One question of a published benchmark file."""

    index: int
    """0-based position in the published question file (what predictions files refer to)."""
    db_id: str
    name: str
    """Unique within its database (the question's space)."""
    question: str
    sql: str
    also_accept: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


UNPARSEABLE_NOT_RUN = (
    "agent SQL that sqlglot cannot parse is not run here: it fails with SQLite's own message "
    "(or, where SQLite would accept it, as a query sqlbench cannot check); the official runs it"
)
"""A difference every public benchmark's grading shares (docs/engines.md, the statement guard)."""


@dataclass(frozen=True)
class Prediction:
    """One predicted SQL text, keyed by the question's index in the published file."""

    index: int
    sql: str
    db_id: str | None = None
    """The database the predictions file names for it, when it names one."""
    line: int | None = None
    """Where it is in the predictions file (a line, for messages)."""


@dataclass(frozen=True)
class Grading:
    """How a benchmark's official evaluator grades, as sqlbench settings, and what differs."""

    evaluator: str
    """The official evaluator, named as its authors name it."""
    compare: dict[str, Any]
    run: dict[str, Any]
    differences: tuple[str, ...]
    """What sqlbench still does differently, one sentence each."""


@dataclass
class Benchmark:
    """A published benchmark read from disk."""

    kind: str
    """spider, bird or defog."""
    source: Path
    """The question file that was read."""
    questions: list[PublicQuestion]
    databases: dict[str, Path]
    """db_id to its SQLite file, for the databases present."""
    grading: Grading
    absent: dict[str, int] = field(default_factory=dict)
    """db_id of a database missing from the layout, to how many questions it takes."""

    @property
    def kept(self) -> list[PublicQuestion]:
        """The questions whose database is present."""
        return [q for q in self.questions if q.db_id in self.databases]


@dataclass(frozen=True)
class PublishedLayout:
    """How a benchmark is published: where its databases are and how its evaluator grades."""

    kind: str
    """spider, bird or defog."""
    database_folders: tuple[str, ...]
    """Folders beside the question file that may hold ``<db_id>/<db_id>.sqlite``, the first
    preferred."""
    description: str
    """The layout in a few words, for the message when no database folder is found."""
    grading: Grading


def read_json_questions(
    source: Path,
    what: str,
    expected: str,
    question: Callable[[int, Any, str], PublicQuestion],
) -> list[PublicQuestion]:
    """The questions of a published JSON question file: a list of entries, each made a
    question by ``question(index, entry, where)``.

    Args:
        source: the question file.
        what: the file as messages name it (``Spider question file``).
        expected: the list as messages name it (``Spider's list of questions (dev.json)``).
        question: one entry to a question; ``where`` names the entry for messages.

    Raises:
        PublicBenchmarkError: the file is not JSON or not a list.
    """
    try:
        entries = json.loads(read_text(source, what))
    except json.JSONDecodeError as err:
        raise PublicBenchmarkError(f"{source}:{err.lineno}: not valid JSON: {err.msg}") from err
    if not isinstance(entries, list):
        raise PublicBenchmarkError(
            f"{source}: expected {expected}, found a JSON {type(entries).__name__}"
        )
    return [
        question(index, entry, f"{source}: question #{index}")
        for index, entry in enumerate(entries)
    ]


def with_databases(
    layout: PublishedLayout, source: Path, questions: list[PublicQuestion]
) -> Benchmark:
    """The benchmark of ``questions`` read from ``source``, its databases located in the
    first of the layout's database folders beside it.

    Raises:
        PublicBenchmarkError: none of the database folders is there.
    """
    folder = source.parent
    databases = next(
        (folder / name for name in layout.database_folders if (folder / name).is_dir()), None
    )
    if databases is None:
        raise PublicBenchmarkError(
            f"no {layout.database_folders[0]}/ folder beside {source} ({layout.description})"
        )
    benchmark = Benchmark(layout.kind, source, questions, {}, layout.grading)
    locate_databases(benchmark, databases)
    return benchmark


def split_prediction(
    text: str,
    separator: str,
    question: PublicQuestion,
    where: str,
    *,
    what: str,
    of: str = "",
    line: int | None = None,
) -> Prediction:
    """A prediction written ``SQL<separator>db_id`` (the db_id optional) for ``question``.

    Args:
        text: the prediction as written.
        separator: what stands between the SQL and the db_id.
        question: the question it answers.
        where: the prediction's place, for messages (``file:line``).
        what: the prediction as messages name it (``line``, ``prediction``).
        of: after ``question #N`` in messages (`` of dev.json``).
        line: its line in the predictions file, when it has one.

    Raises:
        PublicBenchmarkError: it names another database than its question's.
    """
    sql, _, db_id = text.partition(separator)
    db_id = db_id.strip()
    if db_id and db_id != question.db_id:
        raise PublicBenchmarkError(
            f"{where}: the {what} names database {db_id!r} but question #{question.index}{of} "
            f"is on {question.db_id!r}: are the predictions for another split?"
        )
    return Prediction(question.index, sql.strip(), db_id or None, line)


def sqlite_file(folder: Path, db_id: str) -> Path | None:
    """``folder/<db_id>/<db_id>.sqlite`` (the layout Spider and BIRD publish), if present."""
    path = folder / db_id / f"{db_id}.sqlite"
    return path if path.is_file() else None


def locate_databases(benchmark: Benchmark, folder: Path) -> None:
    """Fill ``benchmark.databases`` and ``benchmark.absent`` from ``folder``."""
    for question in benchmark.questions:
        if question.db_id in benchmark.databases or question.db_id in benchmark.absent:
            if question.db_id in benchmark.absent:
                benchmark.absent[question.db_id] += 1
            continue
        path = sqlite_file(folder, question.db_id)
        if path is None:
            benchmark.absent[question.db_id] = 1
        else:
            benchmark.databases[question.db_id] = path.resolve()


def read_text(path: Path, what: str) -> str:
    """A UTF-8 file's text; a missing or unreadable file is one sentence."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise PublicBenchmarkError(f"{what} {path} does not exist") from err
    except UnicodeDecodeError as err:
        raise PublicBenchmarkError(f"{what} {path} is not UTF-8 text") from err
    except OSError as err:
        raise PublicBenchmarkError(f"cannot read {what} {path}: {err.strerror or err}") from err


def field_text(entry: Any, key: str, where: str) -> str:
    """``entry[key]`` as a string; a missing or non-string field is one sentence."""
    if not isinstance(entry, dict):
        raise PublicBenchmarkError(
            f"{where}: expected an object with {key!r}, found {type(entry).__name__}"
        )
    value = entry.get(key)
    if not isinstance(value, str):
        raise PublicBenchmarkError(f"{where}: {key!r} is missing or not text")
    return value
