"""``/api/v1/webhooks`` over real HTTP: register, read, change and delete endpoints, the
URL policy at the edge, tenancy and scope, the per-company cap, secret rotation, and a
queued ``webhook.test`` event.

These tests talk to a second server over the stack's database whose resolver is a
``StaticResolver`` (``NAMES``): every name resolves as the table says, without DNS, and
``receiver.test`` is exempt from the URL policy (``BOOKING_WEBHOOK_ALLOW_HOSTS``).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from structlog.testing import capture_logs

from adapters.webhooks.resolver import StaticResolver
from booking_core.webhook_endpoints import (
    MAX_ENDPOINTS_PER_COMPANY,
    ROTATION_OVERLAP,
    Attempt,
    Delivery,
    DeliveryState,
    Secret,
    WebhookEndpoint,
)
from booking_core.webhooks import new_secret
from entrypoints.bootstrap import bootstrap
from entrypoints.settings import Settings
from entrypoints.web import http_deps, warn_about_allowed_hosts, web_app
from tests.e2e.support import API, LiveServer, Stack, client, error_of, free_socket

PUBLIC = "93.184.215.14"
NAMES = {
    "hooks.example.com": PUBLIC,
    "other.example.com": "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    "intranet.example.com": "10.0.0.5",
    "split.example.com": [PUBLIC, "192.168.1.20"],
    "localhost": "127.0.0.1",
    "receiver.test": "127.0.0.1",
}
URL = "https://hooks.example.com/booking-events"
SCOPE = "webhooks:manage"


@pytest.fixture(scope="module")
def base(stack: Stack) -> Iterator[str]:
    """The base URL of a server resolving names with ``NAMES``."""
    deps = attrs.evolve(
        stack.deps,
        resolver=StaticResolver(NAMES),
        webhook_allow_hosts=frozenset({"receiver.test"}),
    )
    server = LiveServer(free_socket()).start(web_app(stack.container, deps))
    try:
        yield server.base_url
    finally:
        server.stop()


@attrs.frozen
class Tenant:
    """A company of the test's own and a client holding its full-access key."""

    company_id: str
    api: httpx.Client


@pytest.fixture
def tenant(stack: Stack, base: str) -> Iterator[Tenant]:
    company, key = stack.new_company()
    with client(base, key) as c:
        yield Tenant(company.id, c)


def register(api: httpx.Client, **fields: Any) -> dict[str, Any]:
    """A new endpoint (``URL``, every event) with ``fields`` on top; its 201 answer."""
    response = api.post(f"{API}/webhooks", json={"url": URL, "events": ["*"], **fields})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def stored(stack: Stack, company_id: str, endpoint_id: str) -> WebhookEndpoint:
    with stack.container.uow() as uow:
        return uow.webhooks.get(company_id, endpoint_id)


def pending_of(stack: Stack, endpoint_id: str) -> list[Delivery]:
    """The endpoint's deliveries that are due now, read by claiming them in a unit of work
    that is never committed (so they stay as they were)."""
    now = stack.container.clock.now()
    with stack.container.uow() as uow:
        due = uow.webhooks.claim_due(now, now + timedelta(minutes=1), 10_000)
    return [d for d in due if d.endpoint_id == endpoint_id]


def test_the_secret_is_in_the_create_answer_only(stack: Stack, tenant: Tenant, server_logs: Path):
    created = register(
        tenant.api, events=["booking.created", "payment.refunded"], description="Accounting"
    )
    secret = created.pop("secret")
    assert secret.startswith("whsec_")
    assert created["id"].startswith("whk_")
    assert created["url"] == URL
    assert created["events"] == ["booking.created", "payment.refunded"]
    assert created["active"] is True
    assert created["description"] == "Accounting"
    assert created["disabledReason"] is None
    assert created["failingSince"] is None
    assert created["previousSecretExpiresAt"] is None
    assert created["createdAt"][-6:] in {"-05:00", "-04:00"}  # the company's New York offset

    fetched = tenant.api.get(f"{API}/webhooks/{created['id']}")
    assert fetched.status_code == 200
    assert fetched.json() == created
    listed = tenant.api.get(f"{API}/webhooks")
    assert listed.json()["data"] == [created]
    patched = tenant.api.patch(f"{API}/webhooks/{created['id']}", json={"description": "Books"})
    for answer in (fetched, listed, patched):
        assert "secret" not in answer.text
        assert "whsec_" not in answer.text
    assert secret not in server_logs.read_text(encoding="utf-8")
    assert stored(stack, tenant.company_id, created["id"]).secrets == (Secret(value=secret),)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://hooks.example.com/x", "Webhook URLs must use https."),
        (
            "https://intranet.example.com/x",
            "intranet.example.com resolves to 10.0.0.5, a private address;"
            " webhook URLs must be reachable on the public internet.",
        ),
        (
            "https://split.example.com/x",
            "split.example.com resolves to 192.168.1.20, a private address;"
            " webhook URLs must be reachable on the public internet.",
        ),
        (
            "https://127.0.0.1/x",
            "127.0.0.1 is a loopback address; webhook URLs must be reachable on the public"
            " internet.",
        ),
        (
            "https://localhost:8443/x",
            "localhost resolves to 127.0.0.1, a loopback address; webhook URLs must be"
            " reachable on the public internet.",
        ),
        ("https://[::ffff:169.254.169.254]/latest", "an IPv4-mapped form of 169.254.169.254"),
        ("https://nowhere.example.com/x", "nowhere.example.com does not resolve to any address."),
        ("https://me:pw@hooks.example.com/x", "must not contain a user name or password"),
        ("ftp://hooks.example.com/x", "Webhook URLs must use https."),
    ],
)
def test_a_refused_url_is_invalid_request_on_url_with_the_reason(
    tenant: Tenant, url: str, reason: str
):
    response = tenant.api.post(f"{API}/webhooks", json={"url": url, "events": ["*"]})
    error = error_of(response, 400, "invalid_request")
    assert set(error["fieldErrors"]) == {"url"}
    assert reason in error["fieldErrors"]["url"]
    assert reason in error["message"]
    assert ":pw@" not in response.text
    assert tenant.api.get(f"{API}/webhooks").json()["data"] == []


def test_an_allowed_host_may_use_http_and_a_loopback_address(tenant: Tenant):
    created = register(tenant.api, url="http://receiver.test:8080/hooks")
    assert created["url"] == "http://receiver.test:8080/hooks"


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([], "List at least one event type"),
        (["booking.exploded"], "Unknown event type 'booking.exploded'"),
        (["webhook.test"], "Unknown event type 'webhook.test'"),
        (["booking.exploded", "nope"], "Unknown event types 'booking.exploded', 'nope';"),
        (["*", "booking.created"], '"*" subscribes to every event; list it alone.'),
        ("booking.created", "Expected a JSON array."),
        ([7], "Expected a string."),
    ],
)
def test_the_subscription_is_checked(tenant: Tenant, events: Any, problem: str):
    response = tenant.api.post(f"{API}/webhooks", json={"url": URL, "events": events})
    fields = error_of(response, 400, "invalid_request")["fieldErrors"]
    assert len(fields) == 1
    (path, text), *_ = fields.items()
    assert path.startswith("events")
    assert problem in text


def test_a_subscription_is_kept_in_order_without_repeats(tenant: Tenant):
    events = ["quote.sent", "booking.created", "quote.sent"]
    assert register(tenant.api, events=events)["events"] == ["quote.sent", "booking.created"]


def test_a_urls_fragment_is_dropped_on_register_and_on_patch(tenant: Tenant):
    """The fragment is never sent, so the endpoint keeps and shows its URL without it."""
    created = register(tenant.api, url="https://hooks.example.com/in?x=1#frag")
    assert created["url"] == "https://hooks.example.com/in?x=1"
    path = f"{API}/webhooks/{created['id']}"
    assert tenant.api.get(path).json()["url"] == "https://hooks.example.com/in?x=1"
    (listed,) = tenant.api.get(f"{API}/webhooks").json()["data"]
    assert listed["url"] == "https://hooks.example.com/in?x=1"
    moved = tenant.api.patch(path, json={"url": "https://other.example.com/#a#b"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["url"] == "https://other.example.com/"
    assert tenant.api.get(path).json()["url"] == "https://other.example.com/"


def test_every_problem_of_a_body_comes_back_at_once(tenant: Tenant):
    body = {"url": "https://intranet.example.com/", "events": ["nope"], "description": "x" * 501}
    response = tenant.api.post(f"{API}/webhooks", json=body)
    fields = error_of(response, 400, "invalid_request")["fieldErrors"]
    assert set(fields) == {"url", "events", "description"}
    loose = {"url": 5, "events": ["*"], "secret": "whsec_mine", "active": "yes"}
    fields = error_of(tenant.api.post(f"{API}/webhooks", json=loose), 400, "invalid_request")
    assert set(fields["fieldErrors"]) == {"url", "secret", "active"}
    assert fields["fieldErrors"]["secret"] == "Unknown field."
    missing = tenant.api.post(f"{API}/webhooks", json={})
    assert set(error_of(missing, 400, "invalid_request")["fieldErrors"]) == {"url", "events"}


def test_patch_changes_what_it_names_and_checks_the_url_again(tenant: Tenant):
    created = register(tenant.api, events=["lead.created"], description="CRM")
    path = f"{API}/webhooks/{created['id']}"
    refused = tenant.api.patch(path, json={"url": "https://intranet.example.com/hooks"})
    assert (
        "10.0.0.5, a private address"
        in error_of(refused, 400, "invalid_request")["fieldErrors"]["url"]
    )
    assert tenant.api.get(path).json()["url"] == URL  # unchanged

    moved = tenant.api.patch(
        path, json={"url": "https://other.example.com/in", "events": ["lead.updated"]}
    )
    assert moved.status_code == 200, moved.text
    changed = moved.json()
    assert changed["url"] == "https://other.example.com/in"
    assert changed["events"] == ["lead.updated"]
    assert changed["description"] == "CRM"  # left out: kept
    assert changed["active"] is True
    off = tenant.api.patch(path, json={"active": False}).json()
    assert off["active"] is False
    assert off["disabledReason"] is None  # turned off by the company, not the service
    assert tenant.api.get(path).json() == off

    for body, field in (
        ({"url": None}, "url"),
        ({"active": "false"}, "active"),
        ({"events": []}, "events"),
        ({"secret": "whsec_x"}, "secret"),
        ({"description": "x" * 501}, "description"),
    ):
        answer = tenant.api.patch(path, json=body)
        assert set(error_of(answer, 400, "invalid_request")["fieldErrors"]) == {field}, body


def test_turning_an_endpoint_on_again_clears_why_the_service_turned_it_off(
    stack: Stack, tenant: Tenant
):
    created = register(tenant.api)
    endpoint = stored(stack, tenant.company_id, created["id"])
    since = endpoint.created_at - timedelta(days=5)
    with stack.container.uow() as uow:  # as the worker does after a 410
        gone = "The receiver answered 410 Gone."
        uow.webhooks.save(
            attrs.evolve(endpoint, active=False, disabled_reason=gone, failing_since=since)
        )
        uow.commit()
    path = f"{API}/webhooks/{created['id']}"
    shown = tenant.api.get(path).json()
    assert shown["active"] is False
    assert shown["disabledReason"] == gone
    assert datetime.fromisoformat(shown["failingSince"]) == since

    again = tenant.api.patch(path, json={"active": True}).json()
    assert again["active"] is True
    assert again["disabledReason"] is None
    assert again["failingSince"] is None


def test_a_deleted_endpoint_is_gone_everywhere(tenant: Tenant):
    created = register(tenant.api)
    path = f"{API}/webhooks/{created['id']}"
    deleted = tenant.api.delete(path)
    assert deleted.status_code == 200
    assert deleted.json() == {"id": created["id"], "deleted": True}
    for answer in (
        tenant.api.get(path),
        tenant.api.patch(path, json={"active": False}),
        tenant.api.delete(path),
        tenant.api.get(f"{path}/deliveries"),
        tenant.api.post(f"{path}/test"),
        tenant.api.post(f"{path}/rotate-secret"),
    ):
        assert error_of(answer, 404, "not_found")["message"] == "No such webhook endpoint."
    assert tenant.api.get(f"{API}/webhooks").json()["data"] == []


def test_another_company_can_neither_see_nor_change_an_endpoint(
    stack: Stack, tenant: Tenant, base: str
):
    created = register(tenant.api)
    secret = created.pop("secret")
    path = f"{API}/webhooks/{created['id']}"
    never = tenant.api.get(f"{API}/webhooks/whk_{secrets.token_hex(12)}")
    _, other_key = stack.new_company()
    with client(base, other_key) as other:
        assert other.get(f"{API}/webhooks").json()["data"] == []
        for answer in (
            other.get(path),
            other.patch(path, json={"url": "https://other.example.com/steal"}),
            other.get(f"{path}/deliveries"),
            other.post(f"{path}/test"),
            other.post(f"{path}/rotate-secret"),
            other.delete(path),
        ):
            error = error_of(answer, 404, "not_found")
            assert error["message"] == never.json()["error"]["message"]
            assert created["id"] not in answer.text
    assert tenant.api.get(path).json() == created
    assert stored(stack, tenant.company_id, created["id"]).signing_secrets(
        stack.container.clock.now()
    ) == (secret,)
    assert pending_of(stack, created["id"]) == []


def test_every_webhook_route_needs_the_webhooks_manage_scope(stack: Stack, base: str):
    path = f"{API}/webhooks/whk_{secrets.token_hex(12)}"
    narrow = stack.issue_key({"customers:read", "customers:write", "bookings:write"}).secret
    with client(base, narrow) as c:
        for answer in (
            c.get(f"{API}/webhooks"),
            c.post(f"{API}/webhooks", json={"url": URL, "events": ["*"]}),
            c.get(path),
            c.patch(path, json={"active": False}),
            c.delete(path),
            c.get(f"{path}/deliveries"),
            c.post(f"{path}/test"),
            c.post(f"{path}/rotate-secret"),
        ):
            error = error_of(answer, 403, "insufficient_scope")
            assert error["requiredScope"] == SCOPE
            assert SCOPE in error["message"]
            assert "x-ratelimit-limit" in answer.headers
    with client(base, stack.new_key(SCOPE)) as c:
        assert c.get(f"{API}/webhooks").status_code == 200


def test_the_endpoint_past_the_cap_is_refused(stack: Stack, tenant: Tenant):
    now = stack.container.clock.now()
    with stack.container.uow() as uow:
        for n in range(MAX_ENDPOINTS_PER_COMPANY - 1):
            uow.webhooks.add(
                WebhookEndpoint(
                    id=f"whk_cap{n:03d}{secrets.token_hex(6)}",
                    company_id=tenant.company_id,
                    url=URL,
                    events=("*",),
                    secrets=(Secret(value=new_secret()),),
                    created_at=now - timedelta(minutes=n + 1),
                )
            )
        uow.commit()
    last = register(tenant.api)  # the 50th
    refused = tenant.api.post(f"{API}/webhooks", json={"url": URL, "events": ["*"]})
    message = error_of(refused, 422, "unprocessable")["message"]
    assert f"at most {MAX_ENDPOINTS_PER_COMPANY} webhook endpoints" in message
    assert tenant.api.delete(f"{API}/webhooks/{last['id']}").status_code == 200
    register(tenant.api)


def test_lists_are_paged_newest_first_and_take_no_updated_since(tenant: Tenant):
    made = [register(tenant.api, description=str(n))["id"] for n in range(3)]
    first = tenant.api.get(f"{API}/webhooks", params={"limit": 2}).json()
    assert first["hasMore"] is True
    rest = tenant.api.get(
        f"{API}/webhooks", params={"limit": 2, "cursor": first["nextCursor"]}
    ).json()
    assert rest["hasMore"] is False
    assert [e["id"] for e in [*first["data"], *rest["data"]]] == made[::-1]
    for params in ({"updatedSince": "2026-01-01T00:00:00Z"}, {"limit": 0}, {"cursor": "x"}):
        answer = tenant.api.get(f"{API}/webhooks", params=params)
        assert set(error_of(answer, 400, "invalid_request")["fieldErrors"]) == set(params)
    logged = tenant.api.get(f"{API}/webhooks/{made[0]}/deliveries", params={"cursor": "x"})
    assert set(error_of(logged, 400, "invalid_request")["fieldErrors"]) == {"cursor"}


def test_rotating_the_secret_signs_with_both_for_a_day(stack: Stack, tenant: Tenant):
    created = register(tenant.api)
    old = created["secret"]
    rotated = tenant.api.post(f"{API}/webhooks/{created['id']}/rotate-secret")
    assert rotated.status_code == 200, rotated.text
    answer = rotated.json()
    new = answer["secret"]
    assert new.startswith("whsec_")
    assert new != old
    assert old not in rotated.text
    expires = datetime.fromisoformat(answer["previousSecretExpiresAt"])
    now = stack.container.clock.now()
    assert now + ROTATION_OVERLAP - timedelta(minutes=5) < expires <= now + ROTATION_OVERLAP

    endpoint = stored(stack, tenant.company_id, created["id"])
    assert endpoint.signing_secrets(now) == (new, old)  # the new one first
    assert endpoint.signing_secrets(expires + timedelta(seconds=1)) == (new,)
    shown = tenant.api.get(f"{API}/webhooks/{created['id']}")
    assert shown.json()["previousSecretExpiresAt"] == answer["previousSecretExpiresAt"]
    assert "whsec_" not in shown.text


def test_a_test_event_is_queued_for_that_endpoint_alone(stack: Stack, tenant: Tenant):
    created = register(tenant.api, events=["booking.created"])
    bystander = register(tenant.api)
    queued = tenant.api.post(f"{API}/webhooks/{created['id']}/test")
    assert queued.status_code == 202, queued.text
    answer = queued.json()
    assert answer["id"].startswith("dlv_")
    assert answer["eventId"].startswith("evt_")
    assert answer["eventType"] == "webhook.test"
    assert answer["state"] == "pending"

    (delivery,) = pending_of(stack, created["id"])
    assert pending_of(stack, bystander["id"]) == []
    assert delivery.id == answer["id"]
    assert delivery.message_id == answer["eventId"]
    assert delivery.state is DeliveryState.PENDING
    assert delivery.attempts == 0
    envelope = json.loads(delivery.body)
    assert set(envelope) == {"id", "type", "createdAt", "data"}
    assert envelope["id"] == answer["eventId"]
    assert envelope["type"] == "webhook.test"
    assert envelope["data"] == {"webhookId": created["id"]}
    assert envelope["createdAt"][-6:] in {"-05:00", "-04:00"}  # the company's offset
    # The log lists attempts, and the worker has made none yet.
    log = tenant.api.get(f"{API}/webhooks/{created['id']}/deliveries").json()
    assert log == {"data": [], "hasMore": False, "nextCursor": ""}


def _attempt(tenant: Tenant, delivery: Delivery, event_id: str, **fields: Any) -> Attempt:
    """An attempt at a test event's delivery, as the worker logs it."""
    return Attempt(
        id=f"att_{secrets.token_hex(8)}",
        company_id=tenant.company_id,
        endpoint_id=delivery.endpoint_id,
        delivery_id=delivery.id,
        event_id=event_id,
        event_type="webhook.test",
        **fields,
    )


def test_the_delivery_log_shows_each_attempt(stack: Stack, tenant: Tenant):
    created = register(tenant.api)
    event_id = tenant.api.post(f"{API}/webhooks/{created['id']}/test").json()["eventId"]
    (delivery,) = pending_of(stack, created["id"])
    at = stack.container.clock.now()
    with stack.container.uow() as uow:  # as the worker writes them
        for n, (status, error, retry) in enumerate(
            [(503, "HTTP 503 Service Unavailable", at + timedelta(seconds=5)), (204, None, None)]
        ):
            uow.webhooks.log_attempt(
                _attempt(tenant, delivery, event_id, attempt=n + 1, status_code=status,
                         duration_ms=120 + n, error=error, next_retry_at=retry,
                         at=at + timedelta(seconds=n * 6))
            )  # fmt: skip
        uow.commit()
    log = tenant.api.get(f"{API}/webhooks/{created['id']}/deliveries", params={"limit": 1})
    page = log.json()
    assert page["hasMore"] is True
    (latest,) = page["data"]
    assert latest["attempt"] == 2
    assert latest["statusCode"] == 204
    assert latest["error"] is None
    assert latest["nextRetryAt"] is None
    rest = tenant.api.get(
        f"{API}/webhooks/{created['id']}/deliveries",
        params={"limit": 1, "cursor": page["nextCursor"]},
    ).json()
    (first,) = rest["data"]
    assert first == {
        "id": first["id"],
        "deliveryId": delivery.id,
        "eventId": event_id,
        "eventType": "webhook.test",
        "attempt": 1,
        "statusCode": 503,
        "durationMs": 120,
        "error": "HTTP 503 Service Unavailable",
        "nextRetryAt": first["nextRetryAt"],
        "at": first["at"],
    }
    assert datetime.fromisoformat(first["nextRetryAt"]) == at + timedelta(seconds=5)
    assert first["at"][-6:] in {"-05:00", "-04:00"}


def test_a_delivery_given_up_by_turning_its_endpoint_off_shows_no_next_retry(
    stack: Stack, tenant: Tenant
):
    """The log's last attempt kept ``nextRetryAt`` after PATCH ``{"active": false}`` gave
    its delivery up: a time that never comes, on an endpoint that is off."""
    created = register(tenant.api)
    path = f"{API}/webhooks/{created['id']}"
    event_id = tenant.api.post(f"{path}/test").json()["eventId"]
    (delivery,) = pending_of(stack, created["id"])
    at = stack.container.clock.now()
    retry = at + timedelta(seconds=5)
    with stack.container.uow() as uow:  # a first attempt failed, as the worker writes it
        uow.webhooks.save_delivery(attrs.evolve(delivery, attempts=1, next_attempt_at=retry))
        uow.webhooks.log_attempt(
            _attempt(tenant, delivery, event_id, attempt=1, status_code=503, duration_ms=120,
                     error="HTTP 503 Service Unavailable", next_retry_at=retry, at=at)
        )  # fmt: skip
        uow.commit()
    (waiting,) = tenant.api.get(f"{path}/deliveries").json()["data"]
    assert datetime.fromisoformat(waiting["nextRetryAt"]) == retry

    assert tenant.api.patch(path, json={"active": False}).status_code == 200

    (given_up,) = tenant.api.get(f"{path}/deliveries").json()["data"]
    assert given_up == {**waiting, "nextRetryAt": None}
    assert tenant.api.patch(path, json={"active": True}).status_code == 200
    (still,) = tenant.api.get(f"{path}/deliveries").json()["data"]
    assert still["nextRetryAt"] is None  # turned on again, the given-up delivery stays so


def test_an_endpoint_that_is_off_takes_no_test_and_keeps_nothing_queued(
    stack: Stack, tenant: Tenant
):
    created = register(tenant.api)
    path = f"{API}/webhooks/{created['id']}"
    assert tenant.api.post(f"{path}/test").status_code == 202
    assert len(pending_of(stack, created["id"])) == 1
    tenant.api.patch(path, json={"active": False})
    assert pending_of(stack, created["id"]) == []  # turned off: what was queued is dropped
    refused = tenant.api.post(f"{path}/test")
    assert "turn it on" in error_of(refused, 422, "unprocessable")["message"]
    assert pending_of(stack, created["id"]) == []
    tenant.api.patch(path, json={"active": True})
    assert tenant.api.post(f"{path}/test").status_code == 202


def test_a_test_refuses_an_unknown_field_and_takes_no_body_or_an_empty_one(
    stack: Stack, tenant: Tenant
):
    """As everywhere, an unknown field is refused (400, named) and nothing is queued; the
    OpenAPI says the body may be left out and holds no field."""
    created = register(tenant.api)
    path = f"{API}/webhooks/{created['id']}/test"
    refused = error_of(tenant.api.post(path, json={"x": 1}), 400, "invalid_request")
    assert refused["fieldErrors"] == {"x": "Unknown field."}
    assert pending_of(stack, created["id"]) == []
    assert tenant.api.post(path).status_code == 202  # no body
    assert tenant.api.post(path, json={}).status_code == 202
    assert len(pending_of(stack, created["id"])) == 2
    document = httpx.get(f"{stack.base_url}/api/openapi.json", timeout=30).json()
    body = document["paths"]["/api/v1/webhooks/{id}/test"]["post"]["requestBody"]
    assert body["required"] is False
    schema = body["content"]["application/json"]["schema"]
    assert (schema["properties"], schema["additionalProperties"]) == ({}, False)


def test_a_rotation_refuses_an_unknown_field_and_keeps_the_secret(tenant: Tenant):
    created = register(tenant.api)
    path = f"{API}/webhooks/{created['id']}/rotate-secret"
    refused = error_of(tenant.api.post(path, json={"x": 1}), 400, "invalid_request")
    assert refused["fieldErrors"] == {"x": "Unknown field."}
    read = tenant.api.get(f"{API}/webhooks/{created['id']}").json()
    assert read["previousSecretExpiresAt"] is None  # nothing rotated
    for body in (None, {}):
        rotated = tenant.api.post(path, json=body)
        assert rotated.status_code == 200, rotated.text
        assert rotated.json()["secret"].startswith("whsec_")


def test_the_allow_list_setting_reaches_the_routes_and_is_warned_about(tmp_path: Path):
    settings = Settings.from_env(
        {
            "BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'allow.sqlite3'}",
            "BOOKING_WEBHOOK_ALLOW_HOSTS": " Localhost, 127.0.0.1 ,,[::1]",
        }
    )
    assert settings.webhook_allow_hosts == {"localhost", "127.0.0.1", "::1"}
    container = bootstrap(settings, resolver=StaticResolver(NAMES))
    try:
        deps = http_deps(container)
        assert deps.webhook_allow_hosts == settings.webhook_allow_hosts
        assert deps.resolver is container.resolver
    finally:
        container.close()
    with capture_logs() as logs:
        warn_about_allowed_hosts(settings)
        warn_about_allowed_hosts(Settings.from_env({}))  # empty: no warning
    assert [(line["event"], line["log_level"]) for line in logs] == [
        ("webhook_allow_hosts_set", "warning")
    ]
    assert logs[0]["hosts"] == ["127.0.0.1", "::1", "localhost"]
    assert Settings.from_env({}).webhook_allow_hosts == frozenset()


def test_the_documented_bodies_refuse_an_empty_subscription_and_a_blank_reversal_note(
    stack: Stack,
):
    """What the API refuses, the OpenAPI description says: a schema-driven client (or a
    fuzzer) never builds a body the description allows and the API refuses."""
    document = httpx.get(f"{stack.base_url}/api/openapi.json", timeout=30).json()

    def body(path: str, method: str) -> dict[str, Any]:
        found: dict[str, Any] = document["paths"][path][method]["requestBody"]["content"]
        return found["application/json"]["schema"]

    assert body("/api/v1/webhooks", "post")["properties"]["events"]["minItems"] == 1
    assert body("/api/v1/webhooks/{id}", "patch")["properties"]["events"]["minItems"] == 1
    note = body("/api/v1/payments", "patch")["properties"]["note"]
    assert note["maxLength"] == 2000
    assert re.search(note["pattern"], "Paid twice by mistake")
    assert not re.search(note["pattern"], "   ")
    assert not re.search(note["pattern"], "")
