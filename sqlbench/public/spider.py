"""Spider in its published layout: ``dev.json`` (``db_id``, ``question``, ``query``),
``tables.json`` and ``database/<db_id>/<db_id>.sqlite``; predictions as one SQL per line in
``dev.json`` order, optionally followed by a tab and the ``db_id`` (the format the official
``evaluation.py`` reads).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlbench.errors import PublicBenchmarkError
from sqlbench.public.layout import (
    UNPARSEABLE_NOT_RUN,
    Benchmark,
    Grading,
    Prediction,
    PublicQuestion,
    PublishedLayout,
    field_text,
    read_json_questions,
    read_text,
    split_prediction,
    with_databases,
)

GRADING = Grading(
    evaluator="Spider's official evaluator (taoyds/test-suite-sql-eval, --etype exec "
    "--keep_distinct) on the original databases",
    compare={"order": "auto", "rows": "bag", "columns": "exact"},
    run={"query_timeout_s": 60, "gold_timeout_s": 60},
    differences=(
        "order: strict only when the gold's outermost query has ORDER BY (parsed); the official "
        "looks for the text 'order by' anywhere in the gold, subqueries included",
        "rows tied on the ORDER BY keys may come in any order among themselves here",
        "numbers match within rel_tol 1e-9 here; the official compares exactly",
        "a text column of plain numbers ('3') equals the numbers (3) here; the official "
        "compares Python values ('3' != 3)",
        "two empty results with different column counts fail here under columns: exact; the "
        "official passes any two empty results",
        "same-named columns swapped (min and max) are review here; the official passes them",
        "SQL runs as written: the official's default (without --keep_distinct) removes every "
        "DISTINCT first, and its evaluation.py replaces the text 'value' with 1 in predictions",
        "a prediction that is an empty line is review here (no SQL); the official counts it wrong",
        "only EX on the original databases: the test-suite's distilled databases are not used",
        UNPARSEABLE_NOT_RUN,
    ),
)


LAYOUT = PublishedLayout(
    kind="spider",
    database_folders=("database", "databases"),
    description="Spider's layout: dev.json, tables.json, database/<db_id>/<db_id>.sqlite",
    grading=GRADING,
)


def read_spider(path: Path) -> Benchmark:
    """Spider's questions (``dev.json``, or the JSON file ``path`` names) and databases
    (``database/``, else ``databases/``, beside it).

    Raises:
        PublicBenchmarkError: the files are not Spider's layout.
    """
    source = path / "dev.json" if path.is_dir() else path

    def question(index: int, entry: Any, where: str) -> PublicQuestion:
        return PublicQuestion(
            index=index,
            db_id=field_text(entry, "db_id", where),
            name=f"{source.stem}_{index:04d}",
            question=field_text(entry, "question", where),
            sql=field_text(entry, "query", where),
        )

    questions = read_json_questions(
        source, "Spider question file", "Spider's list of questions (dev.json)", question
    )
    return with_databases(LAYOUT, source, questions)


def read_spider_predictions(path: Path, benchmark: Benchmark) -> list[Prediction]:
    """One SQL per line in question order, optionally ``SQL<TAB>db_id``. A file with fewer
    lines than questions, every line ending in its ``db_id``, is matched to the questions by
    database: its lines answer, in order, the questions whose database is present (those
    whose database is absent have no line).

    Raises:
        PublicBenchmarkError: the line count is not the question count (and the lines name no
            database to realign on), or a line names another database than its question's.
    """
    lines = read_text(path, "predictions file").splitlines()
    while lines and not lines[-1].strip() and len(lines) > len(benchmark.questions):
        lines.pop()
    if len(lines) == len(benchmark.questions):
        return [
            split_prediction(
                text, "\t", question, f"{path}:{index + 1}", what="line", line=index + 1
            )
            for index, (text, question) in enumerate(zip(lines, benchmark.questions, strict=True))
        ]
    databases = [text.partition("\t")[2].strip() for text in lines]
    if lines and len(lines) < len(benchmark.questions) and all(databases):
        return _realigned(path, benchmark, lines, databases)
    raise PublicBenchmarkError(_count_problem(path, benchmark, len(lines)))


def _count_problem(path: Path, benchmark: Benchmark, count: int) -> str:
    """Why a predictions file of ``count`` lines does not fit, and what to write instead."""
    total = len(benchmark.questions)
    text = (
        f"{path} has {count} line{'s' if count != 1 else ''} but {benchmark.source.name} has "
        f"{total} questions: Spider predictions are one SQL per line, in question order"
    )
    absent = sum(benchmark.absent.values())
    if count > total:
        return text
    if absent and count == total - absent:
        names = ", ".join(sorted(benchmark.absent))
        return (
            f"{text}; write a line (an empty one will do) for each of the {absent} questions "
            f"whose database is absent ({names}), or end every line with a tab and its "
            "db_id (SQL<TAB>db_id) so that lines are matched to questions by database"
        )
    return (
        f"{text}; write a line (an empty one will do) for every question, or end every line "
        "with a tab and its db_id (SQL<TAB>db_id) so that lines are matched to questions by "
        "database"
    )


def _realigned(
    path: Path, benchmark: Benchmark, lines: list[str], databases: list[str]
) -> list[Prediction]:
    """Lines that each name their database, matched in order to the questions on the
    databases present; a question whose database is absent takes no line."""
    questions = benchmark.questions
    predictions: list[Prediction] = []
    at = 0
    for number, (text, db_id) in enumerate(zip(lines, databases, strict=True), start=1):
        while at < len(questions) and questions[at].db_id != db_id:
            skipped = questions[at]
            if skipped.db_id in benchmark.databases:
                raise PublicBenchmarkError(
                    f"{path}:{number}: the line names database {db_id!r} but the next question "
                    f"without a line, #{skipped.index}, is on {skipped.db_id!r}, whose database "
                    "is present: only questions whose database is absent may go without a line"
                )
            at += 1
        if at == len(questions):
            raise PublicBenchmarkError(
                f"{path}:{number}: the line names database {db_id!r} but no question left "
                f"in {benchmark.source.name} is on it: are the predictions for another split?"
            )
        question = questions[at]
        predictions.append(
            split_prediction(text, "\t", question, f"{path}:{number}", what="line", line=number)
        )
        at += 1
    unanswered = [q for q in questions[at:] if q.db_id in benchmark.databases]
    if unanswered:
        first = unanswered[0]
        raise PublicBenchmarkError(
            f"{path} ends before question #{first.index} (on {first.db_id!r}): "
            f"{len(unanswered)} question{'s' if len(unanswered) != 1 else ''} whose database "
            "is present have no line"
        )
    return predictions
