"""dbt projects as the data model (docs/dbt.md): each evaluated ref's dbt project built into a
DuckDB database of sqlbench's own (``build_ref``), its build key (``parse_project``), lineage
between two refs (``manifest.changed_between``) and ``{{ ref('m') }}`` in ground truth
(``refs``). dbt itself is imported only when a build or parse runs."""

from sqlbench.dbt.build import DbtBuild, build_ref, parse_project
from sqlbench.dbt.refs import has_refs, refs_as_names, resolve_refs

__all__ = ["DbtBuild", "build_ref", "has_refs", "parse_project", "refs_as_names", "resolve_refs"]
