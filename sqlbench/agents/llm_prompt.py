"""What the built-in ``llm`` agent tells the model, and how its final SQL is read back.

Protocol: the model may call ``run_sql`` (run a read-only query, see a few rows) and ends by
calling ``submit_sql`` with the final query. A reply without tool calls is read as the final
answer: its last fenced ```sql block, or the whole reply when it is a bare SELECT/WITH query;
any other reply is an answer in words (no SQL, verdict ``review``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlbench.agents.sqltext import extract_sql
from sqlbench.engines.arrow_values import display_values
from sqlbench.project.files import CertifiedQuery

if TYPE_CHECKING:
    from sqlbench.engines.base import TableInfo

RUN_SQL = "run_sql"
SUBMIT_SQL = "submit_sql"
PREVIEW_ROWS = 20
"""Rows of a ``run_sql`` result shown to the model (and kept in the trace)."""
MAX_TABLES = 200
MAX_EXAMPLES = 40


TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": RUN_SQL,
            "description": (
                "Run one read-only SQL query on the warehouse and see its columns, row count "
                f"and first {PREVIEW_ROWS} rows (or the error). Use it to check a query."
            ),
            "parameters": {
                "type": "object",
                "properties": {"sql": {"type": "string", "description": "One SELECT query."}},
                "required": ["sql"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": SUBMIT_SQL,
            "description": "Submit the final SQL query that answers the question.",
            "parameters": {
                "type": "object",
                "properties": {
                    "sql": {"type": "string", "description": "The final SELECT query."},
                    "explanation": {"type": "string", "description": "One sentence (optional)."},
                },
                "required": ["sql"],
            },
        },
    },
]


def schema_text(tables: Sequence[TableInfo]) -> str:
    """The schema as one line per table: ``name(column TYPE, ...)``.

    Example:
        >>> from sqlbench.engines.base import ColumnInfo, TableInfo
        >>> schema_text([TableInfo("orders", [ColumnInfo("id", "INTEGER")], "main")])
        '- main.orders(id INTEGER)'
    """
    lines = []
    for table in list(tables)[:MAX_TABLES]:
        name = f"{table.schema}.{table.name}" if table.schema else table.name
        columns = ", ".join(f"{column.name} {column.type}" for column in table.columns)
        lines.append(f"- {name}({columns})")
    if len(tables) > MAX_TABLES:
        lines.append(f"- ... and {len(tables) - MAX_TABLES} more tables not listed here")
    return "\n".join(lines) if lines else "(no tables found)"


def examples_text(certified_queries: Mapping[str, CertifiedQuery]) -> str:
    """Certified queries as commented SQL examples."""
    blocks = []
    for query in list(certified_queries.values())[:MAX_EXAMPLES]:
        header = f"-- {query.name}" + (f": {query.question}" if query.question else "")
        blocks.append(f"{header}\n{query.sql.strip()}")
    if len(certified_queries) > MAX_EXAMPLES:
        blocks.append(f"-- ... and {len(certified_queries) - MAX_EXAMPLES} more not shown")
    return "\n\n".join(blocks)


def system_prompt(*, dialect: str, schema: str, examples: str, max_tool_calls: int) -> str:
    """The system message."""
    parts = [
        f"You are a data analyst. Write one {dialect} SQL query that answers the user's "
        "question over the warehouse described below.",
        "Rules:\n"
        "- One read-only query (SELECT, or WITH ... SELECT); use only the tables and columns "
        "listed.\n"
        f"- You may call {RUN_SQL} to run a query and see part of its result, at most "
        f"{max_tool_calls} times.\n"
        f"- When you have the final query, call {SUBMIT_SQL} with it.\n"
        "- If the question cannot be answered with SQL over these tables, say so in words and "
        f"do not call {SUBMIT_SQL}.",
        f"Warehouse schema ({dialect}):\n{schema}",
    ]
    if examples:
        parts.append(
            "Certified queries (verified SQL for questions on this warehouse; reuse "
            f"their logic where it fits):\n{examples}"
        )
    return "\n\n".join(parts)


def final_sql(content: str) -> str | None:
    """The SQL in a final reply without tool calls, or None for an answer in words
    (``sqlbench.agents.sqltext.extract_sql``, the rule every kind shares).

    Example:
        >>> final_sql("Here it is:\\n```sql\\nSELECT 1\\n```")
        'SELECT 1'
        >>> final_sql("I cannot answer that from this data.") is None
        True
    """
    return extract_sql(content)


def preview(table: Any) -> dict[str, Any]:
    """A ``run_sql`` result as the model (and the trace) sees it: columns, count, first rows.

    Args:
        table: A ``pyarrow.Table`` (column names may repeat).
    """
    shown = min(PREVIEW_ROWS, table.num_rows)
    columns = [display_values(table.column(i).slice(0, shown)) for i in range(table.num_columns)]
    rows = [[_plain(column[i]) for column in columns] for i in range(shown)]
    return {"columns": list(table.column_names), "row_count": table.num_rows, "rows": rows}


def _plain(value: Any) -> Any:
    """JSON-friendly scalars: text for anything JSON has no type for (Decimal, dates)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
