"""``/quotes``: create (optionally sending), fetch, list, and act on a quote; convert
into a real booking, and every refusal of SPEC.md section 3 (which books nothing)."""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from booking_core.bookings import complete_job, start_job
from tests.e2e.support import (
    API,
    Stack,
    add_booking,
    bookings_of,
    demo_customer_id,
    error_of,
    idem,
    unique_email,
)

START = "2030-01-07T10:00:00-05:00"  # a Monday morning on the quarter hour, far ahead
DAY = "2030-01-07"
HOME = {"line1": "350 Fifth Ave", "city": "New York", "state": "NY", "zip": "10001"}


@pytest.fixture
def customer_id(api: httpx.Client) -> str:
    """A customer of their own with a default address: nothing but a quote's state stands
    between it and a booking."""
    body = {"name": "Quoted", "email": unique_email("q"), "address": HOME}
    response = api.post(f"{API}/customers", json=body)
    assert response.status_code == 201, response.text
    customer: str = response.json()["id"]
    return customer


def open_start(api: httpx.Client, zip_code: str = "10001", day: str = DAY) -> str:
    """An open start of a standard clean at ``zip_code`` on ``day``, as availability lists."""
    query = {"serviceId": "svc_standard_clean", "date": day, "zip": zip_code}
    response = api.get(f"{API}/availability", params=query)
    assert response.status_code == 200, response.text
    slots = response.json()["data"]
    assert slots, f"no open start at {zip_code} on {day}"
    start: str = slots[0]["startIso"]
    return start


def create(api: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {"manualLines": [{"description": "Post-renovation clean", "amountCents": 42000}]}
    response = api.post(f"{API}/quotes", json={**body, **fields}, headers=idem())
    assert response.status_code == 201, response.text
    quote: dict[str, Any] = response.json()
    return quote


def act(api: httpx.Client, quote_id: str, action: str, **fields: Any) -> httpx.Response:
    return api.post(f"{API}/quotes/{quote_id}", json={"action": action, **fields}, headers=idem())


def status_of(api: httpx.Client, quote_id: str) -> str:
    status: str = api.get(f"{API}/quotes/{quote_id}").json()["status"]
    return status


def test_a_new_quote_is_a_draft_with_a_secret_public_url(
    stack: Stack, api: httpx.Client, customer_id: str
):
    quote = create(api, customerId=customer_id, message="Thanks for asking!")
    assert quote["id"].startswith("quo_")
    assert (quote["status"], quote["handPriced"], quote["totalCents"]) == ("draft", True, 42000)
    assert quote["bookingId"] is None
    assert quote["followUps"] == []
    prefix = f"{stack.base_url}/{stack.company.slug}/q/"
    assert quote["publicUrl"].startswith(prefix)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", quote["publicUrl"][len(prefix) :])


def test_a_catalog_quote_costs_what_the_price_endpoint_says(api: httpx.Client, customer_id: str):
    selection = {
        "serviceId": "svc_deep_clean",
        "parameters": [{"id": "par_bedrooms", "quantity": 2}],
        "extras": [{"id": "ext_baseboards", "quantity": 1}],
    }
    priced = api.post(f"{API}/quote", json=selection).json()["firstVisit"]
    quote = create(api, customerId=customer_id, manualLines=[], **selection)
    assert quote["handPriced"] is False
    assert quote["serviceId"] == "svc_deep_clean"
    assert quote["totalCents"] == priced["totalCents"]
    assert quote["price"]["lines"] == priced["lines"]


def test_a_quote_needs_a_customer_or_lead_and_a_price(api: httpx.Client):
    response = api.post(f"{API}/quotes", json={}, headers=idem())
    errors = error_of(response, 400, "invalid_request")["fieldErrors"]
    assert set(errors) == {"customerId", "manualLines"}


def test_a_hand_priced_quote_sent_parts_of_a_selection_is_refused_naming_each(
    api: httpx.Client, customer_id: str
):
    selection_parts = {
        "couponCode": "WELCOME10",
        "manualFeeIds": ["fee_x"],
        "frequencySlug": "weekly",
        "startIso": START,
        "zip": "10001",
        "parameters": [{"id": "par_bedrooms", "quantity": 2}],
        "extras": [{"id": "ext_baseboards", "quantity": 1}],
    }
    before = api.get(f"{API}/quotes", params={"customerId": customer_id}).json()["data"]
    body = {"customerId": customer_id, "send": True, **selection_parts}
    body["manualLines"] = [{"description": "Labour", "amountCents": 10000}]
    response = api.post(f"{API}/quotes", json=body, headers=idem())
    errors = error_of(response, 400, "invalid_request")["fieldErrors"]
    assert set(errors) == set(selection_parts)  # each named: none is dropped without a word
    assert api.get(f"{API}/quotes", params={"customerId": customer_id}).json()["data"] == before
    # The quote's other problems are named in the same answer.
    response = api.post(f"{API}/quotes", json={"couponCode": "WELCOME10"}, headers=idem())
    errors = error_of(response, 400, "invalid_request")["fieldErrors"]
    assert set(errors) == {"couponCode", "customerId", "manualLines"}
    # "one_time" is what a hand-priced quote is anyway: naming it is no conflict.
    assert create(api, customerId=customer_id, frequencySlug="one_time")["totalCents"] == 42000


def test_a_quote_for_another_companys_customer_or_lead_answers_like_one_that_never_existed(
    stack: Stack, api: httpx.Client
):
    other_company = stack.demo[1].company.id
    with stack.client(stack.other_key) as other:
        their_lead = other.get(f"{API}/leads", params={"limit": 1}).json()["data"][0]["id"]
    theirs = {"customerId": demo_customer_id(stack, other_company), "leadId": their_lead}
    lines = [{"description": "Gutters", "amountCents": 9000}]
    for field, their_id in theirs.items():
        never_id = their_id[:-6] + "000000"
        answers = [
            api.post(f"{API}/quotes", json={field: i, "manualLines": lines}, headers=idem())
            for i in (their_id, never_id)
        ]
        foreign, missing = (error_of(a, 404, "not_found") for a in answers)
        assert foreign["message"].replace(their_id, "ID") == missing["message"].replace(
            never_id, "ID"
        )
        assert set(foreign) == set(missing)
        assert api.get(f"{API}/quotes", params={field: their_id}).json()["data"] == []
    with stack.client(stack.other_key) as other:
        for field, their_id in theirs.items():
            # Their own records, which they may quote; nothing was added in their name.
            assert other.get(f"{API}/quotes", params={field: their_id}).json()["data"] == []


def test_a_quote_for_a_lead_can_be_sent_at_once(api: httpx.Client):
    lead = api.post(f"{API}/leads", json={"name": "Lead Q", "email": unique_email()}).json()
    quote = create(api, leadId=lead["id"], send=True)
    assert quote["status"] == "sent"
    assert quote["sentAt"]
    assert len(quote["followUps"]) == 2
    assert all(f["status"] == "scheduled" for f in quote["followUps"])
    listed = api.get(f"{API}/quotes", params={"leadId": lead["id"]}).json()["data"]
    assert [q["id"] for q in listed] == [quote["id"]]


def test_send_then_accept(api: httpx.Client, customer_id: str):
    quote = create(api, customerId=customer_id)
    sent = act(api, quote["id"], "send")
    assert sent.status_code == 200, sent.text
    assert sent.json()["status"] == "sent"
    accepted = act(api, quote["id"], "accept")
    assert accepted.status_code == 200
    assert accepted.json()["status"] == "accepted"
    assert accepted.json()["acceptedAt"]
    assert {f["status"] for f in accepted.json()["followUps"]} == {"cancelled"}
    fetched = api.get(f"{API}/quotes/{quote['id']}").json()
    assert fetched["status"] == "accepted"
    assert quote["id"] in [
        q["id"] for q in api.get(f"{API}/quotes", params={"status": "accepted"}).json()["data"]
    ]


def test_reject_records_the_decline(api: httpx.Client, customer_id: str):
    quote = create(api, customerId=customer_id, send=True)
    rejected = act(api, quote["id"], "reject")
    assert rejected.status_code == 200
    assert (rejected.json()["status"], bool(rejected.json()["declinedAt"])) == ("declined", True)


def test_pause_and_resume_hold_and_release_the_follow_ups(api: httpx.Client, customer_id: str):
    quote = create(api, customerId=customer_id, send=True)
    paused = act(api, quote["id"], "pause")
    assert paused.json()["followUpsPaused"] is True
    assert act(api, quote["id"], "pause").json()["followUpsPaused"] is True  # no change
    resumed = act(api, quote["id"], "resume")
    assert resumed.json()["followUpsPaused"] is False
    assert resumed.json()["status"] == "sent"


@pytest.fixture
def answered(api: httpx.Client, customer_id: str) -> dict[str, str]:
    """A quote in each state reachable without scheduling: status -> quote id."""
    ids = {"draft": create(api, customerId=customer_id)["id"]}
    ids["sent"] = create(api, customerId=customer_id, send=True)["id"]
    ids["accepted"] = create(api, customerId=customer_id, send=True)["id"]
    assert act(api, ids["accepted"], "accept").status_code == 200
    ids["declined"] = create(api, customerId=customer_id, send=True)["id"]
    assert act(api, ids["declined"], "reject").status_code == 200
    return ids


REFUSED = [
    ("draft", "accept"),
    ("draft", "reject"),
    ("draft", "pause"),
    ("draft", "convert"),
    ("sent", "send"),
    ("accepted", "accept"),
    ("accepted", "reject"),
    ("accepted", "send"),
    ("accepted", "pause"),
    ("declined", "accept"),
    ("declined", "reject"),
    ("declined", "convert"),
    ("declined", "resume"),
]


def test_actions_the_state_does_not_allow_are_422_and_change_nothing(
    api: httpx.Client, answered: dict[str, str], customer_id: str
):
    booked = bookings_of(api, customer_id)
    for status, action in REFUSED:
        quote_id = answered[status]
        before = api.get(f"{API}/quotes/{quote_id}").json()
        fields = {"startIso": open_start(api), "serviceId": "svc_standard_clean"}
        response = act(api, quote_id, action, **(fields if action == "convert" else {}))
        error = error_of(response, 422, "unprocessable")
        assert quote_id in error["message"], (status, action)
        assert api.get(f"{API}/quotes/{quote_id}").json() == before, (status, action)
    assert bookings_of(api, customer_id) == booked


def test_converting_a_hand_priced_quote_without_a_service_is_422(
    api: httpx.Client, answered: dict[str, str]
):
    for status in ("sent", "accepted"):
        response = act(api, answered[status], "convert", startIso=START)
        error = error_of(response, 422, "unprocessable")
        assert "serviceId" in error["message"]
        quote = api.get(f"{API}/quotes/{answered[status]}").json()
        assert (quote["status"], quote["bookingId"]) == (status, None)


def test_the_deprecated_booking_id_convert_is_422_outside_sent_or_accepted(
    stack: Stack, api: httpx.Client, answered: dict[str, str], customer_id: str
):
    made_elsewhere = add_booking(stack.container, stack.company.id, customer_id)
    for status in ("draft", "declined"):
        response = act(api, answered[status], "convert", bookingId=made_elsewhere)
        error_of(response, 422, "unprocessable")
        assert api.get(f"{API}/quotes/{answered[status]}").json()["bookingId"] is None


def test_the_deprecated_booking_id_convert_links_only_a_real_booking_of_the_company(
    stack: Stack, api: httpx.Client, answered: dict[str, str], customer_id: str
):
    quote_id = answered["accepted"]
    theirs = add_booking(stack.container, stack.demo[1].company.id)
    for missing in (theirs, theirs[:-6] + "000000"):
        error_of(act(api, quote_id, "convert", bookingId=missing), 404, "not_found")
        quote = api.get(f"{API}/quotes/{quote_id}").json()
        assert (quote["status"], quote["bookingId"]) == ("accepted", None)

    made_elsewhere = add_booking(stack.container, stack.company.id, customer_id)
    booked = bookings_of(api, customer_id)
    linked = act(api, quote_id, "convert", bookingId=made_elsewhere)
    assert linked.status_code == 200, linked.text
    assert (linked.json()["status"], linked.json()["bookingId"]) == ("converted", made_elsewhere)
    assert bookings_of(api, customer_id) == booked  # linked, not booked again


def test_the_deprecated_booking_id_convert_refuses_another_customers_or_a_linked_booking(
    stack: Stack, api: httpx.Client, answered: dict[str, str], customer_id: str
):
    quote_id = answered["accepted"]
    someone_else = api.post(
        f"{API}/customers",
        json={"name": "Someone Else", "email": unique_email("else"), "address": HOME},
    ).json()["id"]
    theirs = add_booking(stack.container, stack.company.id, someone_else)
    before = api.get(f"{API}/bookings/{theirs}").json()

    refused = error_of(act(api, quote_id, "convert", bookingId=theirs), 422, "unprocessable")

    assert theirs in refused["message"]
    assert someone_else in refused["message"]
    quote = api.get(f"{API}/quotes/{quote_id}").json()
    assert (quote["status"], quote["bookingId"]) == ("accepted", None)
    assert api.get(f"{API}/bookings/{theirs}").json() == before

    # A booking of the quote's own customer, once linked, is not linked to another quote.
    ours = add_booking(stack.container, stack.company.id, customer_id)
    linked = act(api, answered["sent"], "convert", bookingId=ours)
    assert linked.status_code == 200, linked.text
    assert api.get(f"{API}/bookings/{ours}").json()["quoteId"] == answered["sent"]
    again = error_of(act(api, quote_id, "convert", bookingId=ours), 422, "unprocessable")
    assert answered["sent"] in again["message"]
    quote = api.get(f"{API}/quotes/{quote_id}").json()
    assert (quote["status"], quote["bookingId"]) == ("accepted", None)


@pytest.mark.parametrize("status", ["accepted", "sent"])
def test_convert_books_the_customer_at_their_default_address(
    stack: Stack, api: httpx.Client, status: str
):
    customer_id = demo_customer_id(stack)  # Ada Lovelace, with a default address
    quote = create(api, customerId=customer_id, send=True)
    if status == "accepted":
        assert act(api, quote["id"], "accept").status_code == 200
    before = bookings_of(api, customer_id)
    start = open_start(api)

    response = act(api, quote["id"], "convert", startIso=start, serviceId="svc_standard_clean")

    assert response.status_code in (200, 201), response.text
    converted = response.json()
    booking_id = converted["bookingId"]
    assert isinstance(booking_id, str)
    assert booking_id
    assert converted["status"] == "converted"
    assert converted["acceptedAt"]
    assert converted["convertedAt"]
    assert {f["status"] for f in converted["followUps"]} == {"cancelled"}
    fetched = api.get(f"{API}/quotes/{quote['id']}").json()
    assert (fetched["status"], fetched["bookingId"]) == ("converted", booking_id)

    after = bookings_of(api, customer_id)
    assert sorted(after) == sorted([*before, booking_id])
    booking = api.get(f"{API}/bookings/{booking_id}").json()
    with stack.container.uow() as uow:
        home = uow.customers.get(stack.company.id, customer_id).default_address
    assert home is not None
    assert (booking["customerId"], booking["quoteId"]) == (customer_id, quote["id"])
    assert (booking["serviceId"], booking["status"]) == ("svc_standard_clean", "scheduled")
    assert datetime.fromisoformat(booking["startIso"]) == datetime.fromisoformat(start)
    assert (booking["address"]["line1"], booking["address"]["zip"]) == (home.line1, home.zip)
    assert booking["price"]["totalCents"] == quote["totalCents"]  # as it was quoted

    # A converted quote is never converted again, and books nothing more.
    again = act(api, quote["id"], "convert", startIso=open_start(api), serviceId="svc_deep_clean")
    assert quote["id"] in error_of(again, 422, "unprocessable")["message"]
    assert api.get(f"{API}/quotes/{quote['id']}").json() == fetched
    assert sorted(bookings_of(api, customer_id)) == sorted(after)


def test_convert_is_refused_for_a_draft_declined_or_converted_quote_and_books_nothing(
    api: httpx.Client, answered: dict[str, str], customer_id: str
):
    converted = create(api, customerId=customer_id, send=True)["id"]
    fields = {"startIso": open_start(api), "serviceId": "svc_standard_clean"}
    assert act(api, converted, "convert", **fields).status_code == 200
    booked = bookings_of(api, customer_id)
    assert len(booked) == 1
    for quote_id in (answered["draft"], answered["declined"], converted):
        before = api.get(f"{API}/quotes/{quote_id}").json()
        response = act(
            api, quote_id, "convert", startIso=open_start(api), serviceId=fields["serviceId"]
        )
        assert quote_id in error_of(response, 422, "unprocessable")["message"]
        assert api.get(f"{API}/quotes/{quote_id}").json() == before
        assert bookings_of(api, customer_id) == booked, before["status"]


def test_convert_checks_its_start_time(api: httpx.Client, answered: dict[str, str]):
    quote_id = answered["sent"]
    off_quarter = act(
        api, quote_id, "convert", startIso="2030-01-07T10:07:00-05:00", serviceId="svc_deep_clean"
    )
    assert "startIso" in error_of(off_quarter, 400, "invalid_request")["fieldErrors"]
    past = act(api, quote_id, "convert", startIso="2020-01-06T10:00:00-05:00", serviceId="svc_x")
    assert past.status_code in (400, 422)


def test_convert_only_fields_are_refused_on_other_actions(
    api: httpx.Client, answered: dict[str, str]
):
    response = act(api, answered["sent"], "pause", startIso=START)
    assert error_of(response, 400, "invalid_request")["fieldErrors"] == {
        "startIso": "Only used with action convert."
    }
    bogus = act(api, answered["sent"], "archive")
    assert "action" in error_of(bogus, 400, "invalid_request")["fieldErrors"]


def test_a_missing_quote_is_404(api: httpx.Client):
    error_of(api.get(f"{API}/quotes/quo_missing"), 404, "not_found")
    error_of(act(api, "quo_missing", "send"), 404, "not_found")


def test_past_its_expiry_a_quote_cannot_be_sent_answered_or_converted(
    api: httpx.Client, customer_id: str
):
    # Two quotes that expire soon: 1.5 s from now, or (when a loaded machine took longer
    # than that to create them, so the expiry had passed at the second create) later.
    body = {"manualLines": [{"description": "Post-renovation clean", "amountCents": 42000}]}
    for margin in (1.5, 5.0, 15.0, 45.0):
        soon = (datetime.now(UTC) + timedelta(seconds=margin)).isoformat()
        made = [
            api.post(
                f"{API}/quotes",
                json={**body, "customerId": customer_id, "expiresAt": soon, **extra},
                headers=idem(),
            )
            for extra in ({}, {"send": True})
        ]
        if all(response.status_code == 201 for response in made):
            break
        for response in made:  # refused only for an expiry already past
            if response.status_code != 201:
                assert "expiresAt" in error_of(response, 400, "invalid_request")["fieldErrors"]
    else:
        pytest.fail("even 45 s were too few to create two quotes")
    draft, sent = (response.json() for response in made)
    # Follow-ups due after the expiry are not scheduled.
    assert sent["followUps"] == []
    assert draft["expiresAt"] is not None
    time.sleep(max(0.0, (datetime.fromisoformat(soon) - datetime.now(UTC)).total_seconds()))
    time.sleep(0.1)

    refused_send = act(api, draft["id"], "send")
    assert "expir" in error_of(refused_send, 422, "unprocessable")["message"]
    assert status_of(api, draft["id"]) == "draft"

    assert status_of(api, sent["id"]) == "expired"
    booked = bookings_of(api, customer_id)
    for action, fields in (
        ("accept", {}),
        ("reject", {}),
        ("convert", {"startIso": open_start(api), "serviceId": "svc_standard_clean"}),
    ):
        response = act(api, sent["id"], action, **fields)
        assert "expir" in error_of(response, 422, "unprocessable")["message"], action
    assert status_of(api, sent["id"]) == "expired"
    assert bookings_of(api, customer_id) == booked  # the expired convert booked nothing


def test_an_expiry_in_the_past_is_refused_at_creation(api: httpx.Client, customer_id: str):
    response = api.post(
        f"{API}/quotes",
        json={
            "customerId": customer_id,
            "manualLines": [{"description": "x", "amountCents": 100}],
            "expiresAt": "2020-01-01T00:00:00Z",
        },
        headers=idem(),
    )
    assert "expiresAt" in error_of(response, 400, "invalid_request")["fieldErrors"]


# --- Convert honours the quoted price (docs/quotes.md, "Convert") -----------------------


def earliest_start(api: httpx.Client, day: str, service_id: str = "svc_standard_clean") -> str:
    """The earliest open start at 10001 on ``day``: a morning start leaves room for a job
    longer than availability's default selection."""
    query = {"serviceId": service_id, "date": day, "zip": "10001"}
    response = api.get(f"{API}/availability", params=query)
    assert response.status_code == 200, response.text
    starts = [slot["startIso"] for slot in response.json()["data"]]
    assert starts, f"no open start at 10001 on {day}"
    return min(starts, key=datetime.fromisoformat)


def quote_for(api: httpx.Client, customer_id: str, **selection: Any) -> dict[str, Any]:
    """A sent catalog-priced quote of a standard clean for ``customer_id``."""
    body = {"customerId": customer_id, "serviceId": "svc_standard_clean", "send": True}
    response = api.post(f"{API}/quotes", json={**body, **selection}, headers=idem())
    assert response.status_code == 201, response.text
    quote: dict[str, Any] = response.json()
    return quote


def booking_of_convert(api: httpx.Client, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    booking: dict[str, Any] = api.get(f"{API}/bookings/{response.json()['bookingId']}").json()
    return booking


def test_convert_books_a_catalog_quote_at_its_quoted_price_whatever_its_date_or_address(
    api: httpx.Client, customer_id: str
):
    # Quoted for the island zip (its travel fee) and no date; booked on a Saturday (the
    # weekend surcharge) at the customer's home in 10001 (no travel fee).
    quote = quote_for(api, customer_id, zip="02554", extras=[{"id": "ext_oven"}])
    assert [fee["id"] for fee in quote["price"]["fees"]] == ["fee_island"]
    saturday = earliest_start(api, "2030-01-12")

    converted = act(api, quote["id"], "convert", startIso=saturday)

    booking = booking_of_convert(api, converted)
    assert booking["price"] == quote["price"]  # every line, discount, fee and tax
    assert booking["price"]["totalCents"] == quote["totalCents"] == converted.json()["totalCents"]
    assert booking["durationMinutes"] == quote["price"]["durationMinutes"]
    assert booking["address"]["zip"] == "10001"


def test_convert_adds_only_the_manual_fees_the_quote_lacks_and_taxes_the_taxable_ones(
    api: httpx.Client, customer_id: str
):
    quote = quote_for(api, customer_id, manualFeeIds=["fee_pets"], couponCode="welcome10")
    quoted = quote["price"]

    converted = act(
        api,
        quote["id"],
        "convert",
        startIso=earliest_start(api, "2030-01-14"),
        manualFeeIds=["fee_pets", "fee_rush"],
    )

    price = booking_of_convert(api, converted)["price"]
    rush = (quoted["discountedSubtotalCents"] * 1_500 + 5_000) // 10_000  # 15 %, half-up
    assert [fee["id"] for fee in price["fees"]] == ["fee_pets", "fee_rush"]  # pets once
    assert price["fees"][1]["amountCents"] == rush
    for same in ("lines", "discounts", "discountedSubtotalCents", "taxRateBps"):
        assert price[same] == quoted[same], same
    # Neither fee is taxable: the tax is the quote's; the parts sum to the total.
    assert (price["taxableCents"], price["taxCents"]) == (
        quoted["taxableCents"],
        quoted["taxCents"],
    )
    assert price["feesCents"] == quoted["feesCents"] + rush
    assert price["totalCents"] == quoted["totalCents"] + rush
    assert price["totalCents"] == (
        price["subtotalCents"] - price["discountCents"] + price["feesCents"] + price["taxCents"]
    )


def test_a_plans_first_visit_is_booked_as_quoted_and_its_later_ones_as_bookings_price_them(
    api: httpx.Client, customer_id: str
):
    selection: dict[str, Any] = {
        "frequencySlug": "weekly",
        "extras": [{"id": "ext_first_deep"}],
        "couponCode": "WELCOME10",
    }
    quote = quote_for(api, customer_id, zip="02554", **selection)
    converted = act(api, quote["id"], "convert", startIso=earliest_start(api, "2031-03-04"))
    first = booking_of_convert(api, converted)
    visits = [api.get(f"{API}/bookings/{b}").json() for b in bookings_of(api, customer_id)]
    later = min(
        (v for v in visits if v["planId"] == first["planId"] and v["visitIndex"] > 0),
        key=lambda v: v["visitIndex"],
    )

    assert first["price"] == quote["price"]
    # A later visit costs what POST /quote gives a later visit of the same selection at
    # the booking's address, as for a plan booked with POST /bookings.
    priced = api.post(
        f"{API}/quote",
        json={
            "serviceId": "svc_standard_clean",
            "zip": "10001",
            **selection,
            "startIso": first["startIso"],
        },
    )
    assert priced.status_code == 200, priced.text
    assert later["price"] == priced.json()["laterVisits"]
    assert "ext_first_deep" not in [line["id"] for line in later["price"]["lines"]]


def test_a_quotes_coupon_is_honoured_at_convert_though_its_limit_was_reached_since(
    api: httpx.Client, customer_id: str
):
    # FIRSTCLEAN: one redemption per customer. Two quotes carry it before either is booked.
    one = quote_for(api, customer_id, couponCode="FIRSTCLEAN")
    two = quote_for(api, customer_id, couponCode="FIRSTCLEAN")

    booking_of_convert(
        api, act(api, one["id"], "convert", startIso=earliest_start(api, "2030-01-15"))
    )

    # The convert counted a redemption, as a booking does: the customer's is used up.
    priced = api.post(
        f"{API}/quote",
        json={
            "serviceId": "svc_standard_clean",
            "couponCode": "FIRSTCLEAN",
            "customerId": customer_id,
        },
    )
    assert "maximum number of times" in error_of(priced, 422, "unprocessable")["message"]
    # The second quote was accepted at its price: it is booked at it all the same.
    converted = act(api, two["id"], "convert", startIso=earliest_start(api, "2030-01-16"))
    assert booking_of_convert(api, converted)["price"] == two["price"]


def test_a_plan_quote_is_refused_a_coupon_its_later_visits_fall_short_of(
    api: httpx.Client, customer_id: str
):
    """SPRING25 needs $150.00: the first-visit deep clean lifts the first visit of this
    biweekly plan over it, the later visits ($135.00) stay under. POST /quote and a
    booking refuse the coupon for the plan; so does creating the quote, rather than
    booking every later visit at $25 off."""
    selection = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "biweekly",
        "extras": [{"id": "ext_first_deep"}],
        "couponCode": "SPRING25",
    }
    priced = api.post(f"{API}/quote", json=selection)
    assert "$150.00" in error_of(priced, 422, "unprocessable")["message"]
    created = api.post(
        f"{API}/quotes", json={"customerId": customer_id, "send": True, **selection}, headers=idem()
    )
    assert error_of(created, 422, "unprocessable")["message"] == priced.json()["error"]["message"]
    assert api.get(f"{API}/quotes", params={"customerId": customer_id}).json()["data"] == []
    # Without the coupon the plan is quoted.
    del selection["couponCode"]
    assert quote_for(api, customer_id, **selection)["status"] == "sent"


# --- The deprecated bookingId form links no cancelled booking ---------------------------


def test_the_deprecated_booking_id_convert_refuses_a_cancelled_booking_and_links_a_completed_one(
    stack: Stack, api: httpx.Client, answered: dict[str, str], customer_id: str
):
    quote_id = answered["accepted"]
    cancelled = add_booking(stack.container, stack.company.id, customer_id)
    response = api.post(
        f"{API}/bookings/{cancelled}/cancel", json={"scope": "this"}, headers=idem()
    )
    assert response.status_code == 200, response.text
    before = api.get(f"{API}/bookings/{cancelled}").json()

    refused = error_of(act(api, quote_id, "convert", bookingId=cancelled), 422, "unprocessable")

    assert cancelled in refused["message"]
    assert quote_id in refused["message"]
    assert "cancelled" in refused["message"]
    quote = api.get(f"{API}/quotes/{quote_id}").json()
    assert (quote["status"], quote["bookingId"]) == ("accepted", None)
    assert api.get(f"{API}/bookings/{cancelled}").json() == before

    # A completed job is real work made separately: it is linked.
    done = add_booking(stack.container, stack.company.id, customer_id)
    with stack.container.uow() as uow:
        job = uow.bookings.get(stack.company.id, done)
        now = datetime.now(UTC)
        started = start_job(job, now)
        uow.bookings.save_all([started])  # one change at a time: each is saved on its own
        uow.bookings.save_all([complete_job(started, job.start)])  # done on its day
        uow.commit()
    linked = act(api, quote_id, "convert", bookingId=done)
    assert linked.status_code == 200, linked.text
    assert (linked.json()["status"], linked.json()["bookingId"]) == ("converted", done)


# --- A quote for a lead is booked for the customer its lead became ----------------------


def lead_quote(api: httpx.Client, **contact: str) -> tuple[str, dict[str, Any]]:
    """A new lead with ``contact`` and a sent hand-priced quote made for it alone."""
    response = api.post(f"{API}/leads", json={"name": "Lead Only", **contact})
    assert response.status_code in (200, 201), response.text
    lead_id: str = response.json()["id"]
    return lead_id, create(api, leadId=lead_id, send=True)


def new_customer(api: httpx.Client, **fields: Any) -> str:
    body = {"name": "Became A Customer", "email": unique_email("became"), "address": HOME}
    response = api.post(f"{API}/customers", json={**body, **fields})
    assert response.status_code == 201, response.text
    customer: str = response.json()["id"]
    return customer


def random_phone() -> str:
    """A New York number, as a person types it, that no other test uses."""
    return f"(212) 7{secrets.randbelow(90) + 10}-{secrets.randbelow(9000) + 1000}"


def test_a_quote_for_a_lead_is_refused_naming_it_until_a_customer_has_the_leads_email(
    api: httpx.Client,
):
    email = unique_email("lead")
    lead_id, quote = lead_quote(api, email=email)
    fields = {"startIso": earliest_start(api, "2030-01-17"), "serviceId": "svc_standard_clean"}

    refused = error_of(act(api, quote["id"], "convert", **fields), 422, "unprocessable")
    assert refused["message"] == (
        f"Quote {quote['id']} is for lead {lead_id} and no customer has its email or phone "
        "yet; create the customer (with a default address) first."
    )
    assert api.get(f"{API}/quotes/{quote['id']}").json()["status"] == "sent"

    customer_id = new_customer(api, email=email.upper())  # emails match case-insensitively
    converted = act(api, quote["id"], "convert", **fields)

    booking = booking_of_convert(api, converted)
    assert (booking["customerId"], booking["quoteId"]) == (customer_id, quote["id"])
    assert booking["price"]["totalCents"] == quote["totalCents"]
    fetched = api.get(f"{API}/quotes/{quote['id']}").json()
    assert (fetched["status"], fetched["customerId"], fetched["leadId"]) == (
        "converted",
        customer_id,
        lead_id,
    )


def test_a_quote_for_a_lead_with_a_phone_alone_is_booked_for_the_customer_with_that_phone(
    api: httpx.Client,
):
    phone = random_phone()
    _, quote = lead_quote(api, phone=phone)
    digits = "+1" + "".join(c for c in phone if c.isdigit())
    customer_id = new_customer(api, phone=digits)  # the same number, written otherwise

    converted = act(
        api,
        quote["id"],
        "convert",
        startIso=earliest_start(api, "2030-01-18"),
        serviceId="svc_standard_clean",
    )

    assert booking_of_convert(api, converted)["customerId"] == customer_id
    assert converted.json()["customerId"] == customer_id


def test_the_deprecated_form_links_a_lead_quote_to_a_booking_of_the_customer_it_became(
    stack: Stack, api: httpx.Client
):
    email = unique_email("lead")
    lead_id, quote = lead_quote(api, email=email)
    someone = new_customer(api)
    theirs = add_booking(stack.container, stack.company.id, someone)
    refused = error_of(act(api, quote["id"], "convert", bookingId=theirs), 422, "unprocessable")
    assert refused["message"] == (
        f"Booking {theirs} cannot be linked to quote {quote['id']}: the quote is for lead "
        f"{lead_id} and no customer has its email or phone yet."
    )

    customer_id = new_customer(api, email=email)
    ours = add_booking(stack.container, stack.company.id, customer_id)
    error_of(act(api, quote["id"], "convert", bookingId=theirs), 422, "unprocessable")
    linked = act(api, quote["id"], "convert", bookingId=ours)
    assert linked.status_code == 200, linked.text
    assert (linked.json()["bookingId"], linked.json()["customerId"]) == (ours, customer_id)
    assert api.get(f"{API}/bookings/{ours}").json()["quoteId"] == quote["id"]


# --- The order of convert's checks (docs/quotes.md) -------------------------------------


@pytest.mark.parametrize("start", ["2030-01-07T10:00:00", "tomorrow", 12345, "+05"])
def test_a_convert_body_of_the_wrong_shape_is_400_before_the_quotes_state_is_looked_at(
    api: httpx.Client, answered: dict[str, str], start: object
):
    response = act(api, answered["draft"], "convert", startIso=start)
    assert "startIso" in error_of(response, 400, "invalid_request")["fieldErrors"]
    # A well-formed instant that breaks a rule is judged after the state: a draft is 422.
    off_quarter = act(api, answered["draft"], "convert", startIso="2030-01-07T10:07:00-05:00")
    assert answered["draft"] in error_of(off_quarter, 422, "unprocessable")["message"]


def test_the_openapi_description_of_convert_says_the_quoted_price_is_honoured(
    api: httpx.Client,
):
    document = api.get("/api/openapi.json").json()
    body = document["paths"]["/api/v1/quotes/{id}"]["post"]["requestBody"]["content"]
    described = body["application/json"]["schema"]["description"]
    assert "exactly as quoted" in described
    assert "lead" in described
    assert (
        "cancelled" in body["application/json"]["schema"]["properties"]["bookingId"]["description"]
    )


def test_a_job_booked_from_a_hand_priced_quote_is_called_by_its_quoted_lines(
    stack: Stack, api: httpx.Client, customer_id: str
):
    """Its price lines are the quote's own, not the service's: the tracking page calls
    the job by them all ("Windows 14 panes, Gutter"), not by the first alone."""
    quote = create(
        api,
        customerId=customer_id,
        send=True,
        manualLines=[
            {"description": "Windows 14 panes", "amountCents": 10_001},
            {"description": "Gutter", "amountCents": 3_333},
        ],
    )
    converted = act(
        api, quote["id"], "convert", startIso=open_start(api), serviceId="svc_standard_clean"
    )
    booking = booking_of_convert(api, converted)
    path = "/" + booking["trackingUrl"].split("/", 3)[3]
    with stack.client() as browser:
        page = browser.get(path)
    assert page.status_code == 200
    assert "Windows 14 panes, Gutter" in page.text
