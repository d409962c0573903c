"""The statement guard: agent SQL must be exactly one read-only query before it reaches a database.

The agent's SQL is untrusted (a model wrote it). ``check_read_only`` parses it with sqlglot in the
warehouse's dialect and refuses, with ``QueryError(NOT_READ_ONLY, "not a read-only query: ...")``:

- anything but exactly one query (SELECT, WITH, set operations, VALUES): DML, DDL,
  COPY, ATTACH/DETACH, INSTALL/LOAD, PRAGMA, SET, CALL, EXPORT, USE, transactions, EXPLAIN,
  DESCRIBE/SHOW, and a second statement;
- writes hidden inside a query: data-modifying CTEs, ``SELECT ... INTO``, ``INTO OUTFILE``,
  row locks (``FOR UPDATE``), session-variable assignments (``@a := 1``);
- calls of functions that reach outside the query: file readers and writers (pg_read_file,
  lo_import, LOAD_FILE, read_csv, read_text, glob, ...), settings changers (set_config),
  other-database links (dblink, postgres_scan, ...), SQL-in-a-string executors (query,
  query_to_xml), sequence and lock changers (nextval, get_lock);
- DuckDB table names that name a file (``FROM 'data.csv'``): DuckDB reads those from disk;
- MySQL executable comments (``/*! ... */``), which MySQL runs but sqlglot treats as comments.

SQL that sqlglot cannot parse is not run either (``QueryError(SYNTAX, ...)``: most often it is a
syntax error): what cannot be parsed cannot be shown to be read-only (see docs/engines.md for
why this is the safe choice). The engines keep their own
walls (read-only transactions, locked DuckDB configuration, SQLite authorizer, least-privilege
roles) behind this one.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from types import FrameType
from typing import NoReturn

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError
from sqlglot.tokenizer_core import Token, TokenType

from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.sqlstatements import error_text
from sqlbench.sqlstatements import statements as real_statements

_PREFIX = "not a read-only query: "

_ALLOWED_ROOTS: tuple[type[exp.Expr], ...] = (exp.Query, exp.Values)
"""Root nodes that are one read-only query (Query covers Select, set operations, Subquery)."""

_STATEMENT_NODES: dict[type[exp.Expr], str] = {
    cls: label
    for name, label in (
        ("DML", "a data-modifying statement (INSERT/UPDATE/DELETE/MERGE/COPY)"),
        ("DDL", "a data-definition statement (CREATE)"),
        ("Create", "CREATE"),
        ("Drop", "DROP"),
        ("Alter", "ALTER"),
        ("AlterSession", "ALTER SESSION"),
        ("TruncateTable", "TRUNCATE"),
        ("Command", "a statement sqlglot only knows as a command"),
        ("Set", "SET"),
        ("SetItem", "SET"),
        ("Pragma", "PRAGMA"),
        ("Use", "USE"),
        ("Transaction", "a transaction statement"),
        ("Commit", "COMMIT"),
        ("Rollback", "ROLLBACK"),
        ("Attach", "ATTACH"),
        ("Detach", "DETACH"),
        ("Install", "INSTALL"),
        ("Export", "EXPORT"),
        ("LoadData", "LOAD DATA"),
        ("Describe", "DESCRIBE"),
        ("Summarize", "SUMMARIZE"),
        ("Show", "SHOW"),
        ("Grant", "GRANT"),
        ("Revoke", "REVOKE"),
        ("Analyze", "ANALYZE"),
        ("Cache", "CACHE"),
        ("Uncache", "UNCACHE"),
        ("Refresh", "REFRESH"),
        ("Kill", "KILL"),
        ("Execute", "EXECUTE"),
        ("ExecuteSql", "EXECUTE"),
        ("Declare", "DECLARE"),
        ("StoredProcedure", "a stored procedure"),
        ("Block", "a procedural block"),
        ("IfBlock", "a procedural block"),
        ("WhileBlock", "a procedural block"),
        ("LoopBlock", "a procedural block"),
        ("RepeatBlock", "a procedural block"),
        ("Put", "PUT"),
        ("Get", "GET"),
        ("SwapTable", "SWAP"),
        ("Undrop", "UNDROP"),
        ("LockingStatement", "a locking statement"),
        ("MultitableInserts", "INSERT"),
        ("Into", "SELECT ... INTO (it writes a table, file or variable)"),
        ("Lock", "a row lock (FOR UPDATE/SHARE)"),
        ("Returning", "RETURNING (only data-modifying statements return rows)"),
        ("OnConflict", "ON CONFLICT (only INSERT has it)"),
        ("QueryTransform", "a script TRANSFORM (Spark/Hive run it as a program)"),
    )
    if isinstance(cls := getattr(exp, name, None), type)
}
"""Node types that never belong in a read-only query, anywhere in the tree."""
_STATEMENT_TYPES = tuple(_STATEMENT_NODES)
"""The same types, for one ``isinstance`` per node (most nodes are none of them)."""

_DENIED_FUNCTIONS = frozenset(
    {
        # PostgreSQL: server files, large objects, settings, other databases, SQL in strings.
        "pg_read_file",
        "pg_read_binary_file",
        "pg_stat_file",
        "set_config",
        "dblink",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "pg_notify",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_switch_wal",
        "pg_promote",
        "pg_create_restore_point",
        "pg_logical_emit_message",
        "pg_import_system_collations",
        "nextval",
        "setval",
        # MySQL/MariaDB: server files, named locks, UDF shells.
        "load_file",
        "get_lock",
        "release_lock",
        "release_all_locks",
        "sys_exec",
        "sys_eval",
        # SQLite: extensions and the shell's file functions.
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        # DuckDB: file and URL readers, SQL in strings, secrets, environment, checkpoints.
        "glob",
        "query",
        "query_table",
        "sniff_csv",
        "st_read",
        "st_read_meta",
        "st_readosm",
        "st_readshp",
        "getenv",
        "which_secret",
        "checkpoint",
        "force_checkpoint",
        "arrow_scan",
        "arrow_scan_dumb",
        "pandas_scan",
        "python_map_function",
        "from_substrait",
        "from_substrait_json",
        "sqlite_scan",
        "sqlite_attach",
        "sqlite_query",
        "load_aws_credentials",
    }
)
"""Function names (lower case) that reach outside the query."""

_DENIED_PREFIXES = (
    "read_",
    "parquet_",
    "pg_read_",
    "pg_ls_",
    "pg_file_",
    "pg_advisory",
    "pg_try_advisory",
    "lo_",
    "dblink",
    "iceberg_",
    "delta_",
    "ducklake_",
    "postgres_",
    "mysql_",
    "json_execute",
    "duckdb_secret",
    "http_",
    "s3_",
)
"""Function-name prefixes that reach outside the query (DuckDB readers, PostgreSQL file and
large-object functions, dblink_*, scanners of other databases)."""

_SPARK_DENIED_FUNCTIONS = frozenset(
    {
        # Spark: static Java methods, protobuf descriptors read from files, secrets.
        "reflect",
        "java_method",
        "try_reflect",
        "from_protobuf",
        "to_protobuf",
        "secret",
    }
)
_SPARK_DENIED_PREFIXES = ("ai_", "cloud_files", "event_log")
"""Databricks functions that call models or read pipeline state (Spark dialects only)."""

_SPARK_FAMILY = frozenset({"spark", "spark2", "databricks", "hive"})
_SPARK_FILE_FORMATS = frozenset(
    {
        "csv",
        "json",
        "parquet",
        "orc",
        "text",
        "avro",
        "binaryfile",
        "delta",
        "xml",
        "jdbc",
        "libsvm",
        "image",
        "iceberg",
        "hudi",
        "hive",
    }
)
"""Spark data-source names that, as a table's schema (``csv.`/path```), read a file."""

_MYSQL_FAMILY = frozenset({"mysql", "doris", "starrocks", "singlestore", "tidb"})
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!")
_FILE_LIKE_TABLE = re.compile(r"[./\\:*?]")


def unchecked_syntax(guard_error: QueryError, engine: str) -> QueryError:
    """The refusal of SQL that ``engine``'s own parser accepts but sqlglot cannot parse
    (``guard_error``, kind SYNTAX), so the guard cannot check it: it is not run.

    Example:
        >>> err = QueryError(QueryErrorKind.SYNTAX, "no parse")
        >>> print(unchecked_syntax(err, "DuckDB").message)
        not a read-only query: no parse (DuckDB itself parses it: sqlglot lacks this syntax)
    """
    return QueryError(
        QueryErrorKind.NOT_READ_ONLY,
        f"not a read-only query: {guard_error.message} ({engine} itself parses it: sqlglot "
        "lacks this syntax)",
    )


def check_read_only(sql: str, dialect: str) -> None:
    """Refuse ``sql`` unless it is exactly one read-only query in ``dialect``.

    The outcome of each (SQL text, dialect) is remembered for the process (see
    ``_Remembered``): a run's agents often write the same SQL, and the check parses it.

    Args:
        sql: The agent's SQL, as written.
        dialect: The sqlglot dialect of the warehouse it will run on.

    Raises:
        QueryError: kind NOT_READ_ONLY, message ``not a read-only query: <why>``.

    Example:
        >>> check_read_only("SELECT 1 AS x", "duckdb")
        >>> try:
        ...     check_read_only("SELECT 1; DROP TABLE t", "duckdb")
        ... except QueryError as err:
        ...     print(err.message)
        not a read-only query: it holds 2 statements; exactly one query is allowed
    """
    depth = _stack_depth()
    found = _REMEMBERED.get(sql, dialect, depth)
    if found is not None:
        if found.kind is None:
            return
        raise QueryError(found.kind, found.message)
    try:
        _check(sql, dialect)
    except QueryError as err:
        _REMEMBERED.put(sql, dialect, depth, err)
        raise
    _REMEMBERED.put(sql, dialect, depth, None)


def _check(sql: str, dialect: str) -> None:
    """``check_read_only`` itself, nothing remembered."""
    if dialect in _MYSQL_FAMILY and _EXECUTABLE_COMMENT.search(sql):
        _refuse("it holds a MySQL executable comment (/*! ... */), which MySQL runs as SQL")
    statements = _parse(sql, dialect)
    if not statements:
        _refuse("it holds no statement")
    if len(statements) > 1:
        _refuse(f"it holds {len(statements)} statements; exactly one query is allowed")
    root = statements[0]
    if not isinstance(root, _ALLOWED_ROOTS):
        _refuse(
            f"{_describe(root)} is not a query (only SELECT, WITH, set operations and "
            "VALUES are allowed)"
        )
    checked = _CHECKED_BY_TYPE
    for node in root.walk():
        kind = type(node)
        needed = checked.get(kind)
        if needed is None:
            needed = checked[kind] = issubclass(kind, _CHECKED_TYPES)
        if needed:
            _check_node(node, dialect)


_CHECKED_TYPES: tuple[type[exp.Expr], ...] = (
    exp.Command,
    *_STATEMENT_TYPES,
    exp.PropertyEQ,
    exp.Func,
    exp.Table,
)
"""Every node type ``_check_node`` looks at (its every test is an ``isinstance`` of one of
them): nodes of other types (columns, names, literals, operators) are not passed to it."""
_CHECKED_BY_TYPE: dict[type[exp.Expr], bool] = {}
"""Per node type: whether it is one of ``_CHECKED_TYPES``."""


def _stack_depth() -> int:
    """How many Python frames the calling thread has (the check's parse is recursive: SQL
    nested deeply enough to reach Python's recursion limit fails at one depth and not at a
    shallower one)."""
    depth = 0
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


class _Outcome:
    """One remembered outcome: passed (``kind`` None) or refused (kind and message), and the
    deepest stack it was found at."""

    __slots__ = ("depth", "kind", "message")

    def __init__(self, kind: QueryErrorKind | None, message: str, depth: int) -> None:
        self.kind = kind
        self.message = message
        self.depth = depth


class _Remembered:
    """The guard's outcomes by (SQL text, dialect), so SQL checked before is not parsed again.

    A remembered outcome is the one a fresh check gives: the check reads nothing but the text
    and the dialect (no setting, no database), and sqlglot parses the same text the same way.
    The one thing outside them is the stack: SQL nested deeply enough to reach Python's
    recursion limit is refused (SQL_LIMIT) at one stack depth and checked at a shallower one.
    So an outcome is used only at the stack depth it was found at or a shallower one (a check
    that did not reach the limit there does not reach it higher up), and the SQL_LIMIT refusal
    itself is never remembered. At most ``max_texts`` texts and ``max_chars`` characters of
    them are kept (the oldest are forgotten first); texts longer than ``max_text_chars`` are
    not kept at all.
    """

    def __init__(
        self, *, max_texts: int = 20_000, max_chars: int = 16_000_000, max_text_chars: int = 65_536
    ) -> None:
        self.max_texts = max_texts
        self.max_chars = max_chars
        self.max_text_chars = max_text_chars
        self._outcomes: dict[tuple[str, str], _Outcome] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, sql: str, dialect: str, depth: int) -> _Outcome | None:
        """The outcome remembered for ``sql`` in ``dialect`` when valid at ``depth``."""
        found = self._outcomes.get((sql, dialect))
        if found is None or depth > found.depth:
            return None
        return found

    def put(self, sql: str, dialect: str, depth: int, error: QueryError | None) -> None:
        """Remember a fresh check's outcome (``error`` None: it passed)."""
        if len(sql) > self.max_text_chars:
            return
        if error is not None and error.kind is QueryErrorKind.SQL_LIMIT:
            return  # reached the recursion limit: at a shallower stack it might not
        outcome = _Outcome(
            None if error is None else error.kind, "" if error is None else error.message, depth
        )
        key = (sql, dialect)
        with self._lock:
            known = self._outcomes.get(key)
            if known is not None and (known.kind, known.message) == (outcome.kind, outcome.message):
                known.depth = max(known.depth, depth)
                return
            if known is not None:
                del self._outcomes[key]
                self._chars -= len(sql)
            self._outcomes[key] = outcome
            self._chars += len(sql)
            while len(self._outcomes) > self.max_texts or self._chars > self.max_chars:
                oldest = next(iter(self._outcomes))
                del self._outcomes[oldest]
                self._chars -= len(oldest[0])

    def after_fork(self) -> None:
        """In a forked child: a new lock (a thread of the parent may have held this one)."""
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every outcome."""
        with self._lock:
            self._outcomes.clear()
            self._chars = 0

    def __len__(self) -> int:
        return len(self._outcomes)


_REMEMBERED = _Remembered()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_REMEMBERED.after_fork)


def _parse(sql: str, dialect: str) -> list[exp.Expr]:
    tokens: list[Token] | None = None
    try:
        tokens = _tokenize(sql, dialect)
        parsed = _sqlglot_parse(sql, dialect, tokens)
    except RecursionError as err:
        # Nesting the depth check does not count (NOT NOT NOT ..., long CASE chains).
        raise QueryError(
            QueryErrorKind.SQL_LIMIT,
            "it is nested too deeply for sqlbench's SQL parser (sqlglot); it was not run",
        ) from err
    except SqlglotError as err:
        # Never run either way (what cannot be parsed cannot be shown to be read-only); only
        # the words differ. A plain query that does not parse is a syntax error; one whose
        # words could write or reach outside is refused as before. An engine whose database
        # parses without running (DuckDB, a local Spark; SQLite compiling behind EXPLAIN)
        # replaces the message with the database's own.
        # No tokens: not even tokens (an unterminated string), a syntax error.
        detail = error_text(err, 160)
        unsafe = None if tokens is None else _unsafe_words(tokens, dialect)
        if unsafe is not None:
            _refuse(
                f"sqlglot cannot parse it as {dialect} SQL ({detail}) and it holds {unsafe}, "
                "so it could not be checked and was not run"
            )
        raise QueryError(
            QueryErrorKind.SYNTAX,
            f"sqlglot cannot parse it as {dialect} SQL ({detail}); it was not run, as SQL "
            "that cannot be parsed cannot be checked to be read-only",
        ) from err
    return real_statements(parsed)


def _tokenize(sql: str, dialect: str) -> list[Token]:
    """``sql``'s sqlglot tokens in ``dialect``, made once for the parse and, when the parse
    fails, for ``_unsafe_words`` (the parser reads tokens and never changes them)."""
    return _dialect(dialect).tokenize(sql)


def _sqlglot_parse(sql: str, dialect: str, tokens: list[Token]) -> list[exp.Expr | None]:
    """``sqlglot.parse(sql, read=dialect, error_level=RAISE)`` from ``sql``'s ``tokens``,
    without making the dialect anew for each text (``Dialect.parse`` is this parser's
    ``parse`` of ``Dialect.tokenize(sql)``)."""
    return _dialect(dialect).parser(error_level=ErrorLevel.RAISE).parse(tokens, sql)


def _dialect(name: str) -> sqlglot.Dialect:
    """The sqlglot dialect ``name`` (made once: a dialect holds settings only; each parse
    makes its own tokenizer and parser)."""
    found = _DIALECTS.get(name)
    if found is None:
        found = _DIALECTS[name] = sqlglot.Dialect.get_or_raise(name)
    return found


_DIALECTS: dict[str, sqlglot.Dialect] = {}


_QUERY_STARTS = frozenset(
    {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM, TokenType.L_PAREN}
)
"""Token types a plain query may start with."""
_SEMICOLON = TokenType.SEMICOLON
_L_PAREN = TokenType.L_PAREN
_STRING = TokenType.STRING
_FROM_OR_JOIN = frozenset({TokenType.FROM, TokenType.JOIN})

_UNSAFE_WORDS = frozenset(
    [
        "INTO",
        "EXPORT",
        "IMPORT",
        "COPY",
        "ATTACH",
        "DETACH",
        "INSTALL",
        "LOAD",
        "PRAGMA",
        "SET",
        "CALL",
        "DO",
        "INSERT",
        "UPDATE",
        "DELETE",
        "DROP",
        "CREATE",
        "ALTER",
        "TRUNCATE",
        "MERGE",
        "UPSERT",
        "GRANT",
        "REVOKE",
        "LOCK",
        "EXECUTE",
        "EXEC",
        "VACUUM",
        "CHECKPOINT",
        "USE",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "OUTFILE",
        "DUMPFILE",
        "HANDLER",
        "PREPARE",
        "DEALLOCATE",
        "RETURNING",
        "SHOW",
        "DESCRIBE",
        "EXPLAIN",
        "ANALYZE",
        "REINDEX",
        "CLUSTER",
        "LISTEN",
        "NOTIFY",
    ]
)
"""Words that, outside a function call, make unparseable SQL more than a broken query."""


def _unsafe_words(tokens: list[Token], dialect: str) -> str | None:
    """Why SQL sqlglot cannot parse (its ``tokens``) is not plainly a broken query (a word that
    writes or reaches outside, a second statement, a file name, a denied function), or None.

    One pass over the tokens, testing token types by identity (an enum member's ``name`` is a
    descriptor call, several a token before).
    """
    kinds = [token.token_type for token in tokens]
    words = [k for k, kind in enumerate(kinds) if kind is not _SEMICOLON]
    if not words:
        return None
    # An unknown first word (SELEC) is a typo; a keyword other than a query's is a statement.
    first = words[0]
    if kinds[first] not in _QUERY_STARTS and kinds[first] is not TokenType.VAR:
        return f"{tokens[first].text.upper()!r} where a query starts with SELECT or WITH"
    if _SEMICOLON in kinds and words[-1] > kinds.index(_SEMICOLON):
        return "a second statement"
    last = len(tokens) - 1
    duckdb = dialect == "duckdb"
    for k, token in enumerate(tokens):
        kind = kinds[k]
        text = token.text
        word = text.upper()
        called = k < last and kinds[k + 1] is _L_PAREN
        if called:
            name = word.lower()
            if name in _DENIED_FUNCTIONS or name.startswith(_DENIED_PREFIXES):
                return f"a call of {text.lower()}()"
        elif kind is not _STRING and word in _UNSAFE_WORDS:
            return f"the word {word}"
        if (
            duckdb
            and kind is _STRING
            and k > 0
            and kinds[k - 1] in _FROM_OR_JOIN
            and _FILE_LIKE_TABLE.search(text)
        ):
            return f"the file name {text!r}"
    return None


def _check_node(node: exp.Expr, dialect: str) -> None:
    if isinstance(node, exp.Command):
        _refuse(f"it contains a {_describe(node)} statement")
    if isinstance(node, _STATEMENT_TYPES):
        for cls, label in _STATEMENT_NODES.items():
            if isinstance(node, cls):
                _refuse(f"it contains {label}")
    if isinstance(node, exp.PropertyEQ) and isinstance(node.this, exp.Parameter | exp.Var):
        _refuse("it assigns a session variable")
    if isinstance(node, exp.Func):
        spark = dialect in _SPARK_FAMILY
        for name in _function_names(node):
            if (
                name in _DENIED_FUNCTIONS
                or name.startswith(_DENIED_PREFIXES)
                or (
                    spark
                    and (name in _SPARK_DENIED_FUNCTIONS or name.startswith(_SPARK_DENIED_PREFIXES))
                )
            ):
                _refuse(
                    f"it calls {name}(), which reaches outside the query "
                    "(files, settings, other databases or server state)"
                )
    if (
        dialect == "duckdb"
        and isinstance(node, exp.Table)
        and isinstance(node.this, exp.Identifier)
        and _FILE_LIKE_TABLE.search(node.this.name)
    ):
        _refuse(
            f"the table name {node.this.name!r} looks like a file or URL, which "
            "DuckDB would read from outside the database"
        )
    if dialect in _SPARK_FAMILY and isinstance(node, exp.Table) and _spark_file_table(node):
        _refuse(
            f"the table {node.sql(dialect=dialect)} names a file, which Spark would read "
            "from outside the data model"
        )


def _spark_file_table(node: exp.Table) -> bool:
    """``csv.`/path```, ``parquet.`s3://...```, or a path-like table name."""
    if node.db and node.db.lower() in _SPARK_FILE_FORMATS:
        return True
    return isinstance(node.this, exp.Identifier) and bool(re.search(r"[/\\:*?]", node.name))


def _function_names(node: exp.Func) -> list[str]:
    if isinstance(node, exp.Anonymous):
        return [node.name.lower()]
    return [name.lower() for name in type(node).sql_names()]


def _describe(root: exp.Expr) -> str:
    if isinstance(root, exp.Command):
        return str(root.this).upper()
    label = _STATEMENT_NODES.get(type(root))
    if label is not None:
        return label
    first = root.sql().split(None, 1)
    return first[0].upper() if first else type(root).__name__


def _refuse(why: str) -> NoReturn:
    raise QueryError(QueryErrorKind.NOT_READ_ONLY, _PREFIX + why)
