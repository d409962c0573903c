"""``sqlbench validate``: check every project file and print each problem with its line."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from sqlbench.agents.llm import endpoint_warnings
from sqlbench.cli.options import (
    branch_option,
    format_option,
    needs_project,
    output_option,
    write_output,
)
from sqlbench.errors import Problem, SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.project.load import ProjectCheck, check_project
from sqlbench.project.models import Project
from sqlbench.project.validate import count_problems, plural

SCHEMA_VERSION = 1


def _preflight() -> Callable[[Project], list[Problem]]:
    """``sqlbench.engines.preflight.preflight``, imported only when --execute asks for it."""
    try:
        module = importlib.import_module("sqlbench.engines.preflight")
    except ModuleNotFoundError as err:
        if err.name != "sqlbench.engines.preflight":
            raise
        raise SqlbenchError(
            "--execute is not available in this build of sqlbench "
            "(sqlbench.engines.preflight is missing)"
        ) from err
    preflight: Callable[[Project], list[Problem]] = module.preflight
    return preflight


def _where(check: ProjectCheck, branch: str | None) -> str:
    source = check.source
    if branch is None or source.dev_mode_note is not None:
        return ""
    commit = f" ({source.commit[:12]})" if source.commit else ""
    return f" at {source.branch}{commit}"


def render_text(
    check: ProjectCheck, problems: Sequence[Problem], branch: str | None, executed: bool
) -> str:
    """Each problem as ``path:line: severity: message``, then one summary line."""
    lines = [str(problem) for problem in problems]
    errors, warnings = count_problems(problems)
    where = _where(check, branch)
    if errors:
        found = plural(errors, "error") + (
            f" and {plural(warnings, 'warning')}" if warnings else ""
        )
        lines.append(f"Found {found} in {plural(check.files, 'file')}{where}.")
    else:
        project = check.project
        assert project is not None  # no error means the project loaded
        spaces = len({q.space for q in project.questions})
        file_agents = len(project.agents) - 1  # the implicit auto
        details = (
            f"{plural(len(project.questions), 'question')} in "
            f"{plural(spaces, 'space')}, "
            f"{plural(len(project.certified_queries), 'certified query')}, "
            f"{plural(file_agents, 'agent')} (+ auto)"
        )
        also = " Ground truth executed." if executed else ""
        tail = f"; {plural(warnings, 'warning')}" if warnings else ""
        lines.append(f"Valid{where}: {details}{tail}.{also}")
    return "\n".join(lines)


def render_json(check: ProjectCheck, problems: Sequence[Problem], executed: bool) -> str:
    """The problems and counts as JSON (``schema_version`` 1)."""
    errors, warnings = count_problems(problems)
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source": check.source.model_dump(mode="json"),
        "valid": errors == 0,
        "executed": executed,
        "errors": errors,
        "warnings": warnings,
        "problems": [
            {"severity": p.severity.value, "path": p.path, "line": p.line, "message": p.message}
            for p in problems
        ],
    }
    return json.dumps(data, indent=2)


@click.command("validate")
@needs_project
@branch_option
@click.option(
    "--execute",
    is_flag=True,
    help="Also run every ground truth on the warehouse: failing ground truth is an "
    "error; empty, NULL-only or non-deterministic results are warnings.",
)
@format_option("text", "json")
@output_option
@click.pass_context
def validate_command(
    ctx: click.Context,
    project_dir: Path,
    branch: str | None,
    execute: bool,
    fmt: str,
    output: Path | None,
) -> None:
    """Check every project file; print each problem as `path:line: severity: message`.

    Exit 0 when there is no error (warnings allowed), 1 when there is any.
    """
    check = check_project(project_dir, branch=branch)
    if check.source.dev_mode_note:
        click.echo(f"Note: {check.source.dev_mode_note}.", err=True)
    problems = list(check.problems)
    if check.project is not None:
        # The environment is read here, at the edge: an llm agent without an endpoint in its
        # keys, sqlbench.yml or these variables would stop `sqlbench run`.
        settings = check.project.settings
        problems.extend(endpoint_warnings(check.project.agents.values(), settings.llm, os.environ))
        problems.sort(key=lambda p: (p.path or "", p.line or 0))
    executed = False
    if execute and check.project is not None:
        problems.extend(_preflight()(check.project))
        problems.sort(key=lambda p: (p.path or "", p.line or 0))
        executed = True
    elif execute:
        click.echo("Note: ground truth was not executed because the project has errors.", err=True)
    text = (
        render_json(check, problems, executed)
        if fmt == "json"
        else render_text(check, problems, branch, executed)
    )
    write_output(text, output)
    errors, _ = count_problems(problems)
    ctx.exit(ExitCode.FAIL if errors else ExitCode.OK)
