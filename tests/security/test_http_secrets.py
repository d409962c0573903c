"""Findings 2, 3 and 6: credentials never cross origins, secrets never reach an output, error
bodies are capped. Real HTTP servers on 127.0.0.1 and ``localhost`` (two origins)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from secutil import CANARY, Server, Sqlbench, json_reply, write_files

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"
ENV = {"TOKEN": CANARY, "PW": CANARY}


def project(root: Path, agents: str, settings: str = "") -> Path:
    """A project with ``agents``; agent calls are not retried (unless ``settings`` has its own
    ``run:``), so a refused or redirected call fails at once instead of waiting out backoff."""
    if "run:" not in settings:
        settings = "run:\n  retries: 0\n" + settings
    return write_files(
        root / "proj",
        {"sqlbench.yml": settings, "eval_questions/q.yml": QUESTIONS, "agents/a.yml": agents},
    )


@pytest.fixture
def thief() -> Iterator[Server]:
    """The other origin: answers anything with a passing answer, and keeps what it got."""
    server = Server("localhost", lambda *_: json_reply({"sql": "SELECT 1 AS x"}))
    yield server
    server.close()


def redirector(location: str, status: int = 302) -> Server:
    return Server("127.0.0.1", lambda *_: (status, {"Location": location}, b""))


def http_agent(url: str) -> str:
    return (
        "agents:\n  - name: web\n    kind: http\n"
        f"    url: {url}\n"
        "    headers:\n      Authorization: Bearer ${TOKEN}\n      X-Api-Key: ${TOKEN}\n"
    )


def llm_agent(base_url: str) -> str:
    return (
        "agents:\n  - name: bot\n    kind: llm\n"
        f"    base_url: {base_url}\n    model: m\n    api_key_env: TOKEN\n    max_tool_calls: 0\n"
    )


def all_outputs(sb: Sqlbench, proj: Path, agent: str) -> str:
    """Run the agent with every output format (JSON on stdout, JUnit and Markdown to files),
    export the last run and show its question in full; everything printed or written."""
    out = proj.parent
    texts = []
    for fmt in ("json", "junit", "markdown"):
        args = ["run", "--agent", agent, "--format", fmt]
        if fmt != "json":
            args += ["--output", str(out / f"out.{fmt}")]
        run = sb(*args, cwd=proj, env=ENV)
        assert run.returncode == 0, run.stderr
        texts += [run.stdout, run.stderr]
        if fmt != "json":
            texts.append((out / f"out.{fmt}").read_text())
    exported = sb("export", "latest", cwd=proj)
    shown = sb("show", "latest", "one", cwd=proj)
    return "\n".join([*texts, exported.stdout, exported.stderr, shown.stdout, shown.stderr])


@pytest.mark.parametrize("kind", ["http", "llm"])
def test_a_redirect_to_another_origin_sends_no_credential_and_is_not_the_answer(
    tmp_path: Path, sb: Sqlbench, thief: Server, kind: str
) -> None:
    hop = redirector(f"{thief.url}/steal")
    try:
        agents = http_agent(f"{hop.url}/ask") if kind == "http" else llm_agent(f"{hop.url}/v1")
        proj = project(tmp_path, agents)
        text = all_outputs(sb, proj, "web" if kind == "http" else "bot")
    finally:
        hop.close()
    assert thief.received == []
    assert "redirected to another origin (http://localhost:" in text
    result = json.loads(sb.printed[0].decode())
    assert [r["verdict"] for r in result["results"]] == ["error"]
    sb.assert_no_canary()


def test_a_redirect_to_ftp_is_refused(tmp_path: Path, sb: Sqlbench) -> None:
    hop = redirector("ftp://127.0.0.1/x")
    try:
        proj = project(tmp_path, http_agent(f"{hop.url}/ask"))
        run = sb("run", "--agent", "web", "--format", "json", cwd=proj, env=ENV)
    finally:
        hop.close()
    assert "redirected to ftp://127.0.0.1/x, which is not an http(s) URL" in run.stdout
    sb.assert_no_canary()


def test_a_same_origin_redirect_keeps_working(tmp_path: Path, sb: Sqlbench) -> None:
    def handler(
        path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path == "/ask":
            return 307, {"Location": "/v2/ask"}, b""
        assert headers["x-api-key"] == CANARY
        return json_reply({"sql": "SELECT 1 AS x"})

    server = Server("127.0.0.1", handler)
    try:
        proj = project(tmp_path, http_agent(f"{server.url}/ask"))
        run = sb("run", "--agent", "web", "--format", "json", cwd=proj, env=ENV)
    finally:
        server.close()
    assert [r["verdict"] for r in json.loads(run.stdout)["results"]] == ["pass"]
    sb.assert_no_canary()


def test_an_llm_error_quoting_the_key_reaches_no_output_or_store(
    tmp_path: Path, sb: Sqlbench
) -> None:
    def handler(
        path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        return json_reply({"error": {"message": f"invalid key {headers['authorization']}"}})

    server = Server("127.0.0.1", handler)
    try:
        proj = project(tmp_path, llm_agent(f"{server.url}/v1"))
        text = all_outputs(sb, proj, "bot")
    finally:
        server.close()
    assert "invalid key Bearer ${TOKEN}" in text
    sb.assert_no_canary()


def test_a_key_in_the_base_url_query_is_masked_in_cannot_reach(
    tmp_path: Path, sb: Sqlbench
) -> None:
    proj = project(tmp_path, llm_agent("http://127.0.0.1:9/v1?key=${PW}"))
    text = all_outputs(sb, proj, "bot")
    assert "cannot reach" in text
    proj2 = project(tmp_path / "env", "agents: []\n", "default_agent: auto\n")
    run = sb(
        "run",
        "--format",
        "json",
        cwd=proj2,
        env={
            **ENV,
            "SQLBENCH_LLM_BASE_URL": f"http://127.0.0.1:9/v1?api_key={CANARY}",
            "SQLBENCH_LLM_MODEL": "m",
        },
    )
    assert run.returncode in (0, 2)
    sb.assert_no_canary()


def test_userinfo_is_parsed_as_userinfo_and_values_are_url_encoded(
    tmp_path: Path, sb: Sqlbench
) -> None:
    def handler(
        path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        return json_reply({"sql": "SELECT 1 AS x"})

    server = Server("127.0.0.1", handler)
    password = CANARY + "@evil.example/x"
    try:
        proj = project(tmp_path, http_agent(f"http://u:${{PW}}@127.0.0.1:{server.port}/ask"))
        run = sb("run", "--agent", "web", "--format", "json", cwd=proj, env={**ENV, "PW": password})
    finally:
        server.close()
    assert [r["verdict"] for r in json.loads(run.stdout)["results"]] == ["pass"]
    auth = server.received[0][1]["authorization"]
    assert base64.b64decode(auth.split()[1]).decode() == f"u:{password}"
    sb.assert_no_canary()


def test_a_file_url_from_a_variable_is_not_read(tmp_path: Path, sb: Sqlbench) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"sql": f"SELECT '{CANARY}' AS x"}))
    sb.planted.add(secret)
    proj = project(tmp_path, http_agent("${AGENT_URL}"))
    run = sb(
        "run",
        "--agent",
        "web",
        "--format",
        "json",
        cwd=proj,
        env={**ENV, "AGENT_URL": f"file://{secret}"},
    )
    assert "is not an http:// or https:// URL" in run.stdout
    sb.assert_no_canary()


def test_literal_warehouse_and_store_passwords_are_masked(tmp_path: Path, sb: Sqlbench) -> None:
    proj = project(
        tmp_path,
        "agents: []\n",
        f"warehouse: postgresql+psycopg://u:{CANARY}@127.0.0.1:9/db\ndefault_agent: auto\n",
    )
    sb.planted.add(proj / "sqlbench.yml")
    for args in (["run"], ["validate", "--execute"]):
        proc = sb(*args, cwd=proj)
        assert proc.returncode in (1, 2)
        assert "u:***@127.0.0.1:9" in proc.stdout + proc.stderr
    proj2 = project(
        tmp_path / "s",
        "agents: []\n",
        f"store: postgresql+psycopg://u@127.0.0.1:9/db?password={CANARY}\n",
    )
    sb.planted.add(proj2 / "sqlbench.yml")
    proc = sb("runs", cwd=proj2)
    assert proc.returncode == 2 and "password=***" in proc.stderr
    sb.assert_no_canary()


def test_a_huge_error_body_is_not_read_whole(tmp_path: Path, sb: Sqlbench) -> None:
    size = 400 * 2**20

    def body() -> Iterator[bytes]:
        chunk = b"x" * 2**20
        for _ in range(size // len(chunk)):
            yield chunk

    server = Server("127.0.0.1", lambda *_: (500, {}, body()))
    try:
        proj = project(tmp_path, http_agent(f"{server.url}/ask"), "run:\n  retries: 0\n")
        rss_file = tmp_path / "peak_rss_kib"
        run = sb(
            "run",
            "--agent",
            "web",
            "--format",
            "json",
            cwd=proj,
            env=ENV,
            peak_rss_file=rss_file,
        )
    finally:
        server.close()
    assert "HTTP 500 from" in run.stdout
    peak = int(rss_file.read_text())
    assert peak < 350 * 1024, f"peak RSS {peak // 1024} MB"
