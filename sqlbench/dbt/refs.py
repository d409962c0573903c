"""``{{ ref('model') }}`` in ground truth and certified queries (docs/dbt.md), resolved to the
relation dbt built for the ref being evaluated."""

from __future__ import annotations

import re
from collections.abc import Mapping

from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.text import suggest

REF = re.compile(r"""\{\{\s*ref\(\s*(['"])([^'"]+)\1\s*\)\s*\}\}""")


def has_refs(sql: str) -> bool:
    """Whether ``sql`` names a dbt model with ``{{ ref('...') }}``."""
    return REF.search(sql) is not None


def resolve_refs(sql: str, relations: Mapping[str, str]) -> str:
    """``sql`` with each ``{{ ref('m') }}`` replaced by model m's relation.

    Raises:
        QueryError: a ref names no model of the build, or there is no dbt build.

    Example:
        >>> resolve_refs("SELECT * FROM {{ ref('orders') }}", {"orders": '"main"."orders"'})
        'SELECT * FROM "main"."orders"'
    """

    def one(match: re.Match[str]) -> str:
        name = match.group(2)
        if not relations:
            raise QueryError(
                QueryErrorKind.RUNTIME,
                f"{{{{ ref('{name}') }}}} names a dbt model, but sqlbench.yml has no `dbt:` key",
            )
        if name not in relations:
            raise QueryError(
                QueryErrorKind.RUNTIME,
                f"{{{{ ref('{name}') }}}}: the dbt project has no model {name!r}"
                f"{suggest(name, list(relations))}",
            )
        return relations[name]

    return REF.sub(one, sql)


def refs_as_names(sql: str) -> str:
    """``sql`` with each ``{{ ref('m') }}`` replaced by the bare name ``m`` (for reading which
    tables it reads).

    Example:
        >>> refs_as_names("SELECT * FROM {{ ref('orders') }} o")
        'SELECT * FROM orders o'
    """
    return REF.sub(lambda m: m.group(2), sql)
