"""The rate limiter against a Redis that goes away and comes back: it counts in memory
meanwhile, warns once per interval, and counts in Redis again once Redis answers.

A ``redis-server`` of the test's own on a free port stands in for production's, so that
it can be stopped and started again (skipped where the binary is missing)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
import redis
from structlog.testing import capture_logs

from adapters.http.ratelimit import RateLimiter
from tests.services import free_port, stop_process, wait_for_port

REDIS_SERVER = shutil.which("redis-server")


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def warnings_in(logged: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [line["event"] for line in logged if line["log_level"] == "warning"]


def test_a_refusing_redis_is_warned_about_once_per_interval():
    clock = Clock()
    limiter = RateLimiter(f"redis://127.0.0.1:{free_port()}/0", retry_after=0, clock=clock)
    with capture_logs() as logged:
        verdicts = [limiter.hit("key_a", 100) for _ in range(5)]
        clock.now += 59
        limiter.hit("key_a", 100)
        clock.now += 2  # 61 s after the first warning
        limiter.hit("key_a", 100)
    assert [v.remaining for v in verdicts] == [99, 98, 97, 96, 95]
    assert warnings_in(logged) == ["rate_limit_store_unavailable"] * 2


def test_after_a_failure_redis_is_left_alone_until_the_retry_interval_passes():
    clock = Clock()
    limiter = RateLimiter(f"redis://127.0.0.1:{free_port()}/0", retry_after=5, clock=clock)
    assert limiter.hit("key_a", 10).allowed
    assert not limiter._shared_usable()
    clock.now += 5
    assert limiter._shared_usable()


def test_memory_only_limiters_never_touch_a_store_and_are_always_ready():
    limiter = RateLimiter()
    assert not limiter.shared
    assert limiter.ping()
    assert limiter.hit("key_a", 10).remaining == 9


@pytest.fixture
def own_redis() -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """A port and a started ``redis-server`` on it (in a list, so a test may replace it)."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    servers = [start_redis(port)]
    yield port, servers
    for server in servers:
        if server.poll() is None:
            stop_process(server)


def start_redis(port: int) -> subprocess.Popen[bytes]:
    assert REDIS_SERVER is not None
    command = [REDIS_SERVER, "--port", str(port), "--save", "", "--appendonly", "no"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, server)
    return server


def test_counting_moves_to_memory_while_redis_is_down_and_back_once_it_returns(
    own_redis: tuple[int, list[subprocess.Popen[bytes]]],
):
    port, servers = own_redis
    url = f"redis://127.0.0.1:{port}/0"
    limiter = RateLimiter(url, retry_after=0)
    with redis.Redis.from_url(url) as direct:
        with capture_logs() as logged:
            assert limiter.hit("key_a", 100).remaining == 99  # in Redis
            assert limiter.ping()
            stop_process(servers.pop())
            during = [limiter.hit("key_a", 100) for _ in range(3)]  # in memory
            assert not limiter.ping()
            servers.append(start_redis(port))
            after = limiter.hit("key_a", 100)  # in Redis again (which forgot its count)
            assert limiter.ping()
        assert [v.remaining for v in during] == [99, 98, 97]
        assert after.remaining == 99
        assert [int(direct.get(k) or 0) for k in direct.keys("LIMITS*")] == [1]
    assert warnings_in(logged) == ["rate_limit_store_unavailable"]
    assert [line["event"] for line in logged if line["log_level"] == "info"] == [
        "rate_limit_store_recovered"
    ]
