"""The rate limiter's counting, in memory and in Redis alike: a changed limit keeps what
the key has used, ``x-ratelimit-reset`` never says 0 while the window is closed, and
concurrent requests each get their own ``remaining``."""

from __future__ import annotations

import secrets
import threading
from typing import Any

import pytest

from adapters.http.ratelimit import KEY_PREFIX, MEMORY, RateLimiter
from tests.services import required_service


@pytest.fixture(params=["memory", "redis"])
def limiter(request: pytest.FixtureRequest) -> RateLimiter:
    uri = (
        MEMORY if request.param == "memory" else required_service("BOOKING_TEST_REDIS_URL", "Redis")
    )
    return RateLimiter(uri)


def fresh_key() -> str:
    return f"key_{secrets.token_hex(6)}"  # a counter of its own, in a shared Redis too


def test_lowering_a_keys_limit_counts_what_it_has_already_used(limiter: RateLimiter):
    key = fresh_key()
    used = [limiter.hit(key, 60) for _ in range(55)]
    assert all(v.allowed for v in used)
    lowered = limiter.hit(key, 20)  # the 56th request of the window, against 20
    assert not lowered.allowed
    assert (lowered.limit, lowered.remaining) == (20, 0)
    raised = limiter.hit(key, 100)  # the 57th, against 100
    assert raised.allowed
    assert raised.remaining == 43


def test_reset_is_at_least_one_second_while_the_window_is_closed(limiter: RateLimiter):
    key = fresh_key()
    verdicts = [limiter.hit(key, 10) for _ in range(12)]
    for v in verdicts:
        assert 1 <= v.reset_seconds <= 60
        assert int(v.headers()["x-ratelimit-reset"]) >= 1
    assert verdicts[-1].headers()["retry-after"] == verdicts[-1].headers()["x-ratelimit-reset"]


def test_concurrent_requests_each_get_their_own_remaining(limiter: RateLimiter):
    key = fresh_key()
    verdicts = []
    start = threading.Barrier(20)

    def hit() -> None:
        start.wait()
        verdicts.append(limiter.hit(key, 10))

    threads = [threading.Thread(target=hit) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    allowed = [v.remaining for v in verdicts if v.allowed]
    assert sorted(allowed) == list(range(10))  # each of 9..0 once, none twice
    assert sum(not v.allowed for v in verdicts) == 10


def test_reset_is_the_time_left_rounded_up_not_a_second_more_on_redis():
    """Redis's TTL is whole seconds rounded to the nearest: 1.9 s left read as 2, then
    rounded up again to 3. The time left, read in milliseconds, is said as 2."""
    limiter = RateLimiter(required_service("BOOKING_TEST_REDIS_URL", "Redis"))
    key = fresh_key()
    assert limiter.hit(key, 10).allowed
    storage: Any = limiter._storage
    storage.get_connection().pexpire(storage.prefixed_key(f"{KEY_PREFIX}/{key}"), 1_900)
    later = limiter.hit(key, 10)
    assert 1 <= later.reset_seconds <= 2
    assert later.remaining == 8
