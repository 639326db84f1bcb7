"""``/quotes``: create (optionally sending), fetch, list, and act on a quote; the refusals
of SPEC.md section 3 that apply before scheduling exists."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.support import API, Stack, error_of, idem, unique_email

START = "2030-01-07T10:00:00-05:00"  # a Monday morning on the quarter hour, far ahead


@pytest.fixture
def customer_id(api: httpx.Client) -> str:
    response = api.post(f"{API}/customers", json={"name": "Quoted", "email": unique_email("q")})
    customer: str = response.json()["id"]
    return customer


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
    api: httpx.Client, answered: dict[str, str]
):
    for status, action in REFUSED:
        quote_id = answered[status]
        before = api.get(f"{API}/quotes/{quote_id}").json()
        fields = {"startIso": START, "serviceId": "svc_standard_clean"}
        response = act(api, quote_id, action, **(fields if action == "convert" else {}))
        error = error_of(response, 422, "unprocessable")
        assert quote_id in error["message"], (status, action)
        assert api.get(f"{API}/quotes/{quote_id}").json() == before, (status, action)


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
    api: httpx.Client, answered: dict[str, str]
):
    for status in ("draft", "declined"):
        response = act(api, answered[status], "convert", bookingId="bkg_made_elsewhere")
        error_of(response, 422, "unprocessable")
        assert api.get(f"{API}/quotes/{answered[status]}").json()["bookingId"] is None


def test_a_convertible_quote_is_refused_until_scheduling_arrives_and_stays_as_it_was(
    api: httpx.Client, answered: dict[str, str]
):
    for status in ("sent", "accepted"):
        response = act(
            api, answered[status], "convert", startIso=START, serviceId="svc_standard_clean"
        )
        assert "scheduling" in error_of(response, 422, "unprocessable")["message"]
        quote = api.get(f"{API}/quotes/{answered[status]}").json()
        assert (quote["status"], quote["bookingId"]) == (status, None)


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
    soon = (datetime.now(UTC) + timedelta(seconds=1.5)).isoformat()
    draft = create(api, customerId=customer_id, expiresAt=soon)
    sent = create(api, customerId=customer_id, expiresAt=soon, send=True)
    # Follow-ups due after the expiry are not scheduled.
    assert sent["followUps"] == []
    assert draft["expiresAt"] is not None
    time.sleep(max(0.0, (datetime.fromisoformat(soon) - datetime.now(UTC)).total_seconds()))
    time.sleep(0.1)

    refused_send = act(api, draft["id"], "send")
    assert "expir" in error_of(refused_send, 422, "unprocessable")["message"]
    assert status_of(api, draft["id"]) == "draft"

    assert status_of(api, sent["id"]) == "expired"
    for action, fields in (
        ("accept", {}),
        ("reject", {}),
        ("convert", {"startIso": START, "serviceId": "svc_standard_clean"}),
    ):
        response = act(api, sent["id"], action, **fields)
        assert "expir" in error_of(response, 422, "unprocessable")["message"], action
    assert status_of(api, sent["id"]) == "expired"


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
