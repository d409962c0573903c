"""The ``python`` kind: project functions, sync and async, isolated per project root."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent, validate_agent_config
from sqlbench.errors import AgentError
from sqlbench.project.files import AgentConfig
from sqlbench.testing import write_project


def python_agent(function: str, root: Path | None = None) -> AgentConfig:
    if root is None:
        return AgentConfig(name="py", kind="python", options={"function": function})
    return AgentConfig(
        name="py",
        kind="python",
        options={"function": function},
        path="agents/py.yml",
        line=3,
        base_dir=root / "agents",
    )


def ask_one(root: Path, function: str, request: Request) -> tuple[str | None, str | None]:
    agent = build_agent(python_agent(function), AgentContext(project_root=root, env={}))
    answer = ask(agent, request, timeout_s=10, retries=0)
    return answer.sql, answer.error


def test_sync_function_returning_sql_text(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    write_project(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/simple.py": """
        def answer(request):
            return f"SELECT '{request['space']}/{request['name']}: {request['question']}'"
    """,
        },
    )
    assert ask_one(tmp_path, "agents.simple:answer", request_for("q7", question="Hi?")) == (
        "SELECT 'auto/q7: Hi?'",
        None,
    )


def test_async_function_returning_an_answer_mapping(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    write_project(
        tmp_path,
        {
            "sql_agent.py": """
        import asyncio

        async def answer(request):
            await asyncio.sleep(0.01)
            return {"sql": "SELECT 1", "tool_calls": [{"name": "lookup", "arguments": {}}],
                    "usage": {"input_tokens": 5, "output_tokens": 1}}
    """
        },
    )
    agent = build_agent(
        python_agent("sql_agent:answer"), AgentContext(project_root=tmp_path, env={})
    )
    answer = ask(agent, request_for(), timeout_s=10, retries=0)
    assert answer.error is None and answer.sql == "SELECT 1"
    assert [call.name for call in answer.tool_calls] == ["lookup"]


def test_method_of_an_object_and_helper_imports_from_the_project(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    write_project(
        tmp_path,
        {
            "helpers.py": "TABLE = 'orders'\n",
            "agents/__init__.py": "",
            "agents/obj.py": """
            import helpers

            class Agent:
                def answer(self, request):
                    return f"SELECT count(*) FROM {helpers.TABLE}"

            agent = Agent()
        """,
        },
    )
    assert ask_one(tmp_path, "agents.obj:agent.answer", request_for()) == (
        "SELECT count(*) FROM orders",
        None,
    )


def test_two_roots_with_the_same_module_name_never_share_it(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    # Two versions of a project (two git refs extracted side by side) in one process.
    for ref, table in (("base", "orders_v1"), ("head", "orders_v2")):
        write_project(
            tmp_path / ref,
            {
                "agents/__init__.py": "",
                "agents/tables.py": f"TABLE = {table!r}\n",
                "agents/sql_agent.py": """
                from agents.tables import TABLE

                def answer(request):
                    return f"SELECT * FROM {TABLE}"
            """,
            },
        )
    base = ask_one(tmp_path / "base", "agents.sql_agent:answer", request_for())
    head = ask_one(tmp_path / "head", "agents.sql_agent:answer", request_for())
    again = ask_one(tmp_path / "base", "agents.sql_agent:answer", request_for())
    assert (base, head, again) == (
        ("SELECT * FROM orders_v1", None),
        ("SELECT * FROM orders_v2", None),
        ("SELECT * FROM orders_v1", None),
    )
    assert "agents.sql_agent" not in sys.modules
    assert str(tmp_path / "base") not in sys.path


def test_a_project_module_named_like_an_installed_one(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    import json  # noqa: F401  (make sure the real json is loaded and stays so)

    write_project(tmp_path, {"json.py": "def answer(request):\n    return 'SELECT 99'\n"})
    assert ask_one(tmp_path, "json:answer", request_for()) == ("SELECT 99", None)
    assert hasattr(sys.modules["json"], "dumps")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def answer(request):\n    return None\n", "the function returned None"),
        ("def answer(request):\n    return {'sql': 1}\n", "wrong types: `sql`"),
        (
            "def answer(request):\n    return {'sql': 'SELECT 1', 'why': 'x'}\n",
            "unknown field(s) `why`",
        ),
        (
            "def answer(request):\n    raise RuntimeError('model offline')\n",
            "RuntimeError: model offline",
        ),
        (
            "def answer(request):\n    return {'error': 'no access to table'}\n",
            "no access to table",
        ),
        ("async def answer(request):\n    return 42\n", "got int"),
    ],
)
def test_failures_become_error_answers(
    tmp_path: Path, request_for: Callable[..., Request], source: str, reason: str
) -> None:
    write_project(tmp_path, {"bad_agent.py": source})
    sql, error = ask_one(tmp_path, "bad_agent:answer", request_for())
    assert sql is None
    assert error is not None and reason in error


def test_import_failures_are_reported_at_build(tmp_path: Path) -> None:
    write_project(
        tmp_path, {"broken.py": "import not_a_real_module_xyz\n", "fine.py": "value = 1\n"}
    )
    context = AgentContext(project_root=tmp_path, env={})
    with pytest.raises(
        AgentError,
        match=r"cannot import broken from .*: ModuleNotFoundError: "
        r"No module named 'not_a_real_module_xyz'",
    ):
        build_agent(python_agent("broken:answer"), context)
    with pytest.raises(AgentError, match=r"fine has no attribute 'answer'"):
        build_agent(python_agent("fine:answer"), context)
    with pytest.raises(AgentError, match=r"fine:value is a int, not a function"):
        build_agent(python_agent("fine:value"), context)
    assert "broken" not in sys.modules and "fine" not in sys.modules


def test_validation_of_python_keys(tmp_path: Path) -> None:
    write_project(tmp_path, {"agents/mine.py": "def answer(request):\n    return 'SELECT 1'\n"})

    def problems(function: str) -> list[str]:
        return [p.message for p in validate_agent_config(python_agent(function, tmp_path))]

    assert problems("agents.mine:answer") == []
    assert problems("json:loads") == []  # installed modules are importable too
    assert problems("agents.mine.answer") == [
        "agent 'py': `function` must look like module:function, got 'agents.mine.answer'"
    ]
    assert problems("nowhere_xyz:answer") == [
        "agent 'py': module 'nowhere_xyz' is found neither in the project folder nor among "
        "installed packages"
    ]
