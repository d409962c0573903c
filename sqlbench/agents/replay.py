"""The ``replay`` kind: answers recorded in a file, looked up by question name (and space).

JSONL holds one answer object per line, YAML (or JSON) a list of them; each record has
``name`` and an optional ``space`` and ``turn`` (a conversation's turn, from 1; default 1)
besides the answer fields. A record without ``space``
answers the question of that name in any space, unless a record names the request's space.
A question with no record is an agent error for that question. Answer fields are checked
when the record is used, so one bad record errors one question, not the run.

Recorded SQL was written for one warehouse. ``dialect:`` names its sqlglot dialect; when the
run's warehouse speaks another (the demo's DuckDB answers replayed on Spark), the SQL is
transpiled with sqlglot before it is guarded and run. SQL sqlglot cannot transpile is an agent
error for that question, never the untranslated text run as if it were the warehouse's.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any, NamedTuple

import sqlglot
from pydantic import Field
from sqlglot.errors import ErrorLevel, SqlglotError

from sqlbench.agents.base import Answer, Request
from sqlbench.agents.call import parse_answer
from sqlbench.agents.context import AgentContext
from sqlbench.agents.kinds import AgentKind, KindOptions, problem, project_root_of
from sqlbench.agents.traces import TraceFormat
from sqlbench.errors import AgentError, Problem, ProjectError
from sqlbench.project.confine import outside_project
from sqlbench.project.dialect import known_dialects
from sqlbench.project.files import AgentConfig
from sqlbench.project.yamlload import (
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    load_yaml,
    nesting_depth,
    plain,
    too_big,
)

_YAML_SUFFIXES = (".yml", ".yaml")
_SUFFIXES = (".jsonl", ".json", *_YAML_SUFFIXES)


class ReplayOptions(KindOptions):
    """Keys of a ``replay`` agent."""

    path: str = Field(min_length=1)
    """Recorded answers (.jsonl, .yml/.yaml, .json), relative to the agent file's folder."""
    trace_format: TraceFormat = TraceFormat.SQLBENCH
    """The shape of each recorded answer (``sqlbench.agents.traces``)."""
    dialect: str | None = None
    """The sqlglot dialect the recorded SQL is written in; transpiled to the warehouse's when it
    differs. Unset: the SQL runs as recorded."""
    sql_as_recorded: bool = False
    """Run each recorded ``sql`` exactly as written, even in a Markdown fence or with words
    around it (as a benchmark's official evaluator runs published predictions: a fenced one
    fails there as a syntax error). Default: such SQL is taken out, as for every agent."""


class Record(NamedTuple):
    """One recorded answer and where it is."""

    fields: dict[str, Any]
    """The answer fields (``name`` and ``space`` removed)."""
    line: int


def load_records(file: Path, shown: str) -> dict[RecordKey, Record]:
    """Read a replay file into records keyed by ``(space or None, name)``.

    Args:
        file: The file on disk.
        shown: Its path relative to the project root, for messages.

    Raises:
        ProjectError: The file is missing, does not parse, or a record lacks ``name``, has
            a non-text ``name``/``space``, or repeats another record's space and name.
    """
    if file.suffix.lower() not in _SUFFIXES:
        raise ProjectError(f"a replay file must end in {', '.join(_SUFFIXES)}", shown)
    jsonl = file.suffix.lower() == ".jsonl"
    try:
        size = file.stat().st_size
        if size > (MAX_REPLAY_BYTES if jsonl else MAX_YAML_BYTES):
            if jsonl:
                raise ProjectError(
                    f"the replay file is {size / 2**20:,.0f} MB, over sqlbench's limit of "
                    f"{MAX_REPLAY_BYTES // 2**20} MB; split it",
                    shown,
                )
            raise ProjectError(str(too_big(size, shown).message), shown)
        data = file.read_bytes()
        key = (str(file), shown)
        with _read_lock:
            cached = _read.get(key)
        if cached is not None and cached[0] == data:
            return cached[1]
        if jsonl:
            items = _jsonl_items(data, shown)
        else:
            # As read_text reads it: universal newlines.
            text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
            items = _document_items(text, shown, yaml=file.suffix.lower() in _YAML_SUFFIXES)
    except FileNotFoundError:
        raise ProjectError("the replay file does not exist", shown) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ProjectError(f"cannot read the replay file: {err}", shown) from err
    records = _records(items, shown)
    with _read_lock:
        _read[key] = (data, records)
        while len(_read) > _READ_KEPT:
            del _read[next(iter(_read))]
    return records


_read: dict[tuple[str, str], tuple[bytes, dict[RecordKey, Record]]] = {}
"""Replay files read by this process, with their bytes: the same bytes are not parsed again
(validation, planning and building the agent each load the file; a Spider corpus run has 9
files of 972 answers)."""
RecordKey = tuple[str | None, str, int]
"""A record's ``space`` (None: any), ``name`` and ``turn`` (1 unless given; a conversation's
turns are recorded one record each, docs/conversations.md)."""

_read_lock = threading.Lock()
_READ_KEPT = 64


def _records(items: list[tuple[Any, int]], shown: str) -> dict[RecordKey, Record]:
    records: dict[RecordKey, Record] = {}
    for value, line in items:
        if not isinstance(value, dict):
            raise ProjectError(
                f"a recorded answer must be an object, got {type(value).__name__}", shown, line
            )
        fields = dict(value)
        name, space = fields.pop("name", None), fields.pop("space", None)
        if not isinstance(name, str) or not name:
            raise ProjectError(
                "a recorded answer needs a `name` (the question's name)", shown, line
            )
        if space is not None and not isinstance(space, str):
            raise ProjectError("a recorded answer's `space` must be text", shown, line)
        turn = fields.pop("turn", 1)
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
            raise ProjectError(
                "a recorded answer's `turn` must be a whole number from 1", shown, line
            )
        key = (space, name, turn)
        if key in records:
            label = f"{space}/{name}" if space else name
            label += f" turn {turn}" if turn != 1 else ""
            raise ProjectError(
                f"a second recorded answer for {label} (first at line {records[key].line})",
                shown,
                line,
            )
        records[key] = Record(fields, line)
    return records


MAX_JSONL_LINE_BYTES = 16 * 2**20
"""Longest line of a JSONL replay file (one recorded answer, trace included)."""
MAX_REPLAY_BYTES = 512 * 2**20
"""Largest JSONL replay file (read line by line, so only one line is held at a time)."""


def _jsonl_items(data: bytes, shown: str) -> list[tuple[Any, int]]:
    """One recorded answer per line, read line by line with a bounded line length and nesting
    depth (the same limits as YAML; the caller checks the total size)."""
    items: list[tuple[Any, int]] = []
    with io.BytesIO(data) as stream:
        number = 0
        while True:
            raw = stream.readline(MAX_JSONL_LINE_BYTES + 1)
            if not raw:
                return items
            number += 1
            if len(raw) > MAX_JSONL_LINE_BYTES and not raw.endswith(b"\n"):
                raise ProjectError(
                    f"the line is longer than sqlbench's limit of {MAX_JSONL_LINE_BYTES:,} "
                    "bytes for one recorded answer",
                    shown,
                    number,
                )
            line = raw.decode("utf-8")
            if not line.strip():
                continue
            items.append((_json_value(line, shown, number), number))


def _json_value(text: str, shown: str, line: int | None) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ProjectError(
            f"not valid JSON: {err.msg} at column {err.colno}", shown, line or err.lineno
        ) from err
    except RecursionError as err:
        raise ProjectError(
            "the JSON is nested too deeply for sqlbench to read", shown, line
        ) from err
    # Each level of nesting opens with a bracket: a line with few brackets needs no walk.
    if text.count("[") + text.count("{") > MAX_YAML_DEPTH and nesting_depth(value) > MAX_YAML_DEPTH:
        raise ProjectError(
            f"the JSON is nested more than {MAX_YAML_DEPTH} levels deep; sqlbench reads no deeper",
            shown,
            line,
        )
    return value


def _document_items(text: str, shown: str, *, yaml: bool) -> list[tuple[Any, int]]:
    if not yaml:
        data = _json_value(text, shown, None)
        if not isinstance(data, list):
            raise ProjectError("a JSON replay file must hold a list of answers", shown, 1)
        return [(item, 1) for item in data]
    document = load_yaml(text, shown)
    if document.problems:
        first = document.problems[0]
        raise ProjectError(first.message, shown, first.line)
    if document.empty:
        return []
    if not isinstance(document.data, list):
        raise ProjectError("a YAML replay file must hold a list of answers", shown, 1)
    lines = getattr(document.data, "item_lines", [1] * len(document.data))
    return [(plain(item), line) for item, line in zip(document.data, lines, strict=True)]


class ReplayAgent:
    """Answers from recorded answers; see the module docstring."""

    notice: str | None = None
    answers_at_once = True
    """Answers are looked up in memory: ``ask`` calls ``answer`` without a timing thread."""

    def __init__(
        self,
        name: str,
        records: dict[RecordKey, Record],
        shown: str,
        trace_format: TraceFormat = TraceFormat.SQLBENCH,
        dialect: str | None = None,
        sql_as_recorded: bool = False,
    ) -> None:
        self.name = name
        self.sql_as_recorded = sql_as_recorded
        self.records = records
        self.shown = shown
        self.trace_format = trace_format
        self.dialect = dialect

    def answer(self, request: Request) -> Answer:
        """The record for the request's space and name."""
        record = self.records.get((request.space, request.name, request.turn))
        if record is None:
            record = self.records.get((None, request.name, request.turn))
        if record is None:
            turn = f" turn {request.turn}" if request.turn != 1 else ""
            raise AgentError(
                f"no recorded answer for {request.space}/{request.name}{turn} in {self.shown}"
            )
        try:
            answer = parse_answer(
                record.fields, self.trace_format, as_recorded=self.sql_as_recorded
            )
        except AgentError as err:
            raise AgentError(f"{self.shown}:{record.line}: {err}") from err
        if answer.sql and self.dialect and self.dialect != request.dialect:
            answer = answer.model_copy(
                update={"sql": self._transpile(answer.sql, request.dialect, record.line)}
            )
        return answer

    def _transpile(self, sql: str, dialect: str, line: int) -> str:
        try:
            parsed = sqlglot.parse(sql, read=self.dialect, error_level=ErrorLevel.RAISE)
            return ";\n".join(
                node.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE)
                for node in parsed
                if node is not None
            )
        except SqlglotError as err:
            detail = " ".join(str(err).split())[:200]
            raise AgentError(
                f"{self.shown}:{line}: the recorded {self.dialect} SQL cannot be transpiled to "
                f"{dialect} with sqlglot: {detail}"
            ) from err


def _shown_path(
    config: AgentConfig, options: ReplayOptions, base: Path | None = None
) -> tuple[Path, str]:
    file = ((base or config.base_dir) / options.path).resolve()
    root = project_root_of(config)
    if root is not None and file.is_relative_to(root.resolve()):
        return file, file.relative_to(root.resolve()).as_posix()
    return file, options.path


def _confined(file: Path, shown: str, root: Path | None) -> None:
    """A replay file must lie inside the project (``path`` absolute or up through ``..`` to
    somewhere else, or a symlink out, is refused)."""
    if root is not None and outside_project(root, file):
        raise ProjectError(
            "the replay file is outside the project; it must be inside the project folder",
            shown,
        )


def _check(config: AgentConfig, options: ReplayOptions) -> list[Problem]:
    if options.dialect is not None and options.dialect not in known_dialects():
        return [problem(config, f"`dialect`: {options.dialect!r} is not a sqlglot dialect")]
    file, shown = _shown_path(config, options)
    try:
        _confined(file, shown, project_root_of(config))
        load_records(file, shown)
    except ProjectError as err:
        return [problem(config, f"`path`: {err}")]
    return []


def _build(config: AgentConfig, options: ReplayOptions, context: AgentContext) -> ReplayAgent:
    # Configs made in code may carry a relative base_dir: it is relative to the project.
    base = (
        config.base_dir
        if config.base_dir.is_absolute()
        else (context.project_root / config.base_dir)
    )
    file, shown = _shown_path(config, options, base)
    _confined(file, shown, context.project_root)
    return ReplayAgent(
        config.name,
        load_records(file, shown),
        shown,
        options.trace_format,
        options.dialect,
        sql_as_recorded=options.sql_as_recorded,
    )


KIND = AgentKind(
    "replay",
    ReplayOptions,
    _build,
    _check,
    "recorded answers from a JSONL or YAML file, by question name",
)
