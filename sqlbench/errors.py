"""The exceptions sqlbench raises. Every one a user can cause prints as one sentence.

The CLI's single handler (``sqlbench.cli.main``) turns any ``SqlbenchError`` into its ``str()``
on stderr and exit code 2 (or 1 where the subclass says so); nothing else is caught there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SqlbenchError(Exception):
    """Base of every error a user can cause: bad input, bad options, unreachable warehouse."""


class ProjectError(SqlbenchError):
    """A problem in a project file, located by path (relative to the project root) and line."""

    def __init__(
        self, message: str, path: str | None = None, line: int | None = None, col: int | None = None
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


class ProjectInvalid(SqlbenchError):
    """The project did not validate; carries every problem found (errors and warnings)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.severity is Severity.ERROR]
        first = errors[0] if errors else None
        more = f" (and {len(errors) - 1} more; run `sqlbench validate`)" if len(errors) > 1 else ""
        super().__init__(f"the project does not validate: {first}{more}")


class GitError(SqlbenchError):
    """A git ref that cannot be read, or a folder that is not a git repository."""


class AgentError(SqlbenchError):
    """The agent failed: exception, non-zero exit, timeout, or an answer of the wrong shape."""


class AgentTransientError(AgentError):
    """An agent failure worth retrying (HTTP 429/5xx, connection refused or reset)."""


class PublicBenchmarkError(SqlbenchError):
    """Files that are not a public benchmark's published layout (``init --from``)."""


class EngineError(SqlbenchError):
    """The warehouse could not be opened or set up (bad URL, missing driver, failing setup SQL)."""


class QueryProcessError(EngineError):
    """sqlbench's query process for agent SQL could not start (a hard address-space limit below
    what it needs, setup SQL that fails when run a second time): a fault of the run, never a
    verdict of the answer that happened to meet it."""


class DbtError(EngineError):
    """A dbt project (``dbt:`` in sqlbench.yml) cannot be parsed or built for a ref."""


class EnvVarError(SqlbenchError):
    """A ``${NAME}`` that is malformed, or names a variable that is not set."""


class SelectionError(SqlbenchError):
    """A ``--select`` pattern or ``--space`` that picks out no question, or is ambiguous."""


class InputError(SqlbenchError, TypeError):
    """A result handed to ``compare_results`` is neither a pandas DataFrame nor an Arrow table."""


class CompareOptionError(SqlbenchError, ValueError):
    """An invalid option given to ``compare_results``."""


class StoreError(SqlbenchError):
    """The run store cannot be opened or does not hold what was asked for."""


class QueryErrorKind(StrEnum):
    """Why one query did not produce a result."""

    SYNTAX = "syntax"
    """The database (or sqlglot's guard) could not parse it."""
    RUNTIME = "runtime"
    """It parsed but failed while running (unknown column, division error, ...)."""
    TIMEOUT = "timeout"
    """It ran past its timeout and was interrupted."""
    TOO_MANY_ROWS = "too_many_rows"
    """It returned more than max_rows rows."""
    TOO_LARGE = "too_large"
    """Its result passed max_result_mb bytes, or the engine ran out of memory running it."""
    SQL_LIMIT = "sql_limit"
    """The SQL text is longer than max_sql_kb or nested deeper than sqlbench parses; it was
    neither parsed nor run."""
    NOT_READ_ONLY = "not_read_only"
    """The statement guard refused it: not exactly one read-only query."""
    CONNECTION = "connection"
    """The connection was lost twice in a row."""


class QueryError(SqlbenchError):
    """One query failed; ``kind`` says how. The message is one line a person can act on."""

    def __init__(self, kind: QueryErrorKind, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)


class Severity(StrEnum):
    """How bad a validation problem is."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One validation finding, printed as ``path:line: severity: message``."""

    severity: Severity
    """error or warning."""
    message: str
    """One sentence saying what is wrong and, where possible, what to do."""
    path: str | None = None
    """File path relative to the project root, posix separators."""
    line: int | None = None
    """1-based line number in that file."""

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.severity.value}: {self.message}"
