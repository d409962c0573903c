"""Loading a working-tree project into typed objects."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import sqlbench
from sqlbench.errors import ProjectError, ProjectInvalid, Severity
from sqlbench.project.files import Environment, TruthKind
from sqlbench.project.load import question_set_hash
from sqlbench.testing import write_project
from sqlbench.validation import check_project, load_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"

QUESTIONS = {
    "space": "sales",
    "eval_questions": [
        {
            "name": "by_country",
            "question": "Orders per country in 2024?",
            "certifiedQuery": "orders_by_country",
        },
        {
            "name": "total",
            "question": "Total in 2024?",
            "sql": "SELECT SUM(amount) FROM orders",
            "also_accept": ["SELECT SUM(amount) AS s FROM orders"],
            "compare": {"order": "strict"},
            "tags": ["finance"],
        },
    ],
}
CERTIFIED = {
    "certified_queries": [
        {"name": "orders_by_country", "sql": "SELECT country, COUNT(*) FROM orders GROUP BY 1"}
    ]
}


def test_the_good_fixture_loads_into_typed_objects() -> None:
    project = load_project(FIXTURES / "good")
    assert project.root == (FIXTURES / "good").resolve()
    assert project.settings.default_agent == "echo"
    assert project.settings.compare.rel_tol == 1e-6
    assert project.settings.run.concurrency == 2
    assert [q.full_name for q in project.questions] == [
        "auto/revenue_2024",
        "auto/order_count",
        "sales/orders_per_country_2024",
        "sales/revenue_2024",
    ]
    by_country = project.questions[2]
    assert by_country.truth_kind is TruthKind.CERTIFIED_QUERY
    assert by_country.truth_sql == project.certified_queries["orders_per_country_2024"].sql
    assert (by_country.path, by_country.line) == ("eval_questions/sales/orders.yml", 3)
    assert project.questions[1].skip == "the orders table is being reloaded"
    assert project.warnings == []


def test_agents_include_the_implicit_auto_and_exclude_replay_recordings() -> None:
    project = load_project(FIXTURES / "good")
    assert list(project.agents) == ["auto", "echo", "recorded"]
    auto = project.agents["auto"]
    assert (auto.kind, auto.path, auto.base_dir) == ("auto", "", project.root)
    echo = project.agents["echo"]
    assert echo.options == {"command": ["python3", "agents/echo_agent.py"]}
    assert (echo.path, echo.line, echo.base_dir) == (
        "agents/agents.yml",
        2,
        project.root / "agents",
    )
    # agents/recordings/answers.yml is a list, which would be an error as an agent file
    assert project.agents["recorded"].options == {"path": "recordings/answers.yml"}


def test_load_project_is_reexported() -> None:
    assert sqlbench.load_project is load_project


def test_certified_query_metadata_is_located(tmp_path: Path) -> None:
    write_project(
        tmp_path, {"eval_questions/q.yml": QUESTIONS, "certified_queries/deep/c.yml": CERTIFIED}
    )
    project = load_project(tmp_path)
    certified = project.certified_queries["orders_by_country"]
    assert (certified.path, certified.line) == ("certified_queries/deep/c.yml", 2)
    total = project.questions[1]
    assert total.truth_sql == "SELECT SUM(amount) FROM orders"
    assert total.also_accept == ["SELECT SUM(amount) AS s FROM orders"]
    assert project.settings.compare.merged(total.compare).order == "strict"


def test_compare_columns_in_settings_and_questions(tmp_path: Path) -> None:
    first, second = QUESTIONS["eval_questions"]
    exact = {**second, "compare": {"columns": "exact"}}
    write_project(
        tmp_path,
        {
            "sqlbench.yml": {"compare": {"rel_tol": 1e-6}},
            "eval_questions/q.yml": {"space": "sales", "eval_questions": [first, exact]},
            "certified_queries/c.yml": CERTIFIED,
        },
    )
    project = load_project(tmp_path)
    assert project.settings.compare.columns == "superset"
    by_country, total = project.questions
    assert project.settings.compare.merged(by_country.compare).columns == "superset"
    merged = project.settings.compare.merged(total.compare)
    assert (merged.columns, merged.rel_tol) == ("exact", 1e-6)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"sqlbench.yml": "compare:\n  column: exact\n"},
            "sqlbench.yml:2: error: unknown key 'column' under 'compare'; did you mean 'columns'?",
        ),
        (
            {"sqlbench.yml": "compare:\n  columns: strict\n"},
            "sqlbench.yml:2: error: compare.columns: Input should be 'superset' or 'exact' "
            "(got 'strict')",
        ),
        (
            {
                "eval_questions/q.yml": """
                eval_questions:
                  - name: q
                    question: Q?
                    sql: SELECT 1
                    compare: {columns: all}
                """
            },
            "eval_questions/q.yml:6: error: question 'q': compare.columns: Input should be "
            "'superset' or 'exact' (got 'all')",
        ),
    ],
)
def test_bad_compare_columns_is_reported_at_its_line(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    write_project(tmp_path, {"eval_questions/ok.yml": QUESTIONS, **files})
    problems = [str(p) for p in check_project(tmp_path).problems]
    assert message in problems


def test_question_set_hash_ignores_file_order_and_tags(tmp_path: Path) -> None:
    one = write_project(
        tmp_path / "one", {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": CERTIFIED}
    )
    first, second = QUESTIONS["eval_questions"]
    split = {
        "eval_questions/b.yml": {"space": "sales", "eval_questions": [first]},
        "eval_questions/a/z.yml": {
            "space": "sales",
            "eval_questions": [{**second, "tags": ["other"]}],
        },
        "certified_queries/c.yml": CERTIFIED,
    }
    two = write_project(tmp_path / "two", split)
    assert load_project(one).question_set_hash == load_project(two).question_set_hash


@pytest.mark.parametrize(
    "change",
    [
        {"question": "Total in 2025?"},
        {"sql": "SELECT SUM(amount) + 0 FROM orders"},
        {"also_accept": []},
        {"compare": {"order": "ignore"}},
        {"compare": {"order": "strict", "columns": "exact"}},
        {"skip": "broken"},
    ],
)
def test_question_set_hash_changes_with_what_grading_reads(tmp_path: Path, change: dict) -> None:
    base = write_project(
        tmp_path / "base", {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": CERTIFIED}
    )
    first, second = QUESTIONS["eval_questions"]
    edited = {"space": "sales", "eval_questions": [first, {**second, **change}]}
    other = write_project(
        tmp_path / "edit", {"eval_questions/q.yml": edited, "certified_queries/c.yml": CERTIFIED}
    )
    assert load_project(base).question_set_hash != load_project(other).question_set_hash


def test_question_set_hash_follows_the_certified_sql(tmp_path: Path) -> None:
    project = load_project(
        write_project(
            tmp_path / "a",
            {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": CERTIFIED},
        )
    )
    changed = {"certified_queries": [{"name": "orders_by_country", "sql": "SELECT 1"}]}
    other = load_project(
        write_project(
            tmp_path / "b", {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": changed}
        )
    )
    assert project.question_set_hash != other.question_set_hash
    assert question_set_hash(project.questions) == project.question_set_hash
    assert len(project.question_set_hash) == 64


def test_outside_git_the_source_is_the_working_tree(tmp_path: Path) -> None:
    write_project(
        tmp_path, {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": CERTIFIED}
    )
    source = load_project(tmp_path).source
    assert (source.branch, source.commit, source.dirty) == ("working tree", None, False)
    assert source.environment is Environment.DEV and source.dev_mode_note is None


def test_a_folder_without_a_project_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ProjectError, match=r"is not a sqlbench project .*sqlbench init"):
        load_project(tmp_path)
    with pytest.raises(ProjectError, match="does not exist"):
        load_project(tmp_path / "missing")


def test_only_settings_is_a_project_with_a_warning(tmp_path: Path) -> None:
    write_project(tmp_path, {"sqlbench.yml": "# all defaults\n"})
    project = load_project(tmp_path)
    assert project.questions == [] and project.settings.default_agent == "auto"
    assert [str(w) for w in project.warnings] == [
        "warning: no question files: add eval_questions/*.yml"
    ]


def test_every_problem_is_collected_in_one_pass(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "sqlbench.yml": "dialect: duckdb\nrun: {concurrency: 0}\n",
            "eval_questions/a.yml": "eval_questions:\n  - name: a\n    question: x\n    sqll: y\n",
            "eval_questions/b.yml": "eval_questions: [\n",
            "certified_queries/c.yml": "",
            "agents/a.yml": "agents:\n  - name: x\n    kind: nope\n",
        },
    )
    result = check_project(tmp_path)
    assert result.project is None
    assert [(p.path, p.line) for p in result.problems if p.severity is Severity.ERROR] == [
        ("agents/a.yml", 2),
        ("certified_queries/c.yml", 1),
        ("eval_questions/a.yml", 4),
        ("eval_questions/b.yml", 2),
        ("sqlbench.yml", 2),
    ]
    assert result.files == 5


def test_settings_errors_keep_the_valid_keys_for_the_other_checks(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "sqlbench.yml": "dialect: postgres\nrun: {concurrency: many}\n",
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "q", "question": "?", "sql": "SELECT x::int FROM t"}]
            },
        },
    )
    problems = check_project(tmp_path).problems
    # `x::int` parses in postgres: had the dialect been lost, a parse warning would show up
    assert [p.message.split(":")[0] for p in problems] == ["run.concurrency"]


def test_a_warehouse_without_a_known_dialect_warns_once(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "sqlbench.yml": "warehouse: ${WAREHOUSE_URL}\n",
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "q", "question": "?", "sql": "SELECT ((("}]
            },
        },
    )
    problems = check_project(tmp_path).problems
    assert [str(p) for p in problems] == [
        "sqlbench.yml:1: warning: cannot tell the SQL dialect from warehouse; set `dialect:` "
        "(until then ground-truth SQL is not checked)"
    ]


def test_names_may_repeat_across_spaces(tmp_path: Path) -> None:
    question = {"name": "q", "question": "How many in 2024?", "sql": "SELECT 1"}
    write_project(
        tmp_path,
        {
            "eval_questions/a.yml": {"eval_questions": [question]},
            "eval_questions/b.yml": {"space": "sales", "eval_questions": [question]},
        },
    )
    assert [q.full_name for q in load_project(tmp_path).questions] == ["auto/q", "sales/q"]


def test_load_errors_carry_every_problem(tmp_path: Path) -> None:
    write_project(tmp_path, {"eval_questions/q.yml": "eval_questions:\n  - name: a\n"})
    with pytest.raises(ProjectInvalid) as caught:
        load_project(tmp_path)
    assert [str(p) for p in caught.value.problems] == [
        "eval_questions/q.yml:2: error: question 'a': missing required key 'question'"
    ]


def test_the_project_object_survives_garbage_collection_of_checks(tmp_path: Path) -> None:
    write_project(
        tmp_path, {"eval_questions/q.yml": QUESTIONS, "certified_queries/c.yml": CERTIFIED}
    )
    project = load_project(tmp_path)
    gc.collect()
    assert project.root.is_dir()  # a working-tree project owns nothing to clean up


def test_ground_truth_sql_warnings_can_be_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run` shows no warning: it loads without parsing every ground truth; `validate` and the
    default load still warn."""
    from sqlbench.project import rules

    write_project(
        tmp_path,
        {
            "sqlbench.yml": "dialect: duckdb\n",
            "eval_questions/a.yml": (
                "eval_questions:\n  - name: a\n    question: x\n    sql: SELEC 1 FROM\n"
            ),
        },
    )
    assert any("does not parse as duckdb SQL" in str(w) for w in load_project(tmp_path).warnings)

    def refuse(*args: object) -> list[object]:
        raise AssertionError("every ground truth parsed")

    monkeypatch.setattr(rules, "ground_truth_warnings", refuse)
    project = load_project(tmp_path, sql_warnings=False)
    assert [q.name for q in project.questions] == ["a"] and project.warnings == []


def test_run_does_not_parse_every_ground_truth_to_warn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from sqlbench.cli.main import cli
    from sqlbench.project import rules

    write_project(
        tmp_path,
        {
            "sqlbench.yml": "dialect: duckdb\n",
            "eval_questions/a.yml": (
                "eval_questions:\n  - name: a\n    question: x\n    sql: SELECT 1\n"
            ),
            "agents/r.yml": "agents:\n  - {name: r, kind: replay, path: r.jsonl}\n",
            "agents/r.jsonl": '{"name": "a", "sql": "SELECT 1"}\n',
        },
    )

    def refuse(*args: object) -> list[object]:
        raise AssertionError("every ground truth parsed")

    monkeypatch.setattr(rules, "ground_truth_warnings", refuse)
    result = CliRunner().invoke(cli, ["run", "-C", str(tmp_path), "--agent", "r"])
    assert result.exit_code == 0, result.output
    assert "Accuracy: 100% (1/1)" in result.output


@pytest.mark.parametrize("value", ["many", "0", "65", "1.5", "true"])
def test_run_processes_is_auto_or_a_whole_number(tmp_path: Path, value: str) -> None:
    write_project(tmp_path, {"sqlbench.yml": f"dialect: sqlite\nrun: {{processes: {value}}}\n"})
    problems = [str(p) for p in check_project(tmp_path).problems if p.severity is Severity.ERROR]
    assert len(problems) == 1
    assert problems[0].startswith(
        "sqlbench.yml:2: error: run.processes: must be auto or a whole number from 1 to 64 (got "
    )


def test_run_processes_defaults_to_auto(tmp_path: Path) -> None:
    write_project(tmp_path, {"sqlbench.yml": "run: {processes: 2}\n"})
    assert load_project(tmp_path).settings.run.processes == 2
    write_project(tmp_path, {"sqlbench.yml": "dialect: duckdb\n"})
    assert load_project(tmp_path).settings.run.processes == "auto"
