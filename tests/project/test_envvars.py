"""${ENV_VAR} interpolation: resolved only where used, never stored, redacted in messages."""

from __future__ import annotations

import pytest

from sqlbench.project.envvars import (
    EnvVarError,
    env_var_names,
    redact,
    resolve,
    resolve_data,
    template_error,
)
from sqlbench.testing import write_project


def test_resolve_replaces_references_and_defaults() -> None:
    env = {"USER_NAME": "ana", "PW": "s3cret", "EMPTY": ""}
    text = "postgresql://${USER_NAME}:${PW}@${HOST:-localhost}/db?x=${EMPTY:-d}"
    assert resolve(text, env) == "postgresql://ana:s3cret@localhost/db?x=d"
    assert resolve("cost $5 and $${LITERAL}", {}) == "cost $5 and ${LITERAL}"


def test_an_unset_variable_is_one_sentence_naming_where() -> None:
    with pytest.raises(EnvVarError) as caught:
        resolve("Bearer ${TOKEN}", {}, where="headers of agent 'api'")
    assert str(caught.value) == (
        "environment variable TOKEN is not set (in headers of agent "
        "'api'); set it, or write ${TOKEN:-default}"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("${}", "not a valid variable reference"),
        ("${1X}", "not a valid variable reference"),
        ("abc ${OPEN", "unclosed"),
    ],
)
def test_malformed_templates(text: str, problem: str) -> None:
    message = template_error(text)
    assert message is not None and problem in message
    with pytest.raises(EnvVarError, match=problem):
        resolve(text, {})


def test_names_and_nested_data() -> None:
    assert env_var_names("${A}${B:-x}${A}$${C}") == ["A", "B"]
    data = {"headers": {"Authorization": "Bearer ${T}"}, "retries": 3, "list": ["${T}"]}
    assert resolve_data(data, {"T": "tok"}) == {
        "headers": {"Authorization": "Bearer tok"},
        "retries": 3,
        "list": ["tok"],
    }


def test_redact_puts_secrets_back_in_their_reference_form() -> None:
    env = {"PW": "s3cret", "USER_NAME": "ana"}
    message = "login failed for postgresql://ana:s3cret@db (password 's3cret')"
    assert redact(message, ["postgresql://${USER_NAME}:${PW}@db"], env) == (
        "login failed for postgresql://${USER_NAME}:${PW}@db (password '${PW}')"
    )


def test_loaded_projects_keep_the_reference_form(tmp_path, monkeypatch) -> None:
    from sqlbench.validation import load_project

    monkeypatch.setenv("PGPASSWORD", "hunter2")
    write_project(
        tmp_path,
        {
            "sqlbench.yml": {"warehouse": "postgresql://u:${PGPASSWORD}@db/x"},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {"name": "q", "question": "How many in 2024?", "sql": "SELECT 1"}
                ]
            },
            "agents/a.yml": {
                "agents": [
                    {
                        "name": "api",
                        "kind": "http",
                        "url": "http://h/x",
                        "headers": {"Authorization": "Bearer ${PGPASSWORD}"},
                    }
                ]
            },
        },
    )
    project = load_project(tmp_path)
    assert project.settings.warehouse == "postgresql://u:${PGPASSWORD}@db/x"
    assert project.agents["api"].options["headers"] == {"Authorization": "Bearer ${PGPASSWORD}"}
    assert "hunter2" not in project.model_dump_json()
