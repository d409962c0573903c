"""Agent SQL of one question run once per distinct text while its answers are graded.

Agent SQL of a question that two answers wrote alike (two agents of ``run --agent a,b``, or
the trials of ``--repeat``) runs once, unless it calls a function whose value changes between
runs (``random()``, ``now()``, ...): the result of a read-only query on an unchanged database
is the same. Agent results of a question that are equal (column names, types, rows in order)
are compared with the ground truth once: the grade reads only the result. Each answer's
record keeps its own answer and trace; shared work's timings are those of the one execution.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sqlbench.engines.base import ResultSet
from sqlbench.records.run import Preview
from sqlbench.runs.previews import make_preview

_VOLATILE_WORDS = (
    "now", r"rand\w*", "randn", r"random\w*", r"uuid\w*", "newid", r"current_\w+",
    r"localtime\w*", "sysdate", "systimestamp", "sysdatetime", "getdate", "today", "curdate",
    "curtime", r"utc_\w+", "clock_timestamp", "statement_timestamp", "transaction_timestamp",
    "timeofday", "setseed", "tablesample", "changes", "total_changes", "last_insert_rowid",
    "nextval", "currval", "sample",
)  # fmt: skip
"""Words that may call something whose value changes between runs (a word ending ``\\w*`` or
``\\w+`` stands for its family); SQL holding one is run for each agent on its own (a column
named like one only loses the sharing)."""

_VOLATILE = re.compile(r"\b(" + "|".join(_VOLATILE_WORDS) + r")\b", re.IGNORECASE)

_VOLATILE_STEMS = tuple(re.sub(r"\\w[*+]$", "", word) for word in _VOLATILE_WORDS)
"""The literal text each of ``_VOLATILE_WORDS`` starts with: SQL in ASCII that holds none of
them, lower-cased, cannot match, so the regular expression (about 30 us on an agent's SQL) is
not tried."""


def shareable(sql: str) -> bool:
    """Whether two agents' identical ``sql`` may share one execution: no word in it may call
    something whose value changes between runs.

    Example:
        >>> shareable("SELECT count(*) FROM singer"), shareable("SELECT date('now')")
        (True, False)
        >>> shareable("SELECT * FROM t ORDER BY RANDOM() LIMIT 1")
        False
    """
    # Only ASCII text is lower-cased here: the expression's IGNORECASE also matches letters
    # outside ASCII (the Kelvin sign as k, the long s as s), which str.lower() keeps apart.
    if sql.isascii():
        lowered = sql.lower()
        if not any(stem in lowered for stem in _VOLATILE_STEMS):
            return True
    return _VOLATILE.search(sql) is None


class SharedAnswers:
    """One question's agent SQL results, by SQL text, while its answers are graded."""

    def __init__(self, uses: int) -> None:
        self.uses = uses
        self.lock = threading.Lock()
        self.entries: dict[str, _SharedEntry] = {}
        self.graded: list[tuple[pa.Table, _SharedEntry]] = []
        """Grades by the agent result they were made from."""
        self.previews: dict[tuple[int, tuple[int, ...], int], tuple[ResultSet, Preview]] = {}
        """Previews by the result object they show (kept here, so its id is not reused), the
        differing rows marked and their count."""


@dataclass
class _SharedEntry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    value: Any = None


class SharedSql:
    """Agent SQL of one question run once per distinct text (see the module docstring).

    ``once(sql, compute)`` returns ``compute()``'s value, computed by the first caller for
    that text; callers with the same text wait for it and get the same value.
    """

    def __init__(self, shared: SharedAnswers) -> None:
        self._shared = shared

    def once(self, sql: str, compute: Callable[[], Any]) -> Any:
        if not shareable(sql):
            return compute()
        with self._shared.lock:
            entry = self._shared.entries.setdefault(sql, _SharedEntry())
        return _computed(entry, compute)

    def graded_once(self, table: pa.Table, compute: Callable[[], Any]) -> Any:
        """``compute()``'s value for an agent result equal to ``table`` (column names, types,
        rows in order), computed once: the grade of one result is the grade of an equal one."""
        with self._shared.lock:
            found = next(
                (
                    entry
                    for known, entry in self._shared.graded
                    if known.num_rows == table.num_rows and known.equals(table)
                ),
                None,
            )
            if found is None:
                found = _SharedEntry()
                self._shared.graded.append((table, found))
        return _computed(found, compute)

    def preview(self, result: ResultSet, differing: list[int], differing_count: int) -> Preview:
        """``make_preview(result, differing, differing_count=differing_count)``, made once per
        result object and marks: the agents of a question share the ground truth's result
        object, and an agent SQL text run once (``once``) shares its result too (Spider, 9
        agents: 7,619 distinct previews of 17,217). A preview is a frozen record, a pure
        function of those arguments; the answers' records hold the same one."""
        key = (id(result), tuple(differing), differing_count)
        with self._shared.lock:
            found = self._shared.previews.get(key)
        if found is not None and found[0] is result:
            return found[1]
        made = make_preview(result, differing, differing_count=differing_count)
        with self._shared.lock:
            return self._shared.previews.setdefault(key, (result, made))[1]


def _computed(entry: _SharedEntry, compute: Callable[[], Any]) -> Any:
    with entry.lock:
        if entry.value is None:
            entry.value = compute()
        return entry.value
