"""``sqlbench run``: evaluate an agent on the project's questions (docs/commands.md)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import click

from sqlbench import gcpolicy
from sqlbench.cli.options import (
    THRESHOLD,
    branch_option,
    format_option,
    needs_project,
    note,
    output_option,
    progress_display,
    run_name_option,
    select_option,
    space_option,
    stdout_to_stderr,
    terminal_width,
    write_output,
)
from sqlbench.exitcodes import ExitCode
from sqlbench.project.files import MAX_VARIANTS, Project
from sqlbench.report import run_text
from sqlbench.runs.accuracy import Accuracy
from sqlbench.runs.plan import RunOptions, Shard, expand_agents
from sqlbench.runs.scores import RunResult
from sqlbench.validation import load_project


def render_run(run: RunResult, fmt: str, *, color: bool = False, width: int | None = None) -> str:
    """The run in one of the ``--format`` choices (text at ``width`` columns)."""
    # The other formats are imported for the format asked for only.
    if fmt == "json":
        from sqlbench.report import run_json

        return run_json.render(run)
    if fmt == "markdown":
        from sqlbench.report import run_markdown

        return run_markdown.render(run)
    if fmt == "junit":
        from sqlbench.report import run_junit

        return run_junit.render(run)
    return run_text.render_run(run, color=color, width=width)


def under_threshold(accuracy: Accuracy, fail_under: float | None) -> str | None:
    """Why a run of ``accuracy`` is under ``--fail-under`` (a fraction of 1), or None when it
    is not."""
    if fail_under is None:
        return None
    value = accuracy.value
    if value is None:
        return f"no question was graded, so accuracy cannot reach --fail-under {fail_under:.0%}"
    if value < fail_under:
        return f"accuracy {value:.1%} is under --fail-under {fail_under:.1%}"
    return None


@click.command("run")
@needs_project
@branch_option
@click.option(
    "--agent",
    "agent_name",
    metavar="NAME",
    default=None,
    help="Agent to evaluate: one of agents/*.yml, or auto. Several, comma-separated or as a "
    "glob (--agent 'gpt*,llama'), make one run each with every ground truth executed once. "
    "Default: default_agent from sqlbench.yml (a resumed run: its own agent).",
)
@space_option
@select_option
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Questions in flight at once. Default: run.concurrency (8).",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="Ask the agent K times per question: pass rate, pass@k, pass^k, flaky.",
)
@click.option(
    "--variants",
    type=click.IntRange(min=0, max=MAX_VARIANTS),
    default=None,
    metavar="N",
    help="Also grade on N generated variants of the data (catches passes that are luck of "
    "the data; DuckDB or SQLite warehouses). Default: compare.variants (0).",
)
@run_name_option("Name the run. Default: creation time plus a short unique suffix.")
@click.option(
    "--resume",
    default=None,
    metavar="RUN",
    help="Finish a stopped run: ask only what has no answer yet.",
)
@click.option(
    "--shard",
    default=None,
    metavar="I/N",
    help="Run only shard I of N (a fixed split by question; join with sqlbench merge).",
)
@click.option(
    "--affected-by",
    "affected_by",
    default=None,
    metavar="REF",
    help="Ask the agent only the questions the change from REF can have touched; the rest "
    "take REF's run's answers, labelled unaffected (reused). Safe for deterministic, "
    "schema-blind agents only: see docs/ci.md.",
)
@click.option(
    "--fail-under",
    type=THRESHOLD,
    default=None,
    metavar="X",
    help="Exit 1 when accuracy is under X: a fraction of 1 (0.9) or a percentage with its "
    "sign (90%); a bare number above 1 is refused.",
)
@format_option("table", "json", "markdown", "junit")
@output_option
@click.pass_context
def run_command(
    ctx: click.Context,
    project_dir: Path,
    branch: str | None,
    agent_name: str | None,
    space: str | None,
    select: tuple[str, ...],
    concurrency: int | None,
    repeat: int | None,
    variants: int | None,
    run_name: str | None,
    resume: str | None,
    shard: str | None,
    affected_by: str | None,
    fail_under: float | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Evaluate an agent: ask every question, execute both SQL texts, compare, grade.

    Shows live progress, then the per-question table and `Accuracy: NN% (passed/total)`.
    Every graded question is stored at once (`sqlbench runs`, `sqlbench show`); after a
    crash or Ctrl-C, `--resume RUN` finishes the run. Exit 0 when the run completes, 1 under
    --fail-under, 2 when the project does not validate or the warehouse cannot be set up.
    """
    # The run loop pulls in the engines, the comparison and the agents: import it on use only.
    with gcpolicy.long_lived():
        from sqlbench.runs.runner import run_benchmark

    options = RunOptions(
        select=select,
        space=space,
        concurrency=concurrency,
        repeat=repeat,
        variants=variants,
        name=run_name,
        resume=resume,
        shard=Shard.parse(shard) if shard is not None else None,
        project_dir=project_dir.resolve(),
    )
    if affected_by is not None and (resume or shard or select or space or variants):
        raise click.UsageError(
            "--affected-by makes a whole run: it does not combine with --resume, --shard, "
            "--select, --space or --variants"
        )
    # Errors stop the run; warnings are `validate`'s to show (the ground-truth SQL ones parse
    # every ground truth: 0.7 s for Spider's 972).
    with gcpolicy.long_lived():  # the project is kept to the end
        project = load_project(project_dir, branch=branch, sql_warnings=False)
    if project.source.dev_mode_note:
        note(f"{project.source.dev_mode_note}.")
    names = expand_agents(project, agent_name) if agent_name is not None else []
    if len(names) > 1:
        _run_several(ctx, project, names, options, fmt, output, fail_under)
    display = progress_display()
    try:
        with stdout_to_stderr(), display:
            if affected_by is not None:
                # Run-to-run comparison (sqlbench.rundiff) is loaded for --affected-by only.
                from sqlbench.rundiff.refs import affected_run

                run = affected_run(
                    project,
                    affected_by,
                    names[0] if names else None,
                    options,
                    progress=display,
                    notify=note,
                )
            else:
                run = run_benchmark(project, names[0] if names else None, options, progress=display)
    except KeyboardInterrupt:
        if display.run_name is not None:
            click.echo(
                f"Interrupted: run {display.run_name} keeps what was graded; finish it "
                f"with `sqlbench run --resume {display.run_name}`.",
                err=True,
            )
        else:
            click.echo("Interrupted.", err=True)
        ctx.exit(ExitCode.INTERRUPTED)
    color = fmt == "table" and output is None and sys.stdout.isatty()
    width = terminal_width() if output is None else None
    write_output(render_run(run, fmt, color=color, width=width), output)
    if output is not None:
        click.echo(f"{run_text_summary(run)}; wrote {output}", err=True)
    problem = under_threshold(run.accuracy, fail_under)
    if problem is not None:
        click.echo(f"Failed: {problem}.", err=True)
        ctx.exit(ExitCode.FAIL)
    ctx.exit(ExitCode.OK)


def run_text_summary(run: RunResult | run_text.RunTally) -> str:
    """``Run NAME: Accuracy: NN% (passed/total)`` for stderr when the report goes to a file."""
    return f"Run {run.info.name}: Accuracy: {run.accuracy.label()}"


def _run_several(
    ctx: click.Context,
    project: Project,
    names: list[str],
    options: RunOptions,
    fmt: str,
    output: Path | None,
    fail_under: float | None,
) -> None:
    """``--agent a,b,c``: one run per agent, run together, every run rendered, then one line
    per run; a run that failed is named with its reason (exit 2), and exit 1 when any run is
    under ``--fail-under``."""
    from sqlbench.runs.records import RunStatus
    from sqlbench.runs.runner import open_store, run_benchmarks_stored

    if fmt == "junit":
        raise click.UsageError("--format junit holds one run: give --agent one agent")
    display = progress_display()
    with open_store(project, options) as store:
        try:
            with stdout_to_stderr(), display:
                ids = run_benchmarks_stored(project, names, options, progress=display, store=store)
        except KeyboardInterrupt:
            if display.run_names:
                click.echo(
                    f"Interrupted: runs {', '.join(display.run_names)} keep what was graded; "
                    "finish each with `sqlbench run --resume NAME`.",
                    err=True,
                )
            else:
                click.echo("Interrupted.", err=True)
            ctx.exit(ExitCode.INTERRUPTED)
        color = fmt == "table" and output is None and sys.stdout.isatty()
        # One run loaded at a time, rendered, and dropped (its line in the summary kept).
        text, runs = render_runs_several((store.load_run(i) for i in ids), fmt, color=color)
    write_output(text, output)
    if output is not None:
        for run in runs:
            click.echo(run_text_summary(run), err=True)
        click.echo(f"wrote {output}", err=True)
    broken = [run for run in runs if run.status is RunStatus.FAILED]
    for run in broken:
        click.echo(
            f"Error: run {run.info.name} (agent {run.info.agent_name}) failed: {run.info.error}",
            err=True,
        )
    completed = [run for run in runs if run.status is not RunStatus.FAILED]
    failed = [
        p for p in (under_threshold(run.accuracy, fail_under) for run in completed) if p is not None
    ]
    for problem in failed:
        click.echo(f"Failed: {problem}.", err=True)
    if broken:
        ctx.exit(ExitCode.ERROR)
    ctx.exit(ExitCode.FAIL if failed else ExitCode.OK)


def render_runs_several(
    runs: Iterable[RunResult], fmt: str, *, color: bool = False
) -> tuple[str, list[run_text.RunTally]]:
    """Several runs (``--agent a,b``) in one ``--format`` (JSON: ``{schema_version, runs}``),
    and each run's tally. Each run is rendered on its own, so ``runs`` may load them one at a
    time."""
    parts: list[str] = []
    tallies: list[run_text.RunTally] = []
    # Loading and rendering make millions of objects, none in a cycle: no garbage collection
    # walks them meanwhile.
    with gcpolicy.paused():
        for run in runs:
            if fmt == "json":
                parts.append(_json_part(run))
            else:
                parts.append(render_run(run, fmt, color=color))
            tallies.append(run_text.RunTally.of(run))
            del run  # the next run loads while this one is freed
    if fmt == "json":
        text = _json_document(parts)
    elif fmt == "markdown":
        text = "\n".join(parts)
    else:
        text = "\n".join(parts) + "\n" + run_text.render_agents_summary(tallies)
    return text, tallies


def _json_part(run: RunResult) -> str:
    """One run's JSON, made on its own (``run_json.dumps_run``), indented into the list."""
    from sqlbench.report import run_json

    return textwrap.indent(run_json.dumps_run(run_json.run_to_json(run)), "    ")


def _json_document(parts: list[str]) -> str:
    """``{schema_version, runs}`` around the runs' JSON (``_json_part``)."""
    from sqlbench.report import run_json

    return (
        f'{{\n  "schema_version": {run_json.SCHEMA_VERSION},\n  "runs": [\n'
        + ",\n".join(parts)
        + "\n  ]\n}\n"
    )
