"""Which sqlglot dialect a project's SQL is in: ``dialect:``, else the warehouse's."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping

from sqlbench.errors import EnvVarError
from sqlbench.project.envvars import resolve
from sqlbench.text import suggest

DEFAULT_DIALECT = "duckdb"
"""The embedded warehouse's dialect (no ``warehouse:``, or a DuckDB file path)."""

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
"""A URL as ``warehouse:`` takes one (anything else is a file path)."""


def url_scheme(warehouse: str) -> str | None:
    """The scheme of a warehouse URL, lower-cased and without its ``+driver``; None when
    ``warehouse`` is not a URL (a file path).

    Example:
        >>> url_scheme("PostgreSQL+psycopg://u@db/x"), url_scheme("data/shop.duckdb")
        ('postgresql', None)
    """
    match = _URL.match(warehouse)
    return match.group(1).split("+", 1)[0].lower() if match else None


def url_location(url: str) -> str:
    """What follows a URL's ``scheme://``, without its ``?query``.

    Example:
        >>> url_location("duckdb:///data/shop.duckdb?access_mode=read_only")
        '/data/shop.duckdb'
    """
    return url.split("://", 1)[1].split("?", 1)[0]


_SCHEME_DIALECTS = {
    "duckdb": "duckdb",
    "postgresql": "postgres",
    "postgres": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "trino": "trino",
    "presto": "presto",
    "databricks": "databricks",
    "spark": "spark",
    "sc": "spark",
    "redshift": "redshift",
    "mssql": "tsql",
    "oracle": "oracle",
    "clickhouse": "clickhouse",
    "awsathena": "athena",
    "hive": "hive",
    "teradatasql": "teradata",
    "teradata": "teradata",
    "doris": "doris",
    "starrocks": "starrocks",
    "exasol": "exasol",
    "dremio": "dremio",
}


_URL_DIALECTS = frozenset(_SCHEME_DIALECTS.values())
"""The dialects a warehouse URL's scheme names (every one of them a sqlglot dialect)."""


@functools.cache
def known_dialects() -> tuple[str, ...]:
    """Every sqlglot dialect name (sqlglot is imported here, when a name is checked, not with
    this module: commands that read no SQL load the project too)."""
    from sqlglot.dialects import Dialects

    return tuple(d.value for d in Dialects if d.value)


def warehouse_dialect(
    warehouse: str | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The sqlglot dialect of a ``warehouse:`` value, or None when it cannot be told.

    ``${ENV}`` references are resolved only to read the URL scheme (nothing is kept); a
    reference to an unset variable gives None.

    Example:
        >>> warehouse_dialect(None), warehouse_dialect("data/shop.duckdb")
        ('duckdb', 'duckdb')
        >>> warehouse_dialect("postgresql+psycopg://u:${PW}@db/x", {})
        'postgres'
        >>> warehouse_dialect("${WAREHOUSE_URL}", {}) is None
        True
    """
    if warehouse is None:
        return DEFAULT_DIALECT
    try:
        text = resolve(warehouse, os.environ if environ is None else environ)
    except EnvVarError:
        # Only the scheme matters: it can still be read when written before any ${...}.
        text = warehouse.split("${", 1)[0]
        if url_scheme(text) is None:
            return None
    scheme = url_scheme(text)
    if scheme is None:
        return DEFAULT_DIALECT if text else None
    return _SCHEME_DIALECTS.get(scheme)


_RENAMED_SCHEMES = {"postgres": "postgresql"}
"""Schemes people write that SQLAlchemy does not accept, and the one it does."""


def warehouse_url_problem(
    warehouse: str | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """What is wrong with a warehouse URL's scheme, with the fix; None when nothing is.

    ``postgres://`` (Heroku's spelling) is not a SQLAlchemy scheme; an unknown scheme close to
    a known one is a typo. An unknown scheme near none is a problem unless it names a
    third-party SQLAlchemy dialect that is installed (``dialect:`` tells sqlbench its SQL).

    Example:
        >>> warehouse_url_problem("postgres://u@db/x")
        '`postgres://` is not a scheme SQLAlchemy accepts: write `postgresql://`'
        >>> warehouse_url_problem("postgresq://u@db/x")
        "unknown database URL scheme `postgresq://`; did you mean 'postgresql'?"
        >>> warehouse_url_problem("postgresql+psycopg://u@db/x") is None
        True
    """
    if warehouse is None:
        return None
    try:
        text = resolve(warehouse, os.environ if environ is None else environ)
    except EnvVarError:
        text = warehouse.split("${", 1)[0]
    scheme = url_scheme(text)
    if scheme is None:
        return None
    if scheme in _RENAMED_SCHEMES:
        right = _RENAMED_SCHEMES[scheme]
        return f"`{scheme}://` is not a scheme SQLAlchemy accepts: write `{right}://`"
    known = [*_SCHEME_DIALECTS, "sc", "spark"]
    if scheme in known:
        return None
    close = suggest(scheme, [k for k in known if k not in _RENAMED_SCHEMES], cutoff=0.75)
    if close:
        return f"unknown database URL scheme `{scheme}://`{close}"
    if _installed_dialect(scheme):
        return None  # a third-party SQLAlchemy dialect (`dialect:` tells sqlbench its SQL)
    return unknown_scheme_message(scheme)


def _installed_dialect(scheme: str) -> bool:
    """Whether SQLAlchemy can load a dialect named ``scheme`` (a third-party one, registered by
    its package). SQLAlchemy is imported here only for a scheme sqlbench does not know."""
    from sqlalchemy.dialects import registry
    from sqlalchemy.exc import NoSuchModuleError

    try:
        registry.load(scheme)
    except NoSuchModuleError:
        return False
    except ImportError:  # the package is there but cannot be imported: running says why
        return True
    return True


_COMMON_SCHEMES = ("duckdb", "sqlite", "postgresql", "mysql", "mariadb", "spark", "sc")
"""The schemes listed when an unknown one is close to none: the engines sqlbench tests."""


def unknown_scheme_message(scheme: str) -> str:
    """Why a warehouse URL's scheme names nothing SQLAlchemy can load, with the closest known
    scheme (or the common ones when none is close): for a scheme without an installed dialect
    that is no known database's either (a typo, not a missing driver).

    Example:
        >>> unknown_scheme_message("postgrsql")
        "unknown warehouse URL scheme `postgrsql://`; did you mean 'postgresql'?"
        >>> unknown_scheme_message("htp").split(": ")[1]  # doctest: +ELLIPSIS
        'expected one of duckdb, sqlite, postgresql, mysql, mariadb, spark, sc or a path...'
    """
    known = [k for k in _SCHEME_DIALECTS if k not in _RENAMED_SCHEMES]
    close = suggest(scheme, known, cutoff=0.6)
    if close:
        return f"unknown warehouse URL scheme `{scheme}://`{close}"
    return (
        f"unknown warehouse URL scheme `{scheme}://`, which no installed package handles: "
        f"expected one of {', '.join(_COMMON_SCHEMES)} or a path to a DuckDB or SQLite file "
        "(or install the SQLAlchemy package for that database)"
    )


def is_known_scheme(scheme: str) -> bool:
    """True for a scheme naming a database sqlbench knows the dialect of (whose driver may
    still be missing).

    Example:
        >>> is_known_scheme("snowflake"), is_known_scheme("htp")
        (True, False)
    """
    return scheme.lower() in _SCHEME_DIALECTS


def unknown_dialect_message(name: str) -> str | None:
    """Why ``name`` is not a sqlglot dialect (with the closest one), or None when it is one.

    Example:
        >>> unknown_dialect_message("postgress")
        "unknown dialect 'postgress'; did you mean 'postgres'?"
    """
    # The dialects warehouse URLs map to are sqlglot's (tests/project/test_dialect.py): a
    # project naming one of them is checked without importing sqlglot.
    if name.lower() in _URL_DIALECTS or name.lower() in known_dialects():
        return None
    return f"unknown dialect {name!r}{suggest(name.lower(), known_dialects(), listing=True)}"
