"""`sqlbench validate`: each problem as path:line: severity: message, a summary, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sqlbench.testing import GitRepo, write_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"

GOOD_QUESTION = {
    "eval_questions": [
        {"name": "orders_2024", "question": "How many orders in 2024?", "sql": "SELECT 1"}
    ]
}


def test_a_valid_project_exits_0_with_a_summary(invoke) -> None:
    result = invoke("validate", "-C", str(FIXTURES / "good"))
    assert result.stdout == (
        "Valid: 4 questions in 2 spaces, 1 certified query, 2 agents (+ auto).\n"
    )


def test_errors_exit_1_with_file_and_line(invoke, tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "sqlbench.yml": "run:\n  concurency: 4\n",
            "eval_questions/q.yml": """\
            eval_questions:
              - name: a
                question: What was revenue in the last two years?
                sql: SELECT 1
              - name: b
                question: How many orders in 2024?
                sqll: SELECT 1
        """,
        },
    )
    result = invoke("validate", "--project-dir", str(tmp_path), exit_code=1)
    assert result.stdout.splitlines() == [
        "eval_questions/q.yml:3: warning: question 'a' says 'last two years', which is relative "
        "to today: its ground truth will drift; use absolute dates",
        "eval_questions/q.yml:7: error: question 'b': unknown key 'sqll'; did you mean 'sql'?",
        "sqlbench.yml:2: error: unknown key 'concurency' under 'run'; did you mean 'concurrency'?",
        "Found 2 errors and 1 warning (2 files checked).",
    ]


def test_warnings_only_exit_0(invoke) -> None:
    result = invoke("validate", "-C", str(FIXTURES / "no_ground_truth"))
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "eval_questions/q.yml:2: warning: question 'orders_2024': no ground truth"
    )
    assert (
        lines[1] == "Valid: 1 question in 1 space, 0 certified queries, 0 agents (+ auto); "
        "1 warning."
    )


def test_json_format_and_output_file(invoke, tmp_path: Path) -> None:
    target = tmp_path / "problems.json"
    result = invoke(
        "validate",
        "-C",
        str(FIXTURES / "duplicate_key"),
        "--format",
        "json",
        "--output",
        str(target),
        exit_code=1,
    )
    assert result.stdout == ""
    data = json.loads(target.read_text())
    assert data["schema_version"] == 1 and data["valid"] is False
    assert (data["errors"], data["warnings"]) == (1, 0)
    assert data["problems"][0]["path"] == "eval_questions/q.yml"
    assert data["problems"][0]["line"] == 5
    assert data["source"]["branch"]


@pytest.mark.parametrize(
    "command",
    [
        ["run"],
        ["questions"],
        ["runs"],
        ["show", "r1"],
        ["compare", "a", "b"],
        ["check", "--base", "main"],
        ["merge", "a", "b"],
        ["export", "r1"],
        ["judge", "r1"],
    ],
)
def test_every_project_command_says_not_a_project_the_same_way(
    invoke, tmp_path: Path, command: list[str]
) -> None:
    """``needs_project`` (cli/options.py): one check, one sentence, before any work."""
    result = invoke(*command, "-C", str(tmp_path), exit_code=2)
    assert result.stderr == (
        f"Error: {tmp_path.resolve()} is not a sqlbench project (no sqlbench.yml or "
        "eval_questions/); run `sqlbench init` to create one\n"
    )


def test_not_a_project_is_one_sentence_and_exit_2(invoke, tmp_path: Path) -> None:
    result = invoke("validate", "-C", str(tmp_path), exit_code=2)
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: {tmp_path.resolve()} is not a sqlbench project (no "
        "sqlbench.yml or eval_questions/); run `sqlbench init` to create "
        "one\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({"eval_questions/q.yml": GOOD_QUESTION})
    broken = {
        "eval_questions": [
            {
                "name": "x",
                "question": "How many in 2024?",
                "sql": "SELECT 1",
                "certifiedQuery": "nope",
            }
        ]
    }
    repo.commit({"eval_questions/q.yml": broken}, branch="feature")
    return repo


def test_branch_validates_the_ref_and_names_it(invoke, repo: GitRepo) -> None:
    edit = (repo.root / "eval_questions/q.yml").read_text() + "# edited\n"
    repo.write({"eval_questions/q.yml": edit})
    result = invoke("validate", "-C", str(repo.root), "--branch", "feature", exit_code=1)
    sha = repo.head("feature")[:12]
    assert result.stdout.splitlines() == [
        "eval_questions/q.yml:5: error: question 'x': has both certifiedQuery and sql; keep one "
        "(a second right answer goes under also_accept)",
        "eval_questions/q.yml:5: error: question 'x': certifiedQuery 'nope' is not defined in "
        "certified_queries/",
        f"Found 2 errors (1 file checked) at feature ({sha}).",
    ]
    assert (repo.root / "eval_questions/q.yml").read_text() == edit
    result = invoke("validate", "-C", str(repo.root), "--branch", "main")
    assert (
        result.stdout == f"Valid at main ({repo.head('main')[:12]}): 1 question in 1 "
        "space, 0 certified queries, 0 agents (+ auto).\n"
    )


def test_branch_dev_without_a_ref_says_it_is_dev_mode(invoke, repo: GitRepo) -> None:
    result = invoke("validate", "-C", str(repo.root), "--branch", "dev")
    assert result.stderr.startswith(
        "Note: no git ref named 'dev': using dev mode, the working tree of "
    )
    assert result.stdout.startswith("Valid: 1 question")


def test_a_missing_ref_is_one_sentence_and_exit_2(invoke, repo: GitRepo) -> None:
    result = invoke("validate", "-C", str(repo.root), "--branch", "featur", exit_code=2)
    assert result.stderr == (
        f"Error: git ref 'featur' does not exist in {repo.root}; did you mean 'feature'?\n"
    )


def test_branch_from_the_environment(invoke, repo: GitRepo) -> None:
    result = invoke(
        "validate", "-C", str(repo.root), exit_code=1, env={"SQLBENCH_VALIDATE_BRANCH": "feature"}
    )
    assert "at feature (" in result.stdout


def test_execute_is_skipped_with_a_note_when_there_are_errors(invoke) -> None:
    result = invoke("validate", "-C", str(FIXTURES / "duplicate_key"), "--execute", exit_code=1)
    assert "Note: ground truth was not executed because the project has errors." in result.stderr


def test_execute_runs_every_ground_truth_on_the_warehouse(invoke, tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "ok", "question": "How many in 2024?", "sql": "SELECT 1 AS x"},
                    {
                        "name": "broken",
                        "question": "How many in 2023?",
                        "sql": "SELECT * FROM missing",
                    },
                ]
            }
        },
    )
    result = invoke("validate", "-C", str(tmp_path), exit_code=0)
    assert result.stdout.startswith("Valid: 2 questions")
    result = invoke("validate", "-C", str(tmp_path), "--execute", exit_code=1)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("eval_questions/q.yml:")
    assert "error: ground truth fails on the warehouse" in lines[0]
    assert lines[-1] == "Found 1 error (1 file checked)."


def test_an_llm_agent_without_an_endpoint_is_a_warning_at_its_line(invoke, tmp_path: Path) -> None:
    # Regression: validate accepted it and `run` then stopped with exit 2.
    write_project(
        tmp_path,
        {
            "eval_questions/q.yml": GOOD_QUESTION,
            "agents/gen.yml": """\
            agents:
              - name: echo
                kind: command
                command: [python3, echo.py]
              - name: gen
                kind: llm
                temperature: 0.2
        """,
            "echo.py": "print('SELECT 1')\n",
        },
    )
    result = invoke("validate", "-C", str(tmp_path))
    assert result.stdout.splitlines() == [
        "agents/gen.yml:5: warning: agent 'gen': no LLM base_url or model is configured: set "
        "`base_url` and `model` on the agent, `llm.base_url` and `llm.model` in sqlbench.yml, "
        "or SQLBENCH_LLM_BASE_URL and SQLBENCH_LLM_MODEL (not set in this environment); "
        "`sqlbench run` stops without them",
        "Valid: 1 question in 1 space, 0 certified queries, 2 agents (+ auto); 1 warning.",
    ]
    # The variables of the validating process count (they are what `run` would see) ...
    env = {"SQLBENCH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "SQLBENCH_LLM_MODEL": "m"}
    assert invoke("validate", "-C", str(tmp_path), env=env).stdout == (
        "Valid: 1 question in 1 space, 0 certified queries, 2 agents (+ auto).\n"
    )
    # ... and so does `llm:` in sqlbench.yml, where a missing model is named alone.
    (tmp_path / "sqlbench.yml").write_text("llm:\n  base_url: http://127.0.0.1:9/v1\n")
    lines = invoke("validate", "-C", str(tmp_path), "--format", "json").stdout
    data = json.loads(lines)
    assert data["warnings"] == 1
    assert data["problems"][0]["message"].startswith(
        "agent 'gen': no LLM model is configured: set `model` on the agent"
    )
    assert invoke("validate", "-C", str(tmp_path), env={"SQLBENCH_LLM_MODEL": "m"}).stdout == (
        "Valid: 1 question in 1 space, 0 certified queries, 2 agents (+ auto).\n"
    )


LAUGHS = "lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


def test_hostile_project_files_are_sentences_with_lines(invoke, tmp_path: Path) -> None:
    """Issue 17: a "billion laughs" in sqlbench.yml, a question file nested past the depth
    limit, settings of .inf and 10^12: every one a sentence with file:line, no traceback,
    no gigabytes (the laughs would expand to 10^9 values)."""
    write_project(
        tmp_path,
        {
            "sqlbench.yml": "run:\n  agent_timeout_s: .inf\n  query_timeout_s: 1e12\n"
            "  max_result_mb: -1\n",
            "eval_questions/laughs.yml": LAUGHS,
            "eval_questions/deep.yml": "eval_questions: " + "[" * 100 + "]" * 100 + "\n",
            "eval_questions/q.yml": GOOD_QUESTION,
        },
    )
    result = invoke("validate", "-C", str(tmp_path), exit_code=1)
    assert result.stdout.splitlines() == [
        "eval_questions/deep.yml:1: error: the YAML is nested more than 64 levels deep; "
        "sqlbench reads no deeper",
        "eval_questions/laughs.yml:5: error: YAML aliases here expand the file past 100,000 "
        'values (it writes 19); a file that repeats itself this much is refused ("billion '
        'laughs")',
        "sqlbench.yml:2: error: run.agent_timeout_s: must be a finite number above 0 and at "
        "most 86400 (got inf)",
        "sqlbench.yml:3: error: run.query_timeout_s: must be a finite number above 0 and at "
        "most 86400 (got '1e12')",
        "sqlbench.yml:4: error: run.max_result_mb: must be a finite number above 0 and at "
        "most 65536 (got -1)",
        "Found 5 errors (4 files checked).",
    ]


def test_a_question_file_past_the_size_limit_is_refused_unread(
    invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.project.load as load

    monkeypatch.setattr(load, "MAX_YAML_BYTES", 1000)
    monkeypatch.setattr("sqlbench.project.yamlload.MAX_YAML_BYTES", 1000)
    big = {
        "eval_questions": [
            {"name": f"q{i}", "question": "?", "sql": "SELECT 1"} for i in range(100)
        ]
    }
    write_project(tmp_path, {"eval_questions/big.yml": big, "eval_questions/q.yml": GOOD_QUESTION})
    result = invoke("validate", "-C", str(tmp_path), exit_code=1)
    assert result.stdout.splitlines()[0].startswith(
        "eval_questions/big.yml: error: the file is 0.0 MB, over sqlbench's limit of 0 MB for "
        "a YAML file; split it into several files"
    )


def test_validate_project_returns_what_the_command_prints(invoke, tmp_path: Path) -> None:
    """The Python API gets every problem `sqlbench validate` prints, the environment's
    included (the command renders ``validate_project``'s result and adds nothing)."""
    from sqlbench.report.validation import render_text
    from sqlbench.validation import validate_project

    write_project(
        tmp_path,
        {
            "eval_questions/q.yml": GOOD_QUESTION,
            "agents/gen.yml": "agents:\n  - {name: gen, kind: llm}\n",
        },
    )
    validation = validate_project(tmp_path, env={})
    assert [p.message.split(":")[0] for p in validation.problems] == ["agent 'gen'"]
    assert (validation.errors, validation.warnings, validation.executed) == (0, 1, False)
    printed = invoke("validate", "-C", str(tmp_path)).stdout
    assert printed == render_text(validation) + "\n"


@pytest.mark.parametrize(
    ("url", "advice"),
    [
        (
            "postgres://u@127.0.0.1/db",
            "`postgres://` is not a scheme SQLAlchemy accepts: write `postgresql://`",
        ),
        (
            "postgresq://u@127.0.0.1/db",
            "unknown database URL scheme `postgresq://`; did you mean 'postgresql'?",
        ),
        (
            "htp://oops",
            "unknown warehouse URL scheme `htp://`, which no installed package handles: "
            "expected one of duckdb, sqlite, postgresql, mysql, mariadb, spark, sc or a path to "
            "a DuckDB or SQLite file",
        ),
    ],
)
def test_warehouse_url_mistakes_get_the_right_advice(
    invoke, tmp_path: Path, url: str, advice: str
) -> None:
    # Regression: postgres:// said the driver was missing; postgresq:// said to set `dialect`.
    write_project(
        tmp_path,
        {
            "sqlbench.yml": {"warehouse": url},
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "q", "question": "How many?", "sql": "SELECT 1"}]
            },
        },
    )
    result = invoke("validate", "-C", str(tmp_path), exit_code=1)
    assert f"sqlbench.yml:1: error: {advice}" in result.stdout
    run = invoke("run", "-C", str(tmp_path), exit_code=2)
    assert advice in run.stderr and "driver" not in run.stderr and "dialect" not in run.stderr


def _setup_project(root: Path, setup_sql: str, warehouse: str | None = None) -> None:
    settings: dict[str, object] = {"setup": ["models/*.sql"]}
    if warehouse is not None:
        settings["warehouse"] = warehouse
    write_project(
        root,
        {
            "sqlbench.yml": settings,
            "models/a.sql": setup_sql,
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "q", "question": "How many?", "sql": "SELECT 1"}]
            },
        },
    )


@pytest.mark.parametrize(
    ("setup_sql", "warehouse", "message"),
    [
        (
            "CREATE VIEW v AS\nSELECT * FROM {{ ref('orders') }};\n",
            None,
            "models/a.sql:2: error: setup SQL holds Jinja templating",
        ),
        (
            "CREATE VIEW v AS SELEC 1;\n",
            None,
            "models/a.sql: error: setup SQL has a syntax error: Parser Error: syntax error at "
            'or near "SELEC"',
        ),
        (
            "CREATE VIEW v AS SELECT 1;\n",
            "mysql+pymysql://root@127.0.0.1:3306/test",
            "setup is not supported on MySQL/MariaDB warehouses",
        ),
    ],
)
def test_validate_catches_setup_that_run_would_refuse(
    invoke, tmp_path: Path, setup_sql: str, warehouse: str | None, message: str
) -> None:
    _setup_project(tmp_path, setup_sql, warehouse)
    result = invoke("validate", "-C", str(tmp_path), exit_code=1)
    assert message in result.stdout


def test_validate_catches_a_python_agent_whose_function_is_missing(invoke, tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "agents/mine.py": "def answer(request):\n    return 'SELECT 1'\n",
            "agents/a.yml": {
                "agents": [{"name": "mine", "kind": "python", "function": "agents.mine:anser"}]
            },
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "q", "question": "How many?", "sql": "SELECT 1"}]
            },
        },
    )
    result = invoke("validate", "-C", str(tmp_path), exit_code=1)
    assert "agents/a.yml:2: error: `function: agents.mine:anser`: agents/mine.py defines no" in (
        result.stdout
    )
    assert "did you mean 'answer'?" in result.stdout


def test_execute_gives_one_warning_for_a_ground_truth_that_reads_the_date(
    invoke, tmp_path: Path
) -> None:
    # Regression: loading warned "uses CURRENT_DATE" and the pre-flight again "is
    # non-deterministic: it calls CURRENT_DATE": two warnings for one cause.
    write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "space": "shop",
                "eval_questions": [
                    {"name": "today", "question": "Which date?", "sql": "SELECT CURRENT_DATE AS d"},
                    {
                        "name": "dice",
                        "question": "Dice?",
                        "sql": "SELECT CURRENT_DATE AS d, random() < 2 AS r",
                    },
                ],
            }
        },
    )
    out = invoke("validate", "-C", str(tmp_path), "--execute", exit_code=0).stdout
    warnings = [line for line in out.splitlines() if ": warning: " in line]
    today = [line for line in warnings if "'today'" in line or "shop/today" in line]
    assert len(today) == 1 and "uses CURRENT_DATE" in today[0]
    dice = [line for line in warnings if "'dice'" in line or "shop/dice" in line]
    assert len(dice) == 2  # the date, and random() (another cause) still named
    assert any("it calls RANDOM(), so" in line for line in dice)
