"""The ``replay`` kind: recorded answers from JSONL and YAML files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent, validate_agent_config
from sqlbench.errors import ProjectInvalid
from sqlbench.project.files import AgentConfig
from sqlbench.testing import write_project

JSONL = (
    '{"name": "revenue", "sql": "SELECT 1"}\n'
    "\n"
    '{"name": "revenue", "space": "finance", "sql": "SELECT 2", '
    '"tool_calls": [{"name": "search", "arguments": {"q": "rev"}, "output": "ok"}]}\n'
    '{"name": "churn", "answer": "Churn is not tracked in this warehouse."}\n'
    '{"name": "broken", "sql": 12}\n'
    '{"name": "failed", "error": "the agent crashed while recording"}\n'
)

YAML = """
- name: revenue
  sql: SELECT 1
- name: revenue
  space: finance
  sql: |
    SELECT 2
- name: churn
  answer: Churn is not tracked in this warehouse.
- name: broken
  sql: 12
- name: failed
  error: the agent crashed while recording
"""


def replay_config(root: Path, path: str, agent_dir: str = "agents") -> AgentConfig:
    return AgentConfig(
        name="recorded",
        kind="replay",
        options={"path": path},
        path=f"{agent_dir}/recorded.yml",
        line=2,
        base_dir=root / agent_dir,
    )


@pytest.mark.parametrize(
    ("file_name", "content"), [("answers.jsonl", JSONL), ("answers.yml", YAML)]
)
def test_recorded_answers_by_name_and_space(
    tmp_path: Path, request_for: Callable[..., Request], file_name: str, content: str
) -> None:
    write_project(tmp_path, {f"agents/recorded/{file_name}": content})
    context = AgentContext(project_root=tmp_path, env={})
    agent = build_agent(replay_config(tmp_path, f"recorded/{file_name}"), context)

    def answer(name: str, space: str = "auto") -> tuple[str | None, str | None, str | None]:
        result = ask(agent, request_for(name, space=space), timeout_s=5, retries=0)
        return result.sql, result.answer, result.error

    shown = f"agents/recorded/{file_name}"
    assert answer("revenue") == ("SELECT 1", None, None)
    assert answer("revenue", space="sales") == ("SELECT 1", None, None)  # no space: any space
    # The space-specific record wins (the YAML block scalar keeps its newline: SQL verbatim).
    assert (answer("revenue", space="finance")[0] or "").strip() == "SELECT 2"
    assert answer("churn") == (None, "Churn is not tracked in this warehouse.", None)
    assert answer("failed") == (None, None, "the agent crashed while recording")
    assert answer("missing", space="sales") == (
        None,
        None,
        f"no recorded answer for sales/missing in {shown}",
    )
    broken = answer("broken")
    assert broken[2] is not None
    assert broken[2].startswith(f"{shown}:") and "wrong types: `sql`" in broken[2]


def test_yaml_record_lines_point_at_the_record(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    write_project(tmp_path, {"agents/answers.yml": YAML})
    agent = build_agent(
        replay_config(tmp_path, "answers.yml"), AgentContext(project_root=tmp_path, env={})
    )
    error = ask(agent, request_for("broken"), timeout_s=5, retries=0).error
    assert error is not None and error.startswith("agents/answers.yml:10: ")


def test_json_list_file(tmp_path: Path, request_for: Callable[..., Request]) -> None:
    write_project(tmp_path, {"agents/answers.json": '[{"name": "q1", "sql": "SELECT 5"}]'})
    agent = build_agent(
        replay_config(tmp_path, "answers.json"), AgentContext(project_root=tmp_path, env={})
    )
    assert ask(agent, request_for("q1"), timeout_s=5, retries=0).sql == "SELECT 5"


@pytest.mark.parametrize(
    ("file_name", "content", "message"),
    [
        (
            "a.jsonl",
            '{"name": "q1", "sql": "SELECT 1"}\n{"name": "q2", "sql": \n',
            "agents/a.jsonl:2: not valid JSON",
        ),
        ("a.jsonl", '{"sql": "SELECT 1"}\n', "agents/a.jsonl:1: a recorded answer needs a `name`"),
        (
            "a.jsonl",
            '["q1", "SELECT 1"]\n',
            "agents/a.jsonl:1: a recorded answer must be an object, got list",
        ),
        (
            "a.jsonl",
            '{"name": "q1", "space": 3}\n',
            "agents/a.jsonl:1: a recorded answer's `space` must be text",
        ),
        (
            "a.jsonl",
            '{"name": "q1"}\n{"name": "q1", "sql": "x"}\n',
            "agents/a.jsonl:2: a second recorded answer for q1 (first at line 1)",
        ),
        ("a.yml", "- name: q1\n  sql: x\n  sql: y\n", "agents/a.yml:3: duplicate key 'sql'"),
        ("a.yml", "name: q1\n", "agents/a.yml:1: a YAML replay file must hold a list"),
        ("a.yml", "- name: [\n", "agents/a.yml:2: YAML syntax error"),
        ("a.csv", "name,sql\n", "agents/a.csv: a replay file must end in .jsonl, .json, .yml"),
        # Hostile files (issue 17): nesting past the parser's recursion, or past the depth
        # limit, and a "billion laughs" of aliases, each a sentence with its line.
        (
            "a.jsonl",
            '{"name": "q1"}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
            "agents/a.jsonl:2: the JSON is nested too deeply for sqlbench to read",
        ),
        (
            "a.jsonl",
            '{"name": "q1", "sql": ' + "[" * 80 + "]" * 80 + "}\n",
            "agents/a.jsonl:1: the JSON is nested more than 64 levels deep",
        ),
        (
            "a.json",
            "[" * 100_000 + "]" * 100_000,
            "agents/a.json: the JSON is nested too deeply for sqlbench to read",
        ),
        (
            "a.yml",
            "- name: q1\n  sql: " + "[" * 100 + "]" * 100 + "\n",
            "agents/a.yml:2: the YAML is nested more than 64 levels deep",
        ),
        (
            "a.yml",
            "- &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"- &{c} [{', '.join([f'*{p}'] * 10)}]\n"
                for p, c in zip("abcdefg", "bcdefgh", strict=True)
            )
            + "- name: q1\n",
            "agents/a.yml:5: YAML aliases here expand the file past 100,000 values",
        ),
    ],
)
def test_broken_files_are_project_errors_with_lines(
    tmp_path: Path, file_name: str, content: str, message: str
) -> None:
    write_project(tmp_path, {f"agents/{file_name}": content})
    config = replay_config(tmp_path, file_name)
    problems = validate_agent_config(config)
    assert len(problems) == 1
    assert problems[0].message.startswith(f"agent 'recorded': `path`: {message}")
    assert (problems[0].path, problems[0].line) == ("agents/recorded.yml", 2)
    with pytest.raises(ProjectInvalid) as caught:
        build_agent(config, AgentContext(project_root=tmp_path, env={}))
    assert str(problems[0]) in str(caught.value)


def test_missing_file_is_a_validation_error(tmp_path: Path) -> None:
    problems = validate_agent_config(replay_config(tmp_path, "../recordings/none.jsonl"))
    assert [p.message for p in problems] == [
        "agent 'recorded': `path`: recordings/none.jsonl: the replay file does not exist"
    ]


def test_empty_files_have_no_answers(tmp_path: Path, request_for: Callable[..., Request]) -> None:
    write_project(tmp_path, {"agents/a.yml": "# nothing recorded yet\n", "agents/b.jsonl": ""})
    for name in ("a.yml", "b.jsonl"):
        agent = build_agent(
            replay_config(tmp_path, name), AgentContext(project_root=tmp_path, env={})
        )
        error = ask(agent, request_for("q1"), timeout_s=5, retries=0).error
        assert error == f"no recorded answer for auto/q1 in agents/{name}"


def test_a_jsonl_line_past_the_limit_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.agents.replay as replay

    monkeypatch.setattr(replay, "MAX_JSONL_LINE_BYTES", 1000)
    write_project(
        tmp_path,
        {"agents/a.jsonl": '{"name": "q1"}\n{"name": "q2", "sql": "' + "x" * 5000 + '"}\n'},
    )
    problems = validate_agent_config(replay_config(tmp_path, "a.jsonl"))
    assert [p.message for p in problems] == [
        "agent 'recorded': `path`: agents/a.jsonl:2: the line is longer than sqlbench's limit "
        "of 1,000 bytes for one recorded answer"
    ]


def test_recorded_sql_in_another_dialect_is_transpiled_to_the_warehouses(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    """Answers recorded on DuckDB replay on Spark: the SQL is transpiled before it is run."""
    write_project(
        tmp_path,
        {
            "agents/answers.jsonl": (
                '{"name": "weekday", "sql": "SELECT strftime(d, \'%A\') AS w FROM t"}\n'
                '{"name": "bad", "sql": "SELECT (((("}\n'
            )
        },
    )
    config = replay_config(tmp_path, "answers.jsonl")
    config = config.model_copy(update={"options": {"path": "answers.jsonl", "dialect": "duckdb"}})
    agent = build_agent(config, AgentContext(project_root=tmp_path, env={}))
    on_spark = ask(agent, request_for("weekday", dialect="spark"), timeout_s=5, retries=0)
    assert on_spark.sql == "SELECT DATE_FORMAT(d, 'EEEE') AS w FROM t"
    on_duckdb = ask(agent, request_for("weekday", dialect="duckdb"), timeout_s=5, retries=0)
    assert on_duckdb.sql == "SELECT strftime(d, '%A') AS w FROM t"
    failed = ask(agent, request_for("bad", dialect="spark"), timeout_s=5, retries=0)
    assert failed.sql is None
    assert failed.error is not None
    assert "the recorded duckdb SQL cannot be transpiled to spark with sqlglot" in failed.error


def test_an_unknown_replay_dialect_is_a_validation_error(tmp_path: Path) -> None:
    write_project(tmp_path, {"agents/answers.jsonl": '{"name": "q", "sql": "SELECT 1"}\n'})
    config = replay_config(tmp_path, "answers.jsonl")
    config = config.model_copy(update={"options": {"path": "answers.jsonl", "dialect": "duckbd"}})
    problems = validate_agent_config(config)
    assert [p.message for p in problems] == [
        "agent 'recorded': `dialect`: 'duckbd' is not a sqlglot dialect"
    ]


def test_a_replay_file_is_parsed_once_until_its_bytes_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation, planning and the agent each load the file: unchanged bytes are not parsed
    again; any edit (even of the same size, in the same second) is."""
    from sqlbench.agents import replay

    parsed = []
    items = replay._jsonl_items

    def counted(data: bytes, shown: str) -> Any:
        parsed.append(data)
        return items(data, shown)

    monkeypatch.setattr(replay, "_jsonl_items", counted)
    file = tmp_path / "answers.jsonl"
    file.write_text('{"name": "q1", "sql": "SELECT 1"}\n')
    first = replay.load_records(file, "answers.jsonl")
    assert replay.load_records(file, "answers.jsonl") is first
    assert len(parsed) == 1
    file.write_text('{"name": "q1", "sql": "SELECT 2"}\n')
    assert replay.load_records(file, "answers.jsonl")[(None, "q1", 1)].fields["sql"] == "SELECT 2"
    assert len(parsed) == 2


def test_a_line_with_few_brackets_is_not_walked_for_its_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each level of nesting opens with a bracket: a line holding no more brackets than the
    depth limit cannot pass it, and is not walked (Spider's 8,748 answers: about 10 us a line);
    one with more still is, and a line one level too deep is still refused."""
    from sqlbench.agents import replay

    walked: list[Any] = []
    real = replay.nesting_depth

    def counting(value: Any) -> int:
        walked.append(value)
        return real(value)

    monkeypatch.setattr(replay, "nesting_depth", counting)
    shallow = '{"name": "q1", "sql": "SELECT [x] FROM t WHERE y IN (1, 2)"}\n'
    deep_ok = '{"name": "q2", "sql": "' + "[" * 70 + '", "answer": ' + "[" * 63 + "]" * 63 + "}\n"
    write_project(tmp_path, {"agents/a.jsonl": shallow + deep_ok})
    assert validate_agent_config(replay_config(tmp_path, "a.jsonl")) == []
    assert len(walked) == 1 and walked[0]["name"] == "q2"
    too_deep = '{"name": "q1", "answer": ' + "[" * 64 + "]" * 64 + "}\n"
    write_project(tmp_path, {"agents/a.jsonl": too_deep})
    problems = validate_agent_config(replay_config(tmp_path, "a.jsonl"))
    assert [p.message for p in problems] == [
        "agent 'recorded': `path`: agents/a.jsonl:1: the JSON is nested more than 64 levels "
        "deep; sqlbench reads no deeper"
    ]
