"""How agent SQL reaches a warehouse, the one way for every engine (``AgentSqlEngine.run_agent``;
``limits.run_agent_sql`` checks the text's size and depth first and is the entry point).

In the engine's query process when it has one (``agent_process.py``: all of what follows
happens there); else the statement guard (``guard.check_read_only``), whose time counts against
the query's timeout; a syntax error the guard reports is put in the warehouse's own words where
the engine can ask its parser (which runs nothing); then the engine's own checks, and the query
with what is left of the timeout.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import TYPE_CHECKING, NamedTuple

from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.fetch import time_spent
from sqlbench.engines.guard import check_read_only
from sqlbench.errors import QueryError, QueryErrorKind

if TYPE_CHECKING:
    from sqlbench.engines.agent_process import QueryProcess


class QueryLimits(NamedTuple):
    """One query's limits, and what checking agent SQL took of its timeout already."""

    timeout_s: float
    max_rows: int
    max_bytes: int | None
    spent_s: float = 0.0
    """Of ``timeout_s``, what checking the agent's SQL took already."""


class AgentSqlEngine(Engine):
    """An engine whose agent SQL goes the one way (see the module docstring); it gives the
    steps that differ: its query process, its parser's word on a syntax error, its own checks
    and the query."""

    def run_agent(
        self, sql: str, *, timeout_s: float, max_rows: int, max_bytes: int | None = None
    ) -> ResultSet:
        """Run agent SQL behind the guard, read-only; see ``Engine.run_agent``."""
        process = self._agent_query_process()
        if process is not None:
            return process.run_agent(
                sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes
            )
        start = time.monotonic()
        try:
            check_read_only(sql, self.dialect)
        except QueryError as err:
            if err.kind is QueryErrorKind.SYNTAX:
                limits = QueryLimits(timeout_s, max_rows, max_bytes, time_spent(start, timeout_s))
                raise self._syntax_error(sql, err, limits) from err
            raise
        self._check_agent_sql(sql)
        limits = QueryLimits(timeout_s, max_rows, max_bytes, time_spent(start, timeout_s))
        return self._run_checked(sql, limits)

    def start_query_process(self) -> None:
        """See ``Engine.start_query_process``."""
        process = self._agent_query_process()
        if process is not None:
            process.start()

    def _agent_query_process(self) -> QueryProcess | None:
        """The process agent SQL runs in, guard included; None: this process."""
        return None

    def _syntax_error(self, sql: str, guard_error: QueryError, limits: QueryLimits) -> QueryError:
        """The error for SQL the guard's parser (sqlglot) cannot parse: by default the guard's
        own; an engine that can ask its warehouse's parser says what is wrong in its words, or
        refuses SQL it parses as unchecked (``guard.unchecked_syntax``)."""
        return guard_error

    def _check_agent_sql(self, sql: str) -> None:
        """The engine's own checks of agent SQL the guard passed (raise ``QueryError``)."""

    @abstractmethod
    def _run_checked(self, sql: str, limits: QueryLimits) -> ResultSet:
        """Run agent SQL the checks passed, within ``limits`` (``spent_s`` of the timeout gone);
        raise ``QueryError`` on any limit reached or the query failing."""
