"""A hostile corpus of agent SQL leaves every warehouse byte-for-byte unchanged, reads and writes
no file, and never returns rows; run as ground truth (no guard), the engines' own walls (read-only
transactions, locked DuckDB, SQLite's read-only open and authorizer, the read-only role) still
keep the warehouse and the file system untouched."""

from __future__ import annotations

import duckdb
import pytest
from engine_warehouses import CanaryFiles, Warehouse

from sqlbench.errors import QueryError, QueryErrorKind

COMMON = [
    "INSERT INTO {t} VALUES (99, 'evil', 1, DATE '2024-01-01')",
    "UPDATE {t} SET customer = 'evil'",
    "DELETE FROM {t}",
    "DROP TABLE {t}",
    "TRUNCATE TABLE {t}",
    "ALTER TABLE {t} ADD COLUMN evil INTEGER",
    "CREATE TABLE {t}_evil AS SELECT * FROM {t}",
    "CREATE VIEW {t}_evil AS SELECT * FROM {t}",
    "SELECT 1; DROP TABLE {t}",
    "SELECT * FROM {t}; DELETE FROM {t}",
    "SELECT 1 /* ; */ ; DELETE FROM {t}",
    "SELECT 1 -- comment\n; DELETE FROM {t}",
    "COMMIT; DELETE FROM {t}",
    "BEGIN; DELETE FROM {t}; COMMIT",
    "WITH d AS (DELETE FROM {t} RETURNING *) SELECT * FROM d",
    "SELECT * INTO {t}_evil FROM {t}",
    "GRANT ALL ON {t} TO PUBLIC",
]

BY_KIND = {
    "duckdb": [
        "COPY {t} TO '{out}/copy.csv'",
        "COPY (SELECT * FROM {t}) TO '{out}/copy.parquet' (FORMAT parquet)",
        "EXPORT DATABASE '{out}/export'",
        "ATTACH '{out}/evil.duckdb' AS evil",
        "DETACH shop",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "PRAGMA enable_profiling",
        "CALL pragma_version()",
        "CHECKPOINT",
        "SELECT * FROM read_csv('{secret}')",
        "SELECT * FROM read_csv_auto('{secret}')",
        "SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_blob('{secret}')",
        "SELECT * FROM glob('{folder}/*')",
        "SELECT * FROM '{secret}'",
        'SELECT * FROM "{secret}"',
        "SELECT * FROM read_json_objects('{secret}')",
        "SELECT * FROM sniff_csv('{secret}')",
        "SELECT * FROM query('SELECT * FROM read_text(''{secret}'')')",
        "SELECT * FROM {t} UNION ALL SELECT 1, content, 1, NULL FROM read_text('{secret}')",
    ],
    "postgres": [
        "COPY {t} TO '{out}/pg.csv'",
        "COPY (SELECT 1) TO PROGRAM 'touch {out}/pwned'",
        "SELECT pg_read_file('{secret}')",
        "SELECT pg_catalog.pg_read_binary_file('{secret}')",
        "SELECT * FROM pg_ls_dir('{folder}')",
        "SELECT lo_import('{secret}')",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SET default_transaction_read_only = off",
        "SELECT query_to_xml('DELETE FROM {t}', true, true, '')",
        "SELECT * FROM dblink('dbname=test', 'DELETE FROM {t}') AS x(a int)",
        "DO $$ BEGIN DELETE FROM {t}; END $$",
        "SELECT nextval('{t}_seq')",
        "SELECT * FROM {t} FOR UPDATE",
        "CREATE TEMP TABLE evil AS SELECT * FROM {t}",
        "SELECT pg_advisory_lock(42)",
    ],
    "mariadb": [
        "SELECT LOAD_FILE('{secret}')",
        "SELECT * FROM {t} INTO OUTFILE '{out}/my.txt'",
        "SELECT 1 /*!50000 INTO OUTFILE '{out}/my2.txt' */",
        "SELECT 1 /*M! INTO DUMPFILE '{out}/my3.txt' */",
        "LOAD DATA INFILE '{secret}' INTO TABLE {t}",
        "REPLACE INTO {t} VALUES (1, 'evil', 1, '2024-01-01')",
        "SELECT @evil := 1",
        "DO SLEEP(0)",
        "SELECT GET_LOCK('sqlbench', 1)",
        "HANDLER {t} OPEN",
        "SELECT * FROM {t} LOCK IN SHARE MODE",
    ],
    "sqlite": [
        "ATTACH DATABASE '{out}/evil.db' AS evil",
        "VACUUM INTO '{out}/vacuum.db'",
        "PRAGMA query_only = 0",
        "PRAGMA journal_mode = WAL",
        "SELECT load_extension('{out}/evil')",
        "SELECT writefile('{out}/w.txt', 'x')",
        "SELECT readfile('{secret}')",
        "REPLACE INTO {t} VALUES (1, 'evil', 1, '2024-01-01')",
        "CREATE TEMP VIEW evil AS SELECT 1",
    ],
}
BY_KIND["spark"] = [
    "SELECT * FROM csv.`{secret}`",
    "SELECT * FROM text.`file://{secret}`",
    "SELECT * FROM `{secret}`",
    "SELECT * FROM read_files('{secret}')",
    "LOAD DATA LOCAL INPATH '{secret}' INTO TABLE {t}",
    "ADD JAR '{out}/evil.jar'",
    "ADD FILE '{secret}'",
    "SET spark.sql.runSQLOnFiles = true",
    "RESET",
    "CREATE FUNCTION evil AS 'x.Evil' USING JAR '{out}/evil.jar'",
    "CREATE TEMPORARY VIEW evil USING csv OPTIONS (path '{secret}')",
    "CREATE OR REPLACE TEMPORARY VIEW {t} AS SELECT 1 AS id",
    "DROP VIEW {t}",
    "INSERT OVERWRITE DIRECTORY '{out}/dir' USING csv SELECT * FROM {t}",
    "INSERT OVERWRITE LOCAL DIRECTORY '{out}/dir2' SELECT * FROM {t}",
    "CACHE TABLE {t}",
    "UNCACHE TABLE {t}",
    "REFRESH TABLE {t}",
    "MSCK REPAIR TABLE {t}",
    "USE evil",
    "DESCRIBE {t}",
    "SHOW TABLES",
    "SELECT reflect('java.lang.System', 'getProperty', 'user.home')",
    "SELECT java_method('java.nio.file.Files', 'readString', '{secret}')",
    "SELECT TRANSFORM(customer) USING 'cat {secret}' AS (x) FROM {t}",
    "SELECT TRANSFORM(customer) USING 'touch {out}/pwned' AS (x) FROM {t}",
    "SELECT * FROM {t} UNION ALL SELECT 1, value, 1, NULL FROM text.`{secret}`",
]
BY_KIND["duckdb_file"] = BY_KIND["duckdb"]
BY_KIND["spark_connect"] = BY_KIND["spark"]


def _corpus(warehouse: Warehouse, files: CanaryFiles) -> list[str]:
    statements = COMMON + BY_KIND[warehouse.kind]
    return [
        s.format(t=warehouse.table, out=files.out, secret=files.secret, folder=files.folder)
        for s in statements
    ]


def test_the_corpus_is_large_enough(warehouse: Warehouse, canary_files: CanaryFiles) -> None:
    assert len(_corpus(warehouse, canary_files)) >= 25


def test_hostile_agent_sql_is_refused_and_changes_nothing(
    warehouse: Warehouse, canary_files: CanaryFiles
) -> None:
    before, listing = warehouse.fingerprint(), canary_files.listing()
    outcomes = {}
    for sql in _corpus(warehouse, canary_files):
        with pytest.raises(QueryError) as caught:
            warehouse.engine.run_agent(sql, timeout_s=warehouse.timeout_s, max_rows=1000)
        outcomes[sql] = caught.value
    assert warehouse.fingerprint() == before
    assert canary_files.listing() == listing
    refused = [sql for sql, err in outcomes.items() if err.kind is QueryErrorKind.NOT_READ_ONLY]
    assert refused == list(outcomes), "every hostile statement must be refused, not just fail"
    assert all(canary_files.secret_text not in err.message for err in outcomes.values())
    # The engine still works: the refusals did not break its connection or data.
    rows = warehouse.engine.run_agent(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=warehouse.timeout_s, max_rows=1
    )
    assert rows.table.column(0).to_pylist() == [4]


def test_behind_the_guard_the_engine_walls_hold(
    warehouse: Warehouse, canary_files: CanaryFiles
) -> None:
    """Ground truth skips the guard: what keeps the warehouse safe there is the engine alone."""
    before, listing = warehouse.fingerprint(), canary_files.listing()
    for sql in _corpus(warehouse, canary_files):
        try:
            result = warehouse.engine.run_truth(sql, timeout_s=warehouse.timeout_s, max_rows=1000)
        except QueryError:
            continue
        assert canary_files.secret_text not in str(result.table.to_pylist()), sql
    assert warehouse.fingerprint() == before
    assert canary_files.listing() == listing
    rows = warehouse.engine.run_truth(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=warehouse.timeout_s, max_rows=1
    )
    assert rows.table.column(0).to_pylist() == [4]


def test_the_canary_file_is_readable_so_the_file_tests_mean_something(
    canary_files: CanaryFiles,
) -> None:
    rows = duckdb.connect().sql(f"SELECT content FROM read_text('{canary_files.secret}')")
    assert canary_files.secret_text in rows.fetchall()[0][0]


def test_the_fingerprint_sees_a_real_change(warehouse: Warehouse) -> None:
    if warehouse.mutate is None:
        pytest.skip(f"{warehouse.kind}: the fingerprint is a hash of the files or of every row")
    before = warehouse.fingerprint()
    warehouse.mutate()
    assert warehouse.fingerprint() != before
