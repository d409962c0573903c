"""The ``command`` kind, driven through real subprocesses (small Python scripts in tmp)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sqlbench.agents.base import Request
from sqlbench.agents.call import ask
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent, validate_agent_config
from sqlbench.project.files import AgentConfig


def script_agent(
    context: AgentContext, body: str, *, as_string: bool = False, env: list[str] | None = None
) -> AgentConfig:
    """An agent config running ``body`` (Python) as a script of the project's ``agents/``."""
    script = context.project_root / "agents" / "agent.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import json, os, sys, time\n" + textwrap.dedent(body))
    command: str | list[str] = [sys.executable, "agents/agent.py"]
    if as_string:
        command = f"'{sys.executable}' agents/agent.py"
    options: dict[str, object] = {"command": command}
    if env is not None:
        options["env"] = env
    return AgentConfig(
        name="cmd",
        kind="command",
        options=options,
        path="agents/cmd.yml",
        line=2,
        base_dir=context.project_root / "agents",
    )


def run(
    context: AgentContext,
    body: str,
    request: Request,
    *,
    timeout_s: float = 20,
    as_string: bool = False,
    env: list[str] | None = None,
) -> tuple[str | None, str | None]:
    agent = build_agent(script_agent(context, body, as_string=as_string, env=env), context)
    answer = ask(agent, request, timeout_s=timeout_s, retries=0)
    assert answer.latency_ms is not None
    return answer.sql, answer.error


def test_json_request_on_stdin_json_answer_on_stdout(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """
        request = json.load(sys.stdin)
        print(json.dumps({"sql": f"SELECT '{request['space']}/{request['name']}', "
                                 f"'{request['dialect']}', '{request['branch']}'",
                          "usage": {"input_tokens": 7, "output_tokens": 2}}))
    """
    sql, error = run(context, body, request_for("revenue", space="sales"))
    assert error is None
    assert sql == "SELECT 'sales/revenue', 'duckdb', 'main'"


def test_bare_sql_on_stdout_and_a_shell_style_command_string(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """
        sys.stdin.read()
        print("SELECT 42 AS answer")
        print("some log line", file=sys.stderr)
    """
    assert run(context, body, request_for(), as_string=True) == ("SELECT 42 AS answer", None)


def test_runs_in_a_folder_of_its_own_with_the_variables_it_names(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    env = {"PATH": os.environ["PATH"], "TEAM": "data", "OTHER": "x"}
    context = AgentContext(project_root=root, env=env)
    body = """
        print("SELECT '" + os.getcwd() + "', '" + os.environ.get("TEAM", "?") + "', '"
              + os.environ.get("OTHER", "?") + "'")
    """
    sql, error = run(context, body, request_for(), env=["TEAM"])
    assert error is None and sql is not None
    cwd = sql.split("'")[1]
    assert not cwd.startswith(str(root)) and "sqlbench-agent-" in cwd
    assert sql.endswith("'data', '?'")  # TEAM named in `env:`, OTHER not


PEEK = """
    import pathlib
    request = json.load(sys.stdin)
    here = pathlib.Path(__file__).resolve().parent
    tried = [pathlib.Path("eval_questions"), pathlib.Path("../eval_questions"),
             here / "eval_questions", here.parent / "eval_questions",
             pathlib.Path("certified_queries"), here.parent / "certified_queries",
             pathlib.Path(".sqlbench"), here.parent / ".sqlbench"]
    for value in os.environ.values():  # every path the environment names, and its parents
        for part in value.split(os.pathsep):
            if part.startswith("/"):
                for folder in [pathlib.Path(part), *pathlib.Path(part).parents]:
                    tried += [folder / "eval_questions", folder / ".sqlbench"]
    cwd = pathlib.Path.cwd()
    tried += [f / "eval_questions" for f in [cwd, *cwd.parents]]
    found = [str(p) for p in tried if p.exists()]
    keys = sorted(k for k in os.environ if k.startswith("SQLBENCH") or k.endswith("_KEY"))
    print(json.dumps({"answer": json.dumps({"found": found, "keys": keys})}))
"""


def test_the_answer_key_and_sqlbench_secrets_are_out_of_reach(
    tmp_path: Path, request_for: Callable[..., Request]
) -> None:
    root = tmp_path / "project"
    for folder in ("eval_questions", "certified_queries", ".sqlbench", "agents/sub"):
        (root / folder).mkdir(parents=True)
    (root / "eval_questions" / "q.yml").write_text("eval_questions: []\n")
    (root / "agents" / "sub" / "helper.txt").write_text("the agent's own file\n")
    (root / "agents" / "eval_questions").symlink_to(root / "eval_questions")
    env = {
        "PATH": f"{root}/.venv/bin:" + os.environ["PATH"],
        "HOME": str(tmp_path),
        "OLDPWD": str(root),
        "PROJECT_DIR": str(root),
        "SQLBENCH_SIGNING_KEY": "s3cret",
        "SQLBENCH_LLM_API_KEY": "k",
        "SQLBENCH_STORE": f"sqlite:///{root}/.sqlbench/runs.db",
        "SQLBENCH_JUDGE_API_KEY": "j",
    }
    context = AgentContext(project_root=root, env=env)
    agent = build_agent(script_agent(context, PEEK), context)
    answer = ask(agent, request_for(), timeout_s=20, retries=0)
    assert answer.error is None, answer.error
    seen = json.loads(answer.answer or "{}")
    assert seen == {"found": [], "keys": []}
    # The agent's own files came along, its helper folder included.
    assert (Path(agent.cwd) / "agents" / "sub" / "helper.txt").read_text() == (
        "the agent's own file\n"
    )


def test_env_may_not_name_sqlbench_variables(context: AgentContext) -> None:
    config = script_agent(context, "print('SELECT 1')", env=["SQLBENCH_SIGNING_KEY"])
    problems = validate_agent_config(config)
    assert any("SQLBENCH_SIGNING_KEY" in str(p) and "never passed" in str(p) for p in problems)


def test_answer_in_words_is_neither_sql_nor_error(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """print(json.dumps({"answer": "That data is not in the warehouse."}))"""
    assert run(context, body, request_for()) == (None, None)


def test_error_field_is_an_agent_error(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """print(json.dumps({"error": "model quota exhausted"}))"""
    assert run(context, body, request_for()) == (None, "model quota exhausted")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('print(\'{"sql": "SELECT 1"\')', "the answer is not valid JSON"),
        ('print(json.dumps({"sql": ["SELECT 1"]}))', "wrong types: `sql`"),
        ('print(json.dumps({"sql": "SELECT 1", "rationale": "x"}))', "unknown field(s)"),
        ("pass", "the agent printed nothing"),
        ("sys.stdout.buffer.write(b'SELECT \\xff')", "not UTF-8"),
    ],
)
def test_invalid_output_is_an_agent_error(
    context: AgentContext, request_for: Callable[..., Request], body: str, reason: str
) -> None:
    sql, error = run(context, body, request_for())
    assert sql is None
    assert error is not None and reason in error


def test_non_zero_exit_keeps_the_tail_of_stderr(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """
        for i in range(30):
            print(f"noise {i}", file=sys.stderr)
        print("SELECT 1")
        raise ValueError("the model returned garbage")
    """
    sql, error = run(context, body, request_for())
    assert sql is None
    assert error is not None
    assert error.startswith("the command exited with status 1; stderr:\nnoise 29\nTraceback")
    assert error.endswith("\nValueError: the model returned garbage")  # its own lines
    assert "noise 0" not in error


def test_killed_by_a_signal_says_so(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """
        import signal
        os.kill(os.getpid(), signal.SIGTERM)
    """
    _, error = run(context, body, request_for())
    assert error == "the command was killed by signal SIGTERM (stderr was empty)"


def test_timeout_kills_the_process_tree_and_keeps_stderr(
    context: AgentContext, request_for: Callable[..., Request], tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    body = f"""
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("thinking hard...", file=sys.stderr, flush=True)
        time.sleep(60)
    """
    start = time.monotonic()
    sql, error = run(context, body, request_for(), timeout_s=2.5)
    assert time.monotonic() - start < 5
    assert sql is None
    assert error is not None
    assert error.startswith("the command did not answer within")
    assert "and was killed; stderr:\nthinking hard..." in error
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # the kernel reaps the killed grandchild via init shortly after
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_endless_output_is_an_agent_error_with_bounded_memory(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    # Regression: stdout was read whole (communicate), so `yes`-like output filled gigabytes
    # of memory before the timeout; now reading stops past the cap and the program is killed.
    body = """
        chunk = "SELECT " * 10_000
        while True:
            sys.stdout.write(chunk)
    """
    start = time.monotonic()
    sql, error = run(context, body, request_for(), timeout_s=20)
    assert time.monotonic() - start < 10
    assert sql is None
    assert error == (
        "the command printed more than 16 MB on stdout and was killed (an answer is SQL text "
        "or a JSON answer object)"
    )


def test_pipes_are_closed_after_each_answer(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        pytest.skip("needs /proc to count open file descriptors")
    agent = build_agent(script_agent(context, 'print("SELECT 1")'), context)
    ask(agent, request_for(), timeout_s=20, retries=0)  # warm up (imports, lazy state)
    before = len(list(fd_dir.iterdir()))
    for _ in range(20):
        assert ask(agent, request_for(), timeout_s=20, retries=0).sql == "SELECT 1"
    time.sleep(0.2)  # the reader threads close their pipes as they finish
    assert len(list(fd_dir.iterdir())) <= before + 2


def test_a_missing_program_is_an_agent_error(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    config = AgentConfig(
        name="cmd", kind="command", options={"command": "./agents/missing.sh --fast"}
    )
    answer = ask(build_agent(config, context), request_for(), timeout_s=5, retries=0)
    assert answer.error is not None and "cannot start './agents/missing.sh'" in answer.error


def test_validation_of_command_keys(context: AgentContext) -> None:
    def problems(options: dict[str, object]) -> list[str]:
        config = AgentConfig(
            name="cmd",
            kind="command",
            options=options,
            path="agents/cmd.yml",
            line=4,
            base_dir=context.project_root / "agents",
        )
        return [str(p) for p in validate_agent_config(config)]

    assert problems({"command": [sys.executable, "-V"]}) == []
    assert problems({"comand": "x"}) == [
        "agents/cmd.yml:4: error: agent 'cmd': unknown key 'comand' for kind command; did you "
        "mean 'command'? (keys: command, trace_format, env)",
    ]
    assert problems({}) == [
        "agents/cmd.yml:4: error: agent 'cmd': kind command needs the key 'command'"
    ]
    assert problems({"command": "run 'unbalanced"}) == [
        "agents/cmd.yml:4: error: agent 'cmd': `command` cannot be split like a shell command: "
        "No closing quotation"
    ]
    assert problems({"command": 5})[0].startswith(
        "agents/cmd.yml:4: error: agent 'cmd': key 'command': input should be a valid string"
    )
    assert problems({"command": "./agents/nope.sh"}) == [
        "agents/cmd.yml:4: warning: agent 'cmd': the program './agents/nope.sh' does not exist "
        "in the project folder (it is copied from there into the agent's working folder)"
    ]
    assert problems({"command": "no-such-program-xyz --flag"}) == [
        "agents/cmd.yml:4: warning: agent 'cmd': the program 'no-such-program-xyz' is not on "
        "PATH on this machine"
    ]
    # The script an interpreter runs must exist, not only the interpreter.
    assert problems({"command": "python3 -u agent.py --fast"}) == [
        "agents/cmd.yml:4: error: agent 'cmd': the script 'agent.py' that `command` runs does "
        "not exist in the project folder (commands run there; write the path from the project "
        "folder)"
    ]
    (context.project_root / "agent.py").write_text("print('SELECT 1')\n")
    assert problems({"command": "python3 -u agent.py --fast"}) == []
    assert problems({"command": "python3 -m some_package"}) == []


def test_a_missing_python_suggests_python3(
    context: AgentContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_python3 = tmp_path / "bin"
    only_python3.mkdir()
    (only_python3 / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(only_python3))
    (context.project_root / "agent.py").write_text("print('SELECT 1')\n")
    config = AgentConfig(
        name="cmd",
        kind="command",
        options={"command": "python agent.py"},
        path="agents/cmd.yml",
        line=4,
        base_dir=context.project_root / "agents",
    )
    assert [str(p) for p in validate_agent_config(config)] == [
        "agents/cmd.yml:4: warning: agent 'cmd': the program 'python' is not on PATH on this "
        "machine; did you mean 'python3'?"
    ]


@pytest.mark.parametrize(
    ("printed", "sql"),
    [
        ("Here is the query:\n```sql\nSELECT count(*) FROM t\n```\n", "SELECT count(*) FROM t"),
        ("```\nSELECT 1\n```", "SELECT 1"),
        ("Sure! The query is:\nSELECT n\nFROM t;\nIt counts rows.", "SELECT n\nFROM t"),
        ('{"sql": "```sql\\nSELECT 2\\n```"}', "SELECT 2"),
    ],
)
def test_sql_in_a_markdown_fence_or_a_sentence_is_taken_out(
    context: AgentContext, request_for: Callable[..., Request], printed: str, sql: str
) -> None:
    body = f"""
        sys.stdin.read()
        sys.stdout.write({printed!r})
    """
    assert run(context, body, request_for()) == (sql, None)


def test_printed_words_without_sql_are_an_answer_in_words(
    context: AgentContext, request_for: Callable[..., Request]
) -> None:
    body = """
        sys.stdin.read()
        print("I do not know which table holds revenue.")
    """
    agent = build_agent(script_agent(context, body), context)
    answer = ask(agent, request_for(), timeout_s=20, retries=0)
    assert answer.sql is None and answer.error is None
    assert answer.answer == "I do not know which table holds revenue."
