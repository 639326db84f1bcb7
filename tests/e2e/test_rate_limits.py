"""Per-key rate limits: headers on every authenticated answer, 429 past the limit, one
counter shared by every worker when Redis is configured, and answers as usual (counted in
the process, one warning logged) while that Redis is down."""

from __future__ import annotations

import attrs
import httpx
import pytest
from structlog.testing import capture_logs

from adapters.http.ratelimit import RateLimiter
from entrypoints.web import http_deps
from tests.e2e.support import API, LiveServer, Stack, add_booking, error_of, free_socket, idem
from tests.services import free_port

HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def limit_headers(response: httpx.Response) -> tuple[int, int, int]:
    limit, remaining, reset = (int(response.headers[h]) for h in HEADERS)
    return limit, remaining, reset


def test_every_authenticated_answer_carries_the_rate_limit_headers(stack: Stack):
    key = stack.new_key("catalog:read", "quotes:read", rate_limit=100)
    extra_outside_plan = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "weekly",
        "extras": [{"id": "ext_move_out"}],
    }
    with stack.client(key) as c:
        answers = [
            c.get(f"{API}/services"),  # 200
            c.post(f"{API}/quote", json={"serviceId": 5}),  # 400
            c.get(f"{API}/customers"),  # 403
            c.get(f"{API}/quotes/quo_missing"),  # 404
            c.delete(f"{API}/services"),  # 405
            c.post(f"{API}/quote", json=extra_outside_plan),  # 422
            c.get(f"{API}/no-such-route"),  # 404, unknown route
        ]
    assert [r.status_code for r in answers] == [200, 400, 403, 404, 405, 422, 404]
    counted = [limit_headers(r) for r in answers]
    assert {limit for limit, _, _ in counted} == {100}
    assert [remaining for _, remaining, _ in counted] == list(range(99, 92, -1))
    for _, _, reset in counted:
        assert 0 <= reset <= 60  # whole seconds until the window resets


def test_over_the_limit_is_429_rate_limited_with_retry_after(stack: Stack):
    key = stack.new_key("catalog:read", "customers:read", "customers:write", rate_limit=10)
    with stack.client(key) as c:
        allowed = [c.get(f"{API}/services") for _ in range(10)]
        refused = c.get(f"{API}/services")
        refused_write = c.post(f"{API}/customers", json={"name": "Late", "email": "late@x.com"})
    assert [r.status_code for r in allowed] == [200] * 10
    assert [limit_headers(r)[1] for r in allowed] == list(range(9, -1, -1))
    for response in (refused, refused_write):
        error = error_of(response, 429, "rate_limited")
        assert "10" in error["message"]
        limit, remaining, reset = limit_headers(response)
        assert (limit, remaining) == (10, 0)
        assert 1 <= int(response.headers["retry-after"]) <= 60
        assert reset <= 60
    # The refused write did nothing.
    with stack.client(stack.key) as c:
        found = c.get(f"{API}/customers", params={"search": "late@x.com"}).json()["data"]
    assert found == []


def test_each_key_has_its_own_counter(stack: Stack):
    spent = stack.new_key("catalog:read", rate_limit=10)
    fresh = stack.new_key("catalog:read", rate_limit=10)
    with stack.client(spent) as c:
        for _ in range(11):
            last = c.get(f"{API}/services")
    assert last.status_code == 429
    with stack.client(fresh) as c:
        answer = c.get(f"{API}/services")
    assert answer.status_code == 200
    assert limit_headers(answer)[1] == 9


def test_a_401_is_not_counted_and_carries_no_headers(stack: Stack, anon: httpx.Client):
    for _ in range(3):
        response = anon.get(f"{API}/services", headers={"x-api-key": "bsk_nope"})
        assert response.status_code == 401
        assert not any(h in response.headers for h in HEADERS)


def test_without_redis_the_counter_lives_in_the_process(stack: Stack):
    assert isinstance(stack.deps.rate_limiter, RateLimiter)
    assert stack.deps.rate_limiter.storage_uri == "memory://"
    assert http_deps(stack.container).rate_limiter.storage_uri == "memory://"


def test_with_redis_configured_the_app_counts_in_redis(stack: Stack, redis_url: str):
    settings = attrs.evolve(stack.container.settings, redis_url=redis_url)
    container = attrs.evolve(stack.container, settings=settings)
    assert http_deps(container).rate_limiter.storage_uri == redis_url


@pytest.mark.redis
def test_two_app_instances_on_one_redis_share_a_keys_counter(stack: Stack, redis_url: str):
    """Two servers stand in for two worker processes: each has its own limiter and Redis
    connection, and together they allow the key's limit once, not twice."""
    servers = [LiveServer(free_socket()) for _ in range(2)]
    for server in servers:
        server.start(stack.app(server.base_url, RateLimiter(redis_url)))
    key = stack.new_key("catalog:read", rate_limit=10)  # a new key: a counter of its own
    try:
        with stack.client(key) as c:
            answers = [c.get(servers[i % 2].base_url + f"{API}/services") for i in range(10)]
            over = [c.get(server.base_url + f"{API}/services") for server in servers]
    finally:
        for server in servers:
            server.stop()
    assert [r.status_code for r in answers] == [200] * 10
    assert [limit_headers(r)[1] for r in answers] == list(range(9, -1, -1))
    for response in over:
        error_of(response, 429, "rate_limited")
        assert "retry-after" in response.headers


def test_a_rate_limited_idempotent_write_does_not_claim_its_key(stack: Stack):
    key = stack.new_key("catalog:read", "payments:write", rate_limit=10)
    booking_id = add_booking(stack.container, stack.company.id)
    body = {"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 700, "method": "CASH"}
    header = idem()
    with stack.client(key) as c:
        for _ in range(10):
            c.get(f"{API}/services")
        refused = c.post(f"{API}/payments", json=body, headers=header)
    error_of(refused, 429, "rate_limited")
    # The same key later, from a client with room left, runs the write for the first time.
    with stack.client(stack.key) as c:
        later = c.post(f"{API}/payments", json=body, headers=header)
        entries = c.get(f"{API}/payments", params={"bookingId": booking_id}).json()["data"]
    assert later.status_code == 201
    assert "idempotent-replayed" not in later.headers
    assert [e["id"] for e in entries] == [later.json()["id"]]  # the refused one wrote nothing


def test_with_redis_down_requests_keep_their_answers_and_headers_and_one_warning(stack: Stack):
    """Redis configured but refusing connections: every request is counted in the process
    instead (headers and all), and the outage is logged once, not once per request."""
    down = RateLimiter(f"redis://127.0.0.1:{free_port()}/0", retry_after=0)  # ask every time
    server = LiveServer(free_socket())
    server.start(stack.app(server.base_url, down))
    key = stack.new_key("catalog:read", rate_limit=10)
    try:
        with capture_logs() as logged, stack.client(key) as c:
            answers = [c.get(server.base_url + f"{API}/services") for _ in range(11)]
    finally:
        server.stop()
    assert [r.status_code for r in answers] == [200] * 10 + [429]
    assert [limit_headers(r)[1] for r in answers[:10]] == list(range(9, -1, -1))
    warnings = [line for line in logged if line["log_level"] == "warning"]
    assert [w["event"] for w in warnings] == ["rate_limit_store_unavailable"]
    assert warnings[0]["error_type"] == "ConnectionError"
    assert not [line for line in logged if line["log_level"] == "error"]
