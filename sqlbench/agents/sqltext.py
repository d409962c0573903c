"""The SQL in an agent's text: one rule for every kind (command and http output, llm replies,
traces).

A reply holds SQL when it has a fenced code block (the last ```` ```sql ```` block, or the last
plain ```` ``` ```` block), starts like a SQL statement (SELECT, WITH, VALUES, but also DROP or
INSERT: the guard refuses those, they are not words), or has a sentence around a query: a line
that starts with SELECT or WITH, up to the first ``;`` or blank line. Anything else holds no
SQL: the agent answered in words.
"""

from __future__ import annotations

import re

_FENCED = re.compile(r"```[ \t]*(?:sql|SQL)?[ \t]*\n(.*?)```", re.DOTALL)
_STATEMENT_START = re.compile(
    r"^\s*(\(|(select|with|values|from|table|insert|update|delete|merge|upsert|replace|create|"
    r"drop|alter|truncate|copy|attach|detach|install|load|pragma|set|reset|call|export|import|"
    r"use|begin|start|commit|rollback|explain|describe|desc|show|grant|revoke|do|exec|execute|"
    r"vacuum|analyze|lock|unlock|pivot|unpivot|summarize|checkpoint|prepare)\b)",
    re.IGNORECASE,
)
_QUERY_LINE = re.compile(r"^[ \t]*(select|with)\b", re.IGNORECASE | re.MULTILINE)


def starts_like_sql(text: str) -> bool:
    """Whether ``text`` starts like a SQL statement (then it is taken as written).

    Example:
        >>> starts_like_sql("  select 1"), starts_like_sql("Here is the query: SELECT 1")
        (True, False)
    """
    return _STATEMENT_START.match(text) is not None


def extract_sql(text: str) -> str | None:
    """The SQL an agent's text holds, or None when it holds none.

    Example:
        >>> extract_sql("Here it is:\\n```sql\\nSELECT 1\\n```")
        'SELECT 1'
        >>> extract_sql("select count(*) from t;")
        'select count(*) from t'
        >>> extract_sql("The query is:\\nSELECT n\\nFROM t;\\nIt counts rows.")
        'SELECT n\\nFROM t'
        >>> extract_sql("DROP TABLE t")
        'DROP TABLE t'
        >>> extract_sql("I cannot answer that from this data.") is None
        True
    """
    blocks = _FENCED.findall(text)
    if blocks:
        return blocks[-1].strip().rstrip(";").strip() or None
    if _STATEMENT_START.match(text):
        return text.strip().rstrip(";").strip() or None
    found = _QUERY_LINE.search(text)
    if found is None:
        return None
    rest = text[found.start() :]
    end = re.search(r";|\n[ \t]*\n", rest)
    sql = rest[: end.start()] if end else rest
    return sql.strip() or None
