"""``Idempotency-Key`` on the writes that change money or the calendar: required, replayed
for the same body whatever its key order or whitespace, refused for another body, and
one effect however many copies race."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from attrs import frozen

from booking_core.companies import Company
from booking_core.idempotency import IdempotencyRecord, RecordState
from tests.e2e.support import API, Stack, add_booking, error_of, idem

Book = Callable[[], str]
"""Makes a real booking in the company the client acts for; returns its id."""


@frozen
class Write:
    """One idempotent write, and how to count how many times it took effect."""

    method: str
    path: str
    body: dict[str, Any]
    effects: Callable[[], int]


def _customer(c: httpx.Client) -> str:
    email = f"idem-{secrets.token_hex(4)}@example.com"
    response = c.post(f"{API}/customers", json={"name": "Idem", "email": email})
    customer_id: str = response.json()["id"]
    return customer_id


def _draft(c: httpx.Client, customer_id: str) -> str:
    response = c.post(
        f"{API}/quotes",
        json={
            "customerId": customer_id,
            "manualLines": [{"description": "Carpet", "amountCents": 15000}],
        },
        headers=idem(),
    )
    assert response.status_code == 201, response.text
    quote_id: str = response.json()["id"]
    return quote_id


def _entries(c: httpx.Client, booking_id: str, kind: str | None = None) -> int:
    data = c.get(f"{API}/payments", params={"bookingId": booking_id}).json()["data"]
    return len([e for e in data if kind is None or e["kind"] == kind])


def create_quote(c: httpx.Client, book: Book) -> Write:
    customer_id = _customer(c)
    return Write(
        "POST",
        "/quotes",
        {
            "customerId": customer_id,
            "serviceId": "svc_standard_clean",
            "frequencySlug": "biweekly",
            "parameters": [{"id": "par_bedrooms", "quantity": 3}],
            "extras": [{"id": "ext_oven", "quantity": 1}],
            "message": "As discussed on the phone.",
        },
        lambda: len(c.get(f"{API}/quotes", params={"customerId": customer_id}).json()["data"]),
    )


def send_quote(c: httpx.Client, book: Book) -> Write:
    quote_id = _draft(c, _customer(c))

    def effects() -> int:
        quote = c.get(f"{API}/quotes/{quote_id}").json()
        # A second send would have been refused; one send schedules two follow-ups.
        return 1 if quote["status"] == "sent" and len(quote["followUps"]) == 2 else 0

    return Write("POST", f"/quotes/{quote_id}", {"action": "send"}, effects)


def record_payment(c: httpx.Client, book: Book) -> Write:
    booking_id = book()
    return Write(
        "POST",
        "/payments",
        {
            "bookingId": booking_id,
            "kind": "PAYMENT",
            "amountCents": 12500,
            "method": "CHECK",
            "note": "Check #1042",
        },
        lambda: _entries(c, booking_id),
    )


def reverse_payment(c: httpx.Client, book: Book) -> Write:
    booking_id = book()
    recorded = c.post(
        f"{API}/payments",
        json={"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 900, "method": "CASH"},
        headers=idem(),
    )
    assert recorded.status_code == 201, recorded.text
    return Write(
        "PATCH",
        "/payments",
        {"id": recorded.json()["id"], "note": "Entered on the wrong booking."},
        lambda: _entries(c, booking_id, "REVERSAL"),
    )


WRITES = {
    "POST /quotes": create_quote,
    "POST /quotes/:id": send_quote,
    "POST /payments": record_payment,
    "PATCH /payments": reverse_payment,
}


@pytest.fixture
def shop(stack: Stack) -> tuple[Company, str]:
    """A company of its own and a full-access key."""
    return stack.new_company()


@pytest.fixture
def fresh(stack: Stack, shop: tuple[Company, str]) -> Iterator[httpx.Client]:
    """A client of a company of its own."""
    with stack.client(shop[1]) as c:
        yield c


@pytest.fixture(params=list(WRITES))
def write(
    request: pytest.FixtureRequest, stack: Stack, shop: tuple[Company, str], fresh: httpx.Client
) -> Write:
    return WRITES[request.param](fresh, lambda: add_booking(stack.container, shop[0].id))


def send(c: httpx.Client, write: Write, key: str | None, content: str | None = None):
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return c.request(
        write.method, API + write.path, content=content or json.dumps(write.body), headers=headers
    )


def test_a_missing_idempotency_key_is_invalid_request_naming_the_header(
    fresh: httpx.Client, write: Write
):
    response = send(fresh, write, None)
    error = error_of(response, 400, "invalid_request")
    assert "Idempotency-Key" in error["fieldErrors"]
    assert "Idempotency-Key" in error["message"]
    assert write.effects() == 0


def test_a_missing_idempotency_key_is_named_beside_the_body_s_problems(
    fresh: httpx.Client, write: Write
):
    # One answer names every problem: the body's and the header's.
    error = error_of(
        send(fresh, write, None, content='{"unknownField": 1}'), 400, "invalid_request"
    )
    assert "unknownField" in error["fieldErrors"]
    assert "Required" in error["fieldErrors"]["Idempotency-Key"]
    assert write.effects() == 0
    # So with a body that is not JSON at all, and with a Content-Type sent twice.
    error = error_of(send(fresh, write, None, content="{not json"), 400, "invalid_request")
    assert set(error["fieldErrors"]) == {"body", "Idempotency-Key"}
    twice = [("content-type", "application/json")] * 2
    response = fresh.request(write.method, API + write.path, content="{}", headers=twice)
    error = error_of(response, 400, "invalid_request")
    assert set(error["fieldErrors"]) == {"Content-Type", "Idempotency-Key"}
    assert write.effects() == 0


def test_a_blank_idempotency_key_is_refused_as_blank_not_as_missing(
    fresh: httpx.Client, write: Write
):
    # Blanks around a header's value are not part of it: "   " arrives as "".
    error = error_of(send(fresh, write, ""), 400, "invalid_request")
    assert "blank" in error["fieldErrors"]["Idempotency-Key"]
    assert "empty" in error["message"]
    assert write.effects() == 0


def test_an_idempotency_key_over_255_characters_is_refused(fresh: httpx.Client, write: Write):
    error = error_of(send(fresh, write, "k" * 256), 400, "invalid_request")
    assert "Idempotency-Key" in error["fieldErrors"]
    assert write.effects() == 0


def test_an_idempotency_key_sent_twice_is_refused_and_nothing_is_written(
    fresh: httpx.Client, write: Write
):
    """Two copies of the header: which one counts would be a guess (the first was kept, so
    a retry under the second wrote a payment twice)."""
    headers = [
        ("content-type", "application/json"),
        ("Idempotency-Key", "copy-a"),
        ("Idempotency-Key", "copy-b"),
    ]
    response = fresh.request(
        write.method, API + write.path, content=json.dumps(write.body), headers=headers
    )
    error = error_of(response, 400, "invalid_request")
    assert "once" in error["fieldErrors"]["Idempotency-Key"]
    assert write.effects() == 0
    # With a body of the wrong shape too, one answer names both.
    response = fresh.request(
        write.method, API + write.path, content='{"unknownField": 1}', headers=headers
    )
    error = error_of(response, 400, "invalid_request")
    assert "once" in error["fieldErrors"]["Idempotency-Key"]
    assert "unknownField" in error["fieldErrors"]
    assert write.effects() == 0
    assert send(fresh, write, "copy-a").status_code in (200, 201)  # not used up
    assert write.effects() == 1


def test_a_utf_8_key_counts_characters_not_bytes(fresh: httpx.Client, write: Write):
    """255 "é" (510 bytes of UTF-8) are 255 characters: taken, and replayed as one key;
    a 256th is refused."""

    def sent(key: str) -> httpx.Response:
        return fresh.request(
            write.method,
            API + write.path,
            content=json.dumps(write.body),
            headers={"content-type": "application/json", "Idempotency-Key": key.encode()},
        )

    first = sent("é" * 255)
    assert first.status_code in (200, 201), first.text
    again = sent("é" * 255)
    assert again.headers["idempotent-replayed"] == "true"
    assert write.effects() == 1
    error = error_of(sent("é" * 256), 400, "invalid_request")
    assert error["fieldErrors"] == {"Idempotency-Key": "At most 255 characters."}


def test_the_same_key_and_body_replays_the_first_answer(fresh: httpx.Client, write: Write):
    key = f"replay-{secrets.token_hex(6)}"
    first = send(fresh, write, key)
    assert first.status_code in (200, 201), first.text
    assert "idempotent-replayed" not in first.headers

    reordered = json.dumps(dict(reversed(list(write.body.items()))), indent=4)
    for content in (json.dumps(write.body), reordered, "\n " + json.dumps(write.body) + "\t\n"):
        again = send(fresh, write, key, content)
        assert again.status_code == first.status_code
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()
        assert again.content == first.content
        assert again.headers["x-request-id"] != first.headers["x-request-id"]
        assert "x-ratelimit-remaining" in again.headers
    assert write.effects() == 1


def test_the_same_key_with_another_body_is_409_idempotency_key_reused(
    fresh: httpx.Client, write: Write
):
    key = f"reuse-{secrets.token_hex(6)}"
    assert send(fresh, write, key).status_code in (200, 201)
    changed = {**write.body, "note": "something else"}
    if write.path.startswith("/quotes/"):
        changed = {"action": "pause"}
    elif write.path == "/quotes":
        changed = {**write.body, "message": "Another message."}
    response = fresh.request(
        write.method, API + write.path, json=changed, headers={"Idempotency-Key": key}
    )
    error_of(response, 409, "idempotency_key_reused")
    assert write.effects() == 1


def test_concurrent_requests_with_one_key_have_exactly_one_effect(
    stack: Stack, fresh: httpx.Client, write: Write
):
    key = f"race-{secrets.token_hex(6)}"
    copies = 8
    barrier = threading.Barrier(copies)
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    auth = fresh.headers["authorization"]

    def racer() -> None:
        with stack.client(None, authorization=auth) as c:
            barrier.wait()
            response = send(c, write, key)
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=racer) for _ in range(copies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(answers) == copies

    originals = [
        r for r in answers if r.status_code < 300 and "idempotent-replayed" not in r.headers
    ]
    replays = [r for r in answers if r.headers.get("idempotent-replayed") == "true"]
    busy = [r for r in answers if r.status_code == 409]
    assert len(originals) == 1, [(r.status_code, r.text) for r in answers]
    assert len(originals) + len(replays) + len(busy) == copies
    for response in replays:
        assert response.content == originals[0].content
    for response in busy:
        error_of(response, 409, "idempotency_key_in_use")
    assert write.effects() == 1


def test_keys_are_scoped_to_the_company(stack: Stack):
    key = f"shared-{secrets.token_hex(6)}"
    answers = []
    for demo in stack.demo:
        # The same body in both companies: each records a tip on a booking of its own.
        booking_id = add_booking(stack.container, demo.company.id)
        body = {"bookingId": booking_id, "kind": "TIP", "amountCents": 300, "method": "CASH"}
        with stack.client(demo.api_key) as c:
            answers.append(c.post(f"{API}/payments", json=body, headers={"Idempotency-Key": key}))
    assert [r.status_code for r in answers] == [201, 201]
    assert not any("idempotent-replayed" in r.headers for r in answers)
    assert answers[0].json()["id"] != answers[1].json()["id"]


def test_the_key_is_tied_to_its_endpoint(fresh: httpx.Client):
    key = f"path-{secrets.token_hex(6)}"
    customer_id = _customer(fresh)
    first, second = (_draft(fresh, customer_id) for _ in range(2))
    sent = fresh.post(
        f"{API}/quotes/{first}", json={"action": "send"}, headers={"Idempotency-Key": key}
    )
    assert sent.status_code == 200
    other = fresh.post(
        f"{API}/quotes/{second}", json={"action": "send"}, headers={"Idempotency-Key": key}
    )
    error_of(other, 409, "idempotency_key_reused")
    assert fresh.get(f"{API}/quotes/{second}").json()["status"] == "draft"


def test_a_refusal_is_replayed_too(fresh: httpx.Client):
    quote_id = _draft(fresh, _customer(fresh))
    key = {"Idempotency-Key": f"refused-{secrets.token_hex(6)}"}
    first = fresh.post(f"{API}/quotes/{quote_id}", json={"action": "accept"}, headers=key)
    error_of(first, 422, "unprocessable")
    # Sending the quote meanwhile does not turn the stored refusal into an acceptance.
    fresh.post(f"{API}/quotes/{quote_id}", json={"action": "send"}, headers=idem())
    again = fresh.post(f"{API}/quotes/{quote_id}", json={"action": "accept"}, headers=key)
    assert again.status_code == 422
    assert again.headers["idempotent-replayed"] == "true"
    # The same refusal, told as this request's: its id is the one in its own header.
    replayed, original = again.json()["error"], first.json()["error"]
    assert replayed["requestId"] == again.headers["x-request-id"] != original["requestId"]
    assert again.headers["original-request-id"] == original["requestId"]
    assert {**replayed, "requestId": original["requestId"]} == original
    assert fresh.get(f"{API}/quotes/{quote_id}").json()["status"] == "sent"


def test_writes_that_need_no_key_accept_none(fresh: httpx.Client):
    response = fresh.post(f"{API}/leads", json={"name": "No key", "email": "nokey@example.com"})
    assert response.status_code == 201
    customer = fresh.post(f"{API}/customers", json={"name": "N", "email": "n@example.com"})
    assert customer.status_code == 201


def test_a_key_is_kept_24_hours_and_then_starts_afresh(stack: Stack):
    company, secret = stack.new_company()
    now = stack.container.clock.now()
    stored = {
        "day-old": now - timedelta(hours=24, minutes=1),
        "hours-old": now - timedelta(hours=23),
    }
    with stack.container.uow() as uow:
        for key, at in stored.items():
            uow.idempotency.claim(
                IdempotencyRecord(company.id, key, "another body", RecordState.COMPLETED, at)
            )
            uow.idempotency.complete(company.id, key, 201, b'{"old": true}')
        uow.commit()
    booking_id = add_booking(stack.container, company.id)
    body = {"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 100, "method": "CASH"}
    with stack.client(secret) as c:
        fresh = c.post(f"{API}/payments", json=body, headers={"Idempotency-Key": "day-old"})
        kept = c.post(f"{API}/payments", json=body, headers={"Idempotency-Key": "hours-old"})
    assert fresh.status_code == 201, fresh.text
    assert "idempotent-replayed" not in fresh.headers
    assert fresh.json()["kind"] == "PAYMENT"
    error_of(kept, 409, "idempotency_key_reused")


def test_the_effect_and_its_stored_answer_commit_together(
    stack: Stack, fresh: httpx.Client, write: Write, monkeypatch: pytest.MonkeyPatch
):
    """Storing the answer fails once: the effect rolls back with it (a 500, nothing
    happened), and the same key then runs the write afresh, once."""
    repository = type(stack.container.uow().idempotency)
    complete = repository.complete
    failures = iter([True])

    def failing_once(self: Any, company_id: str, key: str, status: int, body: bytes) -> None:
        if next(failures, False):
            raise OSError("the answer could not be stored")
        complete(self, company_id, key, status, body)

    monkeypatch.setattr(repository, "complete", failing_once)
    key = f"together-{secrets.token_hex(6)}"
    failed = send(fresh, write, key)
    error_of(failed, 500, "internal_error")
    assert write.effects() == 0
    retried = send(fresh, write, key)
    assert retried.status_code < 300, retried.text
    assert "idempotent-replayed" not in retried.headers
    assert write.effects() == 1
    replayed = send(fresh, write, key)
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.content == retried.content
