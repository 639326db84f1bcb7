"""The limits of SPEC.md section 8 and DECISIONS.md that live at the HTTP edge, as
properties with ``@example``s on their boundary: at the limit accepted, one past refused.

The requests go in process (``httpx.ASGITransport``) to an instance of the application
over the SQLite stack's database, each from a client address of its own, so that no
example is held up by the public rate limit and none needs a socket.

Each limit (document, section), then the test that pins it:

- Public request body 64 KB; above it, 413 (SPEC.md 7 and 8):
  ``test_a_public_body_of_64_kb_is_read_and_one_byte_more_is_refused_with_413``
- Name 200, email 254, phone 40, street line 200, city 120, access notes 2,000, one
  intake answer 500, coupon or referral code 100 characters; on the public API a field
  over its ceiling is 422 naming the field and the limit (SPEC.md 7 and 8):
  ``test_a_public_field_at_its_ceiling_is_read_and_one_character_more_is_422_naming_it``
- Parameter or extra selections 200 at most, per array at the edge (SPEC.md 8):
  ``test_a_public_array_of_200_selections_is_read_and_201_is_422_naming_it``
- Exceeding the key's rate limit is 429 with ``retry-after`` (SPEC.md 8):
  ``test_a_key_is_served_up_to_its_rate_limit_and_refused_with_retry_after_one_past_it``
- ``limit`` 1..200, else ``invalid_request`` on ``limit`` (DECISIONS.md):
  ``test_a_list_limit_of_1_to_200_is_served_and_0_or_201_is_invalid_on_limit``
- ``Idempotency-Key`` at most 255 characters (DECISIONS.md):
  ``test_an_idempotency_key_of_255_characters_is_taken_and_256_is_invalid``
- Idempotency keys kept 24 hours (DECISIONS.md):
  ``test_a_write_is_replayed_until_24_hours_after_it_and_run_afresh_from_then_on``
- A caller's ``x-request-id`` of at most 64 of ``[A-Za-z0-9._-]`` is kept (DECISIONS.md):
  ``test_a_callers_request_id_of_64_sane_characters_is_echoed_and_65_is_replaced``

The core's limits (quote expiry, key rate limit range, the same field ceilings in the
domain, selections counted together, tracking life, webhook URLs, paging, retries,
self-service cutoff, minimum notice) are in ``tests/unit/test_limits.py``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import secrets
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from starlette.applications import Starlette

from adapters.http.idempotency import Answer, Gate, run_once
from adapters.http.ratelimit import MemoryWindows, RateLimiter
from adapters.memory import MemoryStore, MemoryUnitOfWork
from tests.e2e.support import API, Stack, error_of, unique_email
from tests.factories import email_of_length

PUBLIC = "/api/public"
SQLITE_ONLY = pytest.mark.parametrize("stack", ["sqlite"], indirect=True)
"""The limits do not depend on the database: one backend keeps these tests fast."""

_clients = itertools.count(1)


def _client_address() -> str:
    """A client address no other request of this module came from (10.0.0.0/8)."""
    n = next(_clients)
    return f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


@attrs.frozen
class Edge:
    """The application in process, the first demo company's slug, and a full-access key
    of its own (6,000 requests a minute: no example here waits on it)."""

    app: Starlette
    slug: str
    key: str

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request, from a client address of its own."""

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, client=(_client_address(), 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://edge") as c:
                return await c.request(method, path, **kwargs)

        return asyncio.run(send())


@pytest.fixture(scope="module")
def edge(stack: Stack) -> Edge:
    """One instance of the application for the module, with its own rate-limit counts."""
    return Edge(stack.app("http://edge", RateLimiter()), stack.company.slug, stack.new_key())


def public_refusal(response: httpx.Response, status: int) -> str:
    """The message of a public refusal, after checking status and shape."""
    assert response.status_code == status, response.text
    assert response.headers["access-control-allow-origin"] == "*"
    body = response.json()
    assert set(body) == {"error"}
    message: str = body["error"]
    return message


# --- The public body: SPEC.md sections 7 and 8 -----------------------------------------

LIMIT_BYTES = 64 * 1024
QUOTE_BODY = json.dumps(
    {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "biweekly",
        "parameters": [{"id": "par_bedrooms", "quantity": 3}],
    }
).encode()


@SQLITE_ONLY
@given(size=st.integers(min_value=len(QUOTE_BODY), max_value=LIMIT_BYTES + 4_096))
@example(size=LIMIT_BYTES)
@example(size=LIMIT_BYTES + 1)
def test_a_public_body_of_64_kb_is_read_and_one_byte_more_is_refused_with_413(
    edge: Edge, size: int
) -> None:
    """The body is a price request padded with whitespace to ``size`` bytes."""
    body = QUOTE_BODY[:-1] + b" " * (size - len(QUOTE_BODY)) + b"}"
    assert len(body) == size

    response = edge.request(
        "POST",
        f"{PUBLIC}/{edge.slug}/quote",
        content=body,
        headers={"content-type": "application/json"},
    )

    if size <= LIMIT_BYTES:
        assert response.status_code == 200, response.text
        assert response.json()["firstVisit"]["totalCents"] > 0
    else:
        assert "65536" in public_refusal(response, 413)


# --- Field ceilings on the public API: SPEC.md sections 7 and 8 --------------------------

PUBLIC_CEILINGS = {
    "customer.name": 200,
    "customer.email": 254,
    "customer.phone": 40,
    "address.line1": 200,
    "address.line2": 200,
    "address.city": 120,
    "address.accessNotes": 2_000,
    "answers.0.answer": 500,
    "couponCode": 100,
    "referralCode": 100,
}
"""SPEC.md section 8, by the path the field has in a booking body."""


def _text(path: str, length: int) -> str:
    if path == "customer.email":
        return email_of_length(length)
    return ("1" if path == "customer.phone" else "x") * length


def _booking_with(path: str, value: str) -> dict[str, Any]:
    """A booking body with ``value`` at ``path``, and a zip that is no zip: so the body is
    always refused (400 naming the zip) and nothing is booked, unless the field under test
    is over its ceiling, which the public API answers 422 first."""
    body: dict[str, Any] = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "one_time",
        "startIso": "2040-01-02T10:00:00-05:00",
        "customer": {"name": "Ada Lovelace", "email": unique_email("limits")},
        "address": {"line1": "1 Main St", "city": "New York", "state": "NY", "zip": "1000"},
        "answers": [{"questionId": "gate-code", "answer": "1234"}],
    }
    *parents, name = path.split(".")
    holder: Any = body
    for part in parents:
        holder = holder[int(part)] if part.isdigit() else holder[part]
    holder[name] = value
    return body


@SQLITE_ONLY
@given(
    path=st.sampled_from(sorted(PUBLIC_CEILINGS)),
    length=st.integers(min_value=13, max_value=2_100),
)
@example(path="customer.name", length=200)
@example(path="customer.name", length=201)
@example(path="customer.email", length=254)
@example(path="customer.email", length=255)
@example(path="customer.phone", length=40)
@example(path="customer.phone", length=41)
@example(path="address.line1", length=200)
@example(path="address.line1", length=201)
@example(path="address.line2", length=200)
@example(path="address.line2", length=201)
@example(path="address.city", length=120)
@example(path="address.city", length=121)
@example(path="address.accessNotes", length=2_000)
@example(path="address.accessNotes", length=2_001)
@example(path="answers.0.answer", length=500)
@example(path="answers.0.answer", length=501)
@example(path="couponCode", length=100)
@example(path="couponCode", length=101)
@example(path="referralCode", length=100)
@example(path="referralCode", length=101)
def test_a_public_field_at_its_ceiling_is_read_and_one_character_more_is_422_naming_it(
    edge: Edge, path: str, length: int
) -> None:
    limit = PUBLIC_CEILINGS[path]

    response = edge.request(
        "POST", f"{PUBLIC}/{edge.slug}/book", json=_booking_with(path, _text(path, length))
    )

    if length <= limit:
        message = public_refusal(response, 400)
        assert "address.zip" in message
        assert path not in message
    else:
        message = public_refusal(response, 422)  # the ceiling first, then the bad zip
        assert message.startswith(f"{path} is over its limit of {limit} characters.")
        assert "address.zip" in message


@SQLITE_ONLY
@given(
    array=st.sampled_from(["parameters", "extras"]),
    count=st.integers(min_value=0, max_value=260),
)
@example(array="parameters", count=200)
@example(array="parameters", count=201)
@example(array="extras", count=200)
@example(array="extras", count=201)
def test_a_public_array_of_200_selections_is_read_and_201_is_422_naming_it(
    edge: Edge, array: str, count: int
) -> None:
    """Each item names a catalog id the demo has not: an array the edge reads is refused
    for its unknown ids (400), one it does not read for its length (422)."""
    body = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "one_time",
        array: [{"id": f"nope_{n}", "quantity": 1} for n in range(count)],
    }

    response = edge.request("POST", f"{PUBLIC}/{edge.slug}/quote", json=body)

    if count <= 200:
        assert response.status_code in (200, 400), response.text
        if count:
            assert f"{array}.0.id" in public_refusal(response, 400)
    else:
        assert public_refusal(response, 422) == f"{array} is over its limit of 200 items."


# --- /api/v1: DECISIONS.md ---------------------------------------------------------------


@SQLITE_ONLY
@given(limit=st.integers(min_value=-5, max_value=1_000))
@example(limit=0)
@example(limit=1)
@example(limit=200)
@example(limit=201)
def test_a_list_limit_of_1_to_200_is_served_and_0_or_201_is_invalid_on_limit(
    edge: Edge, limit: int
) -> None:
    response = edge.request(
        "GET",
        f"{API}/customers",
        params={"limit": str(limit)},
        headers={"authorization": f"Bearer {edge.key}"},
    )

    if 1 <= limit <= 200:
        assert response.status_code == 200, response.text
        assert len(response.json()["data"]) <= limit
    else:
        error = error_of(response, 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"limit"}


@SQLITE_ONLY
@given(length=st.integers(min_value=16, max_value=600))
@example(length=255)
@example(length=256)
def test_an_idempotency_key_of_255_characters_is_taken_and_256_is_invalid(
    edge: Edge, length: int
) -> None:
    """The payment names a booking that does not exist: a key that is taken lets the
    write run, and it answers 404; nothing is recorded either way."""
    key = secrets.token_hex(8) + "k" * (length - 16)
    payment = {"bookingId": "bkg_none", "kind": "PAYMENT", "amountCents": 100, "method": "CASH"}

    response = edge.request(
        "POST",
        f"{API}/payments",
        json=payment,
        headers={"authorization": f"Bearer {edge.key}", "Idempotency-Key": key},
    )

    if length <= 255:
        error_of(response, 404, "not_found")
    else:
        error = error_of(response, 400, "invalid_request")
        assert error["fieldErrors"] == {"Idempotency-Key": "At most 255 characters."}


SANE = string.ascii_letters + string.digits + "._-"


@SQLITE_ONLY
@given(request_id=st.text(alphabet=SANE, min_size=1, max_size=100))
@example(request_id="r" * 64)
@example(request_id="r" * 65)
def test_a_callers_request_id_of_64_sane_characters_is_echoed_and_65_is_replaced(
    edge: Edge, request_id: str
) -> None:
    response = edge.request("GET", f"{API}/services", headers={"x-request-id": request_id})

    echoed = response.headers["x-request-id"]
    assert error_of(response, 401, "unauthorized")["requestId"] == echoed
    if len(request_id) <= 64:
        assert echoed == request_id
    else:
        assert echoed != request_id
        assert re.fullmatch(r"[A-Za-z0-9._-]{1,64}", echoed)


# --- In process, no database: the rate limiter and the idempotency record ---------------


@given(per_minute=st.integers(min_value=10, max_value=6_000))
@example(per_minute=10)
@example(per_minute=120)
@example(per_minute=6_000)
def test_a_key_is_served_up_to_its_rate_limit_and_refused_with_retry_after_one_past_it(
    per_minute: int,
) -> None:
    """SPEC.md section 8: within one minute's window, request ``per_minute`` is served
    and the next one is 429 with ``retry-after``."""
    windows = MemoryWindows(clock=lambda: 1_000.0)
    verdicts = [windows.hit("key_1", per_minute) for _ in range(per_minute + 1)]
    last_served, refused = verdicts[-2], verdicts[-1]

    assert all(v.allowed for v in verdicts[:-1])
    assert last_served.headers()["x-ratelimit-remaining"] == "0"
    assert "retry-after" not in last_served.headers()
    assert not refused.allowed
    assert refused.headers()["x-ratelimit-limit"] == str(per_minute)
    assert refused.headers()["retry-after"] == "60"


WRITTEN_AT = datetime(2001, 1, 1, 12, 0, tzinfo=UTC)
"""Long past: the process-wide purge of old records this test sets off is held back
until a later instant, and no other test's clock is that early."""


@given(offset=st.timedeltas(min_value=-timedelta(hours=2), max_value=timedelta(hours=2)))
@example(offset=-timedelta(microseconds=1))
@example(offset=timedelta(0))
def test_a_write_is_replayed_until_24_hours_after_it_and_run_afresh_from_then_on(
    offset: timedelta,
) -> None:
    store = MemoryStore()
    runs: list[int] = []

    def work(_: object) -> Answer:
        runs.append(1)
        return Answer(201, json.dumps({"run": len(runs)}).encode())

    def refusal(error: Exception) -> Answer:
        raise error

    def send(at: datetime) -> Answer:
        gate = Gate.of("cmp_1", "key-1", "POST", "/api/v1/payments", {"amountCents": 1}, at)
        return run_once(lambda: MemoryUnitOfWork(store), gate, work, refusal)

    first = send(WRITTEN_AT)
    again = send(WRITTEN_AT + timedelta(hours=24) + offset)

    if offset < timedelta(0):
        assert (again.status, again.body) == (first.status, first.body)
        assert again.headers.get("idempotent-replayed") == "true"
        assert len(runs) == 1
    else:
        assert json.loads(again.body) == {"run": 2}
        assert "idempotent-replayed" not in again.headers
