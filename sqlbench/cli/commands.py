"""The registered commands. A command module defines one click command; list it here."""

from __future__ import annotations

import click

from sqlbench.cli.check import check_command
from sqlbench.cli.compare import compare_command
from sqlbench.cli.export_import import export_command, import_command
from sqlbench.cli.init import init_command
from sqlbench.cli.judge import judge_command
from sqlbench.cli.merge import merge_command
from sqlbench.cli.questions import questions_command
from sqlbench.cli.regrade import regrade_command
from sqlbench.cli.report import report_command
from sqlbench.cli.review import review_command
from sqlbench.cli.run import run_command
from sqlbench.cli.runs import runs_command
from sqlbench.cli.show import show_command
from sqlbench.cli.validate import validate_command
from sqlbench.cli.view import view_command

ALL: list[click.Command] = [
    init_command,
    validate_command,
    questions_command,
    run_command,
    runs_command,
    show_command,
    review_command,
    report_command,
    view_command,
    compare_command,
    check_command,
    judge_command,
    regrade_command,
    merge_command,
    export_command,
    import_command,
]
