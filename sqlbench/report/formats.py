"""Output formats (``--format``), one registry: for each kind of output, its formats in the
order commands offer them (the first is the default) and the function rendering each.

A command takes its choices from ``choices(OUTPUT)`` (``cli.options.format_option``) and
renders with ``render(OUTPUT, fmt, obj, ...)``; a new format is its module in ``report/``
and one entry here. Each renderer takes the object and the keyword options any format of
its output may use (``color``, ``width``, ...), reading those it needs; its module is
imported when that format is asked for (``runs`` and ``show`` load no Jinja or XML writer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Renderer = Callable[..., str]


def _run_table(run: Any, **options: Any) -> str:
    from sqlbench.report import run_text

    return run_text.render_run(
        run,
        color=options.get("color", False),
        width=options.get("width"),
        questions=options.get("questions"),
        summary=options.get("summary", False),
        per_question=options.get("per_question", True),
    )


def _run_json(run: Any, **options: Any) -> str:
    from sqlbench.report import run_json

    return run_json.render(run, questions=options.get("questions"))


def _run_markdown(run: Any, **options: Any) -> str:
    from sqlbench.report import run_markdown

    return run_markdown.render(run)


def _run_junit(run: Any, **options: Any) -> str:
    from sqlbench.report import run_junit

    return run_junit.render(run)


def _question_table(pair: Any, **options: Any) -> str:
    from sqlbench.report import run_text

    run, question = pair
    return run_text.render_question(
        run,
        question,
        trial=options.get("trial"),
        color=options.get("color", False),
        width=options.get("width"),
    )


def _question_json(pair: Any, **options: Any) -> str:
    from sqlbench.report import run_json

    run, question = pair
    return run_json.render_question(run, question)


def _runs_table(runs: Any, **options: Any) -> str:
    from sqlbench.report import run_text

    return run_text.render_runs(runs, color=options.get("color", False), width=options.get("width"))


def _runs_json(runs: Any, **options: Any) -> str:
    from sqlbench.report.runs_json import runs_to_json

    return runs_to_json(runs)


def _comparison_table(diff: Any, **options: Any) -> str:
    from sqlbench.report import rundiff_text

    return rundiff_text.render(diff)


def _comparison_json(diff: Any, **options: Any) -> str:
    from sqlbench.report import rundiff_json

    return rundiff_json.render(diff)


def _comparison_markdown(diff: Any, **options: Any) -> str:
    from sqlbench.report import rundiff_markdown

    return rundiff_markdown.render(diff)


def _validation_text(validation: Any, **options: Any) -> str:
    from sqlbench.report.validation import render_text

    return render_text(validation, options.get("branch"))


def _validation_json(validation: Any, **options: Any) -> str:
    from sqlbench.report.validation import render_json

    return render_json(validation)


def _questions_table(questions: Any, **options: Any) -> str:
    from sqlbench.report.questions import render_table

    return render_table(questions)


def _questions_json(questions: Any, **options: Any) -> str:
    from sqlbench.report.questions import render_json

    return render_json(questions)


def _audit_text(pair: Any, **options: Any) -> str:
    from sqlbench.report import audit

    report, disputes = pair
    return audit.render_text(report, disputes, limit=options.get("limit"))


def _audit_json(pair: Any, **options: Any) -> str:
    from sqlbench.report import audit

    report, disputes = pair
    return audit.render_json(report, disputes)


FORMATS: Mapping[str, Mapping[str, Renderer]] = {
    "run": {"table": _run_table, "json": _run_json, "markdown": _run_markdown, "junit": _run_junit},
    "question": {"table": _question_table, "json": _question_json},
    "runs": {"table": _runs_table, "json": _runs_json},
    "comparison": {
        "table": _comparison_table,
        "json": _comparison_json,
        "markdown": _comparison_markdown,
    },
    "validation": {"text": _validation_text, "json": _validation_json},
    "questions": {"table": _questions_table, "json": _questions_json},
    "audit": {"text": _audit_text, "json": _audit_json},
}
"""Output -> its formats, the default first -> the renderer."""


def choices(output: str, *, leave_out: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The ``--format`` choices of ``output``, the default first.

    Example:
        >>> choices("run"), choices("run", leave_out=("junit",))
        (('table', 'json', 'markdown', 'junit'), ('table', 'json', 'markdown'))
    """
    return tuple(name for name in FORMATS[output] if name not in leave_out)


def render(output: str, fmt: str, obj: Any, **options: Any) -> str:
    """``obj`` (a run, a comparison, ...: what ``output`` names) in format ``fmt``.

    Raises:
        KeyError: ``fmt`` is not one of ``choices(output)`` (a command offers only those).
    """
    return FORMATS[output][fmt](obj, **options)
