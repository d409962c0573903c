"""The SQL in an agent's text: one rule for every kind (command and http output, llm replies,
traces).

A reply holds SQL when it has a fenced code block (the last ```` ```sql ```` block, or the last
plain ```` ``` ```` block), starts like a SQL statement (SELECT, WITH, VALUES, but also DROP or
INSERT: the guard refuses those, they are not words), or has a sentence around a query: a line
that starts with SELECT or WITH, up to the first ``;`` or blank line. Text with none of these
that reads as a sentence is an answer in words; anything else (``SELEC 1``) is broken SQL.
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


_SQL_WORDS = re.compile(
    r"\b(select|from|where|join|group\s+by|order\s+by|having|limit|union)\b", re.IGNORECASE
)


def looks_like_words(text: str) -> bool:
    """Text with no SQL in it that reads as a sentence (three words or more, no SQL clause
    word), as opposed to broken SQL such as ``SELEC 1``.

    Example:
        >>> looks_like_words("I am not sure which table holds revenue.")
        True
        >>> looks_like_words("SELEC 1"), looks_like_words("SELEC name FROM t")
        (False, False)
    """
    return _SQL_WORDS.search(text) is None and len(re.findall(r"[^\W\d_]+", text)) >= 3


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
