"""``booking serve`` as a person runs it: one line once it listens, real answers, a
clean stop on SIGTERM, and a request that is not readable HTTP answered in the error
shape."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.services import free_port

BIN = Path(sys.executable).parent


@contextmanager
def serving(
    tmp_path: Path, *options: str, env_extra: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], int, str, str]]:
    """``booking serve`` on a fresh demo database: the process, its port, the line it
    printed once listening and a demo key; killed afterwards if still running."""
    env = {**os.environ, "BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}"}
    env.pop("BOOKING_REDIS_URL", None)
    demo = subprocess.run(
        [str(BIN / "booking"), "demo", "--json"], env=env, capture_output=True, check=True
    )
    key = json.loads(demo.stdout)["companies"][0]["apiKey"]
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "booking"), "serve", "--port", str(port), *options],
        env={**env, **(env_extra or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline and "serving" not in line:
            line = server.stderr.readline()
            assert line or server.poll() is None, "the server exited before listening"
        yield server, port, line, key
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stderr is not None:
            server.stderr.close()


def test_serve_announces_itself_answers_and_stops_cleanly_on_sigterm(tmp_path):
    with serving(tmp_path) as (server, port, line, key):
        assert (
            line.strip()
            == f"booking: serving http://127.0.0.1:{port} (API http://127.0.0.1:{port}/api/v1)"
        )
        reply = httpx.get(
            f"http://127.0.0.1:{port}/api/v1/services",
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert reply.status_code == 200
        assert reply.json()["industries"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


SLOW_START = """\
import os, sys, time
if "--multiprocessing-fork" in sys.argv:  # a worker process uvicorn spawned
    with open(os.environ["SLOW_START_LOG"], "a") as log:
        log.write(f"{os.getpid()}\\n")
    time.sleep(8)
"""


def test_workers_that_start_slowly_on_a_busy_machine_are_waited_for(tmp_path):
    """Each worker of ``--workers 2`` takes 8 s before it can answer uvicorn's health
    checks (as importing the app does on a loaded two-core machine). uvicorn's default
    would kill each one after 5 s and start another, again and again; the two workers
    started are the two that serve."""
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "sitecustomize.py").write_text(SLOW_START, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(tmp_path / "slow"), os.environ.get("PYTHONPATH")]))
    started = tmp_path / "started.txt"
    env_extra = {"PYTHONPATH": path, "SLOW_START_LOG": str(started)}
    with serving(tmp_path, "--workers", "2", env_extra=env_extra) as served:
        server, port, line, key = served
        assert "serving" in line
        for _ in range(4):
            reply = httpx.get(
                f"http://127.0.0.1:{port}/api/v1/services",
                headers={"Authorization": f"Bearer {key}"},
                timeout=60,
            )
            assert reply.status_code == 200
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    assert len(started.read_text(encoding="utf-8").split()) == 2  # none was replaced


def _raw(port: int, data: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``data`` as it is; the status line, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return _parsed(answer)


def _parsed(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    """An answer's status line, headers and what follows its head."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
    return status, headers, body


MALFORMED = {
    "header name with a space": b"GET /api/v1/services HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",
    "NUL in the target": b"GET /api/v1/serv\x00ices HTTP/1.1\r\nHost: x\r\n\r\n",
    "two lengths": (
        b"POST /api/v1/bookings HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Content-Length: 6\r\n\r\nabcde"
    ),
    # Said two ways, the body's length is not read at all: a request hidden after what
    # the parser takes for the body is never run (RFC 9112, 6.3), nor is this one.
    "a length and chunked": (
        b"POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        b"GET /api/v1/crew HTTP/1.1\r\nHost: x\r\n\r\n"
    ),
    "broken chunk": (
        b"POST /api/v1/quote HTTP/1.1\r\nHost: x\r\nx-request-id: mine-1\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"
    ),
}


def test_a_request_that_is_not_readable_http_is_answered_in_the_error_shape(tmp_path):
    """Not uvicorn's plain-text 400: the API's shape (its request id, the caller's when
    the head was read), and a public endpoint's shape with CORS for a public path."""
    with serving(tmp_path) as (server, port, _line, _key):
        for name, data in MALFORMED.items():
            status, headers, body = _raw(port, data)
            assert status == "HTTP/1.1 400 Bad Request", name
            assert headers["content-type"] == "application/json", name
            error = json.loads(body)["error"]
            assert error["code"] == "invalid_request", name
            assert "could not be read" in error["message"], name
            assert error["requestId"] == headers["x-request-id"], name
            assert "access-control-allow-origin" not in headers, name
        assert error["requestId"] == "mine-1"
        status, headers, body = _raw(
            port,
            b"POST /api/public/sparkle-cleaning/quote HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
        )
        assert status == "HTTP/1.1 400 Bad Request"
        assert headers["access-control-allow-origin"] == "*"
        assert "x-request-id" in headers["access-control-expose-headers"]
        assert isinstance(json.loads(body)["error"], str)
        assert headers["x-request-id"].startswith("req_")
        # A broken header after a public request line: the line says whose shape it is,
        # also for a second request on a kept-alive connection (the first one was fine).
        broken = (
            b"GET /api/public/sparkle-cleaning/catalog HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"
        )
        fine = b"GET /api/public/sparkle-cleaning/catalog HTTP/1.1\r\nHost: x\r\n\r\n"
        plain = b"GET /api/v1/services HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"
        status, headers, body = _raw(port, fine + plain)  # pipelined: the second's shape
        status, headers, body = _parsed(body[int(headers["content-length"]) :])
        assert status == "HTTP/1.1 400 Bad Request"
        assert "access-control-allow-origin" not in headers
        assert json.loads(body)["error"]["code"] == "invalid_request"
        api = b"GET /api/v1/services HTTP/1.1\r\nHost: x\r\n\r\n"
        for data, answered in (
            (broken, None),
            (fine + broken, "HTTP/1.1 200 OK"),
            (api + broken, "HTTP/1.1 401 Unauthorized"),
        ):
            status, headers, body = _raw(port, data)
            if answered is not None:  # the fine request's answer first, then the 400
                assert status == answered
                length = int(headers["content-length"])
                status, headers, body = _parsed(body[length:])
            assert status == "HTTP/1.1 400 Bad Request"
            assert headers["access-control-allow-origin"] == "*"
            assert isinstance(json.loads(body)["error"], str)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        assert server.stderr is not None
        logged = server.stderr.read()
    assert "Invalid HTTP request received" not in logged  # uvicorn's plain-text line
    unreadable = [json.loads(line) for line in logged.splitlines() if "http_unreadable" in line]
    assert len(unreadable) == len(MALFORMED) + 5
    assert {"mine-1", headers["x-request-id"]} <= {line["request_id"] for line in unreadable}


@pytest.mark.parametrize("path", [None, "/api/v1/services", "/api/public/acme/quote"])
def test_the_answer_to_unreadable_http_is_whole_and_closes_the_connection(path):
    from adapters.http.wire import error_response

    answer, _ = error_response(None if path is None else {"path": path, "headers": []})
    head, _, body = answer.partition(b"\r\n\r\n")
    assert f"content-length: {len(body)}".encode() in head.split(b"\r\n")
    assert b"connection: close" in head.split(b"\r\n")


def test_a_request_target_in_absolute_form_is_routed_by_its_path(tmp_path):
    """RFC 9112, 3.2.2: a server must accept ``GET http://host/path`` as ``GET /path``."""
    with serving(tmp_path) as (_server, port, _line, key):
        host = f"127.0.0.1:{port}"
        public = f"GET http://{host}/api/public/sparkle-cleaning/catalog HTTP/1.1\r\n"
        status, headers, _ = _raw(
            port, f"{public}Host: {host}\r\nConnection: close\r\n\r\n".encode()
        )
        assert status == "HTTP/1.1 200 OK"
        assert headers["access-control-allow-origin"] == "*"
        api = f"GET HTTP://{host}/api/v1/services HTTP/1.1\r\nHost: {host}\r\n"
        request = f"{api}Authorization: Bearer {key}\r\nConnection: close\r\n\r\n"
        status, _, body = _raw(port, request.encode())
        assert status == "HTTP/1.1 200 OK"
        assert json.loads(body)["industries"]
