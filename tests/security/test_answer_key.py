"""The answer key and sqlbench's secrets out of a ``command`` agent's reach (docs/security.md):
a real ``sqlbench run`` of an agent that hunts for ``eval_questions/`` relatively, beside its
script, above its working folder and under every path its environment names, and that prints
every secret-looking variable it was given."""

from __future__ import annotations

import json
from pathlib import Path

from secutil import CANARY, Sqlbench, write_files

HUNTER = """\
import json, os, pathlib, sys

request = json.load(sys.stdin)
here = pathlib.Path(__file__).resolve().parent
tried = [pathlib.Path(p) for p in ("eval_questions", "../eval_questions", "../../eval_questions",
                                   "certified_queries", ".sqlbench", "../.sqlbench")]
tried += [here / "eval_questions", here.parent / "eval_questions", here.parent / ".sqlbench"]
for value in os.environ.values():
    for part in value.split(os.pathsep):
        if part.startswith("/"):
            for folder in [pathlib.Path(part), *pathlib.Path(part).parents]:
                tried += [folder / "eval_questions", folder / ".sqlbench"]
cwd = pathlib.Path.cwd()
tried += [folder / "eval_questions" for folder in [cwd, *cwd.parents]]
found = sorted({str(p) for p in tried if p.exists()})
secrets = sorted(k for k in os.environ if k.startswith("SQLBENCH") or k.endswith("_KEY"))
answer = {"found": found, "secrets": secrets, "team": os.environ.get("TEAM_DB", "")}
if found:
    text = (pathlib.Path(found[0]) / "q.yml").read_text()
    sql = text.split("sql: ")[1].splitlines()[0]
    print(json.dumps({"sql": sql, "answer": json.dumps(answer),
                      "tool_calls": [{"name": "read_file", "arguments": {"path": found[0]}}]}))
else:
    print(json.dumps({"answer": json.dumps(answer)}))
"""


def test_a_command_agent_finds_no_answer_key_and_no_secret(sb: Sqlbench, tmp_path: Path) -> None:
    project = write_files(
        tmp_path / "proj",
        {
            "sqlbench.yml": "default_agent: hunter\n",
            "eval_questions/q.yml": (
                "eval_questions:\n  - name: total\n    question: Total?\n"
                "    sql: SELECT 41 + 1 AS total\n"
            ),
            "agents/a.yml": (
                "agents:\n  - name: hunter\n    kind: command\n"
                "    command: [python3, agents/hunter.py]\n    env: [TEAM_DB]\n"
            ),
            "agents/hunter.py": HUNTER,
        },
    )
    env = {
        "SQLBENCH_SIGNING_KEY": CANARY,
        "SQLBENCH_LLM_API_KEY": CANARY + "-llm",
        "SQLBENCH_JUDGE_API_KEY": CANARY + "-judge",
        "OPENAI_API_KEY": CANARY + "-openai",
        "PROJECT_HOME": str(project),
        "TEAM_DB": "warehouse-of-the-team",
    }
    done = sb("run", "--format", "json", cwd=project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [result] = json.loads(done.stdout)["results"]
    seen = json.loads(result["answer"])
    assert seen == {"found": [], "secrets": [], "team": "warehouse-of-the-team"}
    assert result["verdict"] == "review"  # it answered in words: it found nothing to copy
    sb.assert_no_canary()


def test_env_naming_a_sqlbench_variable_is_refused(sb: Sqlbench, tmp_path: Path) -> None:
    project = write_files(
        tmp_path / "proj",
        {
            "eval_questions/q.yml": "eval_questions:\n  - name: q\n    question: Q?\n",
            "agents/a.yml": (
                "agents:\n  - name: greedy\n    kind: command\n    command: [python3, x.py]\n"
                "    env: [SQLBENCH_SIGNING_KEY]\n"
            ),
        },
    )
    done = sb("validate", cwd=project, env={"SQLBENCH_SIGNING_KEY": CANARY})
    assert done.returncode == 1
    assert "agents/a.yml:2: error: agent 'greedy': `env` names SQLBENCH_SIGNING_KEY" in done.stdout
    sb.assert_no_canary()
