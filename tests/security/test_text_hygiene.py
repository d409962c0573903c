"""Findings 5, 7 and 10 (text): one string never ends a run, JUnit always parses, Markdown and
the terminal carry no markup, HTML, links or control sequences from untrusted text."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from secutil import Sqlbench, write_files

QUESTIONS = (
    "eval_questions:\n"
    "  - name: words\n    question: Words?\n    sql: SELECT 1 AS x\n"
    "  - name: badsql\n    question: Bad SQL?\n    sql: SELECT 1 AS x\n"
    "  - name: ctrl\n    question: Control?\n    sql: SELECT 1 AS x\n"
    "  - name: html\n    question: HTML?\n    sql: SELECT 1 AS x\n"
)
AGENT = r"""import json, sys
q = json.load(sys.stdin)["name"]
out = {
    "words": '{"answer": "words \\udfff here", "sql": "SELECT 1 AS x"}',
    "badsql": '{"sql": "SELECT \'\\ud800\' AS x"}',
    "ctrl": json.dumps({"sql": "SELECT 2 AS x -- \u001b[2J \u000c"}),
    "html": json.dumps({"sql": 'SELECT * FROM "<h1>ALL CHECKS PASSED</h1>[phish](http://e.example)"'}),
}[q]
print(out)
"""


def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - name: cmd\n    kind: command\n"
            "    command: [python3, agents/agent.py]\n",
            "agents/agent.py": AGENT,
        },
    )


def test_lone_surrogates_and_nul_never_end_a_run(tmp_path: Path, sb: Sqlbench) -> None:
    proj = project(tmp_path)
    run = sb("run", "--agent", "cmd", "--format", "json", "--name", "r1", cwd=proj)
    assert run.returncode == 0, run.stderr
    results = {r["name"]: r for r in json.loads(run.stdout)["results"]}
    assert results["words"]["verdict"] == "pass"
    assert results["words"]["reason"].endswith(
        "(1 character of the agent's answer that was not valid text was replaced with U+FFFD)"
    )
    assert results["badsql"]["verdict"] == "error"
    assert "not valid text (a lone surrogate or NUL)" in results["badsql"]["reason"]
    resumed = sb("run", "--resume", "r1", "--format", "json", cwd=proj)
    assert resumed.returncode == 0, resumed.stderr
    shown = sb("show", "r1", "words", cwd=proj)
    assert "words \ufffd here" in shown.stdout


def test_junit_always_parses_and_markdown_carries_no_html_or_links(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path)
    junit, markdown = tmp_path / "out.xml", tmp_path / "out.md"
    assert (
        sb(
            "run", "--agent", "cmd", "--format", "junit", "--output", str(junit), cwd=proj
        ).returncode
        == 0
    )
    ET.parse(junit)  # NUL, ESC and form feed would make this raise
    assert "\\x1b[2J" in junit.read_text()
    assert (
        sb(
            "run", "--agent", "cmd", "--format", "markdown", "--output", str(markdown), cwd=proj
        ).returncode
        == 0
    )
    # Agent SQL inside a fenced code block is inert (the fence outgrows any backtick run), and
    # so is Markdown inside a <summary> HTML line (its HTML is escaped).
    kept, fence = [], None
    for line in markdown.read_text().splitlines():
        if fence is None and re.match(r"`{3,}", line):
            fence = re.match(r"`+", line).group(0)  # type: ignore[union-attr]
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            kept.append(line)
    assert not any("<h1>" in line for line in kept)
    assert not any("[phish](" in line for line in kept if not line.startswith("<details>"))
    assert any("&lt;h1&gt;" in line for line in kept)


def test_terminal_output_shows_markup_escapes_and_emoji_codes_as_text(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path)
    name = "[bold red]RED[/bold red][link=http://evil.example]CLICK[/link]:smile:"
    assert sb("run", "--agent", "cmd", "--name", name, cwd=proj).returncode == 0
    listed = sb("runs", cwd=proj, env={"COLUMNS": "300"})
    assert name in listed.stdout
    shown = sb("show", name, "ctrl", cwd=proj)
    assert "\x1b[2J" not in shown.stdout and "\\x1b[2J" in shown.stdout
