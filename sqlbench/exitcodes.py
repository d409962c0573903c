"""The process exit codes of ``sqlbench``: one ``IntEnum`` in a leaf module (imports nothing
from sqlbench), so command modules and ``cli/main.py`` both read it without importing each other.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a ``sqlbench`` command's exit status means (docs/commands.md: 0 done, 1 failed a gate, 2
    error).

    Example:
        >>> int(ExitCode.FAIL)
        1
    """

    OK = 0
    """The command did what was asked and no gate failed."""
    FAIL = 1
    """A gate failed: ``--fail-under``, the ``check`` policy, ``validate`` errors."""
    ERROR = 2
    """A ``SqlbenchError``: bad input or options, an unreachable warehouse, a missing run."""
    INTERRUPTED = 130
    """Ctrl-C or SIGTERM (128 + SIGINT), as shells report it."""
