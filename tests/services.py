"""What tests need to reach the machine's services and their own servers: the Postgres
and Redis URLs (skipped when unset, failed under ``BOOKING_REQUIRE_SERVICES=1`` as in
CI, so they are never skipped silently there), free ports and subprocess servers."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable

import pytest


def required_service(variable: str, what: str) -> str:
    """The URL in ``variable``, or skip (fail under ``BOOKING_REQUIRE_SERVICES=1``)."""
    url = os.environ.get(variable)
    if not url:
        if os.environ.get("BOOKING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{variable} is not set but services are required ({what})")
        pytest.skip(f"{variable} is not set ({what})")
    return url


def postgres_url() -> str:
    """``BOOKING_TEST_POSTGRES_URL`` (see ``required_service``)."""
    return required_service("BOOKING_TEST_POSTGRES_URL", "PostgreSQL")


def terminate_backend(url: str, pid: int) -> None:
    """End PostgreSQL backend ``pid`` and wait until it is gone (its farewell is then
    sent to its client)."""
    import psycopg  # only the PostgreSQL tests need the driver

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(500):
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))
            if row.fetchone() == (0,):
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} did not end")


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(
    port: int, proc: subprocess.Popen[bytes], describe: Callable[[], str] = lambda: ""
) -> None:
    """Wait (up to three minutes: a loaded two-core machine takes a minute and more to
    start a server of several processes) until ``proc`` accepts connections on ``port``."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {describe()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc``, kill it if it lingers, and close its pipes."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
