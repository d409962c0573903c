"""dbt projects as the data model (docs/dbt.md): each evaluated ref's dbt project built into a
DuckDB database of sqlbench's own (``build.build_ref``), its build key (``build.parse_project``),
lineage between two refs (``manifest.changed_between``) and ``{{ ref('m') }}`` in ground truth
(``refs``, a leaf the project's checks read too). Nothing is imported here, so reading ``refs``
loads neither the build nor dbt; dbt itself is imported only when a build or parse runs."""
