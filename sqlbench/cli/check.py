"""``sqlbench check``: the pull-request check (compare base and head, apply the policy)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sqlbench import secrets
from sqlbench.cli.options import (
    THRESHOLD,
    automatic_only_option,
    check_output_folder,
    head_option,
    needs_project,
    note,
    side_progress,
    side_run_options,
)
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.report import rundiff_junit, rundiff_markdown, rundiff_text
from sqlbench.rundiff.policy import RULES
from sqlbench.rundiff.refs import check_refs
from sqlbench.rundiff.sides import SideOptions
from sqlbench.runs.locate import open_project_store

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"


def _rules(value: str | None) -> list[str] | None:
    if value is None:
        return None
    rules = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [rule for rule in rules if rule not in RULES]
    if unknown:
        raise click.BadParameter(
            f"unknown rule {unknown[0]!r}; rules: {', '.join(RULES)}", param_hint="--fail-on"
        )
    return rules


def _write(path: Path, text: str, *, append: bool = False) -> None:
    try:
        with path.open("a" if append else "w", encoding="utf-8") as handle:
            handle.write(secrets.scrub(text))
    except OSError as err:
        raise SqlbenchError(f"cannot write {path}: {err.strerror or err}") from err


@click.command("check")
@needs_project
@click.option(
    "--base",
    "base_ref",
    metavar="REF",
    required=True,
    help="Git ref the change goes into (main, origin/main, a sha).",
)
@head_option
@side_run_options
@click.option(
    "--fail-on",
    "fail_on",
    metavar="RULES",
    default=None,
    help="Comma-separated rules that fail the check: regression, significant_drop, "
    "below_floor, must_pass, answer_changed. Default: check.fail_on in sqlbench.yml "
    "(regression,must_pass).",
)
@click.option(
    "--floor",
    type=THRESHOLD,
    default=None,
    metavar="X",
    help="Minimum head accuracy: a fraction of 1 (0.8) or a percentage with its sign (80%); "
    "enforced (adds below_floor) unless --fail-on says otherwise.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Significance level of significant_drop. Default: check.alpha (0.05).",
)
@click.option(
    "--must-pass-tag",
    default=None,
    metavar="TAG",
    help="Tag of the questions that must pass. Default: check.must_pass_tag (must-pass).",
)
@click.option(
    "--affected",
    is_flag=True,
    default=False,
    help="Ask the agent only the questions the change can have touched (lineage of setup files "
    "and SQL, changed YAML); the rest take the base run's answers, labelled unaffected "
    "(reused). Safe for deterministic, schema-blind agents only: see docs/ci.md.",
)
@automatic_only_option
@click.option(
    "--junit",
    "junit_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    callback=check_output_folder,
    help="Write JUnit XML here: one testcase per question.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    callback=check_output_folder,
    help="Write the Markdown summary here (`-`: print it). Default: appended to "
    "$GITHUB_STEP_SUMMARY when set, else printed (the text view in a terminal).",
)
@click.pass_context
def check_command(
    ctx: click.Context,
    project_dir: Path,
    base_ref: str,
    head_ref: str | None,
    agent_name: str | None,
    repeat: int,
    concurrency: int | None,
    fresh: bool,
    trusted_refs: tuple[str, ...],
    fail_on: str | None,
    floor: float | None,
    alpha: float | None,
    must_pass_tag: str | None,
    affected: bool,
    automatic_only: bool,
    junit_path: Path | None,
    markdown_path: Path | None,
) -> None:
    """The pull-request check: compare --base with --head (the working tree by default) and
    exit 1 when the check policy fails, 0 when it passes, 2 on setup errors, 3 when it would
    pass but questions were not asked (the agent's endpoint was unreachable).

    The policy comes from `check:` in sqlbench.yml at the head, flags on top. A stored run with
    the same identity is reused for either side, so a check whose base was run before costs one
    run. A base without a sqlbench project counts as empty.
    """
    rules = _rules(fail_on)
    options = SideOptions(
        project_dir=project_dir,
        agent_name=agent_name,
        repeat=repeat,
        concurrency=concurrency,
        fresh=fresh,
        affected=affected,
        trusted_refs=trusted_refs,
    )
    with open_project_store(project_dir) as store:
        result = check_refs(
            store,
            base_ref,
            head_ref,
            options,
            fail_on=rules,
            floor=floor,
            alpha=alpha,
            must_pass_tag=must_pass_tag,
            progress=side_progress,
            notify=note,
            automatic_only=automatic_only,
        )
    markdown = rundiff_markdown.render_check(result)
    if junit_path is not None:
        _write(junit_path, rundiff_junit.render(result))
    summary = os.environ.get(SUMMARY_VARIABLE)
    to_stdout = markdown_path is not None and str(markdown_path) == "-"
    if markdown_path is not None and not to_stdout:
        _write(markdown_path, markdown)
    elif summary and not to_stdout:
        _write(Path(summary), markdown + "\n", append=True)
    # Markdown is printed where it was asked for (`--markdown -`), or where nothing else takes
    # it and no person reads it raw (a pipe, a CI log); a terminal gets the text view.
    printed_markdown = to_stdout or (
        markdown_path is None and not summary and not stdout_is_terminal()
    )
    if printed_markdown:
        click.echo(markdown, nl=False)
    else:
        click.echo(rundiff_text.render_check(result), nl=False)
    incomplete = result.incomplete_message()
    if incomplete is not None:
        note(incomplete)
    if not result.passed:
        ctx.exit(ExitCode.FAIL)
    ctx.exit(ExitCode.INCOMPLETE if result.incomplete else ExitCode.OK)


def stdout_is_terminal() -> bool:
    """Whether a person reads standard output in a terminal."""
    return sys.stdout.isatty()
