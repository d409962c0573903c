"""``sqlbench runs``: the run list, newest first (SPEC section 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sqlbench.cli.options import format_option, needs_project, output_option, write_output
from sqlbench.exitcodes import ExitCode
from sqlbench.report import run_text
from sqlbench.runs.locate import open_project_store
from sqlbench.runs.models import RunSummary

SCHEMA_VERSION = 1


def runs_to_json(runs: list[RunSummary]) -> str:
    """The run list as JSON: ``schema_version`` and one entry per run."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "runs": [
            {
                "id": s.info.id,
                "name": s.info.name,
                "environment": s.info.environment,
                "branch": s.info.branch,
                "commit": s.info.commit,
                "dirty": s.info.dirty,
                "agent": s.info.agent_name,
                "agent_kind": s.info.agent_kind,
                "status": s.status.value,
                "passed": s.passed,
                "total": s.total,
                "human": s.human,
                "graded": s.graded,
                "accuracy": s.accuracy.value,
                "repeat": s.info.repeat,
                "shard": s.info.shard,
                "created_by": s.info.created_by,
                "created_at": s.info.created_at.isoformat(),
                "updated_at": s.info.updated_at.isoformat(),
            }
            for s in runs
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


@click.command("runs")
@needs_project
@click.option(
    "--limit", "-n", type=click.IntRange(min=1), default=None, help="Show only the newest N runs."
)
@format_option("table", "json")
@output_option
@click.pass_context
def runs_command(
    ctx: click.Context, project_dir: Path, limit: int | None, fmt: str, output: Path | None
) -> None:
    """List the stored runs: name, environment, branch@commit, agent, status, accuracy,
    created by, last updated. A run whose process died shows Interrupted."""
    with open_project_store(project_dir) as store:
        runs = store.list_runs(limit=limit)
    if fmt == "json":
        text = runs_to_json(runs)
    else:
        text = run_text.render_runs(runs, color=output is None and sys.stdout.isatty())
    write_output(text, output)
    ctx.exit(ExitCode.OK)
