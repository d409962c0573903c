"""The statement guard: one read-only query passes; everything else is refused with a reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.engines import guard
from sqlbench.engines.guard import check_read_only
from sqlbench.errors import QueryError, QueryErrorKind

ALLOWED = [
    ("duckdb", "SELECT 1"),
    ("duckdb", "select 1;"),
    ("duckdb", "FROM orders"),
    ("duckdb", "VALUES (1), (2)"),
    ("duckdb", "(SELECT 1)"),
    ("duckdb", "SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY 1 LIMIT 3"),
    (
        "duckdb",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) "
        "SELECT * FROM r",
    ),
    ("duckdb", "SELECT customer, count(*) FROM sales.orders GROUP BY ALL"),
    ("duckdb", "SELECT '; DROP TABLE t' AS s, 'read_csv(1)' AS t"),
    ("duckdb", "SELECT * FROM t WHERE name LIKE 'a%' -- ; DROP TABLE t"),
    ("postgres", "SELECT now()::date - interval '1 day'"),
    ("postgres", "SELECT * FROM generate_series(1, 3)"),
    ("postgres", "SELECT $$a; DROP TABLE t$$"),
    ("postgres", "TABLE orders"),
    ("mysql", "SELECT @@version"),
    ("mysql", "SELECT a FROM t WHERE b = 'x' LIMIT 3"),
    ("sqlite", "SELECT * FROM t WHERE name GLOB 'a*'"),
    # Regression: a comment after the final semicolon counted as a second statement (a fail).
    ("duckdb", "SELECT 1; -- done"),
    ("postgres", "SELECT 1;\n/* that is all */\n"),
]


@pytest.mark.parametrize(("dialect", "sql"), ALLOWED)
def test_one_read_only_query_passes(dialect: str, sql: str) -> None:
    check_read_only(sql, dialect)


REFUSED = [
    # (dialect, sql, words the reason must contain)
    ("duckdb", "INSERT INTO t VALUES (1)", "is not a query"),
    ("duckdb", "UPDATE t SET a = 1", "is not a query"),
    ("duckdb", "DELETE FROM t", "is not a query"),
    ("duckdb", "DROP TABLE t", "DROP"),
    ("duckdb", "CREATE TABLE x AS SELECT 1", "CREATE"),
    ("duckdb", "ALTER TABLE t ADD COLUMN z INT", "is not a query"),
    ("duckdb", "TRUNCATE t", "is not a query"),
    ("duckdb", "SELECT 1; DROP TABLE t", "2 statements"),
    ("duckdb", "SELECT 1; SELECT 2", "2 statements"),
    ("duckdb", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "data-modifying"),
    ("duckdb", "SELECT * INTO t2 FROM t", "INTO"),
    ("duckdb", "COPY t TO '/tmp/x.csv'", "COPY"),
    ("duckdb", "ATTACH '/tmp/x.duckdb' AS x", "ATTACH"),
    ("duckdb", "DETACH w", "DETACH"),
    ("duckdb", "INSTALL httpfs", "INSTALL"),
    ("duckdb", "LOAD httpfs", "LOAD"),
    ("duckdb", "PRAGMA version", "PRAGMA"),
    ("duckdb", "SET enable_external_access = true", "SET"),
    ("duckdb", "CALL pragma_version()", "CALL"),
    ("duckdb", "EXPORT DATABASE '/tmp/x'", "cannot parse"),
    ("duckdb", "USE w", "USE"),
    ("duckdb", "BEGIN", "transaction"),
    ("duckdb", "CHECKPOINT", "CHECKPOINT"),
    ("duckdb", "EXPLAIN SELECT 1", "EXPLAIN"),
    ("duckdb", "DESCRIBE t", "DESCRIBE"),
    ("duckdb", "PIVOT t ON a USING sum(b)", "is not a query"),
    ("duckdb", "SELECT * FROM read_csv('/etc/passwd')", "read_csv()"),
    ("duckdb", "SELECT * FROM read_csv_auto('/etc/passwd')", "read_csv_auto()"),
    ("duckdb", "SELECT * FROM read_parquet(['a.parquet'])", "read_parquet()"),
    ("duckdb", "SELECT * FROM read_json('x.json')", "read_json()"),
    ("duckdb", "SELECT * FROM read_text('/etc/passwd')", "read_text()"),
    ("duckdb", "SELECT * FROM read_blob('/etc/passwd')", "read_blob()"),
    ("duckdb", "SELECT * FROM glob('/tmp/*')", "glob()"),
    ("duckdb", "SELECT * FROM parquet_metadata('x.parquet')", "parquet_metadata()"),
    ("duckdb", "SELECT * FROM 'data.csv'", "looks like a file"),
    ("duckdb", 'SELECT * FROM "https://example.com/x.parquet"', "looks like a file"),
    ("duckdb", "SELECT * FROM query('DELETE FROM t')", "query()"),
    ("duckdb", "SELECT getenv('HOME')", "getenv()"),
    ("duckdb", "SELECT nextval('s')", "nextval()"),
    ("duckdb", "SELECT * FROM t FOR UPDATE", "row lock"),
    ("postgres", "SELECT pg_read_file('/etc/passwd')", "pg_read_file()"),
    ("postgres", "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", "pg_read_binary_file()"),
    ("postgres", "SELECT * FROM pg_ls_dir('/tmp')", "pg_ls_dir()"),
    ("postgres", "SELECT lo_import('/etc/passwd')", "lo_import()"),
    ("postgres", "SELECT lo_export(1, '/tmp/x')", "lo_export()"),
    (
        "postgres",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "set_config()",
    ),
    ("postgres", "SELECT * FROM dblink('dbname=x', 'DELETE FROM t') AS t(a int)", "dblink()"),
    ("postgres", "SELECT dblink_exec('dbname=x', 'DELETE FROM t')", "dblink_exec()"),
    ("postgres", "SELECT query_to_xml('DELETE FROM t', true, true, '')", "query_to_xml()"),
    ("postgres", "SELECT pg_advisory_lock(1)", "pg_advisory_lock()"),
    ("postgres", "SELECT pg_terminate_backend(1)", "pg_terminate_backend()"),
    ("postgres", "DO $$ BEGIN DELETE FROM t; END $$", "DO"),
    ("postgres", "SELECT 1 INTO t3", "INTO"),
    ("postgres", "WITH d AS (UPDATE t SET a = 1 RETURNING a) SELECT * FROM d", "data-modifying"),
    ("postgres", "SELECT * FROM t FOR UPDATE", "row lock"),
    ("postgres", "COPY t TO PROGRAM 'rm -rf /'", "COPY"),
    ("postgres", "COMMIT; DELETE FROM t", "2 statements"),
    ("mysql", "SELECT LOAD_FILE('/etc/passwd')", "load_file()"),
    ("mysql", "SELECT 1 INTO OUTFILE '/tmp/x'", "cannot parse"),
    ("mysql", "SELECT 1 INTO DUMPFILE '/tmp/x'", "cannot parse"),
    ("mysql", "SELECT 1 INTO @a", "INTO"),
    ("mysql", "SELECT @a := 1", "session variable"),
    ("mysql", "SELECT 1 /*!50000 INTO OUTFILE '/tmp/y' */", "executable comment"),
    ("mysql", "SELECT 1 /*M!100000 INTO OUTFILE '/tmp/y' */", "executable comment"),
    ("mysql", "DO SLEEP(1)", "cannot parse"),
    ("mysql", "LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "cannot parse"),
    ("mysql", "SELECT GET_LOCK('a', 1)", "get_lock()"),
    ("mysql", "SELECT * FROM t LOCK IN SHARE MODE", "row lock"),
    ("mysql", "SHOW TABLES", "SHOW"),
    ("mysql", "REPLACE INTO t VALUES (1)", "is not a query"),
    ("sqlite", "ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH"),
    ("sqlite", "PRAGMA query_only = 0", "PRAGMA"),
    ("sqlite", "SELECT load_extension('/tmp/x')", "load_extension()"),
    ("sqlite", "SELECT writefile('/tmp/x', 'y')", "writefile()"),
    ("sqlite", "SELECT readfile('/etc/passwd')", "readfile()"),
    ("sqlite", "VACUUM INTO '/tmp/x.db'", "VACUUM"),
]


@pytest.mark.parametrize(("dialect", "sql", "why"), REFUSED)
def test_anything_else_is_refused_with_a_reason(dialect: str, sql: str, why: str) -> None:
    with pytest.raises(QueryError) as caught:
        check_read_only(sql, dialect)
    assert caught.value.kind is QueryErrorKind.NOT_READ_ONLY
    assert caught.value.message.startswith("not a read-only query: ")
    assert why in caught.value.message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("duckdb", "selec 1"),
        ("duckdb", "SELECT name FROM customers WHERE"),
        ("sqlite", "SELECT count(*) FROM singer WHERE name = 'x' AND"),
        ("duckdb", "SELECT 'unterminated"),
    ],
)
def test_a_broken_plain_query_is_a_syntax_error(dialect: str, sql: str) -> None:
    with pytest.raises(QueryError) as caught:
        check_read_only(sql, dialect)
    assert caught.value.kind is QueryErrorKind.SYNTAX
    assert "not a read-only query" not in caught.value.message


def test_unparseable_sql_is_a_syntax_error_not_run() -> None:
    with pytest.raises(QueryError) as caught:
        check_read_only("SELECT FROM WHERE (", "duckdb")
    assert caught.value.kind is QueryErrorKind.SYNTAX
    message = caught.value.message
    assert message.startswith("sqlglot cannot parse it as duckdb SQL (")
    assert message.endswith(
        "it was not run, as SQL that cannot be parsed cannot be checked to be read-only"
    )
    assert "not a read-only query" not in message
    assert "\x1b" not in message


def test_empty_sql_is_refused() -> None:
    with pytest.raises(QueryError, match="no statement"):
        check_read_only("  ;  ", "duckdb")


def test_the_guard_parses_with_compiled_sqlglot() -> None:
    # pyproject asks for sqlglot[c]: the parser compiled with mypyc, 3.6x faster on the Spider
    # corpus's SQL (every answer's SQL is parsed here). A pure-Python sqlglot means an install
    # that missed sqlglotc; the guard would be as safe but slower.
    import sqlglot.parser
    import sqlglot.tokenizer_core

    for module in (sqlglot.parser, sqlglot.tokenizer_core):
        assert str(module.__file__).endswith(".so"), f"{module.__name__} is not compiled"
    # Compiled, the parser still stops a deep nesting with RecursionError (the guard turns it
    # into a verdict), in a worker thread as on the main one.
    import threading

    caught: list[QueryError] = []

    def guard_deep() -> None:
        try:
            check_read_only("SELECT " + "NOT " * 5000 + "1", "sqlite")
        except QueryError as err:
            caught.append(err)

    worker = threading.Thread(target=guard_deep)
    worker.start()
    worker.join()
    assert [e.kind for e in caught] == [QueryErrorKind.SQL_LIMIT]


def _outcome(check: Callable[[str, str], None], sql: str, dialect: str) -> tuple[str, str] | None:
    try:
        check(sql, dialect)
    except QueryError as err:
        return (err.kind.value, err.message)
    return None


REMEMBERED = [
    ("sqlite", "SELECT name FROM singer WHERE age > 20"),
    ("sqlite", "SELECT 1; DROP TABLE t"),
    ("sqlite", "DELETE FROM t"),
    ("sqlite", "SELECT load_extension('x')"),
    ("sqlite", "SELEC name FROM singer"),
    ("sqlite", "SELECT * FROM t WHERE"),
    ("duckdb", "SELECT * FROM 'data.csv'"),
    ("mysql", "SELECT /*! 1 */ 2"),
    ("postgres", "SELECT pg_read_file('/etc/passwd')"),
    ("spark", "SELECT reflect('java.lang.Runtime', 'getRuntime')"),
    ("sqlite", "  ;  "),
]


@pytest.mark.parametrize(("dialect", "sql"), REMEMBERED)
def test_a_remembered_outcome_is_the_fresh_checks(dialect: str, sql: str) -> None:
    # The guard remembers each text's outcome for the run; a second check of the same SQL
    # (another agent's answer) gives what a fresh check gives, refusals included, without
    # parsing it again.
    guard._REMEMBERED.clear()
    fresh = _outcome(guard._check, sql, dialect)
    first = _outcome(check_read_only, sql, dialect)
    assert (sql, dialect) in [key for key in guard._REMEMBERED._outcomes]
    parsed: list[str] = []
    original = guard._parse

    def counting_parse(text: str, read: str) -> Any:
        parsed.append(text)
        return original(text, read)

    guard._parse = counting_parse  # type: ignore[assignment]
    try:
        second = _outcome(check_read_only, sql, dialect)
    finally:
        guard._parse = original  # type: ignore[assignment]
    assert first == second == fresh
    assert parsed == []
    # The same text in another dialect is checked afresh.
    other = "duckdb" if dialect != "duckdb" else "sqlite"
    assert _outcome(check_read_only, sql, other) == _outcome(guard._check, sql, other)


def _at_depth(frames: int, call: Callable[[], None]) -> None:
    if frames == 0:
        call()
    else:
        _at_depth(frames - 1, call)


def test_a_pass_is_not_reused_deeper_in_the_stack_where_the_parse_overflows() -> None:
    # SQL nested almost to Python's recursion limit passes the check at one stack depth and
    # reaches the limit (SQL_LIMIT) 300 frames deeper: the pass remembered up here is not
    # used down there, and the SQL_LIMIT refusal is never remembered.
    guard._REMEMBERED.clear()
    chain = next(
        n
        for n in range(50, 1000, 10)
        if _outcome(guard._check, "SELECT " + "NOT " * (n + 10) + "1", "sqlite") is not None
    )
    sql = "SELECT " + "NOT " * chain + "1"
    assert _outcome(check_read_only, sql, "sqlite") is None
    deep: list[tuple[str, str] | None] = []
    _at_depth(300, lambda: deep.append(_outcome(check_read_only, sql, "sqlite")))
    assert deep[0] is not None and deep[0][0] == "sql_limit"
    assert _outcome(check_read_only, sql, "sqlite") is None
    deep.clear()
    _at_depth(300, lambda: deep.append(_outcome(check_read_only, sql, "sqlite")))
    assert deep[0] is not None and deep[0][0] == "sql_limit"


def test_remembered_outcomes_are_bounded() -> None:
    remembered = guard._Remembered(max_texts=3, max_chars=40, max_text_chars=25)
    for k in range(5):
        remembered.put(f"SELECT {k}", "sqlite", 10, None)
    assert len(remembered) == 3
    assert remembered.get("SELECT 0", "sqlite", 10) is None
    assert remembered.get("SELECT 4", "sqlite", 10) is not None
    assert remembered.get("SELECT 4", "sqlite", 11) is None  # deeper than it was checked at
    remembered.put("SELECT 'a text past 25 characters'", "sqlite", 10, None)
    assert len(remembered) == 3
    assert remembered.get("SELECT 'a text past 25 characters'", "sqlite", 10) is None
    for k in range(2):
        remembered.put(f"SELECT {k}{'x' * 10}", "sqlite", 10, None)
    assert len(remembered) == 2  # 8 + 18 + 18 characters are past 40


def test_every_node_type_the_check_tests_reaches_it() -> None:
    # check_read_only passes a node to _check_node only when its type is one of
    # _CHECKED_TYPES: a new isinstance test there on another type would silently never run.
    import ast
    import inspect

    from sqlglot import exp

    tree = ast.parse(inspect.getsource(guard._check_node))
    tested: set[str] = set()
    for call in ast.walk(tree):
        if (
            isinstance(call, ast.Call)
            and getattr(call.func, "id", None) == "isinstance"
            and getattr(call.args[0], "id", None) == "node"  # the node, not its children
        ):
            for name in ast.walk(call.args[1]):
                if isinstance(name, ast.Attribute) and getattr(name.value, "id", None) == "exp":
                    tested.add(name.attr)
                if isinstance(name, ast.Name) and name.id == "_STATEMENT_TYPES":
                    tested.update(cls.__name__ for cls in guard._STATEMENT_TYPES)
    assert {"Command", "PropertyEQ", "Func", "Table", "DML"} <= tested
    assert [
        name for name in tested if not issubclass(getattr(exp, name), guard._CHECKED_TYPES)
    ] == []


def _unsafe_words_before(sql: str, dialect: str) -> str | None:
    """``guard._unsafe_words`` as it was before it took the parse's tokens and tested token
    types by identity (it tokenized the text again and compared each type's name): the new
    one must say the same on every text."""
    import sqlglot
    from sqlglot.errors import SqlglotError

    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return None
    words = [t for t in tokens if t.token_type.name != "SEMICOLON"]
    if not words:
        return None
    starts = {"SELECT", "WITH", "VALUES", "FROM", "L_PAREN"}
    if words[0].token_type.name not in starts and words[0].token_type.name != "VAR":
        return f"{words[0].text.upper()!r} where a query starts with SELECT or WITH"
    first_end = next((k for k, t in enumerate(tokens) if t.token_type.name == "SEMICOLON"), None)
    if first_end is not None and any(
        t.token_type.name != "SEMICOLON" for t in tokens[first_end + 1 :]
    ):
        return "a second statement"
    for k, token in enumerate(tokens):
        word = token.text.upper()
        called = k + 1 < len(tokens) and tokens[k + 1].token_type.name == "L_PAREN"
        if called and (
            word.lower() in guard._DENIED_FUNCTIONS
            or word.lower().startswith(guard._DENIED_PREFIXES)
        ):
            return f"a call of {token.text.lower()}()"
        if not called and token.token_type.name != "STRING" and word in guard._UNSAFE_WORDS:
            return f"the word {word}"
        after_from = k > 0 and tokens[k - 1].token_type.name in ("FROM", "JOIN")
        is_string = token.token_type.name == "STRING"
        if (
            is_string
            and dialect == "duckdb"
            and after_from
            and guard._FILE_LIKE_TABLE.search(token.text)
        ):
            return f"the file name {token.text!r}"
    return None


def _unsafe_words_now(sql: str, dialect: str) -> str | None:
    from sqlglot.errors import SqlglotError

    try:
        tokens = guard._tokenize(sql, dialect)
    except SqlglotError:
        return None
    return guard._unsafe_words(tokens, dialect)


# Texts sqlglot cannot parse (or tokenize) at each of _unsafe_words' decisions and their edges.
UNPARSEABLE = [
    "SELECT COUNT(*) FROM t /* Answer the following: Women's Soccer */ SELECT 1",
    "SELECT a FROM t WHERE",
    "selec 1",
    "SELECT 'unterminated",
    ";;",
    "; ;",
    "( ;",
    "; DELETE FROM t WHERE",
    "DELETE FROM t WHERE",
    "VACUUM INTO '/tmp/x.db' (",
    "EXPLAIN SELECT FROM WHERE (",
    "SELECT FROM WHERE ( ; SELECT 1",
    "SELECT FROM WHERE ( ; ",
    "SELECT FROM WHERE ( ;; -- end",
    "SELECT FROM WHERE ( ; /* x */",
    "SELECT read_csv( FROM",
    "SELECT READ_CSV ( FROM",
    "SELECT Pg_Read_File('x') FROM WHERE (",
    "SELECT load_file FROM WHERE (",
    "SELECT ß FROM WHERE ( ſelect(",
    "SELECT load_fıle('x') FROM WHERE (",  # dotless i: upper() then lower() gives load_file
    "SELECT ſys_exec('x') FROM WHERE (",
    "SELECT x FROM WHERE ( INTO",
    "SELECT 'INTO' FROM WHERE (",
    'SELECT "into" FROM WHERE (',
    "SELECT into( FROM WHERE (",
    "SELECT * FROM 'data.csv' WHERE (",
    "SELECT * FROM t JOIN 's3://x/y' WHERE (",
    "SELECT * FROM t JOIN 'plain' WHERE (",
    "SELECT * FROM t WHERE x = 'a/b' AND (",
    "SELECT 1 FROM (",
    "SELECT 1 FROM",
    "SELECT (",
    "WITH AS SELECT",
    "VALUES (",
    "FROM (",
    "abc def (",
    "`x` (",
    "@a := (",
    "SELECT 1 INTO OUTFILE '/tmp/x'",
    "SELECT 1 /*! INTO OUTFILE '/tmp/y' */ (",
    "SELECT $$x FROM (",
    "SELECT x FROM t WHERE y = 1 (",
]
DIALECTS = ("sqlite", "duckdb", "postgres", "mysql", "spark")


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", UNPARSEABLE)
def test_the_unparseable_path_says_what_it_said_before(sql: str, dialect: str) -> None:
    assert _unsafe_words_now(sql, dialect) == _unsafe_words_before(sql, dialect)


_FRAGMENTS = [
    "SELECT", "select", "WITH", "VALUES", "FROM", "JOIN", "WHERE", "(", ")", ";", " ", ",",
    "INTO", "into", "DELETE", "read_csv", "load_file", "glob", "x", "ß", "'a.csv'", "'plain'",
    "'s3://b'", "1", "/* Women's */", "-- c\n", "'", '"', "$$", "=", ":=", "@a", "`q`",
]  # fmt: skip


@given(
    st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map(" ".join),
    st.sampled_from(DIALECTS),
)
@settings(max_examples=400, deadline=None)
def test_the_unparseable_path_says_what_it_said_before_on_generated_text(
    sql: str, dialect: str
) -> None:
    assert _unsafe_words_now(sql, dialect) == _unsafe_words_before(sql, dialect)


def test_sql_that_does_not_parse_is_tokenized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The parse's tokens are the ones _unsafe_words reads (it tokenized the text again: a
    # third of the guard's time on BIRD's unparseable answers).
    calls: list[str] = []
    original = guard._tokenize

    def counting(sql: str, dialect: str) -> Any:
        calls.append(sql)
        return original(sql, dialect)

    monkeypatch.setattr(guard, "_tokenize", counting)
    sql = "SELECT COUNT(*) FROM t /* Women's Soccer */ SELECT 1"
    with pytest.raises(QueryError) as caught:
        guard._check(sql, "sqlite")
    assert caught.value.kind is QueryErrorKind.SYNTAX
    assert calls == [sql]
    with pytest.raises(QueryError, match="the word DELETE"):
        guard._check("SELECT x FROM WHERE ( DELETE", "sqlite")
