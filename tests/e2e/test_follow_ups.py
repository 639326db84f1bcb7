"""Quote follow-ups and lead reminders over HTTP: a quote sent (a lead changed) through
``/api/v1``, the worker's follow-up sweep run for the test's own company with a later
clock, and what ``GET /api/v1/quotes/:id`` and the queued messages then say (sent,
skipped while paused, sent after resuming, cancelled once answered; a lead's owner
reminded on the date). The whole worker, mailing to a real SMTP server, is in
``test_notifications.py`` (a stack of its own: the worker mails every event of its
database)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from adapters.notifications import JinjaComposer
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.notifications import Message, MessageKind
from booking_core.services.follow_ups import FollowUpsQueued, queue_due_follow_ups
from tests.e2e.support import API, Stack, idem, unique_email

DAY = timedelta(days=1)


@pytest.fixture
def shop(stack: Stack) -> Iterator[tuple[Company, httpx.Client]]:
    company, key = stack.new_company()
    with stack.client(key) as c:
        yield company, c


def send_quote(c: httpx.Client) -> tuple[dict[str, Any], str]:
    """A quote sent at once to a new customer; the quote and the customer's email."""
    email = unique_email("fu")
    made = c.post(f"{API}/customers", json={"name": "Ada <b>Lovelace</b>", "email": email})
    assert made.status_code == 201, made.text
    expires = (datetime.now().astimezone() + 14 * DAY).isoformat()
    body = {
        "customerId": made.json()["id"],
        "manualLines": [{"description": "Windows", "amountCents": 12_345}],
        "expiresAt": expires,
        "send": True,
    }
    response = c.post(f"{API}/quotes", json=body, headers=idem())
    assert response.status_code == 201, response.text
    quote: dict[str, Any] = response.json()
    return quote, email


def sweep(stack: Stack, company: Company, at: datetime) -> FollowUpsQueued:
    return queue_due_follow_ups(
        company.id,
        uow_factory=stack.container.uow,
        clock=FixedClock(at),
        composer=JinjaComposer(),
        base_url=stack.container.settings.base_url,
    )


def follow_ups(c: httpx.Client, quote_id: str) -> list[str]:
    response = c.get(f"{API}/quotes/{quote_id}")
    assert response.status_code == 200, response.text
    return [f["status"] for f in response.json()["followUps"]]


def mailed(stack: Stack, company: Company, quote_id: str) -> list[Message]:
    with stack.container.uow() as uow:
        found = uow.messages.for_subject(company.id, quote_id)
    return [m for m in found if m.kind is MessageKind.QUOTE_FOLLOW_UP]


def act(c: httpx.Client, quote_id: str, action: str) -> None:
    response = c.post(f"{API}/quotes/{quote_id}", json={"action": action}, headers=idem())
    assert response.status_code == 200, response.text


def test_a_sent_quotes_follow_ups_are_mailed_at_their_times(
    stack: Stack, shop: tuple[Company, httpx.Client]
) -> None:
    company, c = shop
    quote, email = send_quote(c)
    sent_at = datetime.fromisoformat(quote["sentAt"])
    assert follow_ups(c, quote["id"]) == ["scheduled", "scheduled"]
    assert sweep(stack, company, sent_at + DAY).quote_follow_ups == 0
    assert sweep(stack, company, sent_at + 2 * DAY).quote_follow_ups == 1
    assert follow_ups(c, quote["id"]) == ["sent", "scheduled"]
    (message,) = mailed(stack, company, quote["id"])
    assert message.to == email
    assert quote["publicUrl"] in message.text
    assert quote["publicUrl"] in message.html
    assert "<b>" not in message.html  # the customer's name is escaped
    # The same sweep again mails nothing twice.
    assert sweep(stack, company, sent_at + 2 * DAY).quote_follow_ups == 0
    assert sweep(stack, company, sent_at + 5 * DAY).quote_follow_ups == 1
    assert follow_ups(c, quote["id"]) == ["sent", "sent"]
    assert len(mailed(stack, company, quote["id"])) == 2


def test_a_paused_quotes_follow_up_is_skipped_and_one_after_resuming_is_sent(
    stack: Stack, shop: tuple[Company, httpx.Client]
) -> None:
    company, c = shop
    quote, _ = send_quote(c)
    sent_at = datetime.fromisoformat(quote["sentAt"])
    act(c, quote["id"], "pause")
    assert sweep(stack, company, sent_at + 2 * DAY).skipped == 1
    assert follow_ups(c, quote["id"]) == ["skipped", "scheduled"]
    assert mailed(stack, company, quote["id"]) == []
    act(c, quote["id"], "resume")
    assert sweep(stack, company, sent_at + 3 * DAY) == FollowUpsQueued()
    assert sweep(stack, company, sent_at + 5 * DAY).quote_follow_ups == 1
    assert follow_ups(c, quote["id"]) == ["skipped", "sent"]
    (message,) = mailed(stack, company, quote["id"])
    assert message.dedupe_key == f"quote.follow_up:{quote['id']}:1"
    listed = c.get(f"{API}/messages", params={"subjectId": quote["id"]})
    assert listed.status_code == 200, listed.text
    kinds = [m["kind"] for m in listed.json()["data"]]
    assert kinds.count("quote.follow_up") == 1


def test_an_accepted_quote_is_followed_up_no_more(
    stack: Stack, shop: tuple[Company, httpx.Client]
) -> None:
    company, c = shop
    quote, _ = send_quote(c)
    sent_at = datetime.fromisoformat(quote["sentAt"])
    act(c, quote["id"], "accept")
    assert sweep(stack, company, sent_at + 6 * DAY) == FollowUpsQueued()
    assert follow_ups(c, quote["id"]) == ["cancelled", "cancelled"]
    assert mailed(stack, company, quote["id"]) == []


def test_the_follow_up_states_are_described_in_openapi(anon: httpx.Client) -> None:
    document = anon.get("/api/openapi.json").json()
    status = document["components"]["schemas"]["FollowUp"]["properties"]["status"]
    assert set(status["enum"]) == {"scheduled", "sent", "skipped", "cancelled"}
    assert "paused" in status["description"]


def test_a_leads_owner_is_reminded_on_the_follow_up_date(
    stack: Stack, shop: tuple[Company, httpx.Client]
) -> None:
    company, c = shop
    made = c.post(f"{API}/leads", json={"name": "Grace", "email": unique_email("lead")})
    assert made.status_code == 201, made.text
    lead_id = made.json()["id"]
    changed = c.patch(
        f"{API}/leads/{lead_id}", json={"owner": "sam@sparkle.example", "followUpOn": "2030-01-07"}
    )
    assert changed.status_code == 200, changed.text
    eight_in_new_york = datetime(2030, 1, 7, 13, 0, tzinfo=UTC)
    assert sweep(stack, company, eight_in_new_york - timedelta(minutes=1)).lead_reminders == 0
    assert sweep(stack, company, eight_in_new_york).lead_reminders == 1
    assert sweep(stack, company, eight_in_new_york + timedelta(hours=2)).lead_reminders == 0
    with stack.container.uow() as uow:
        (message,) = uow.messages.for_subject(company.id, lead_id)
    assert message.kind is MessageKind.LEAD_FOLLOW_UP
    assert message.to == "sam@sparkle.example"
    assert message.subject == "Follow up today: Grace"
