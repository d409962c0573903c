"""The registered commands, loaded on first use.

A command module defines one click command; register it here by name with where it lives and
the one line ``sqlbench --help`` shows for it. Nothing is imported until a command runs, so
``sqlbench --help`` and ``--version`` do not pay for pandas, DuckDB, SQLAlchemy or sqlglot
(``benchmarks/cli_startup.py`` measures it).
"""

from __future__ import annotations

from typing import NamedTuple


class CommandEntry(NamedTuple):
    """Where a command lives and what ``sqlbench --help`` says about it."""

    target: str
    """``module:attribute`` of the click command."""
    short_help: str


COMMANDS: dict[str, CommandEntry] = {
    "init": CommandEntry(
        "sqlbench.cli.init:init_command", "Create an example project (or the CI workflow)."
    ),
    "validate": CommandEntry("sqlbench.cli.validate:validate_command", "Check every project file."),
    "questions": CommandEntry(
        "sqlbench.cli.questions:questions_command", "List the benchmark questions."
    ),
    "run": CommandEntry("sqlbench.cli.run:run_command", "Evaluate an agent on the questions."),
    "runs": CommandEntry("sqlbench.cli.runs:runs_command", "List the stored runs."),
    "show": CommandEntry(
        "sqlbench.cli.show:show_command", "Show a run's results, or one question in full."
    ),
    "review": CommandEntry(
        "sqlbench.cli.review:review_command", "Decide a question's verdict by hand."
    ),
    "report": CommandEntry(
        "sqlbench.cli.report:report_command", "Write a run as one self-contained HTML page."
    ),
    "view": CommandEntry(
        "sqlbench.cli.view:view_command", "Serve the run pages on 127.0.0.1, updating live."
    ),
    "compare": CommandEntry(
        "sqlbench.cli.compare:compare_command", "Compare two runs, or two git refs."
    ),
    "check": CommandEntry(
        "sqlbench.cli.check:check_command", "The pull-request check: compare, then gate."
    ),
    "audit": CommandEntry(
        "sqlbench.cli.audit:audit_command", "Rank the questions whose ground truth is suspect."
    ),
    "judge": CommandEntry(
        "sqlbench.cli.judge:judge_command", "Compute a stored run's judged metrics."
    ),
    "regrade": CommandEntry(
        "sqlbench.cli.regrade:regrade_command", "Grade a stored run's SQL again, as a new run."
    ),
    "merge": CommandEntry("sqlbench.cli.merge:merge_command", "Join shard runs into one run."),
    "export": CommandEntry(
        "sqlbench.cli.export_import:export_command", "Print a run as JSON, to move it."
    ),
    "import": CommandEntry(
        "sqlbench.cli.export_import:import_command", "Store a run exported by `export`."
    ),
}
