"""Options shared by several commands, defined once and stacked as decorators (dbt-style).

Usage::

    @click.command("validate")
    @needs_project
    @branch_option
    @format_option("text", "json")
    @output_option
    def validate_command(project_dir: Path, branch: str | None, fmt: str, output: Path | None):
        ...

Every option can also be set from the environment (``auto_envvar_prefix="SQLBENCH"`` on the
group), e.g. ``SQLBENCH_RUN_BRANCH=main``.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
from click.core import ParameterSource

from sqlbench import secrets
from sqlbench.errors import SqlbenchError
from sqlbench.project.root import find_project_root, require_project

if TYPE_CHECKING:
    from sqlbench.report.run_progress import RunProgress

F = TypeVar("F", bound=Callable[..., Any])


PROJECT_DIR_HELP = (
    "Project folder (where sqlbench.yml and eval_questions/ live). Default: the current "
    "folder or the first parent folder holding a project."
)


def _project_dir(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``-C DIR`` given to the command wins, then ``sqlbench -C DIR COMMAND``; without either,
    the project is found from the current folder upward (as git finds its repository)."""
    if param.name is None or ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT:
        return value
    parent = ctx.parent.params.get("project_dir") if ctx.parent is not None else None
    if isinstance(parent, Path):
        return parent
    found = find_project_root(Path.cwd())
    return value if found is None else found


def project_dir_option(func: F) -> F:
    """``--project-dir/-C DIR``: the project folder; passed as ``project_dir``. Also accepted
    before the command (``sqlbench -C DIR run``); without it, the project holding the current
    folder."""
    return click.option(
        "--project-dir",
        "-C",
        "project_dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        callback=_project_dir,
        help=PROJECT_DIR_HELP,
    )(func)


def needs_project(func: F) -> F:
    """The command works on a project: ``--project-dir/-C DIR`` (see ``project_dir_option``)
    must hold one, checked before the command does anything, with the one "not a project"
    sentence. With ``--branch REF`` the project is read from the ref, so only the folder's
    git repository is needed and the check is left to loading.
    """

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("branch") is None:
            require_project(kwargs["project_dir"])
        return func(*args, **kwargs)

    return project_dir_option(cast(F, checked))


def branch_option(func: F) -> F:
    """``--branch REF``: load the project as committed at a git ref; passed as ``branch``."""
    return click.option(
        "--branch",
        "branch",
        metavar="REF",
        default=None,
        help=(
            "Load the project as committed at this git ref (branch, tag, commit, origin/REF) "
            "without touching the checkout. Default: the working tree. `dev` with no ref named "
            "dev means the working tree too."
        ),
    )(func)


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format CHOICE`` among ``choices`` (the first is the default); passed as ``fmt``.

    Args:
        *choices: The formats this command can render, default first.
    """
    if not choices:
        raise ValueError("format_option needs at least one choice")

    def decorate(func: F) -> F:
        return click.option(
            "--format",
            "fmt",
            type=click.Choice(choices, case_sensitive=False),
            default=choices[0],
            show_default=True,
            help="Output format.",
        )(func)

    return decorate


def check_output_folder(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback for an output file option: its folder must exist.

    Checked when options are parsed, so that a long run does not end in "cannot write".
    """
    if isinstance(value, Path) and not value.parent.is_dir():
        raise click.BadParameter(f"the folder {value.parent} does not exist", ctx, param)
    return value


def output_option(func: F) -> F:
    """``--output/-o FILE``: write the rendered output to FILE instead of stdout."""
    return click.option(
        "--output",
        "-o",
        "output",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        default=None,
        callback=check_output_folder,
        help="Write the output to this file instead of standard output.",
    )(func)


def space_option(func: F) -> F:
    """``--space S``: only questions of this space; passed as ``space``."""
    return click.option(
        "--space",
        "space",
        metavar="SPACE",
        default=None,
        help="Only questions of this space.",
    )(func)


def select_option(func: F) -> F:
    """``--select PATTERN`` (repeatable): pick questions; passed as ``select`` (a tuple).

    Patterns: ``name``, ``space/name``, globs (``sales/rev*``) and ``tag:NAME``.
    """
    return click.option(
        "--select",
        "-s",
        "select",
        metavar="PATTERN",
        multiple=True,
        help="Questions to pick: name, space/name, a glob (sales/rev*) or tag:NAME. Repeatable.",
    )(func)


def side_run_options(func: F) -> F:
    """``--agent``, ``--repeat``, ``--concurrency``, ``--fresh`` and ``--trust-ref``: how a
    side is run when it must be."""
    func = trust_ref_option(func)
    func = click.option(
        "--fresh",
        is_flag=True,
        default=False,
        help="Run every side again: never reuse a stored run, even one with the same identity "
        "(a warehouse whose data changed without a commit).",
    )(func)
    func = click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=None,
        help="Questions in flight at once when a side must be run. Default: run.concurrency.",
    )(func)
    func = click.option(
        "--repeat",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        metavar="K",
        help="Answers per question on each side: per-question pass rates, flaky questions, "
        "a paired test over questions. A stored run is reused only with the same K.",
    )(func)
    return click.option(
        "--agent",
        "agent_name",
        metavar="NAME",
        default=None,
        help="Agent on both sides. Default: each side's default_agent.",
    )(func)


automatic_only_option = click.option(
    "--automatic-only",
    "automatic_only",
    is_flag=True,
    default=False,
    help="Count the automatic verdicts alone: people's decisions (sqlbench review), which "
    "otherwise count wherever accuracy is shown, are left out.",
)
"""``--automatic-only``: the machine's figure, without people's decisions."""


def note(message: str) -> None:
    """A one-line note for the user on stderr."""
    click.echo(f"Note: {message}", err=True)


def progress_display(*, quiet: bool = False) -> RunProgress:
    """Live progress on stderr for a run (or a comparison side that has to be run); with
    ``quiet``, no line per graded question where there is no live bar."""
    # Imported on use: commands that run nothing (validate, runs, --help) stay light.
    from sqlbench.report.run_progress import RunProgress

    return RunProgress(sys.stderr, live=sys.stderr.isatty(), quiet=quiet)


@contextlib.contextmanager
def side_progress() -> Iterator[RunProgress]:
    """While one side of ``compare``/``check`` runs: live progress on stderr, and what agents
    print kept off stdout (the report's)."""
    with stdout_to_stderr(), progress_display() as display:
        yield display


def head_option(func: F) -> F:
    """``--head REF`` (default: the working tree): the head side of ``compare`` and ``check``;
    passed as ``head_ref``."""
    return click.option(
        "--head",
        "head_ref",
        metavar="REF",
        default=None,
        help="Git ref of the head side (the change). Default: the working tree.",
    )(func)


def trust_ref_option(func: F) -> F:
    """``--trust-ref REF`` (repeatable): run the ``command``/``python`` agents and build the
    dbt project of REF's tree although REF is not in the working tree's history; passed as
    ``trusted_refs``."""
    return click.option(
        "--trust-ref",
        "trusted_refs",
        multiple=True,
        metavar="REF",
        help="Run the command/python agents and build the dbt project of REF's tree although "
        "REF is not in the working tree's history (read the change first; docs/security.md). "
        "Repeatable.",
    )(func)


def run_name_option(help_text: str) -> Callable[[F], F]:
    """``--name RUN``: the name of the run a command stores (``run``, ``merge``, ``import``);
    passed as ``run_name``.

    Args:
        help_text: What the name is for in this command.
    """

    def decorate(func: F) -> F:
        return click.option("--name", "run_name", default=None, metavar="RUN", help=help_text)(func)

    return decorate


def write_output(text: str, output: Path | None) -> None:
    """Print ``text`` to stdout, or write it to ``output`` when given (ends with a newline).

    Args:
        text: The rendered output.
        output: A file to write instead of stdout, or None.
    """
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        # The command's stdout scrubs what is written to it (secrets.scrubbed_streams): a
        # second pass over a large report (13.7 MB for 9 runs of Spider) costs 0.07 s.
        if not isinstance(sys.stdout, secrets.ScrubbingStream):
            text = secrets.scrub(text)
        click.echo(text, nl=False)
        return
    text = secrets.scrub(text)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise SqlbenchError(f"cannot write {output}: {err.strerror or err}") from err


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While agents run: what is printed to standard output (an in-process ``python`` agent's
    ``print``) goes to stderr, so that stdout carries only the report (``--format json >
    run.json`` stays valid JSON)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


class ThresholdType(click.ParamType):  # type: ignore[type-arg]
    """An accuracy threshold: a fraction of 1 (``0.9``) or a percentage with its sign
    (``90%``); a bare number above 1 is refused with a sentence (``--fail-under``,
    ``--floor``, and ``check.floor`` in sqlbench.yml share the rule)."""

    name = "threshold"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        from sqlbench.project.files import parse_threshold

        where = f"--{param.name.replace('_', '-')}" if param and param.name else "threshold"
        try:
            return parse_threshold(value, where)
        except ValueError as err:
            self.fail(str(err), param, ctx)


THRESHOLD = ThresholdType()


def terminal_width() -> int | None:
    """The terminal's width when standard output is one (tables fit it), else None (the
    report's own width: files and pipes get the same text wherever they are made)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns
