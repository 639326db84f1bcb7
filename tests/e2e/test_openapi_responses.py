"""Live answers against the served ``/api/openapi.json``: every endpoint's real success
validates against its response schema (``$ref``s resolved, formats checked), and a schema
that lacks a field the code returns, or has a wrong type, fails the check. Every answer
seen, successes and refusals of ``/api/v1`` and ``/api/public`` alike, carries only
headers its response lists (beside those of HTTP itself) and every header listed as
required: a header the answer carries but the document omits fails the check."""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator

from adapters.http.routes import all_endpoints
from adapters.webhooks.render import EventRenderer
from booking_core.auth import MIN_RATE_LIMIT
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.customers import CustomerMerge
from booking_core.events import Event, EventType, Subject
from booking_core.leads import LeadStage
from booking_core.ledger import Kind
from booking_core.quotes import QuoteStatus
from booking_core.waitlist import WaitlistEntry
from booking_core.webhook_endpoints import Attempt
from tests.e2e.support import API, Stack, add_booking, idem, unique_email


@pytest.fixture(scope="module")
def document(stack: Stack) -> dict[str, Any]:
    with stack.client() as c:
        response = c.get("/api/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield method.upper(), path, operation


SATURDAY = "2030-01-05T10:00:00-05:00"  # far ahead, on the quarter hour: the weekend fee
SELECTION = {
    "serviceId": "svc_standard_clean",
    "frequencySlug": "biweekly",
    "parameters": [{"id": "par_bedrooms", "quantity": 3}, {"id": "par_bathrooms", "quantity": 2}],
    "extras": [{"id": "ext_oven"}, {"id": "ext_supplies"}, {"id": "ext_first_deep"}],
    "couponCode": "welcome10",
    "zip": "02554",
    "startIso": SATURDAY,
    "manualFeeIds": ["fee_pets"],
}
ANSWERED_200_TOO = {("POST", "/customers"), ("POST", "/leads")}
"""Documented as 201, these also answer 200 (existing customer, folded lead), same body."""
TRANSPORT = {"content-type", "content-length", "date", "server", "connection"}
"""Headers of HTTP itself (and of uvicorn), which no operation lists."""


def header_problems(
    document: dict[str, Any], path: str, method: str, status: int, headers: httpx.Headers
) -> list[str]:
    """How an answer's headers differ from what the document lists for its operation
    (``path`` as the document spells it) and status: a header carried but not listed,
    or one listed as required but missing."""
    where = f"{method} {path} {status}"
    responses = document["paths"][path][method.lower()]["responses"]
    if str(status) not in responses:
        return [f"{where}: the status is not documented"]
    listed: dict[str, Any] = responses[str(status)].get("headers", {})
    carried = {name.lower() for name in headers} - TRANSPORT
    problems = [f"{where}: carries {name}, not listed" for name in sorted(carried - set(listed))]
    problems += [
        f"{where}: lists {name} as required, not carried"
        for name, header in sorted(listed.items())
        if header.get("required") and name not in carried
    ]
    return problems


class HeaderCheck:
    """Collects the header problems of answers, and the statuses seen."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.problems: list[str] = []
        self.statuses: set[int] = set()

    def check(self, response: httpx.Response, path: str, method: str) -> httpx.Response:
        """Note how ``response`` (to ``method`` on ``path``, as the document spells it)
        differs from its documented headers."""
        self.statuses.add(response.status_code)
        self.problems += header_problems(
            self.document, path, method, response.status_code, response.headers
        )
        return response


class Conformance:
    """Checks live success answers against the served document, operation by operation,
    and remembers which operations it has seen."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.seen: set[tuple[str, str]] = set()

    def schema(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        """The documented success status of an operation and its response schema."""
        responses = self.document["paths"][API + path][method.lower()]["responses"]
        status = next(s for s in responses if s.startswith("2"))
        schema: dict[str, Any] = responses[status]["content"]["application/json"]["schema"]
        return int(status), schema

    def problems(self, method: str, path: str, body: Any) -> list[str]:
        """Every way ``body`` breaks the operation's response schema ($refs resolved)."""
        _, schema = self.schema(method, path)
        validator = OAS31Validator(
            {**schema, "components": self.document["components"]},
            format_checker=OAS31Validator.FORMAT_CHECKER,
        )
        return [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        ]

    def check(self, response: httpx.Response, method: str, path: str) -> Any:
        """The body of a success answer that matches its schema; fails the test otherwise."""
        status, _ = self.schema(method, path)
        allowed = {status, 200} if (method, path) in ANSWERED_200_TOO else {status}
        assert response.status_code in allowed, (method, path, response.text)
        body = response.json()
        problems = self.problems(method, path, body)
        assert not problems, (method, path, problems)
        headers = header_problems(self.document, API + path, method, status, response.headers)
        assert not headers, headers
        self.seen.add((method, path))
        return body


def add_crew(stack: Stack, company_id: str) -> None:
    """Two crew members of ``company_id`` working weekdays, written as the crew admin would."""
    hours = [WorkingHours(day, time(8), time(18)) for day in range(1, 6)]
    with stack.container.uow() as uow:
        for name in ("Rosa", "Ben"):
            uow.crew.add(
                new_crew_member(
                    member_id=f"crew_{name.lower()}_{secrets.token_hex(4)}",
                    company_id=company_id,
                    name=name,
                    home_zip="10001",
                    at=datetime.now(UTC),
                    service_areas=("10001", "10002"),
                    excluded_service_ids=("svc_deep_clean",),
                    working_hours=hours,
                )
            )
        uow.commit()


def check_scheduling(api: httpx.Client, ok: Conformance) -> str:
    """Availability, a weekly plan, its visits, one fetched, moved and cancelled, and an
    accepted quote converted; the id of the booking the conversion made."""
    query = {"serviceId": "svc_standard_clean", "date": "2030-01-07", "zip": "10001"}
    slots = ok.check(api.get(f"{API}/availability", params=query), "GET", "/availability")
    assert len(slots["data"]) >= 2
    body = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "weekly",
        "startIso": slots["data"][0]["startIso"],
        "customer": {"name": "Flo", "email": unique_email("book")},
        "address": {"line1": "5 Penn Plaza", "city": "New York", "state": "NY", "zip": "10001"},
        "parameters": [{"id": "par_bedrooms", "quantity": 2}],
        "extras": [{"id": "ext_first_deep"}],
    }
    made = ok.check(api.post(f"{API}/bookings", json=body, headers=idem()), "POST", "/bookings")
    assert len(made["bookings"]) >= 3
    assert made["activity"]
    walk_pages(api, ok, "/bookings")
    ok.check(api.get(f"{API}/bookings/{made['code']}"), "GET", "/bookings/{id}")
    move = {"startIso": slots["data"][1]["startIso"]}
    moved = api.post(f"{API}/bookings/{made['id']}/reschedule", json=move, headers=idem())
    ok.check(moved, "POST", "/bookings/{id}/reschedule")
    end = {"scope": "this_and_future", "reason": "Moving away"}
    ended = api.post(f"{API}/bookings/{made['id']}/cancel", json=end, headers=idem())
    assert len(ok.check(ended, "POST", "/bookings/{id}/cancel")["data"]) >= 3

    customer = {"name": "Gus", "email": unique_email("convert"), "address": body["address"]}
    owner = api.post(f"{API}/customers", json=customer).json()
    offer = {"customerId": owner["id"], "serviceId": "svc_standard_clean", "send": True}
    quote = api.post(f"{API}/quotes", json=offer, headers=idem()).json()
    api.post(f"{API}/quotes/{quote['id']}", json={"action": "accept"}, headers=idem())
    convert = {"action": "convert", "startIso": slots["data"][-1]["startIso"]}
    converted = api.post(f"{API}/quotes/{quote['id']}", json=convert, headers=idem())
    booking: str = ok.check(converted, "POST", "/quotes/{id}")["bookingId"]
    return booking


def check_payments(api: httpx.Client, ok: Conformance, booking: str) -> None:
    """A payment, a hand refund naming it, the refund reversed, and the booking's ledger."""
    pay = {"bookingId": booking, "kind": "PAYMENT", "amountCents": 5000, "method": "CASH"}
    paid = ok.check(api.post(f"{API}/payments", json=pay, headers=idem()), "POST", "/payments")
    refund = {"bookingId": booking, "kind": "REFUND", "amountCents": 1000, "reverses": paid["id"]}
    given = api.post(f"{API}/payments", json=refund, headers=idem())
    assert ok.check(given, "POST", "/payments")["reverses"] == paid["id"]
    reversal = {"id": given.json()["id"], "note": "Recorded by mistake."}
    undone = api.patch(f"{API}/payments", json=reversal, headers=idem())
    assert ok.check(undone, "PATCH", "/payments")["kind"] == Kind.REVERSAL.value
    assert len(walk_pages(api, ok, "/payments", bookingId=booking)) == 2  # of three


def check_webhooks(stack: Stack, company_id: str, api: httpx.Client, ok: Conformance) -> None:
    """Two endpoints registered, listed, fetched, changed, tested, rotated, their delivery
    log read (an attempt written as the worker writes one), and deleted. The URL's host
    is an address, so no resolver is asked."""
    body = {"url": "https://93.184.215.14/hooks", "events": ["booking.created"]}
    created = ok.check(api.post(f"{API}/webhooks", json=body), "POST", "/webhooks")
    other = ok.check(
        api.post(f"{API}/webhooks", json={**body, "events": ["*"]}), "POST", "/webhooks"
    )
    walk_pages(api, ok, "/webhooks")
    path = f"{API}/webhooks/{created['id']}"
    ok.check(api.get(path), "GET", "/webhooks/{id}")
    change = {"description": "Accounting", "events": ["payment.refunded"]}
    ok.check(api.patch(path, json=change), "PATCH", "/webhooks/{id}")
    queued = ok.check(api.post(f"{path}/test"), "POST", "/webhooks/{id}/test")
    with stack.container.uow() as uow:
        uow.webhooks.log_attempt(
            Attempt(
                id=f"att_{secrets.token_hex(8)}",
                company_id=company_id,
                endpoint_id=created["id"],
                delivery_id=queued["id"],
                event_id=queued["eventId"],
                event_type=queued["eventType"],
                attempt=1,
                status_code=None,
                duration_ms=5000,
                error="could not connect to 93.184.215.14: timed out",
                next_retry_at=datetime.now(UTC),
                at=datetime.now(UTC),
            )
        )
        uow.commit()
    rotated = ok.check(api.post(f"{path}/rotate-secret"), "POST", "/webhooks/{id}/rotate-secret")
    assert rotated["previousSecretExpiresAt"] is not None
    log = ok.check(api.get(f"{path}/deliveries"), "GET", "/webhooks/{id}/deliveries")
    assert len(log["data"]) == 1
    for endpoint in (created, other):
        gone = api.delete(f"{API}/webhooks/{endpoint['id']}")
        ok.check(gone, "DELETE", "/webhooks/{id}")


def check_waitlist(stack: Stack, api: httpx.Client, ok: Conformance) -> None:
    """Entries join through the public route; the company lists, reads and deletes them."""
    day = (datetime.now(UTC) + timedelta(days=10)).date().isoformat()
    ask = {"serviceId": "svc_standard_clean", "zip": "02101", "dateFrom": day, "name": "Flo"}
    with stack.client() as anon:
        for _ in range(2):
            joined = anon.post(
                f"/api/public/{stack.company.slug}/waitlist",
                json={**ask, "email": unique_email("wait")},
            )
            assert joined.status_code == 201, joined.text
    entries = walk_pages(api, ok, "/waitlist")
    ok.check(api.get(f"{API}/waitlist/{entries[0]['id']}"), "GET", "/waitlist/{id}")
    ok.check(api.delete(f"{API}/waitlist/{entries[0]['id']}"), "DELETE", "/waitlist/{id}")


def check_messages(stack: Stack, company_id: str, api: httpx.Client, ok: Conformance) -> None:
    """Messages (queued here straight through the unit of work): one sent, one waiting
    for a retry, listed newest first and by subject."""
    from booking_core.ids import new_id
    from booking_core.notifications import Message, MessageKind, MessageStatus

    at = datetime.now(UTC)
    with stack.container.uow() as uow:
        for index, status in enumerate((MessageStatus.SENT, MessageStatus.PENDING)):
            uow.messages.add(
                Message(
                    id=new_id("msg"),
                    company_id=company_id,
                    kind=MessageKind.BOOKING_CONFIRMED,
                    to="ada@example.com",
                    subject="Booked",
                    text="Hello",
                    html="<p>Hello</p>",
                    dedupe_key=f"schema:{index}",
                    subject_id="bkg_schema",
                    status=status,
                    attempts=1,
                    last_error=None if status is MessageStatus.SENT else "451 later",
                    sent_at=at if status is MessageStatus.SENT else None,
                    next_attempt_at=at,
                    created_at=at + timedelta(seconds=index),
                )
            )
        uow.commit()
    listed = walk_pages(api, ok, "/messages", subjectId="bkg_schema")
    assert [m["status"] for m in listed] == ["pending", "sent"]


def check_booking_forms(api: httpx.Client, ok: Conformance) -> None:
    """Forms are created, listed, read, changed and deleted."""
    form = {
        "name": "Spring",
        "serviceIds": ["svc_standard_clean"],
        "questions": [{"label": "Pets?", "kind": "choice", "choices": ["Cat", "Dog"]}],
    }
    made = [
        ok.check(api.post(f"{API}/booking-forms", json=form), "POST", "/booking-forms")
        for _ in range(2)
    ]
    walk_pages(api, ok, "/booking-forms")
    path = f"{API}/booking-forms/{made[0]['id']}"
    ok.check(api.get(path), "GET", "/booking-forms/{id}")
    ok.check(api.patch(path, json={"active": False}), "PATCH", "/booking-forms/{id}")
    ok.check(api.delete(path), "DELETE", "/booking-forms/{id}")


def walk_pages(api: httpx.Client, ok: Conformance, path: str, **params: Any) -> list[Any]:
    """The first two pages of a list (one item each), each checked; the first has more."""
    first = ok.check(api.get(API + path, params={**params, "limit": 1}), "GET", path)
    assert first["hasMore"] is True, first
    assert isinstance(first["nextCursor"], str)
    cursor = first["nextCursor"]
    second = ok.check(
        api.get(API + path, params={**params, "limit": 1, "cursor": cursor}), "GET", path
    )
    return [*first["data"], *second["data"]]


def test_every_endpoint_answers_as_its_response_schema_says(
    stack: Stack, api: httpx.Client, document: dict[str, Any]
):
    ok = Conformance(document)

    catalog = ok.check(api.get(f"{API}/services"), "GET", "/services")
    assert catalog["industries"][0]["services"][0]["parameters"]
    plan = ok.check(api.post(f"{API}/quote", json=SELECTION), "POST", "/quote")
    assert plan["laterVisits"] is not None
    assert {d["kind"] for d in plan["firstVisit"]["discounts"]} == {"frequency", "coupon"}
    assert {f["id"] for f in plan["firstVisit"]["fees"]} >= {"fee_weekend", "fee_island"}
    one_off = api.post(f"{API}/quote", json={"serviceId": "svc_handyman_hour"})
    assert ok.check(one_off, "POST", "/quote")["laterVisits"] is None

    address = {"line1": "1 Main St", "city": "Boston", "state": "MA", "zip": "02101"}
    email = unique_email("schema")
    created = api.post(f"{API}/customers", json={"name": "Ada", "email": email, "address": address})
    customer = ok.check(created, "POST", "/customers")
    assert customer["addresses"][0]["default"] is True
    again = api.post(f"{API}/customers", json={"name": "Ada", "email": email})
    assert again.status_code == 200
    ok.check(again, "POST", "/customers")
    bo = api.post(f"{API}/customers", json={"name": "Bo", "email": unique_email("schema")})
    merged = api.post(
        f"{API}/customers/{customer['id']}/merge",
        json={"mergedId": bo.json()["id"]},
        headers=idem(),
    )
    assert ok.check(merged, "POST", "/customers/{id}/merge")["id"] == customer["id"]
    walk_pages(api, ok, "/customers")

    lead_email = unique_email("lead")
    new_lead = api.post(f"{API}/leads", json={"name": "Cy", "email": lead_email})
    lead = ok.check(new_lead, "POST", "/leads")
    folded = api.post(f"{API}/leads", json={"name": "Cy", "email": lead_email, "message": "Hi"})
    assert ok.check(folded, "POST", "/leads")["folded"] is True
    change = {"stage": "contacted", "owner": "sam", "followUpOn": "2030-01-03"}
    patched = api.patch(f"{API}/leads/{lead['id']}", json=change)
    assert len(ok.check(patched, "PATCH", "/leads/{id}")["timeline"]) >= 4
    ok.check(api.get(f"{API}/leads/{lead['id']}"), "GET", "/leads/{id}")
    api.post(f"{API}/leads", json={"name": "Dee", "phone": "+1 617 555 0100"})
    walk_pages(api, ok, "/leads")
    check_waitlist(stack, api, ok)

    body = {"customerId": customer["id"], "send": True, "message": "Thanks!", **SELECTION}
    sent = ok.check(api.post(f"{API}/quotes", json=body, headers=idem()), "POST", "/quotes")
    assert sent["followUps"]
    assert sent["price"]["fees"]
    assert sent["price"]["discounts"]
    lines = [{"description": "Attic", "amountCents": 900}]
    by_hand = {"customerId": customer["id"], "leadId": lead["id"], "manualLines": lines}
    hand = ok.check(api.post(f"{API}/quotes", json=by_hand, headers=idem()), "POST", "/quotes")
    assert hand["price"] is None
    paused = api.post(f"{API}/quotes/{sent['id']}", json={"action": "pause"}, headers=idem())
    assert ok.check(paused, "POST", "/quotes/{id}")["followUpsPaused"] is True
    ok.check(api.get(f"{API}/quotes/{sent['id']}"), "GET", "/quotes/{id}")
    listed = walk_pages(api, ok, "/quotes", customerId=customer["id"])
    assert [q["id"] for q in listed] == [hand["id"], sent["id"]]  # newest first

    company, key = stack.new_company()
    add_crew(stack, company.id)
    with stack.client(key) as own:
        members = walk_pages(own, ok, "/crew")
        assert {m["name"] for m in members} == {"Rosa", "Ben"}
        check_payments(own, ok, check_scheduling(own, ok))
        check_webhooks(stack, company.id, own, ok)
        check_booking_forms(own, ok)
        check_messages(stack, company.id, own, ok)

    assert ok.seen == {(e.method, e.path) for e in all_endpoints()}


def test_a_schema_missing_a_field_or_with_a_wrong_type_fails_the_check(
    api: httpx.Client, document: dict[str, Any]
):
    lead = api.post(f"{API}/leads", json={"name": "Eve", "email": unique_email()}).json()
    body = {"leadId": lead["id"], "send": True, **SELECTION}
    quote = api.post(f"{API}/quotes", json=body, headers=idem()).json()
    assert quote["followUps"]
    assert quote["price"]["fees"]
    assert not Conformance(document).problems("GET", "/quotes/{id}", quote)

    spoilers: list[tuple[str, str, dict[str, Any] | None]] = [
        ("QuoteWithFollowUps", "followUpsPaused", None),  # None: the field is dropped
        ("PriceBreakdown", "taxCents", None),  # nested, reached through a $ref
        ("FeeLine", "taxable", None),  # inside an array inside the breakdown
        ("QuoteWithFollowUps", "totalCents", {"type": "string"}),
        ("PriceBreakdown", "lines", {"type": "object"}),
        ("FollowUp", "dueAt", {"type": "string", "format": "date"}),
        ("QuoteWithFollowUps", "status", {"enum": ["draft"]}),
    ]
    for name, field, replacement in spoilers:
        spoiled = copy.deepcopy(document)
        schema = spoiled["components"]["schemas"][name]
        if replacement is None:
            del schema["properties"][field]
            schema["required"].remove(field)
        else:
            schema["properties"][field] = replacement
        assert Conformance(spoiled).problems("GET", "/quotes/{id}", quote), (name, field)


def test_response_objects_are_closed_and_list_every_property_as_required(
    document: dict[str, Any],
):
    def objects(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
        if isinstance(node, list):
            for index, item in enumerate(node):
                yield from objects(item, f"{where}/{index}")
        elif isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                yield where, node
            for key, value in node.items():
                yield from objects(value, f"{where}/{key}")

    successes = [
        response["content"]["application/json"]["schema"]
        for _, _, operation in operations(document)
        for status, response in operation["responses"].items()
        if status.startswith("2")
    ]
    schemas = {k: v for k, v in document["components"]["schemas"].items() if k != "Error"}
    found = list(objects([successes, schemas], "#"))
    assert len(found) > 20
    for where, schema in found:
        assert schema["additionalProperties"] is False, where
        assert set(schema["required"]) == set(schema["properties"]), where
    assert all(s != {"type": "object"} for s in successes), "an endpoint lacks a response schema"
    assert schemas["Quote"]["properties"]["status"]["enum"] == [s.value for s in QuoteStatus]
    assert schemas["Lead"]["properties"]["stage"]["enum"] == [s.value for s in LeadStage]
    paths = document["paths"]
    post_lead = paths[f"{API}/leads"]["post"]["responses"]["201"]["content"]["application/json"]
    assert post_lead["schema"] == {"$ref": "#/components/schemas/CapturedLead"}
    assert schemas["CapturedLead"]["properties"]["folded"]["type"] == "boolean"
    price = schemas["QuoteWithFollowUps"]["properties"]["price"]
    assert price == {"anyOf": [{"$ref": "#/components/schemas/PriceBreakdown"}, {"type": "null"}]}


def test_every_event_body_matches_its_schema_under_webhooks(stack: Stack, document: dict[str, Any]):
    """What the worker sends for each event type (``adapters/webhooks/render.py``) against
    the envelope the document lists for it under ``webhooks``."""
    company, key = stack.new_company()
    booking_id = add_booking(stack.container, company.id)
    with stack.client(key) as own:
        customer = own.post(f"{API}/customers", json={"name": "Di", "email": unique_email()})
        lead = own.post(f"{API}/leads", json={"name": "Ed", "email": unique_email()})
        offer = {"customerId": customer.json()["id"], "serviceId": "svc_standard_clean"}
        quote = own.post(f"{API}/quotes", json={**offer, "send": True}, headers=idem())
        pay = {"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 900, "method": "CASH"}
        payment = own.post(f"{API}/payments", json=pay, headers=idem())
    render = EventRenderer(stack.base_url)
    now = datetime.now(UTC)
    with stack.container.uow() as uow:
        subjects: dict[str, Subject] = {
            "booking": uow.bookings.get(company.id, booking_id),
            "customer": uow.customers.get(company.id, customer.json()["id"]),
            "lead": uow.leads.get(company.id, lead.json()["id"]),
            "quote": uow.quotes.get(company.id, quote.json()["id"]),
            "payment": uow.payments.get(company.id, payment.json()["id"]),
            "waitlist": WaitlistEntry(
                id="wl_1",
                company_id=company.id,
                service_id="svc_standard_clean",
                zip="02101",
                date_from=now.date(),
                date_to=now.date(),
                frequency_slug="one_time",
                name="Flo",
                email="flo@example.com",
                created_at=now,
            ),
            "webhook": None,
            "customer.merged": CustomerMerge(
                company_id=company.id, survivor_id=customer.json()["id"], merged_id="cus_gone"
            ),
        }
        for event_type in EventType:
            event = Event(
                id=f"evt_{secrets.token_hex(12)}",
                company_id=company.id,
                type=event_type,
                created_at=now,
                subject=subjects.get(event_type.value) or subjects[event_type.value.split(".")[0]],
            )
            body = json.loads(render(event, uow))
            operation = document["webhooks"][event_type.value]["post"]
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            if event_type is EventType.WEBHOOK_TEST:  # sent by POST /webhooks/:id/test
                body["data"] = {"webhookId": "whk_1"}
            validator = OAS31Validator(
                {**schema, "components": document["components"]},
                format_checker=OAS31Validator.FORMAT_CHECKER,
            )
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
            assert not errors, (event_type, errors)


def _filled(path: str, **values: str) -> str:
    """``path`` with each ``{name}`` replaced: by ``values[name]``, else ``nope``."""
    return re.sub(r"{(\w+)}", lambda m: values.get(m.group(1), "nope"), path)


def _ask(
    c: httpx.Client, method: str, url: str, body: dict[str, Any] | None, **extra: Any
) -> httpx.Response:
    """``method`` on ``url`` with a fresh Idempotency-Key and ``body`` (unless ``extra``
    says otherwise)."""
    extra.setdefault("json", body)
    return c.request(method, url, headers=idem(), **extra)


TOO_BIG = b'{"name": "' + b"a" * 1_000_001 + b'"}'
"""A body over the 1 MB every ``/api/v1`` operation reads (and the public 64 KB)."""


def test_every_refusal_of_api_v1_carries_the_headers_its_operation_lists(
    stack: Stack, document: dict[str, Any]
):
    """Every operation asked without a key (401), with a key lacking its scope (403), by
    a key over its limit (429), with a method its path does not take (405), with a body
    over 1 MB (413), with an empty body or a bad limit (400), and for an id that names
    nothing (404): each answer lists what it carries, x-request-id on all, the
    x-ratelimit-* headers on all but the 401, retry-after on the 429, allow on the 405."""
    company, key = stack.new_company()
    limited = stack.issue_key(rate_limit=MIN_RATE_LIMIT, company_id=company.id).secret
    narrow = {
        scope: stack.issue_key(
            frozenset({"crews:read" if scope != "crews:read" else "catalog:read"}),
            company_id=company.id,
        ).secret
        for scope in {op["x-required-scope"] for _, p, op in operations(document) if API in p}
    }
    seen = HeaderCheck(document)
    with stack.client() as anon, stack.client(key) as own, stack.client(limited) as slow:
        for _ in range(MIN_RATE_LIMIT):  # its requests of the minute
            assert slow.get(f"{API}/services").status_code == 200
        for method, path, operation in operations(document):
            if not path.startswith(API):
                continue
            url = _filled(path)
            has_body = "requestBody" in operation
            body: dict[str, Any] | None = {} if has_body else None

            asked = (method, url, body)
            seen.check(_ask(anon, *asked), path, method)
            with stack.client(narrow[operation["x-required-scope"]]) as lacking:
                assert seen.check(_ask(lacking, *asked), path, method).status_code == 403
            assert seen.check(_ask(slow, *asked), path, method).status_code == 429
            assert seen.check(own.request("PUT", url), path, method).status_code == 405
            seen.check(_ask(own, *asked), path, method)  # 400, 404, or a success, no effect
            if has_body:
                big = _ask(own, method, url, None, content=TOO_BIG)
                assert seen.check(big, path, method).status_code == 413
            if any(p["name"] == "limit" for p in operation["parameters"]):
                bad = _ask(own, *asked, params={"limit": 0})
                assert seen.check(bad, path, method).status_code == 400
    assert not seen.problems, seen.problems
    assert seen.statuses >= {400, 401, 403, 404, 405, 413, 429}


def test_replays_and_deprecated_forms_carry_the_headers_their_answers_list(
    stack: Stack, document: dict[str, Any]
):
    """A replayed success and a replayed refusal (idempotent-replayed, and on the refusal
    original-request-id), a key reused with another body (409), a deprecated body form
    (convert by bookingId) and a deprecated route (GET /crew, also unauthenticated):
    Deprecation and Sunset."""
    _, key = stack.new_company()
    seen = HeaderCheck(document)
    with stack.client(key) as own, stack.client() as anon:
        email = unique_email("headers")
        customer = own.post(f"{API}/customers", json={"name": "Ivy", "email": email}).json()
        offer = {"customerId": customer["id"], "serviceId": "svc_standard_clean"}
        once = idem()
        made = seen.check(
            own.post(f"{API}/quotes", json=offer, headers=once), API + "/quotes", "POST"
        )
        replayed = seen.check(
            own.post(f"{API}/quotes", json=offer, headers=once), API + "/quotes", "POST"
        )
        assert (made.status_code, replayed.status_code) == (201, 201)
        assert replayed.headers["idempotent-replayed"] == "true"
        other = {**offer, "message": "Another body"}
        reused = own.post(f"{API}/quotes", json=other, headers=once)
        assert seen.check(reused, API + "/quotes", "POST").status_code == 409

        act = f"{API}/quotes/{made.json()['id']}"
        once = idem()
        refusals = [own.post(act, json={"action": "accept"}, headers=once) for _ in range(2)]
        for refused in refusals:
            assert seen.check(refused, API + "/quotes/{id}", "POST").status_code == 422
        assert refusals[1].headers["idempotent-replayed"] == "true"
        assert refusals[1].headers["original-request-id"] == refusals[0].headers["x-request-id"]
        old_form = {"action": "convert", "bookingId": "bkg_nope"}
        converted = seen.check(
            own.post(act, json=old_form, headers=idem()), API + "/quotes/{id}", "POST"
        )
        assert converted.status_code >= 400
        assert converted.headers["deprecation"].startswith("@")

        crew = seen.check(own.get(f"{API}/crew"), API + "/crew", "GET")
        unknown = seen.check(anon.get(f"{API}/crew"), API + "/crew", "GET")
        assert (crew.status_code, unknown.status_code) == (200, 401)
        assert "sunset" in crew.headers
        assert "sunset" in unknown.headers
    assert not seen.problems, seen.problems


def test_every_public_answer_carries_the_headers_its_operation_lists(
    stack: Stack, document: dict[str, Any]
):
    """Each public operation asked as it comes (a success or a 400), with a method its
    path does not take (405), for a slug that names no company (404), with a body over
    64 KB (413, reads too), and past the address's rate limit (429): CORS (allow-origin and
    expose-headers), x-request-id and, but on the 405, the x-ratelimit-* headers."""
    company, _ = stack.new_company()
    seen = HeaderCheck(document)
    public = [(m, p, op) for m, p, op in operations(document) if p.startswith("/api/public")]
    assert public
    with stack.client() as anon:
        for method, path, operation in public:
            url = _filled(path, slug=company.slug)
            body: dict[str, Any] | None = {} if "requestBody" in operation else None
            seen.check(anon.request(method, url, json=body), path, method)
            seen.check(anon.request(method, url, json=body, headers=idem()), path, method)
            assert seen.check(anon.request("PUT", url), path, method).status_code == 405
            elsewhere = _filled(path, slug="no-such-company-at-all")
            nobody = anon.request(method, elsewhere, json=body)
            assert seen.check(nobody, path, method).status_code == 404
            # A read's body is not used, but it is counted all the same.
            big = anon.request(method, url, content=TOO_BIG[:70_000])
            assert seen.check(big, path, method).status_code == 413
        catalog = f"/api/public/{company.slug}/catalog"
        for _ in range(200):
            answer = seen.check(anon.get(catalog), "/api/public/{slug}/catalog", "GET")
            if answer.status_code == 429:
                break
    assert not seen.problems, seen.problems
    assert seen.statuses >= {200, 400, 404, 405, 413, 429}


def test_a_header_the_answer_carries_but_the_document_omits_fails_the_check(
    api: httpx.Client, document: dict[str, Any]
):
    answer = api.get(f"{API}/services")
    assert not header_problems(document, f"{API}/services", "GET", 200, answer.headers)
    for name in ("x-request-id", "x-ratelimit-remaining"):
        spoiled = copy.deepcopy(document)
        del spoiled["paths"][f"{API}/services"]["get"]["responses"]["200"]["headers"][name]
        problems = header_problems(spoiled, f"{API}/services", "GET", 200, answer.headers)
        assert problems == [f"GET {API}/services 200: carries {name}, not listed"]
