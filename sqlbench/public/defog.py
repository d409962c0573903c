"""defog's sql-eval in its published layout: a questions CSV (``questions_gen_sqlite.csv``:
``db_name``, ``query_category``, ``question``, ``query`` with the acceptable gold queries
separated by ``;``, optional ``instructions``) and the databases as
``<db_name>/<db_name>.sqlite`` under ``databases/`` (or ``defog_data/``) beside it.
The first gold query is the ground truth, the others go to ``also_accept``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sqlbench.errors import PublicBenchmarkError
from sqlbench.public.layout import (
    UNPARSEABLE_NOT_RUN,
    Benchmark,
    Grading,
    PublicQuestion,
    PublishedLayout,
    read_text,
    with_databases,
)

GRADING = Grading(
    evaluator="defog sql-eval's compare_query_results (exact or subset match, any of the "
    "gold alternatives)",
    compare={"order": "ignore", "rows": "set", "columns": "superset"},
    run={"query_timeout_s": 60, "gold_timeout_s": 60},
    differences=(
        "order is compared (order: auto) for questions of the order_by category only; defog "
        "also orders when the question's words ask for an order",
        "column names never matter here; defog sorts columns by name before comparing",
        "numbers match within rel_tol 1e-9 here; defog compares pandas frames",
        "the agent's extra columns are ignored here, as defog's subset match does; its exact "
        "match is not reported separately",
        UNPARSEABLE_NOT_RUN,
    ),
)
_REQUIRED = ("db_name", "question", "query")
LAYOUT = PublishedLayout(
    kind="defog",
    database_folders=("databases", "defog_data"),
    description="expected databases/<db_name>/<db_name>.sqlite",
    grading=GRADING,
)


def read_defog(path: Path) -> Benchmark:
    """defog's questions (the CSV ``path`` names, or the one ``questions*.csv`` in the folder
    ``path``) and the databases beside it.

    Raises:
        PublicBenchmarkError: the files are not defog's layout.
    """
    if path.is_dir():
        found = sorted(path.glob("questions*.csv"))
        if len(found) != 1:
            raise PublicBenchmarkError(
                f"expected one questions*.csv in {path} (defog sql-eval's layout), found "
                f"{len(found)}; name the CSV itself"
            )
        source = found[0]
    else:
        source = path
    reader = csv.DictReader(io.StringIO(read_text(source, "defog questions CSV")))
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise PublicBenchmarkError(
            f"{source}: no {', '.join(missing)} column (defog's CSV has db_name, "
            "query_category, question, query)"
        )
    questions = []
    for index, row in enumerate(reader):
        golds = split_statements(row["query"] or "")
        if not golds:
            raise PublicBenchmarkError(f"{source}:{reader.line_num}: the query column is empty")
        text = (row.get("question") or "").strip()
        instructions = (row.get("instructions") or "").strip()
        if instructions:
            text = f"{text}\nInstructions: {instructions}"
        category = (row.get("query_category") or "").strip()
        questions.append(
            PublicQuestion(
                index=index,
                db_id=(row["db_name"] or "").strip(),
                name=f"q{index:03d}",
                question=text,
                sql=golds[0],
                also_accept=tuple(golds[1:]),
                tags=(category,) if category else (),
            )
        )
    return with_databases(LAYOUT, source, questions)


def split_statements(text: str) -> list[str]:
    """``;``-separated SQL texts, semicolons inside quotes and comments left alone.

    Example:
        >>> split_statements("SELECT 'a;b' FROM t; SELECT 2 -- x;y\\n;")
        ["SELECT 'a;b' FROM t", 'SELECT 2 -- x;y']
    """
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    comment = False
    for char in text:
        if comment:
            current.append(char)
            comment = char != "\n"
            continue
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char == "-" and current and current[-1] == "-":
            comment = True
        elif char == ";":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]
