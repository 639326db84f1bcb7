"""``booking serve`` as a person runs it: one line once it listens, real answers, and a
clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.services import free_port

BIN = Path(sys.executable).parent


def test_serve_announces_itself_answers_and_stops_cleanly_on_sigterm(tmp_path):
    env = {**os.environ, "BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}"}
    env.pop("BOOKING_REDIS_URL", None)
    demo = subprocess.run(
        [str(BIN / "booking"), "demo", "--json"], env=env, capture_output=True, check=True
    )
    key = json.loads(demo.stdout)["companies"][0]["apiKey"]
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "booking"), "serve", "--port", str(port)],
        env=env,
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
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stderr is not None:
            server.stderr.close()
