"""BIRD in its published layout: ``dev.json`` (or mini-dev's ``mini_dev_sqlite.json``) with
``question_id``, ``db_id``, ``question``, ``evidence``, ``SQL``, ``difficulty``, and
``dev_databases/<db_id>/<db_id>.sqlite``; predictions as BIRD's JSON object from the question's
index (as text) to ``SQL\\t----- bird -----\\t<db_id>`` (or one such text per line).
"""

from __future__ import annotations

import json
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

SEPARATOR = "\t----- bird -----\t"
QUESTION_FILES = ("dev.json", "mini_dev_sqlite.json")

GRADING = Grading(
    evaluator="BIRD's official evaluator (evaluation_ex.py: set(predicted) == set(gold), "
    "30 s per query)",
    compare={"order": "ignore", "rows": "set", "columns": "exact"},
    run={"query_timeout_s": 30, "gold_timeout_s": 30},
    differences=(
        "columns match by value here, in any order; the official compares rows as tuples, "
        "so columns in another order are wrong there",
        "numbers match within rel_tol 1e-9 here; the official compares exactly",
        "a text column of plain numbers ('3') equals the numbers (3) here; the official "
        "compares Python values",
        "same-named columns swapped (min and max) are review here; the official passes them",
        "a query over the time limit fails here (timeout) as there, but the limit is "
        "sqlbench's query_timeout_s, not func_timeout",
        UNPARSEABLE_NOT_RUN,
    ),
)


LAYOUT = PublishedLayout(
    kind="bird",
    database_folders=("dev_databases", "databases"),
    description="BIRD's layout: dev.json, dev_databases/<db_id>/<db_id>.sqlite",
    grading=GRADING,
)


def read_bird(path: Path) -> Benchmark:
    """BIRD's questions (``dev.json`` or ``mini_dev_sqlite.json`` in ``path``, or the file
    ``path`` names) and databases (``dev_databases/``, else ``databases/``, beside it).

    Raises:
        PublicBenchmarkError: the files are not BIRD's layout.
    """
    if path.is_dir():
        found = [path / name for name in QUESTION_FILES if (path / name).is_file()]
        if not found:
            raise PublicBenchmarkError(
                f"no {' or '.join(QUESTION_FILES)} in {path} ({LAYOUT.description})"
            )
        source = found[0]
    else:
        source = path
    questions = read_json_questions(
        source, "BIRD question file", "BIRD's list of questions", _question
    )
    return with_databases(LAYOUT, source, questions)


def _question(index: int, entry: Any, where: str) -> PublicQuestion:
    """One entry of BIRD's question file; its evidence follows the question."""
    text = field_text(entry, "question", where)
    evidence = entry.get("evidence") if isinstance(entry, dict) else None
    if isinstance(evidence, str) and evidence.strip():
        text = f"{text}\nEvidence: {evidence.strip()}"
    qid = entry.get("question_id", index)
    difficulty = entry.get("difficulty")
    return PublicQuestion(
        index=index,
        db_id=field_text(entry, "db_id", where),
        name=f"q{qid}" if isinstance(qid, int) else f"q{index}",
        question=text,
        sql=_gold(entry, where),
        tags=(difficulty,) if isinstance(difficulty, str) and difficulty else (),
    )


def _gold(entry: dict[str, object], where: str) -> str:
    for key in ("SQL", "sql"):
        value = entry.get(key)
        if isinstance(value, str):
            return value
    raise PublicBenchmarkError(f"{where}: 'SQL' is missing or not text")


def read_bird_predictions(path: Path, benchmark: Benchmark) -> list[Prediction]:
    """BIRD's predictions JSON (``{"0": "SQL\\t----- bird -----\\tdb_id", ...}``), or one such
    text per line in question order.

    Raises:
        PublicBenchmarkError: a key that is not a question index, or a prediction that names
            another database than its question's.
    """
    text = read_text(path, "predictions file")
    items: list[tuple[int, str, int | None]] = []
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        for key, value in data.items():
            if not key.strip().isdigit() or not isinstance(value, str):
                raise PublicBenchmarkError(
                    f"{path}: entry {key!r} is not a question index with SQL text (BIRD "
                    'predictions map "0", "1", ... to "SQL\\t----- bird -----\\tdb_id")'
                )
            items.append((int(key), value, None))
    elif data is None:
        lines = text.splitlines()
        items = [(i, line, i + 1) for i, line in enumerate(lines) if line.strip()]
    else:
        raise PublicBenchmarkError(
            f"{path}: expected BIRD's predictions object, found a JSON {type(data).__name__}"
        )
    count = len(benchmark.questions)
    predictions = []
    for index, value, line in items:
        where = f"{path}:{line}" if line is not None else f"{path}: entry {index!r}"
        if index >= count:
            raise PublicBenchmarkError(
                f"{where}: question index {index} is past the {count} questions of "
                f"{benchmark.source.name}: are the predictions for another split?"
            )
        predictions.append(
            split_prediction(
                value,
                SEPARATOR,
                benchmark.questions[index],
                where,
                what="prediction",
                of=f" of {benchmark.source.name}",
                line=line,
            )
        )
    return predictions
