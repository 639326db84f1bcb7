"""``POST /api/public/{slug}/waitlist`` over real HTTP on both backends: a customer asks
for a date or range with no opening; the company lists, reads and deletes the entry
under ``/api/v1/waitlist``; ``waitlist.created`` is recorded with it and reaches a
subscribed endpoint as ``GET /api/v1/waitlist/{id}`` renders it. Refusals are public ones
(``{"error"}``, CORS): 422 naming the field and limit over a ceiling, 400 naming the
field for a past date, a reversed or too long range, an unknown service."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from adapters.webhooks import StaticResolver, WebhookSender
from adapters.webhooks.render import EventRenderer
from booking_core.ids import new_id
from booking_core.webhook_endpoints import Secret, WebhookEndpoint
from booking_core.webhooks import allowed_hosts, new_secret
from entrypoints.worker import Worker, checked_send
from tests.e2e.support import API, Shop, Stack, crewed_company, weekday_ahead
from tests.e2e.test_public_api import PUBLIC, created, documented, events_about, refusal
from tests.webhook_receiver import Receiver


@pytest.fixture
def shop(stack: Stack) -> Shop:
    """A company of its own, with no crew: no date has an opening."""
    return crewed_company(stack, ())


@pytest.fixture
def public(stack: Stack) -> Iterator[httpx.Client]:
    with stack.client(origin="https://shop.example") as c:
        yield c


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()


def asked(shop: Shop, **changes: Any) -> dict[str, Any]:
    """A waitlist request for a week's range starting a week ahead."""
    first = weekday_ahead(shop.zone, 7)
    return {
        "serviceId": "svc_standard_clean",
        "zip": "60601",
        "dateFrom": first.isoformat(),
        "dateTo": (first + timedelta(days=6)).isoformat(),
        "frequencySlug": "one_time",
        "name": "Ana Pérez",
        "email": "ana@example.com",
        "phone": "(312) 555-0100",
        "note": "Mornings are best.",
        **changes,
    }


def test_a_public_request_is_listed_read_and_deleted_under_api_v1(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/waitlist"
    body = asked(shop)
    entry = created(public.post(url, json=body))
    assert entry["id"].startswith("wl_")
    assert {k: entry[k] for k in body if k != "phone"} == {
        k: v for k, v in body.items() if k != "phone"
    }
    assert entry["phone"] == "+13125550100"
    single = created(public.post(url, json=asked(shop, dateTo=None, phone=None, note="")))
    assert single["dateTo"] == single["dateFrom"]
    with stack.client(shop.key) as api:
        listed = api.get(f"{API}/waitlist")
        assert listed.status_code == 200, listed.text
        assert [e["id"] for e in listed.json()["data"]] == [single["id"], entry["id"]]
        assert api.get(f"{API}/waitlist/{entry['id']}").json() == entry
        gone = api.delete(f"{API}/waitlist/{entry['id']}")
        assert gone.status_code == 200, gone.text
        assert gone.json() == {"id": entry["id"], "deleted": True}
        assert api.get(f"{API}/waitlist/{entry['id']}").status_code == 404
        assert api.delete(f"{API}/waitlist/{entry['id']}").status_code == 404
        assert [e["id"] for e in api.get(f"{API}/waitlist").json()["data"]] == [single["id"]]
    # Another company sees none of it.
    with stack.client(stack.other_key) as other:
        assert other.get(f"{API}/waitlist/{single['id']}").status_code == 404


def test_the_waitlist_scopes_are_customers_read_and_write(shop: Shop, stack: Stack, public):
    entry = created(public.post(f"{PUBLIC}/{shop.company.slug}/waitlist", json=asked(shop)))
    reader = stack.issue_key({"customers:read"}, company_id=shop.company.id).secret
    with stack.client(reader) as api:
        assert api.get(f"{API}/waitlist").status_code == 200
        assert api.delete(f"{API}/waitlist/{entry['id']}").status_code == 403
    writer = stack.issue_key({"customers:write"}, company_id=shop.company.id).secret
    with stack.client(writer) as api:
        assert api.get(f"{API}/waitlist").status_code == 403
        assert api.delete(f"{API}/waitlist/{entry['id']}").status_code == 200


def test_waitlist_created_reaches_a_subscriber_as_the_api_renders_the_entry(
    shop: Shop, stack: Stack, public: httpx.Client, receiver: Receiver
):
    secret = new_secret()
    with stack.container.uow() as uow:
        uow.webhooks.add(
            WebhookEndpoint(
                id=new_id("whk"),
                company_id=shop.company.id,
                url=receiver.url("/waitlist"),
                events=("waitlist.created",),
                secrets=(Secret(value=secret),),
                created_at=stack.container.clock.now(),
            )
        )
        uow.commit()
    entry = created(public.post(f"{PUBLIC}/{shop.company.slug}/waitlist", json=asked(shop)))
    (recorded,) = events_about(stack, shop.company.id, "waitlist.created")
    assert recorded["id"] == entry["id"]
    with WebhookSender(connect_timeout=2, read_timeout=5) as sender:
        Worker(
            uow=stack.container.uow,
            render=EventRenderer(stack.container.settings.base_url),
            send=checked_send(sender, StaticResolver(), allowed_hosts("127.0.0.1")),
            clock=stack.container.clock,
        ).run_once()
    (seen,) = receiver.on("/waitlist")
    payload = Webhook(secret).verify(seen.body, seen.headers)
    assert payload["type"] == "waitlist.created"
    with stack.client(shop.key) as api:
        assert payload["data"] == api.get(f"{API}/waitlist/{entry['id']}").json()
    document = public.get("/api/openapi.json").json()
    assert "waitlist.created" in document["webhooks"]


@pytest.mark.parametrize(
    ("field", "limit"), [("name", 200), ("email", 254), ("phone", 40), ("note", 2_000)]
)
def test_a_field_over_its_ceiling_is_422_naming_field_and_limit(
    shop: Shop, stack: Stack, public: httpx.Client, field: str, limit: int
):
    over = "a" * (limit + 1) if field != "email" else "a" * limit + "@x.com"
    message = refusal(
        public.post(f"{PUBLIC}/{shop.company.slug}/waitlist", json=asked(shop, **{field: over})),
        422,
    )
    assert field in message
    assert str(limit) in message
    with stack.client(shop.key) as api:
        assert api.get(f"{API}/waitlist").json()["data"] == []
    assert events_about(stack, shop.company.id, "waitlist.created") == []


def test_a_past_date_a_reversed_or_long_range_an_unknown_service_are_400_naming_the_field(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/waitlist"
    today = datetime.now(shop.zone).date()
    first = weekday_ahead(shop.zone, 7)
    cases = [
        ("dateFrom", {"dateFrom": (today - timedelta(days=1)).isoformat(), "dateTo": None}),
        ("dateTo", {"dateTo": (first - timedelta(days=1)).isoformat()}),
        ("dateTo", {"dateTo": (first + timedelta(days=62)).isoformat()}),
        ("serviceId", {"serviceId": "svc_nothing"}),
        ("frequencySlug", {"frequencySlug": "hourly"}),
        ("zip", {"zip": "6060"}),
        ("phone", {"phone": "call me maybe"}),
        ("email", {"email": None}),
    ]
    for field, changes in cases:
        assert field in refusal(public.post(url, json=asked(shop, **changes)), 400), changes
    # Today in the company's timezone is allowed, and 62 days both included.
    assert created(public.post(url, json=asked(shop, dateFrom=today.isoformat(), dateTo=None)))
    long = {"dateTo": (first + timedelta(days=61)).isoformat()}
    assert created(public.post(url, json=asked(shop, **long)))
    with stack.client(shop.key) as api:
        assert len(api.get(f"{API}/waitlist").json()["data"]) == 2


def test_a_name_that_reverses_or_hides_text_is_400_naming_it_and_lists_nothing(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/waitlist"
    for name in ("Ana\u202ez\u00e9reP", "Ana\nP\u00e9rez", "\u200b"):
        assert "name" in refusal(public.post(url, json=asked(shop, name=name)), 400), name
    with stack.client(shop.key) as api:
        assert api.get(f"{API}/waitlist").json()["data"] == []


def test_the_route_answers_a_preflight_and_an_unknown_slug_is_404(public: httpx.Client, shop):
    url = f"{PUBLIC}/{shop.company.slug}/waitlist"
    response = public.options(url, headers={"access-control-request-method": "POST"})
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "*"
    assert "POST" in response.headers["access-control-allow-methods"].split(", ")
    assert refusal(public.post(f"{PUBLIC}/nobody-here/waitlist", json=asked(shop)), 404)


def test_answers_match_the_documented_schemas(shop: Shop, stack: Stack, public: httpx.Client):
    document = public.get("/api/openapi.json").json()
    url = f"{PUBLIC}/{shop.company.slug}/waitlist"
    made = public.post(url, json=asked(shop))
    documented(document, "POST", "/{slug}/waitlist", "201").validate(made.json())
    bad = public.post(url, json=asked(shop, serviceId="svc_nothing"))
    documented(document, "POST", "/{slug}/waitlist", "400").validate(bad.json())
    paths = document["paths"]
    assert {"get"} <= set(paths[f"{API}/waitlist"])
    assert {"get", "delete"} <= set(paths[f"{API}/waitlist/{{id}}"])
