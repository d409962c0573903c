"""Grading on data variants (docs/verdicts.md, ``variants``): passes that are luck of the data
fail on variants, equivalent rewrites keep passing, everything reproducible from the seed."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from sqlbench.compare import compare_results
from sqlbench.engines.base import Engine
from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
from sqlbench.errors import QueryErrorKind, SqlbenchError
from sqlbench.project.files import CompareOptions, RunSettings
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import FakeAgent, write_project
from sqlbench.validation import load_project
from sqlbench.variants.generate import MAX_ROWS, TruthHints, make_variant
from sqlbench.variants.neighbours import neighbours, tie_breaks
from sqlbench.variants.source import variant_source
from sqlbench.variants.suite import VariantCache, VariantSuite, check
from sqlbench.verdicts import Verdict

SETUP = """
CREATE TABLE dept (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, budget INTEGER NOT NULL
);
INSERT INTO dept VALUES (1, 'sales', 500), (2, 'ops', 50), (3, 'eng', 900);
CREATE TABLE people (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, age INTEGER, dept_id INTEGER
);
INSERT INTO people VALUES
    (1, 'ann', 25, 1), (2, 'bob', 31, 2), (3, 'cy', 40, 3), (4, 'di', 52, 1), (5, 'ed', 29, 2);
"""

# Each: (ground truth, an accidental pass: right on the original data only).
ACCIDENTAL = {
    "boundary": (
        "SELECT name FROM people WHERE age >= 30",
        "SELECT name FROM people WHERE age > 30",
    ),
    "missing_distinct": (
        "SELECT DISTINCT age FROM people",
        "SELECT age FROM people",
    ),
    "limit_without_ties": (
        "SELECT name FROM people WHERE age = (SELECT MAX(age) FROM people)",
        "SELECT name FROM people ORDER BY age DESC LIMIT 1",
    ),
    # NOT IN meets a NULL reference (people.dept_id is nullable, though none is NULL yet).
    "not_in_for_not_exists": (
        "SELECT name FROM dept d WHERE NOT EXISTS (SELECT 1 FROM people p WHERE p.dept_id = d.id)",
        "SELECT name FROM dept WHERE id NOT IN (SELECT dept_id FROM people)",
    ),
    "join_drops_rows": (
        "SELECT p.name, d.name FROM people p LEFT JOIN dept d ON p.dept_id = d.id",
        "SELECT p.name, d.name FROM people p JOIN dept d ON p.dept_id = d.id",
    ),
}

# Each: (ground truth, an equivalent rewrite).
EQUIVALENT = {
    "not_less": (
        "SELECT name FROM people WHERE age >= 30",
        "SELECT name FROM people WHERE NOT age < 30",
    ),
    "count_pk": (
        "SELECT dept_id, COUNT(*) FROM people WHERE age > 30 GROUP BY dept_id",
        "SELECT dept_id, COUNT(id) FROM people WHERE age > 30 GROUP BY dept_id",
    ),
    "in_exists": (
        "SELECT name FROM people WHERE dept_id IN (SELECT id FROM dept WHERE budget > 100)",
        "SELECT name FROM people p WHERE EXISTS "
        "(SELECT 1 FROM dept d WHERE d.id = p.dept_id AND d.budget > 100)",
    ),
    "join_order": (
        "SELECT p.name, d.name FROM people p JOIN dept d ON p.dept_id = d.id",
        "SELECT p.name, d.name FROM dept d JOIN people p ON d.id = p.dept_id",
    ),
    "cte_subquery": (
        "WITH old AS (SELECT * FROM people WHERE age > 30) SELECT COUNT(*) FROM old",
        "SELECT COUNT(*) FROM (SELECT * FROM people WHERE age > 30) AS old",
    ),
}

# Each: (ground truth, an answer as right as it, or right under another reading of the
# question): a variant must never fail it.
DEFENSIBLE = {
    # Every tied person, where the ground truth's LIMIT picks one of them arbitrarily.
    "all_ties_of_a_limit": (
        "SELECT name FROM people ORDER BY age DESC LIMIT 1",
        "SELECT name FROM people WHERE age = (SELECT MAX(age) FROM people)",
    ),
    # By id rather than by name: a copy of a department is another department, not a twin
    # (its name is declared UNIQUE, so the copy gets a fresh one).
    "not_in_for_except": (
        "SELECT name FROM dept EXCEPT SELECT d.name FROM dept d JOIN people p ON p.dept_id = d.id",
        "SELECT name FROM dept d WHERE NOT EXISTS (SELECT 1 FROM people p WHERE p.dept_id = d.id)",
    ),
    # DISTINCT where the ground truth happens to repeat rows.
    "extra_distinct": (
        "SELECT d.name FROM people p JOIN dept d ON p.dept_id = d.id WHERE p.age > 30",
        "SELECT DISTINCT d.name FROM people p JOIN dept d ON p.dept_id = d.id WHERE p.age > 30",
    ),
}

SETTINGS = RunSettings()


KINDS = ("embedded", "duckdb_file", "sqlite_file")


def _open(kind: str, folder: Path, setup: str = SETUP) -> Engine:
    """The same tables as embedded DuckDB built by setup, a DuckDB file, or a SQLite file."""
    if kind == "embedded":
        (folder / "setup.sql").write_text(setup, encoding="utf-8")
        built = DuckDBEngine()
        built.setup(folder, [folder / "setup.sql"])
        return built
    if kind == "duckdb_file":
        with duckdb.connect(folder / "w.duckdb") as con:
            con.execute(setup)
        attached = DuckDBEngine(folder / "w.duckdb")
        attached.setup(folder, [])
        return attached
    con = sqlite3.connect(folder / "w.sqlite")
    con.executescript(setup)
    con.close()
    return SqlAlchemyEngine(
        f"sqlite:///{folder / 'w.sqlite'}",
        display="w.sqlite",
        dialect="sqlite",
        project_root=folder,
    )


@pytest.fixture(params=KINDS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    opened = _open(request.param, tmp_path)
    yield opened
    opened.close()


FAMILIES = ("embedded", "sqlite_file")
"""One engine of each variant source (``sqlbench/variants/source.py``: DuckDB, SQLite) for the
long lists of cases below. An attached DuckDB file goes through the same DuckDB source as
embedded DuckDB, and is kept for the tests of what differs there (its tables read from the
file's catalog, its views re-created: the seed, keyed-table and file-warehouse tests)."""


@pytest.fixture(params=FAMILIES)
def family_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    opened = _open(request.param, tmp_path)
    yield opened
    opened.close()


def _passes_on_original(engine: Engine, truth: str, agent: str) -> bool:
    expected = engine.run_truth(truth, timeout_s=10, max_rows=1000)
    actual = engine.run_agent(agent, timeout_s=10, max_rows=1000)
    return compare_results(expected.table, actual.table).passed


def _suite(engine: Engine, truth: str, count: int = 4, seed: int = 0) -> VariantSuite:
    options = CompareOptions(variants=count, variants_seed=seed)
    cache = VariantCache(variant_source(engine, "the warehouse"))
    return cache.suite(truth, truth_dialect="duckdb", options=options, settings=SETTINGS)


@pytest.mark.parametrize("case", sorted(ACCIDENTAL))
def test_accidental_pass_fails_on_a_variant(family_engine: Engine, case: str) -> None:
    engine = family_engine
    truth, agent = ACCIDENTAL[case]
    assert _passes_on_original(engine, truth, agent)
    suite = _suite(engine, truth)
    assert suite.variants
    found = check(
        suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
    )
    assert found.variant is not None, case
    assert found.comparison is not None and found.comparison.verdict is Verdict.FAIL


@pytest.mark.parametrize("case", sorted(EQUIVALENT))
def test_equivalent_rewrite_passes_on_every_variant(family_engine: Engine, case: str) -> None:
    engine = family_engine
    truth, agent = EQUIVALENT[case]
    assert _passes_on_original(engine, truth, agent)
    suite = _suite(engine, truth)
    assert suite.variants  # the check below is not vacuous
    found = check(
        suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
    )
    assert found.variant is None, (case, found.comparison and found.comparison.reason)
    assert found.checked == len(suite.variants)


@pytest.mark.parametrize("case", sorted(DEFENSIBLE))
def test_a_defensible_answer_passes_on_every_variant(family_engine: Engine, case: str) -> None:
    engine = family_engine
    truth, agent = DEFENSIBLE[case]
    assert _passes_on_original(engine, truth, agent)
    suite = _suite(engine, truth, count=6)
    assert suite.variants  # the check below is not vacuous
    found = check(
        suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
    )
    assert found.variant is None, (case, found.comparison and found.comparison.reason)


def test_variants_are_the_same_for_the_same_seed(engine: Engine) -> None:
    truth = ACCIDENTAL["boundary"][0]
    first, again, other = (
        _suite(engine, truth),
        _suite(engine, truth),
        _suite(engine, truth, seed=7),
    )
    prints = [v.fingerprint for v in first.variants]
    assert prints == [v.fingerprint for v in again.variants]
    assert prints != [v.fingerprint for v in other.variants]


def test_kept_variants_tell_neighbours_apart_and_truth_is_never_empty(
    engine: Engine,
) -> None:
    suite = _suite(engine, ACCIDENTAL["boundary"][0], count=3)
    assert 0 < len(suite.variants) <= 3
    assert suite.told_apart > 0
    assert all(v.tells_apart > 0 and v.truth.num_rows > 0 for v in suite.variants)


def test_neighbours_cover_the_spec_mutations() -> None:
    found = neighbours(
        "SELECT DISTINCT a, MAX(b) FROM t LEFT JOIN u ON t.k = u.k "
        "WHERE a >= 3 AND c BETWEEN 1 AND 5 GROUP BY a ORDER BY a DESC LIMIT 2",
        "duckdb",
    )
    text = "\n".join(found)
    assert "a > 3" in text  # comparison changed
    assert "c > 1 AND c <= 5" in text  # BETWEEN made strict
    assert any("WHERE c BETWEEN 1 AND 5" in n for n in found)  # a conjunct dropped
    assert any(n.startswith("SELECT a, MAX") for n in found)  # DISTINCT removed
    assert any(" JOIN u" in n and "LEFT JOIN" not in n for n in found)  # join kind
    assert any("ORDER BY a LIMIT" in n or "ORDER BY a ASC" in n for n in found)  # direction
    assert any("LIMIT 3" in n for n in found) and any("LIMIT 1" in n for n in found)
    assert any("MIN(b)" in n for n in found)  # aggregate swapped


def _project(
    tmp_path: Path, compare: dict[str, object] | None = None, warehouse: str | None = None
) -> Path:
    settings: dict[str, object] = (
        {"setup": ["setup.sql"]} if warehouse is None else {"warehouse": warehouse}
    )
    if compare is not None:
        settings["compare"] = compare
    return write_project(
        tmp_path,
        {
            "sqlbench.yml": settings,
            "setup.sql": SETUP if warehouse is None else None,
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "older",
                        "question": "Who is 30 or older?",
                        "sql": ACCIDENTAL["boundary"][0],
                    },
                    {
                        "name": "count",
                        "question": "How many people?",
                        "sql": "SELECT COUNT(*) FROM people",
                    },
                ]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )


def test_run_with_variants_fails_a_lucky_pass_and_records_the_seed(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(tmp_path)
    fake_agent(
        FakeAgent({"older": ACCIDENTAL["boundary"][1], "count": "SELECT COUNT(id) FROM people"})
    )
    plain = run_benchmark(load_project(root), "fake")
    assert {q.name: q.verdict for q in plain.questions} == {
        "older": Verdict.PASS,
        "count": Verdict.PASS,
    }
    run = run_benchmark(load_project(root), "fake", RunOptions(variants=4))
    by_name = {q.name: q for q in run.questions}
    older = by_name["older"].first
    assert older.verdict is Verdict.FAIL
    assert older.reason.startswith("matches on the original data, but not on data variant #")
    assert older.variants is not None and older.variants.failed_on in older.variants.fingerprints
    assert older.variants.seed == 0
    # The previews show the variant's rows, the differing ones marked.
    assert older.expected_preview is not None and older.actual_preview is not None
    assert run.info.compare["variants"] == 4
    assert "variants" in older.timings_ms
    # A pass says on how many distinct variants it was checked (none is said as none).
    count = by_name["count"].first
    assert count.variants is not None
    kept = len(set(count.variants.fingerprints))
    assert kept == len(count.variants.fingerprints)
    if kept:
        plural = "s" if kept != 1 else ""
        assert count.reason.endswith(f"(and on {kept} distinct data variant{plural})"), count.reason
    else:
        assert "checked on no data variant" in count.reason, count.reason


def test_variants_seed_from_sqlbench_yml_is_recorded(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = _project(tmp_path, {"variants": 3, "variants_seed": 42})
    fake_agent(
        FakeAgent({"older": ACCIDENTAL["boundary"][0], "count": "SELECT COUNT(*) FROM people"})
    )
    run = run_benchmark(load_project(root), "fake")
    assert [q.verdict for q in run.questions] == [Verdict.PASS, Verdict.PASS]
    older = next(q for q in run.questions if q.name == "older").first
    assert older.variants is not None and older.variants.seed == 42
    assert older.variants.checked == len(older.variants.fingerprints) > 0
    assert run.info.compare["variants_seed"] == 42


def test_variants_refused_on_a_sqlite_warehouse_with_setup_views(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None]
) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"warehouse": "w.db", "setup": ["views.sql"]},
            "views.sql": "CREATE VIEW one AS SELECT 1 AS x",
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "one", "question": "?", "sql": "SELECT 1"}]
            },
            "agents/fake.yml": {"agents": [{"name": "fake", "kind": "fake"}]},
        },
    )
    with sqlite3.connect(tmp_path / "w.db") as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    fake_agent(FakeAgent(default="SELECT 1"))
    with pytest.raises(SqlbenchError, match="cannot copy the setup views of the warehouse"):
        run_benchmark(load_project(root), "fake", RunOptions(variants=2))


@pytest.mark.skipif(
    not os.environ.get("SQLBENCH_TEST_POSTGRES_URL"), reason="SQLBENCH_TEST_POSTGRES_URL not set"
)
def test_variants_refused_on_a_server_warehouse() -> None:
    url = os.environ["SQLBENCH_TEST_POSTGRES_URL"]
    engine = SqlAlchemyEngine(url, display="pg", dialect="postgres", project_root=Path("."))
    try:
        with pytest.raises(SqlbenchError, match="embedded DuckDB, a DuckDB file or a SQLite file"):
            variant_source(engine, "warehouse 'pg'")
    finally:
        engine.close()


@pytest.mark.parametrize("kind", ["duckdb_file", "sqlite_file"])
def test_run_on_a_file_warehouse_fails_a_lucky_pass_and_leaves_the_file_alone(
    tmp_path: Path, fake_agent: Callable[[FakeAgent], None], kind: str
) -> None:
    _open(kind, tmp_path).close()
    name = "w.duckdb" if kind == "duckdb_file" else "w.sqlite"
    before = (tmp_path / name).read_bytes()
    root = _project(tmp_path, warehouse=name)
    fake_agent(
        FakeAgent({"older": ACCIDENTAL["boundary"][1], "count": "SELECT COUNT(id) FROM people"})
    )
    temp = Path(tempfile.gettempdir())
    folders = set(temp.glob(f"sqlbench-variants-{os.getpid()}-*"))
    run = run_benchmark(load_project(root), "fake", RunOptions(variants=4))
    by_name = {q.name: q.first for q in run.questions}
    assert by_name["older"].verdict is Verdict.FAIL
    assert "not on data variant #" in by_name["older"].reason
    assert by_name["count"].verdict is Verdict.PASS
    assert (tmp_path / name).read_bytes() == before
    # The SQLite variants' temporary files are gone with the run.
    assert set(temp.glob(f"sqlbench-variants-{os.getpid()}-*")) == folders


KEYED = """
CREATE TABLE dept (id INTEGER PRIMARY KEY, code VARCHAR UNIQUE, name VARCHAR NOT NULL);
CREATE TABLE people (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, age INTEGER,
    dept_id INTEGER REFERENCES dept (id), mentor INTEGER
);
CREATE TABLE project (
    person_id INTEGER NOT NULL REFERENCES people (id),
    dept_id INTEGER NOT NULL REFERENCES dept (id),
    hours INTEGER,
    PRIMARY KEY (person_id, dept_id)
);
"""


def _keyed_rows(kind: str) -> str:
    depts = ", ".join(f"({i}, 'c{i}', 'd{i % 7}')" for i in range(1, 401))
    people = ", ".join(
        f"({i}, 'p{i % 50}', {20 + i % 40}, {None if i % 9 == 0 else 1 + i % 400}, {i % 13})"
        for i in range(1, 701)
    ).replace("None", "NULL")
    project = ", ".join(f"({1 + i % 700}, {1 + (i * 7) % 400}, {i % 30})" for i in range(0, 900))
    return (
        f"INSERT INTO dept VALUES {depts};\nINSERT INTO people VALUES {people};\n"
        f"INSERT INTO project VALUES {project};\n"
    )


@pytest.mark.parametrize("kind", KINDS)
def test_variants_keep_declared_keys_unique_and_references_whole(tmp_path: Path, kind: str) -> None:
    opened = _open(kind, tmp_path, KEYED + _keyed_rows(kind))
    try:
        source = variant_source(opened, "the warehouse")
        by_name = {t.name: t for t in source.tables}
        assert {r.table for r in by_name["project"].references} == {"people", "dept"}
        assert ("person_id", "dept_id") in by_name["project"].keys
        # Aim at constants in every kind of column: keys, references, plain values.
        hints = TruthHints(
            {"id": [5, 300], "dept_id": [3, 999], "person_id": [7], "age": [30], "code": ["c9"]},
            {"age", "hours", "dept_id"},
        )
        shrank = False
        for number in range(30):
            variant = {t.name: t for t in make_variant(source.tables, hints, f"0:{number}")}
            dept, people, project = (variant[n].rows for n in ("dept", "people", "project"))
            # A sample, plus the rows its references need (and up to 3 copies), plus one
            # project for each person and department kept: every real one has one.
            assert len(project) <= MAX_ROWS + 3 + len(dept) + len(people)
            assert {row["person_id"] for row in project} == {row["id"] for row in people}
            assert {row["dept_id"] for row in project} == {row["id"] for row in dept}
            for rows, key in (
                (dept, ("id",)),
                (dept, ("code",)),
                (people, ("id",)),
                (project, ("person_id", "dept_id")),
            ):
                values = [tuple(row[c] for c in key) for row in rows]
                assert len(values) == len(set(values)), (number, key)
            dept_ids = {row["id"] for row in dept}
            people_ids = {row["id"] for row in people}
            assert all(row["dept_id"] is None or row["dept_id"] in dept_ids for row in people)
            assert all(row["person_id"] in people_ids for row in project)
            assert all(row["dept_id"] in dept_ids for row in project)
            assert project, number  # a sample keeps rows that join
            shrank |= len(people) < MAX_ROWS
            # Every variant builds as a database of the warehouse's kind (its DDL accepts it).
            built = source.build(list(variant.values()))
            with source.database(built) as database:
                joined = (
                    database.run_truth(
                        "SELECT COUNT(*) FROM project JOIN people ON people.id = project.person_id",
                        timeout_s=10,
                        max_rows=10,
                    )
                    .table.column(0)[0]
                    .as_py()
                )
            source.discard(built)
            assert joined == len(project)
        assert shrank
        source.close()
    finally:
        opened.close()


def test_no_nulls_where_the_ground_truth_orders_or_takes_max_min(tmp_path: Path) -> None:
    """Where a NULL sorts is the engine's choice: a NULL in an ORDER BY key would make the
    ground truth's 'youngest' the person without an age."""
    opened = _open("sqlite_file", tmp_path, KEYED + _keyed_rows("sqlite_file"))
    try:
        source = variant_source(opened, "the warehouse")
        people = next(t for t in source.tables if t.name == "people")
        # By the whole row but dept_id (a copy gets a fresh id, which may be an unsampled one).
        before = {
            (row["id"], row["name"], row["age"], row["mentor"]): row["dept_id"]
            for row in people.rows
        }
        nulled = 0
        for number in range(30):
            for order in (set(), {"dept_id"}):
                variant = make_variant(source.tables, TruthHints({}, order), f"0:{number}")
                rows = next(t for t in variant if t.name == "people").rows
                new = sum(
                    1
                    for row in rows
                    if row["dept_id"] is None
                    and before.get((row["id"], row["name"], row["age"], row["mentor"])) is not None
                )
                if order:
                    assert new == 0, number
                nulled += new
        assert nulled > 0  # without the ORDER BY hint, NULLs are placed there
        source.close()
    finally:
        opened.close()


def test_a_ground_truth_with_ties_at_its_limit_is_not_used(tmp_path: Path) -> None:
    opened = _open("sqlite_file", tmp_path)
    try:
        truth = "SELECT name FROM people ORDER BY age DESC LIMIT 1"
        suite = _suite(opened, truth, count=4)
        breaks = tie_breaks(truth, "sqlite")
        assert breaks is not None
        for variant in suite.variants:
            with suite.source.database(variant.built) as database:
                first, second = (
                    database.run_truth(t, timeout_s=10, max_rows=100).table.to_pylist()
                    for t in breaks
                )
            assert first == second == variant.truth.table.to_pylist()
        assert suite.rejected > 0  # some candidates tied at the top (ties are aimed at)
    finally:
        opened.close()


def test_copies_are_new_entities_never_twins(tmp_path: Path) -> None:
    """A copied row gets a fresh name where names are declared UNIQUE, a name constant is not
    given to a second row, and a table without a key gets no copies (the same fact twice)."""
    opened = _open(
        "sqlite_file",
        tmp_path,
        SETUP + "CREATE TABLE likes (a INTEGER, b INTEGER);"
        "INSERT INTO likes VALUES (1, 2), (2, 3), (3, 1);",
    )
    try:
        source = variant_source(opened, "the warehouse")
        hints = TruthHints({"name": ["sales"], "budget": [100]}, set())
        copied = False
        for number in range(30):
            variant = {t.name: t.rows for t in make_variant(source.tables, hints, f"0:{number}")}
            names = [row["name"] for row in variant["dept"]]
            assert len(names) == len(set(names)), (number, names)
            assert len(variant["likes"]) <= 3
            copied |= any(name not in ("sales", "ops", "eng") for name in names)
        assert copied  # departments were copied, each under a fresh name
        source.close()
    finally:
        opened.close()


def test_a_ground_truth_of_only_nulls_tells_nothing(engine: Engine) -> None:
    suite = _suite(engine, "SELECT MIN(age) FROM people WHERE name = 'nobody'")
    assert suite.variants == ()
    assert suite.rejected == suite.candidates


def _bonds() -> str:
    """Atoms in a chain and rings; each bond listed from both of its atoms (as BIRD
    toxicology's ``connected``), with a bond id and a weight both directions share."""
    atoms = ", ".join(f"('a{i}', '{'CHO'[i % 3]}')" for i in range(1, 401))
    pairs = [(i, i + 1) for i in range(1, 400)] + [(i, i + 7) for i in range(1, 390, 5)]
    bonds = ", ".join(f"('b{a}_{b}', '{'-='[(a + b) % 2]}')" for a, b in pairs)
    rows = []
    for a, b in pairs:
        bond = "NULL" if (a * b) % 11 == 0 else f"'b{a}_{b}'"
        weight = (a + b) % 6
        rows += [f"('a{a}', 'a{b}', {bond}, {weight})", f"('a{b}', 'a{a}', {bond}, {weight})"]
    return (
        "CREATE TABLE atom (atom_id VARCHAR PRIMARY KEY, element VARCHAR NOT NULL);\n"
        "CREATE TABLE bond (bond_id VARCHAR PRIMARY KEY, bond_type VARCHAR NOT NULL);\n"
        "CREATE TABLE connected (\n"
        "    atom_id VARCHAR NOT NULL REFERENCES atom (atom_id),\n"
        "    atom_id2 VARCHAR NOT NULL REFERENCES atom (atom_id),\n"
        "    bond_id VARCHAR REFERENCES bond (bond_id), weight INTEGER,\n"
        "    PRIMARY KEY (atom_id, atom_id2)\n"
        ");\n"
        "CREATE TABLE near (\n"
        "    atom_id VARCHAR NOT NULL REFERENCES atom (atom_id),\n"
        "    atom_id2 VARCHAR NOT NULL REFERENCES atom (atom_id), weight INTEGER,\n"
        "    PRIMARY KEY (atom_id, atom_id2)\n"
        ");\n"
        f"INSERT INTO atom VALUES {atoms};\nINSERT INTO bond VALUES {bonds};\n"
        f"INSERT INTO connected VALUES {', '.join(rows)};\n"
        f"INSERT INTO near SELECT atom_id, atom_id2, weight FROM connected;\n"
    )


@pytest.mark.parametrize("kind", ("embedded", "sqlite_file"))
def test_a_symmetric_relation_stays_symmetric(tmp_path: Path, kind: str) -> None:
    """A table whose real rows hold every pair both ways (a bond from each of its atoms) keeps
    both directions in every variant: sampled, dropped and copied together, and agreeing on
    what the real directions agree on (bond id, weight), whatever values move. A copy never
    shares the bond id that names one pair (one bond, three atoms)."""
    opened = _open(kind, tmp_path, _bonds())
    try:
        source = variant_source(opened, "the warehouse")
        original = next(t for t in source.tables if t.name == "connected").rows
        real = {(r["atom_id"], r["atom_id2"]) for r in original}
        hints = TruthHints({"atom_id": ["a5"], "weight": [3], "bond_id": ["b4_5"]}, {"weight"})
        shrank = copied = moved = False
        for number in range(30):
            variant = {t.name: t.rows for t in make_variant(source.tables, hints, f"0:{number}")}
            atoms = {r["atom_id"] for r in variant["atom"]}
            for name in ("connected", "near"):
                rows = variant[name]
                by_pair = {(r["atom_id"], r["atom_id2"]): r for r in rows}
                assert len(by_pair) == len(rows), number  # the key stays unique
                for (a, b), row in by_pair.items():
                    back = by_pair.get((b, a))
                    assert back is not None, (number, name, a, b)
                    assert {k: back[k] for k in row if k not in ("atom_id", "atom_id2")} == {
                        k: row[k] for k in row if k not in ("atom_id", "atom_id2")
                    }
                assert all(r["atom_id"] in atoms and r["atom_id2"] in atoms for r in rows)
                shrank |= len(rows) < min(len(original), MAX_ROWS)
                moved |= any(
                    r["weight"] != (int(r["atom_id"][1:]) + int(r["atom_id2"][1:])) % 6
                    for r in rows
                )
                if name == "near":
                    copied |= any(pair not in real for pair in by_pair)
            pairs_of_bond: dict[str, set[frozenset[str]]] = {}
            for r in variant["connected"]:
                if r["bond_id"] is not None:
                    pairs_of_bond.setdefault(r["bond_id"], set()).add(
                        frozenset((r["atom_id"], r["atom_id2"]))
                    )
            assert all(len(p) == 1 for p in pairs_of_bond.values()), number
        assert shrank and copied and moved  # subsets, copies and moved values were all made
        source.close()
    finally:
        opened.close()


def test_reading_the_other_direction_of_a_symmetric_relation_passes(tmp_path: Path) -> None:
    """Counting an atom's bonds by either column is the same question on such data: it passes
    on every variant."""
    opened = _open("sqlite_file", tmp_path, _bonds())
    try:
        truth = "SELECT COUNT(*) FROM connected WHERE atom_id = 'a5'"
        agent = "SELECT COUNT(*) FROM connected WHERE atom_id2 = 'a5'"
        assert _passes_on_original(opened, truth, agent)
        suite = _suite(opened, truth, count=6)
        assert suite.variants  # the check below is not vacuous
        found = check(
            suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
        )
        assert found.variant is None, found.comparison and found.comparison.reason
    finally:
        opened.close()


# Right on the original data (5 people, ages adding up to 177); on any variant that changes
# them, one value of a gigabyte.
BLOWS_UP = (
    "SELECT name FROM people WHERE age >= 30 AND length(repeat('x', (SELECT CASE WHEN "
    "count(*) <> 5 OR sum(age) <> 177 THEN 1000000000 ELSE 1 END FROM people))) > 0"
)


@pytest.mark.slow
@pytest.mark.hostile
@pytest.mark.parametrize("kind", ["embedded", "duckdb_file"])
def test_a_huge_value_only_on_a_variant_is_too_large_in_the_query_process(
    tmp_path: Path, kind: str
) -> None:
    """Agent SQL on a DuckDB variant runs in the warehouse engine's query process, so one
    huge value there stops that process (too_large), not sqlbench's; the next answer runs."""
    if kind == "embedded":
        (tmp_path / "setup.sql").write_text(SETUP, encoding="utf-8")
        engine = DuckDBEngine(memory_limit_mb=256, query_process_mb=256)
        engine.setup(tmp_path, [tmp_path / "setup.sql"])
    else:
        with duckdb.connect(tmp_path / "w.duckdb") as con:
            con.execute(SETUP)
        engine = DuckDBEngine(tmp_path / "w.duckdb", memory_limit_mb=256, query_process_mb=256)
        engine.setup(tmp_path, [])
    try:
        truth = ACCIDENTAL["boundary"][0]
        assert _passes_on_original(engine, truth, BLOWS_UP)
        suite = _suite(engine, truth)
        assert suite.variants
        found = check(
            suite,
            BLOWS_UP,
            truth,
            truth_dialect="duckdb",
            options=CompareOptions(),
            settings=SETTINGS,
        )
        assert found.variant is not None and found.error is not None
        assert found.error.kind is QueryErrorKind.TOO_LARGE, found.error.message
        assert "query process past the memory it may use" in found.error.message
        rewrite = EQUIVALENT["not_less"][1]
        again = check(
            suite,
            rewrite,
            truth,
            truth_dialect="duckdb",
            options=CompareOptions(),
            settings=SETTINGS,
        )
        assert again.variant is None and again.checked == len(suite.variants)
    finally:
        engine.close()


def _molecules() -> str:
    """60 molecules of 8 atoms each: every real molecule has atoms."""
    molecules = ", ".join(f"('m{i}', '{'+-'[i % 2]}')" for i in range(60))
    atoms = ", ".join(
        f"('m{i}_{j}', 'm{i}', '{'CHON'[j % 4]}')" for i in range(60) for j in range(8)
    )
    return (
        "CREATE TABLE molecule (molecule_id VARCHAR PRIMARY KEY, label VARCHAR NOT NULL);\n"
        "CREATE TABLE atom (\n"
        "    atom_id VARCHAR PRIMARY KEY,\n"
        "    molecule_id VARCHAR NOT NULL REFERENCES molecule (molecule_id),\n"
        "    element VARCHAR NOT NULL\n"
        ");\n"
        f"INSERT INTO molecule VALUES {molecules};\nINSERT INTO atom VALUES {atoms};\n"
    )


def test_a_parent_whose_every_row_has_children_keeps_them(tmp_path: Path) -> None:
    """Every real molecule has atoms: counting molecules through their atoms or without them is
    the same question on such data, and passes on every variant (no variant holds a molecule
    without atoms, sampled, subset or copied)."""
    opened = _open("sqlite_file", tmp_path, _molecules())
    try:
        truth = (
            "SELECT COUNT(DISTINCT m.molecule_id) FROM molecule m "
            "JOIN atom a ON a.molecule_id = m.molecule_id WHERE m.label = '+'"
        )
        agent = "SELECT COUNT(*) FROM molecule WHERE label = '+'"
        assert _passes_on_original(opened, truth, agent)
        suite = _suite(opened, truth, count=6)
        assert suite.variants  # the check below is not vacuous
        found = check(
            suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
        )
        assert found.variant is None, found.comparison and found.comparison.reason
    finally:
        opened.close()


def test_copies_take_fresh_values_of_the_column_s_own_shape(tmp_path: Path) -> None:
    """A copied atom gets a fresh id shaped as the real ones ('m7_8' after 'm7_0'..'m7_7'),
    not one the column never holds ('v312'): a query reading the id's parts (SUBSTR(atom_id,
    -2)) reads a copy as it reads a real atom."""
    opened = _open("sqlite_file", tmp_path, _molecules())
    try:
        source = variant_source(opened, "the warehouse")
        real = {r["atom_id"] for t in source.tables if t.name == "atom" for r in t.rows}
        copied = 0
        for number in range(30):
            variant = {
                t.name: t.rows
                for t in make_variant(source.tables, TruthHints({}, set()), f"0:{number}")
            }
            for row in variant["atom"]:
                prefix, _, n = row["atom_id"].partition("_")
                assert prefix == row["molecule_id"] and n.isdigit(), (number, row)
                copied += row["atom_id"] not in real
        assert copied  # atoms were copied
        source.close()
    finally:
        opened.close()


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June")


def _club() -> str:
    """12 events (half named after their month), a budget per event copying its status,
    spending the sum of its expenses and keeping amount = spent + remaining; 60 molecules
    whose bonds link two atoms of the bond's own molecule."""
    events, budgets, expenses = [], [], []
    for i in range(12):
        month = i % 6 + 1
        name = f"{_MONTH_NAMES[month - 1]} Meeting" if i < 6 else f"Talk {i}"
        status = ("Open", "Closed", "Planning")[i % 3]
        events.append(f"('e{i}', '{name}', '2020-{month:02d}-{10 + i:02d}', '{status}')")
        costs = [round(5.25 * (i + j + 1), 2) for j in range(i % 4)]
        for j, cost in enumerate(costs):
            expenses.append(f"('x{i}_{j}', {cost}, 'b{i}')")
        spent = round(sum(costs), 2)
        amount = 100 + 10 * i
        budgets.append(
            f"('b{i}', {spent}, {round(amount - spent, 2)}, {amount}, '{status}', 'e{i}')"
        )
    molecules = ", ".join(f"('m{m}')" for m in range(60))
    atoms, bonds, links = [], [], []
    for m in range(60):
        atoms += [f"('m{m}_{j}', 'm{m}', '{'CHON'[j]}')" for j in range(4)]
        for j in range(3):
            bonds.append(f"('m{m}_{j}{j + 1}', 'm{m}', '{'-='[j % 2]}')")
            a, b = f"m{m}_{j}", f"m{m}_{j + 1}"
            links += [f"('{a}', '{b}', 'm{m}_{j}{j + 1}')", f"('{b}', '{a}', 'm{m}_{j}{j + 1}')"]
    return (
        "CREATE TABLE event (event_id VARCHAR PRIMARY KEY, event_name VARCHAR,"
        " event_date VARCHAR, status VARCHAR);\n"
        "CREATE TABLE budget (budget_id VARCHAR PRIMARY KEY, spent DOUBLE, remaining DOUBLE,"
        " amount INTEGER, event_status VARCHAR,"
        " link_to_event VARCHAR REFERENCES event (event_id));\n"
        "CREATE TABLE expense (expense_id VARCHAR PRIMARY KEY, cost DOUBLE,"
        " link_to_budget VARCHAR NOT NULL REFERENCES budget (budget_id));\n"
        "CREATE TABLE molecule (molecule_id VARCHAR PRIMARY KEY);\n"
        "CREATE TABLE atom (atom_id VARCHAR PRIMARY KEY,"
        " molecule_id VARCHAR REFERENCES molecule (molecule_id), element VARCHAR);\n"
        "CREATE TABLE bond (bond_id VARCHAR PRIMARY KEY,"
        " molecule_id VARCHAR REFERENCES molecule (molecule_id), bond_type VARCHAR);\n"
        "CREATE TABLE connected (atom_id VARCHAR REFERENCES atom (atom_id),"
        " atom_id2 VARCHAR REFERENCES atom (atom_id), bond_id VARCHAR REFERENCES bond (bond_id),"
        " PRIMARY KEY (atom_id, atom_id2));\n"
        f"INSERT INTO event VALUES {', '.join(events)};\n"
        f"INSERT INTO budget VALUES {', '.join(budgets)};\n"
        f"INSERT INTO expense VALUES {', '.join(expenses)};\n"
        f"INSERT INTO molecule VALUES {molecules};\n"
        f"INSERT INTO atom VALUES {', '.join(atoms)};\n"
        f"INSERT INTO bond VALUES {', '.join(bonds)};\n"
        f"INSERT INTO connected VALUES {', '.join(links)};\n"
    )


# The ground truth's constants aim moves at every derived column of _club.
CLUB_HINTS = TruthHints(
    {
        "status": ["Open"],
        "event_status": ["Closed"],
        "spent": [21.0],
        "remaining": [100.0],
        "amount": [150],
        "cost": [10.5],
        "molecule_id": ["m3"],
        "event_date": ["2020-03-13"],
    },
    {"spent", "cost", "event_date", "amount"},
)


def _club_variants(
    tmp_path: Path, kind: str = "sqlite_file"
) -> list[dict[str, list[dict[str, object]]]]:
    opened = _open(kind, tmp_path, _club())
    try:
        source = variant_source(opened, "the warehouse")
        found = [
            {t.name: t.rows for t in make_variant(source.tables, CLUB_HINTS, f"0:{number}")}
            for number in range(40)
        ]
        source.close()
        return found
    finally:
        opened.close()


@pytest.mark.parametrize("kind", ("embedded", "sqlite_file"))
def test_a_child_column_copying_its_parent_s_stays_equal(tmp_path: Path, kind: str) -> None:
    """Every real budget copies its event's status: in every variant it still does, whichever
    side a move aimed at (the status moves, and the budget follows)."""
    moved = False
    for number, variant in enumerate(_club_variants(tmp_path, kind)):
        events = {e["event_id"]: e for e in variant["event"]}
        for budget in variant["budget"]:
            event = events.get(budget["link_to_event"])
            if event is not None:
                assert budget["event_status"] == event["status"], (number, budget, event)
        moved |= any(
            e["status"] != ("Open", "Closed", "Planning")[int(str(e["event_id"])[1:]) % 3]
            for e in variant["event"]
        )
    assert moved  # the parent's value was moved, and the copies followed


def test_a_parent_total_of_its_children_stays_their_total(tmp_path: Path) -> None:
    """A budget's spent is the sum of its expenses' cost (and amount = spent + remaining) in
    every real row: it stays so in every variant, with expenses dropped, copied and moved, and
    with amounts moved (remaining follows)."""
    changed = amounts = False
    for number, variant in enumerate(_club_variants(tmp_path)):
        costs: dict[object, float] = {}
        for expense in variant["expense"]:
            if expense["cost"] is not None:
                costs[expense["link_to_budget"]] = costs.get(
                    expense["link_to_budget"], 0.0
                ) + float(expense["cost"])  # type: ignore[arg-type]
        for budget in variant["budget"]:
            spent = float(budget["spent"])  # type: ignore[arg-type]
            assert spent == pytest.approx(costs.get(budget["budget_id"], 0.0)), (number, budget)
            assert isinstance(budget["amount"], int), (number, budget)
            assert float(budget["amount"]) == pytest.approx(  # type: ignore[arg-type]
                spent + float(budget["remaining"])  # type: ignore[arg-type]
            ), (number, budget)
        real = {f"b{i}": round(sum(5.25 * (i + j + 1) for j in range(i % 4)), 2) for i in range(12)}
        changed |= any(
            b["budget_id"] in real and float(b["spent"]) != real[str(b["budget_id"])]  # type: ignore[arg-type]
            for b in variant["budget"]
        )
        amounts |= any(
            b["budget_id"] in real
            and b["link_to_event"] == f"e{str(b['budget_id'])[1:]}"
            and b["amount"] != 100 + 10 * int(str(b["budget_id"])[1:])
            for b in variant["budget"]
        )
    assert changed  # variants did change the totals (children dropped, copied or moved)
    assert amounts  # amounts were moved too (to the truth's boundaries, ties), remaining followed


def test_two_rows_linked_through_a_third_keep_agreeing(tmp_path: Path) -> None:
    """Each real bond links two atoms of the bond's own molecule: no variant moves a bond (or an
    atom) to another molecule while the link stays."""
    links = 0
    for number, variant in enumerate(_club_variants(tmp_path)):
        atoms = {a["atom_id"]: a for a in variant["atom"]}
        bonds = {b["bond_id"]: b for b in variant["bond"]}
        for row in variant["connected"]:
            bond = bonds.get(row["bond_id"])
            for end in ("atom_id", "atom_id2"):
                atom = atoms.get(row[end])
                if bond is not None and atom is not None:
                    links += 1
                    assert atom["molecule_id"] == bond["molecule_id"], (number, row, bond, atom)
    assert links


def test_a_date_keeps_the_month_its_row_names(tmp_path: Path) -> None:
    """Every real event whose name names a month ('March Meeting') is dated in that month: a
    variant moves no such date to another month (other events' dates still move)."""
    moved = False
    for number, variant in enumerate(_club_variants(tmp_path)):
        for event in variant["event"]:
            name, date = str(event["event_name"]), str(event["event_date"])
            i = int(str(event["event_id"])[1:])
            if name.endswith("Meeting"):
                month = _MONTH_NAMES.index(name.split()[0]) + 1
                assert date[:7] == f"2020-{month:02d}", (number, event)
            else:
                moved |= date != f"2020-{i % 6 + 1:02d}-{10 + i:02d}"
    assert moved  # dates of events not named after a month were moved


def test_reading_a_derived_column_instead_of_computing_it_passes(tmp_path: Path) -> None:
    """A budget's spent and the sum of its expenses are the same question on such data, and
    so are its event_status and its event's status: both pass on every variant."""
    opened = _open("sqlite_file", tmp_path, _club())
    try:
        for truth, agent in (
            (
                "SELECT link_to_budget, SUM(cost) FROM expense GROUP BY link_to_budget"
                " HAVING SUM(cost) > 21",
                "SELECT budget_id, spent FROM budget WHERE spent > 21",
            ),
            (
                "SELECT e.event_name FROM event e JOIN budget b ON b.link_to_event = e.event_id"
                " WHERE e.status = 'Open'",
                "SELECT e.event_name FROM event e JOIN budget b ON b.link_to_event = e.event_id"
                " WHERE b.event_status = 'Open'",
            ),
        ):
            assert _passes_on_original(opened, truth, agent)
            suite = _suite(opened, truth, count=6)
            assert suite.variants  # the check below is not vacuous
            found = check(
                suite,
                agent,
                truth,
                truth_dialect="duckdb",
                options=CompareOptions(),
                settings=SETTINGS,
            )
            assert found.variant is None, (agent, found.comparison and found.comparison.reason)
    finally:
        opened.close()


# Six rows show no invariant: a column that does not repeat yet, or holds no NULL yet, may on
# another day (docs/verdicts.md, "Data variants"). The declared schema decides there.
SMALL = """
CREATE TABLE owners (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, city VARCHAR NOT NULL);
INSERT INTO owners VALUES (1, 'ann', 'Oslo'), (2, 'bob', 'Rome'), (3, 'cy', 'Lima'),
    (4, 'di', 'Kyiv'), (5, 'ed', 'Baku'), (6, 'flo', 'Pune');
CREATE TABLE pets (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, owner_id INTEGER REFERENCES owners (id)
);
INSERT INTO pets VALUES (1, 'rex', 1), (2, 'tom', 2), (3, 'kit', 3), (4, 'max', 4),
    (5, 'bo', 5), (6, 'zed', 6);
"""

SMALL_ACCIDENTAL = {
    # No city repeats yet.
    "missing_distinct": ("SELECT DISTINCT city FROM owners", "SELECT city FROM owners"),
    # No pet is without an owner yet.
    "inner_for_left_join": (
        "SELECT p.name, o.name FROM pets p LEFT JOIN owners o ON p.owner_id = o.id",
        "SELECT p.name, o.name FROM pets p JOIN owners o ON p.owner_id = o.id",
    ),
}

SMALL_EQUIVALENT = {
    "group_by_for_distinct": (
        "SELECT DISTINCT city FROM owners",
        "SELECT city FROM owners GROUP BY city",
    ),
    "right_join_for_left_join": (
        "SELECT p.name, o.name FROM pets p LEFT JOIN owners o ON p.owner_id = o.id",
        "SELECT p.name, o.name FROM owners o RIGHT JOIN pets p ON p.owner_id = o.id",
    ),
    "subquery_for_left_join": (
        "SELECT p.name, o.name FROM pets p LEFT JOIN owners o ON p.owner_id = o.id",
        "SELECT p.name, (SELECT o.name FROM owners o WHERE o.id = p.owner_id) FROM pets p",
    ),
    "distinct_on_distinct_rows": (
        "SELECT DISTINCT o.name FROM owners o JOIN pets p ON p.owner_id = o.id",
        "SELECT o.name FROM owners o WHERE o.id IN (SELECT owner_id FROM pets)",
    ),
}


@pytest.fixture(params=FAMILIES)
def small_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    opened = _open(request.param, tmp_path, SMALL)
    yield opened
    opened.close()


@pytest.mark.parametrize("case", sorted(SMALL_ACCIDENTAL))
def test_a_six_row_table_catches_the_pattern_its_rows_do_not_show(
    small_engine: Engine, case: str
) -> None:
    truth, agent = SMALL_ACCIDENTAL[case]
    assert _passes_on_original(small_engine, truth, agent)
    suite = _suite(small_engine, truth)
    found = check(
        suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
    )
    assert found.variant is not None, case
    assert found.comparison is not None and found.comparison.verdict is Verdict.FAIL


@pytest.mark.parametrize("case", sorted(SMALL_EQUIVALENT))
def test_a_six_row_table_passes_equivalent_rewrites(small_engine: Engine, case: str) -> None:
    truth, agent = SMALL_EQUIVALENT[case]
    assert _passes_on_original(small_engine, truth, agent)
    suite = _suite(small_engine, truth, count=6)
    assert suite.variants  # the check below is not vacuous
    found = check(
        suite, agent, truth, truth_dialect="duckdb", options=CompareOptions(), settings=SETTINGS
    )
    assert found.variant is None, (case, found.comparison and found.comparison.reason)


def _rows(count: int) -> str:
    owners = ", ".join(f"({i}, 'o{i}', 'city{i}')" for i in range(1, count + 1))
    pets = ", ".join(f"({i}, 'p{i}', {i})" for i in range(1, count + 1))
    return (
        SMALL.split("INSERT")[0]
        + f"INSERT INTO owners VALUES {owners};\n"
        + SMALL.split(";", 2)[2].split("INSERT")[0]
        + f"INSERT INTO pets VALUES {pets};\n"
    )


@pytest.mark.parametrize(("count", "inferred"), [(6, False), (60, True)])
def test_never_repeats_and_never_null_are_inferred_only_from_50_rows(
    tmp_path: Path, count: int, inferred: bool
) -> None:
    """Below 50 rows a copy may repeat a city and a reference may become NULL; from 50 rows
    on, a text column that never repeats and a column that is never NULL stay so."""
    opened = _open("sqlite_file", tmp_path, _rows(count))
    try:
        source = variant_source(opened, "the warehouse")
        repeated = nulled = False
        for number in range(40):
            variant = {
                t.name: t.rows
                for t in make_variant(source.tables, TruthHints({}, set()), f"0:{number}")
            }
            cities = [row["city"] for row in variant["owners"]]
            repeated |= len(cities) != len(set(cities))
            nulled |= any(row["owner_id"] is None for row in variant["pets"])
        assert repeated is not inferred
        assert nulled is not inferred
        source.close()
    finally:
        opened.close()


def test_variants_equal_to_the_original_data_or_each_other_are_not_kept(
    family_engine: Engine,
) -> None:
    """Each kept variant is a distinct database, none of them the original data."""
    suite = _suite(family_engine, ACCIDENTAL["boundary"][0], count=10)
    prints = [v.fingerprint for v in suite.variants]
    assert len(prints) == len(set(prints))
    assert suite.source.original_fingerprint not in prints


# Patterns of two columns (docs/verdicts.md, "Data variants"): kept where chance would hardly
# give them, whatever the table's size; a few rows that show one by chance follow the schema.
_MONTHS_10 = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct")
_TYPES = ("Meeting", "Speaker", "Game", "Social")


def _talks(months: int, types: int) -> str:
    """One event of each type a month (``months`` x ``types`` rows): the (month, type) pair
    never repeats, though months and types do."""
    rows = [
        f"({m * types + t}, '{_MONTHS_10[m]} {_TYPES[t]}', {m + 1}, '{_TYPES[t]}',"
        f" {10 * (m + t + 1)})"
        for m in range(months)
        for t in range(types)
    ]
    return (
        "CREATE TABLE talks (id INTEGER PRIMARY KEY, name VARCHAR, month INTEGER,"
        " type VARCHAR, cost INTEGER);\n"
        f"INSERT INTO talks VALUES {', '.join(rows)};\n"
    )


# Right where each type has one event a month: the rows need no GROUP BY.
TALKS_TRUTH = "SELECT type, SUM(cost) FROM talks WHERE month = 4 GROUP BY type"
TALKS_AGENT = "SELECT type, cost FROM talks WHERE month = 4"


@pytest.mark.parametrize(
    ("months", "types", "kept"),
    [
        # 40 rows: 60 pairs of rows share a month and 180 a type, of 780; were the two
        # unrelated, about 14 pairs would share both, and none does: not chance.
        (10, 4, True),
        # 8 rows: 4 pairs share a month, 12 a type, of 28; about 1.7 would share both, and
        # none doing so has a chance of 18%: the schema decides.
        (4, 2, False),
    ],
)
def test_a_pair_that_never_repeats_is_kept_where_chance_would_not_keep_it(
    tmp_path: Path, months: int, types: int, kept: bool
) -> None:
    opened = _open("sqlite_file", tmp_path, _talks(months, types))
    try:
        assert _passes_on_original(opened, TALKS_TRUTH, TALKS_AGENT)
        source = variant_source(opened, "the warehouse")
        hints = TruthHints({"month": [4]}, set())
        repeated = False
        for number in range(40):
            variant = {t.name: t.rows for t in make_variant(source.tables, hints, f"0:{number}")}
            pairs = [(row["month"], row["type"]) for row in variant["talks"]]
            repeated |= len(pairs) != len(set(pairs))
        assert repeated is not kept
        source.close()
        suite = _suite(opened, TALKS_TRUTH, count=6)
        found = check(
            suite,
            TALKS_AGENT,
            TALKS_TRUTH,
            truth_dialect="duckdb",
            options=CompareOptions(),
            settings=SETTINGS,
        )
        if kept:
            assert suite.variants  # the check is not vacuous
            assert found.variant is None, found.comparison and found.comparison.reason
        else:
            assert found.variant is not None
    finally:
        opened.close()


def _speakers() -> str:
    """42 events as a student club holds them (BIRD dev q1405's): each month a meeting, an
    officers' meeting and a speaker, named after the month; recurring events under one name
    and type; one budget row per category and event."""
    months = ("January", "February", "March", "April", "May", "June")
    events: list[tuple[str, str, str, str]] = []
    for m, month in enumerate(months, start=1):
        events += [
            (f"{month} Meeting", f"2020-{m:02d}-07", "Meeting", "MU 215"),
            (f"Officers meeting - {month}", f"2020-{m:02d}-07", "Meeting", "MU 215"),
            (f"{month} Speaker", f"2020-{m:02d}-21", "Guest Speaker", "MU 215"),
            ("Football game", f"2020-{m:02d}-12", "Game", "Stadium"),
            ("Food Bank", f"2020-{m:02d}-15", "Community Service", "Town"),
            ("Book Club", f"2020-{m:02d}-25", "Social", "Library"),
        ]
    events += [
        ("Registration", "2020-01-02", "Registration", "Campus"),
        ("Yearly Kickoff", "2020-01-03", "Meeting", "MU 215"),
        ("Spring Elections", "2020-03-28", "Election", "MU 215"),
        ("Fall Elections", "2020-06-28", "Election", "MU 215"),
        ("Budget Review", "2020-02-03", "Budget", "Office"),
        ("Yearly Wrap-up", "2020-06-30", "Meeting", "MU 215"),
    ]
    event_rows, budget_rows = [], []
    for i, (name, date, kind, place) in enumerate(events):
        event_rows.append(f"('e{i}', '{name}', '{date}', '{kind}', '{place}')")
        if kind in ("Meeting", "Guest Speaker"):
            for j, category in enumerate(("Food", "Advertisement", "Parking", "Speaker Gifts")):
                if kind == "Meeting" and category == "Speaker Gifts":
                    continue
                budget_rows.append(f"('b{i}_{j}', '{category}', {10 * (i % 5 + j + 1)}, 'e{i}')")
    return (
        "CREATE TABLE event (event_id VARCHAR PRIMARY KEY, event_name VARCHAR,"
        " event_date VARCHAR, type VARCHAR, location VARCHAR);\n"
        "CREATE TABLE budget (budget_id VARCHAR PRIMARY KEY, category VARCHAR,"
        " amount INTEGER, link_to_event VARCHAR REFERENCES event (event_id));\n"
        f"INSERT INTO event VALUES {', '.join(event_rows)};\n"
        f"INSERT INTO budget VALUES {', '.join(budget_rows)};\n"
    )


SPEAKER_TRUTH = (
    "SELECT T2.category, SUM(T2.amount) FROM event AS T1 JOIN budget AS T2"
    " ON T1.event_id = T2.link_to_event WHERE T1.event_name = 'April Speaker'"
    " GROUP BY T2.category ORDER BY SUM(T2.amount) ASC"
)
# Right on the real data's patterns: one event is named 'April Speaker' (a name that repeats
# keeps its type, and this one names April's speaker), and it has one budget row a category.
SPEAKER_RIGHT = {
    "scalar_subquery": (
        "SELECT category, SUM(amount) FROM budget WHERE link_to_event ="
        " (SELECT event_id FROM event WHERE event_name = 'April Speaker')"
        " GROUP BY category ORDER BY SUM(amount)"
    ),
    "rows_without_group_by": (
        "SELECT T2.category, T2.amount FROM event AS T1 JOIN budget AS T2"
        " ON T1.event_id = T2.link_to_event WHERE T1.event_name = 'April Speaker'"
        " ORDER BY T2.amount"
    ),
}


def test_a_renamed_event_keeps_the_type_its_name_has_q1405(tmp_path: Path) -> None:
    """BIRD dev q1405: a variant renamed an April meeting 'April Speaker', so two events of
    April shared that name with two types, and copied a budget row, so an event had two of one
    category; neither happens in 42 real events (a repeated name keeps its type: 3 names, 18
    rows; one budget row per category and event). No variant breaks either, and answers
    right on those patterns pass on every variant."""
    opened = _open("sqlite_file", tmp_path, _speakers())
    try:
        source = variant_source(opened, "the warehouse")
        hints = TruthHints({"event_name": ["April Speaker"]}, {"amount"})
        real = {f"e{i}" for i in range(42)}
        copied = False
        for number in range(40):
            variant = {t.name: t.rows for t in make_variant(source.tables, hints, f"0:{number}")}
            kinds: dict[object, set[object]] = {}
            for event in variant["event"]:
                kinds.setdefault(event["event_name"], set()).add(event["type"])
            assert all(len(k) == 1 for name, k in kinds.items() if name is not None), number
            links = [(b["link_to_event"], b["category"]) for b in variant["budget"]]
            assert len(links) == len(set(links)), number
            copied |= any(e["event_id"] not in real for e in variant["event"])
        source.close()
        assert copied  # events were still copied
        for name, agent in SPEAKER_RIGHT.items():
            assert _passes_on_original(opened, SPEAKER_TRUTH, agent), name
            for seed in range(3):
                suite = _suite(opened, SPEAKER_TRUTH, count=5, seed=seed)
                assert suite.variants  # the check is not vacuous
                found = check(
                    suite,
                    agent,
                    SPEAKER_TRUTH,
                    truth_dialect="duckdb",
                    options=CompareOptions(),
                    settings=SETTINGS,
                )
                assert found.variant is None, (name, seed, found.comparison.reason)  # type: ignore[union-attr]
    finally:
        opened.close()
