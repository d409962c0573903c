"""A fault while handling one answer is that answer's verdict, never the run's end.

Every stage that touches agent output (parse, guard, execute, fetch, convert, compare, preview,
store) can meet something sqlbench did not foresee: SQL nested past Python's recursion limit,
a value no converter knows, memory running out on a huge result. The run loop turns whatever
such a stage raises into a one-line reason for that question only (docs/verdicts.md: every
verdict has a reason a person can act on) and goes on with the others. What the agent's SQL
caused is a query error (the question fails, as a syntax error would); what sqlbench could not
do with a result that ran is an ``error`` verdict naming the stage.
"""

from __future__ import annotations

from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.text import one_line

_MAX_DETAIL = 200


def describe_fault(err: BaseException) -> str:
    """``Type: message`` on one line, shortened.

    Example:
        >>> describe_fault(ValueError("bad\\nvalue"))
        'ValueError: bad value'
    """
    text = one_line(str(err), _MAX_DETAIL)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def stage_error(doing: str, err: Exception) -> QueryError:
    """The query error for what a stage running a query raised (``doing``: ``running it``).

    Example:
        >>> stage_error("running it", RecursionError("maximum recursion depth exceeded")).kind
        <QueryErrorKind.SQL_LIMIT: 'sql_limit'>
    """
    if isinstance(err, RecursionError):
        return QueryError(
            QueryErrorKind.SQL_LIMIT,
            f"it is nested too deeply for sqlbench ({doing}); it was stopped",
        )
    if isinstance(err, MemoryError):
        return QueryError(
            QueryErrorKind.TOO_LARGE, f"sqlbench ran out of memory {doing}; it was stopped"
        )
    if isinstance(err, OSError) and "string size" in str(err):
        return QueryError(
            QueryErrorKind.TOO_LARGE,
            f"its result is too large to fetch ({describe_fault(err)})",
        )
    return QueryError(QueryErrorKind.RUNTIME, f"sqlbench failed {doing}: {describe_fault(err)}")


def fault_reason(doing: str, err: BaseException) -> str:
    """The reason of an ``error`` verdict for a stage sqlbench could not complete.

    Example:
        >>> fault_reason("comparing", TypeError("bad")).split(";")[0]
        'sqlbench failed comparing (TypeError: bad)'
    """
    if isinstance(err, RecursionError):
        what = "the result is nested too deeply"
    elif isinstance(err, MemoryError):
        what = "out of memory"
    else:
        what = describe_fault(err)
    return f"sqlbench failed {doing} ({what}); the other questions were not affected"
