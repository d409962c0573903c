"""Kinds by name: validation messages, building by name, third-party kinds via entry points."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.kinds import AgentKind, KindOptions
from sqlbench.agents.registry import (
    build_agent,
    get_kind,
    kind_names,
    register_kind,
    reload_kinds,
    unregister_kind,
    validate_agent_config,
)
from sqlbench.errors import AgentError, ProjectInvalid
from sqlbench.project.files import AgentConfig

PLUGIN = """
from pydantic import Field

from sqlbench.agents.base import Answer
from sqlbench.agents.kinds import AgentKind, KindOptions


class EchoOptions(KindOptions):
    table: str = Field(min_length=1)


class EchoAgent:
    def __init__(self, name, table):
        self.name = name
        self.table = table

    def answer(self, request):
        return Answer(sql=f"SELECT '{request.question}' FROM {self.table}")


KIND = AgentKind("echo", EchoOptions, lambda config, options, context: EchoAgent(
    config.name, options.table), summary="echoes the question")
"""


@pytest.fixture
def plugin_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real distribution on sys.path declaring two ``sqlbench.agents`` entry points."""
    site = tmp_path / "site"
    (site / "sqlbench_echo_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "sqlbench_echo_plugin.py").write_text(PLUGIN)
    (site / "sqlbench_echo_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sqlbench-echo-plugin\nVersion: 0.1\n"
    )
    (site / "sqlbench_echo_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[sqlbench.agents]\necho = sqlbench_echo_plugin:KIND\n"
        "broken = sqlbench_no_such_module_xyz:KIND\n"
    )
    monkeypatch.syspath_prepend(str(site))
    reload_kinds()
    yield
    monkeypatch.undo()
    reload_kinds()


def test_built_in_kinds() -> None:
    assert kind_names() == ["auto", "command", "http", "llm", "python", "replay"]


def test_unknown_kind_lists_the_kinds_and_suggests() -> None:
    config = AgentConfig(name="a", kind="comand", options={}, path="agents/a.yml", line=3)
    assert [str(p) for p in validate_agent_config(config)] == [
        "agents/a.yml:3: error: agent 'a': unknown kind 'comand'; did you mean 'command'? "
        "(kinds: auto, command, http, llm, python, replay)"
    ]


def test_build_refuses_invalid_configs_with_every_problem() -> None:
    config = AgentConfig(
        name="a", kind="http", options={"url": "x", "retry": 3}, path="agents/a.yml", line=3
    )
    with pytest.raises(ProjectInvalid) as caught:
        build_agent(config, AgentContext(project_root=Path("."), env={}))
    assert len(caught.value.problems) == 1
    assert "unknown key 'retry' for kind http" in str(caught.value)


def test_build_by_name_and_unknown_names(tmp_path: Path) -> None:
    replay = AgentConfig(
        name="recorded", kind="replay", options={"path": "a.jsonl"}, base_dir=tmp_path
    )
    (tmp_path / "a.jsonl").write_text("")
    context = AgentContext(project_root=tmp_path, env={}, agents={"recorded": replay})
    assert build_agent("recorded", context).name == "recorded"
    with pytest.raises(
        AgentError,
        match=r"unknown agent 'recorder'; did you mean 'recorded'\? "
        r"\(agents: auto, recorded\)",
    ):
        build_agent("recorder", context)


def test_register_kind_in_code(request_for: Callable[..., Request]) -> None:
    class Options(KindOptions):
        answer_with: str

    class Fixed:
        def __init__(self, name: str, sql: str) -> None:
            self.name = name
            self.sql = sql

        def answer(self, request: Request) -> str:
            return self.sql

    kind = AgentKind(
        "fixed", Options, lambda config, options, context: Fixed(config.name, options.answer_with)
    )
    register_kind(kind)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_kind(AgentKind("fixed", Options, kind.build))
        agent = build_agent(
            AgentConfig(name="f", kind="fixed", options={"answer_with": "SELECT 7"}),
            AgentContext(project_root=Path("."), env={}),
        )
        assert ask(agent, request_for(), timeout_s=5, retries=0).sql == "SELECT 7"
    finally:
        unregister_kind("fixed")
    assert get_kind("fixed") is None


def test_a_failing_plugin_builder_is_an_agent_error() -> None:
    def explode(config: AgentConfig, options: KindOptions, context: AgentContext) -> None:
        raise RuntimeError("no GPU")

    register_kind(AgentKind("exploding", KindOptions, explode))  # type: ignore[arg-type]
    try:
        with pytest.raises(
            AgentError,
            match=r"agent 'x' \(kind exploding\) could not be built: "
            r"RuntimeError: no GPU",
        ):
            build_agent(
                AgentConfig(name="x", kind="exploding"),
                AgentContext(project_root=Path("."), env={}),
            )
    finally:
        unregister_kind("exploding")


@pytest.mark.usefixtures("plugin_installed")
def test_entry_point_kinds(request_for: Callable[..., Request]) -> None:
    assert "echo" in kind_names()
    config = AgentConfig(name="e", kind="echo", options={"table": "orders"})
    assert validate_agent_config(config) == []
    assert [
        p.message
        for p in validate_agent_config(
            AgentConfig(name="e", kind="echo", options={"tabel": "orders"})
        )
    ] == ["agent 'e': unknown key 'tabel' for kind echo; did you mean 'table'? (keys: table)"]
    agent = build_agent(config, AgentContext(project_root=Path("."), env={}))
    answer = ask(agent, request_for(question="hi"), timeout_s=5, retries=0)
    assert answer.sql == "SELECT 'hi' FROM orders"

    broken = validate_agent_config(AgentConfig(name="b", kind="broken"))
    assert [p.message for p in broken] == [
        "agent 'b': kind 'broken' comes from a plugin that failed to load: ModuleNotFoundError: "
        "No module named 'sqlbench_no_such_module_xyz'"
    ]
