"""Finding 6 (third pass): the viewer cannot be framed, refuses cross-site POSTs, and its POST
handling survives hostile lengths and bodies; ``latest~N`` past any run is a sentence (finding 9).

The server is the real ``ViewServer`` on 127.0.0.1; requests are raw HTTP over a socket, as a
hostile page or local process would send them.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from sqlbench.runs.locate import open_project_store
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import write_project
from sqlbench.validation import load_project
from sqlbench.view import ViewServer
from sqlbench.view.server import host_allowed

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewServer]:
    root = write_project(
        tmp_path_factory.mktemp("viewer") / "p",
        {"sqlbench.yml": "default_agent: auto\n", "eval_questions/q.yml": QUESTIONS},
    )
    run_benchmark(load_project(root), "auto", RunOptions(name="r"))
    with open_project_store(root) as store:
        server = ViewServer(store, socket_timeout_s=1.0, max_connections=4)
        server.start()
        try:
            yield server
        finally:
            server.shutdown()


def _raw(server: ViewServer, request: bytes, *, wait_s: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=wait_s) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def _post(
    server: ViewServer, body: bytes, *, headers: dict[str, str] | None = None, length: str = ""
) -> bytes:
    fields = {
        "Host": f"127.0.0.1:{server.port}",
        "Content-Type": "application/json",
        "X-Sqlbench-Token": server.token,
        "Content-Length": length or str(len(body)),
        "Connection": "close",
        **(headers or {}),
    }
    head = "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    return _raw(server, f"POST /api/review HTTP/1.1\r\n{head}\r\n".encode() + body)


def _get(server: ViewServer, path: str) -> bytes:
    host = f"127.0.0.1:{server.port}"
    return _raw(
        server, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    )


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def _decision(verdict: str = "pass") -> bytes:
    return json.dumps({"run": "r", "question": "auto/one", "verdict": verdict}).encode()


def test_every_page_forbids_framing(served: ViewServer) -> None:
    for path in ("/", "/runs/r", "/api/runs"):
        reply = _get(served, path)
        head = reply.split(b"\r\n\r\n", 1)[0].decode().lower()
        assert _status(reply) == 200, head
        assert "x-frame-options: deny" in head
        assert "content-security-policy: frame-ancestors 'none'" in head


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cross_site_post_is_refused_even_with_the_token(
    served: ViewServer, headers: dict[str, str]
) -> None:
    reply = _post(served, _decision("fail"), headers=headers)
    assert _status(reply) == 403, reply
    assert b"not this viewer's own page" in reply


def test_a_post_from_the_viewers_own_page_is_recorded(served: ViewServer) -> None:
    headers = {"Origin": f"http://127.0.0.1:{served.port}", "Sec-Fetch-Site": "same-origin"}
    reply = _post(served, _decision(), headers=headers)
    assert _status(reply) == 200, reply


@pytest.mark.parametrize("length", ["-1", "abc", "1e9", "99999999999999999999999"])
def test_a_bad_content_length_is_refused_before_reading(served: ViewServer, length: str) -> None:
    start = time.monotonic()
    reply = _post(served, b"x" * 1000, length=length)
    assert _status(reply) in (400, 413), reply
    assert time.monotonic() - start < 3


def test_a_deeply_nested_body_is_a_400(served: ViewServer) -> None:
    body = b"[" * 30000 + b"]" * 30000
    reply = _post(served, body)
    assert _status(reply) == 400, reply


def test_a_silent_connection_is_closed_at_the_socket_timeout(served: ViewServer) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"POST /api/review HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n")
        start = time.monotonic()
        assert sock.recv(100) == b""  # closed by the server, no reply to a half request
        assert time.monotonic() - start < 5


def test_idle_connections_cannot_take_more_than_the_thread_bound(served: ViewServer) -> None:
    before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(20)]
    try:
        time.sleep(0.3)
        assert threading.active_count() - before <= 4
    finally:
        for sock in idle:
            sock.close()
    # Once they are gone, the viewer answers again.
    time.sleep(1.5)
    reply = _get(served, "/api/runs")
    assert _status(reply) == 200


def test_port_80_accepts_a_host_without_the_port() -> None:
    assert host_allowed("127.0.0.1", 80) and host_allowed("localhost", 80)
    assert host_allowed("localhost:80", 80)
    assert not host_allowed("evil.example", 80) and not host_allowed("127.0.0.1", 8080)
    assert host_allowed("127.0.0.1:8080", 8080) and not host_allowed("127.0.0.1:80", 8080)


def test_latest_past_every_run_is_a_404_sentence_not_a_crash(served: ViewServer) -> None:
    reply = _get(served, "/runs/latest~99999999999999999999")
    assert _status(reply) == 404, reply
    assert b"latest~" in reply
