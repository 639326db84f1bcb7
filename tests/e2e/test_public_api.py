"""``/api/public/{slug}/...`` over real HTTP on both backends: ``catalog``, ``quote``,
``slots``, ``days`` and ``book`` answer as their ``/api/v1`` twins for the company the slug
names, with no key (a public booking is an ordinary one: same price, idempotency, race
safety and ``booking.created`` event); every answer carries
``Access-Control-Allow-Origin: *`` and never ``Access-Control-Allow-Credentials``;
preflights are 204; refusals are ``{"error": "<message>"}``; a body over 64 KB is 413
while it streams; the client address is rate-limited with the headers of ``/api/v1``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator
from sqlalchemy import text

from adapters.http.public import MAX_PUBLIC_BODY_BYTES, PUBLIC_RATE_LIMIT
from adapters.http.ratelimit import RateLimiter
from tests.e2e.support import (
    API,
    CrewSpec,
    LiveServer,
    Shop,
    Stack,
    booking_body,
    crewed_company,
    free_socket,
    idem,
    overlapping_assignments,
    weekday_ahead,
)
from tests.e2e.test_catalog import DEMO_SELECTION

PUBLIC = "/api/public"
LOOP = "60601"
RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


@pytest.fixture
def shop(stack: Stack) -> Shop:
    """A company of its own (own rate-limit counter) with one crew member in the Loop,
    Monday to Friday, 08:00 to 18:00."""
    return crewed_company(stack, (CrewSpec("Loop Lou", LOOP, (LOOP,)),))


@pytest.fixture
def public(stack: Stack) -> Iterator[httpx.Client]:
    """A browser-like client: no key, an Origin of another site."""
    with stack.client(origin="https://shop.example") as c:
        yield c


def refusal(response: httpx.Response, status: int) -> str:
    """The message of a public refusal, after checking status, shape and CORS."""
    assert response.status_code == status, response.text
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers
    body = response.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"], str)
    assert body["error"]
    return str(body["error"])


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers
    assert all(name in response.headers for name in RATE_HEADERS)
    return response.json()


def test_catalog_answers_what_services_answers(shop: Shop, stack: Stack, public: httpx.Client):
    slug = shop.company.slug
    with stack.client(shop.key) as api:
        assert ok(public.get(f"{PUBLIC}/{slug}/catalog")) == api.get(f"{API}/services").json()


def test_a_public_price_equals_the_server_price_to_the_cent(
    shop: Shop, stack: Stack, public: httpx.Client
):
    with stack.client(shop.key) as api:
        server = api.post(f"{API}/quote", json=DEMO_SELECTION)
    assert server.status_code == 200, server.text
    priced = ok(public.post(f"{PUBLIC}/{shop.company.slug}/quote", json=DEMO_SELECTION))
    assert priced == server.json()
    assert isinstance(priced["firstVisit"]["totalCents"], int)


def test_slots_list_what_availability_lists(shop: Shop, stack: Stack, public: httpx.Client):
    day = weekday_ahead(shop.zone, 7)
    params = {"serviceId": "svc_standard_clean", "date": day.isoformat(), "zip": LOOP}
    with stack.client(shop.key) as api:
        server = api.get(f"{API}/availability", params=params).json()
    slots = ok(public.get(f"{PUBLIC}/{shop.company.slug}/slots", params=params))
    assert slots == server
    assert slots["data"], "a working day of a free crew member has openings"


def test_days_say_which_dates_have_an_opening(shop: Shop, stack: Stack, public: httpx.Client):
    monday = weekday_ahead(shop.zone, 7, weekday=1)
    params = {"serviceId": "svc_standard_clean", "zip": LOOP, "from": monday.isoformat()}
    days = ok(public.get(f"{PUBLIC}/{shop.company.slug}/days", params={**params, "count": 7}))
    listed = {d["date"]: d["available"] for d in days}
    week = [(monday + timedelta(days=i)).isoformat() for i in range(7)]
    assert list(listed) == week
    # Lou works Monday to Friday: the weekend is a day off.
    assert [listed[d] for d in week] == [True] * 5 + [False] * 2


def test_a_day_whose_every_start_is_taken_is_not_available(
    shop: Shop, stack: Stack, public: httpx.Client
):
    day = weekday_ahead(shop.zone, 7, weekday=3)
    params = {"serviceId": "svc_standard_clean", "zip": LOOP, "date": day.isoformat()}
    with stack.client(shop.key) as api:
        for _ in range(10):  # book the best listed start until none is left
            left = api.get(f"{API}/availability", params=params).json()["data"]
            if not left:
                break
            booked = api.post(
                f"{API}/bookings", json=booking_body(left[0]["startIso"], LOOP), headers=idem()
            )
            assert booked.status_code == 201, booked.text
    query = {"serviceId": "svc_standard_clean", "zip": LOOP, "count": 3}
    days = ok(
        public.get(
            f"{PUBLIC}/{shop.company.slug}/days",
            params={**query, "from": (day - timedelta(days=1)).isoformat()},
        )
    )
    available = {d["date"]: d["available"] for d in days}
    assert available[day.isoformat()] is bool(left)
    assert available[day.isoformat()] is False, left
    assert available[(day - timedelta(days=1)).isoformat()] is True
    assert available[(day + timedelta(days=1)).isoformat()] is True


def test_days_default_to_today_and_refuse_a_count_outside_1_to_62(shop: Shop, public: httpx.Client):
    url = f"{PUBLIC}/{shop.company.slug}/days"
    params = {"serviceId": "svc_standard_clean", "zip": LOOP}
    days = ok(public.get(url, params={**params, "count": 2}))
    assert days[0]["date"] == datetime.now(shop.zone).date().isoformat()
    assert len(ok(public.get(url, params={**params, "count": 62}))) == 62
    for count in (0, 63):
        assert "count" in refusal(public.get(url, params={**params, "count": count}), 400)


def test_days_end_by_the_last_date_any_request_may_name(shop: Shop, public: httpx.Client):
    url = f"{PUBLIC}/{shop.company.slug}/days"
    params = {"serviceId": "svc_standard_clean", "zip": LOOP, "from": "2199-12-01"}
    last = ok(public.get(url, params={**params, "count": 31}))
    assert last[-1]["date"] == "2199-12-31"
    message = refusal(public.get(url, params={**params, "count": 32}), 400)
    assert "count" in message
    assert "At most 31 from 2199-12-01" in message


def test_no_key_or_cookie_is_read(stack: Stack, shop: Shop):
    url = f"{PUBLIC}/{shop.company.slug}/catalog"
    with stack.client("not-a-key", cookie="session=forged") as c:
        assert ok(c.get(url))["industries"]
    # Another company's key does not make it answer for that company.
    with stack.client(stack.other_key) as c, stack.client(shop.key) as mine:
        assert ok(c.get(url)) == mine.get(f"{API}/services").json()


def test_an_unknown_slug_is_404(public: httpx.Client):
    for slug in ("no-such-company", "Bad_Slug", "x" * 300):
        assert refusal(public.get(f"{PUBLIC}/{slug}/catalog"), 404)
    assert refusal(public.post(f"{PUBLIC}/no-such-company/quote", json=DEMO_SELECTION), 404)


@pytest.mark.parametrize(
    ("method", "path", "methods"),
    [
        ("GET", "catalog", "GET"),
        ("POST", "quote", "POST"),
        ("GET", "slots", "GET"),
        ("GET", "days", "GET"),
        ("POST", "book", "POST"),
    ],
)
def test_every_route_answers_a_preflight(
    public: httpx.Client, shop: Shop, method: str, path: str, methods: str
):
    response = public.options(
        f"{PUBLIC}/{shop.company.slug}/{path}",
        headers={
            "access-control-request-method": method,
            "access-control-request-headers": "content-type",
        },
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "*"
    assert methods in response.headers["access-control-allow-methods"].split(", ")
    allowed = response.headers["access-control-allow-headers"].split(", ")
    assert {"content-type", "idempotency-key", "x-request-id"} <= set(allowed)
    assert int(response.headers["access-control-max-age"]) > 0
    # A credentialed request is never granted: no allow-credentials, and the origin is *.
    assert "access-control-allow-credentials" not in response.headers


def test_a_page_on_another_origin_may_read_the_rate_limit_and_request_id_headers(
    shop: Shop, public: httpx.Client
):
    base = f"{PUBLIC}/{shop.company.slug}"
    for response in (public.get(f"{base}/catalog"), public.get(f"{base}/nothing-here")):
        exposed = set(response.headers["access-control-expose-headers"].split(", "))
        wanted = {"retry-after", "x-ratelimit-remaining", "x-ratelimit-reset", "x-request-id"}
        assert wanted | {"idempotent-replayed"} <= exposed, response.status_code


def test_refusals_carry_cors_and_the_public_shape(shop: Shop, public: httpx.Client):
    base = f"{PUBLIC}/{shop.company.slug}"
    assert refusal(public.delete(f"{base}/catalog"), 405)
    assert "GET" in public.put(f"{base}/catalog").headers["allow"]
    assert refusal(public.get(f"{PUBLIC}/{shop.company.slug}/nothing-here"), 404)
    message = refusal(public.post(f"{base}/quote", json={"frequencySlug": "one_time"}), 400)
    assert "serviceId" in message
    # A field over its ceiling is 422 naming the field and the limit.
    over = {**DEMO_SELECTION, "couponCode": "c" * 101}
    message = refusal(public.post(f"{base}/quote", json=over), 422)
    assert "couponCode" in message
    assert "100" in message
    # Every problem comes in the one answer: each field over its ceiling, then the rest.
    several = {"couponCode": "c" * 101, "customer": {"name": "n" * 201, "email": "bad"}}
    message = refusal(public.post(f"{base}/book", json=several), 422)
    assert "couponCode is over its limit of 100" in message
    assert "customer.name is over its limit of 200" in message
    assert "customer.email" in message
    assert "serviceId" in message
    many = {**DEMO_SELECTION, "extras": [{"id": "ext_oven", "quantity": 1}] * 201}
    message = refusal(public.post(f"{base}/quote", json=many), 422)
    assert "extras" in message
    assert "200" in message
    not_json = refusal(public.post(f"{base}/quote", content=b"{not json"), 400)
    # Said once, not the message and then the same again under the body's "field".
    assert not_json == "The body is not valid JSON."
    as_text = public.post(f"{base}/quote", content=b"{}", headers={"content-type": "text/plain"})
    assert refusal(as_text, 400).count("Send the body as JSON") == 1
    unknown = {**DEMO_SELECTION, "serviceId": "svc_nothing"}
    assert "serviceId" in refusal(public.post(f"{base}/quote", json=unknown), 400)


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "quote"), ("POST", "book"), ("POST", "waitlist"), ("GET", "catalog")],
)
@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_body_over_64_kb_is_413_before_parsing(
    shop: Shop, public: httpx.Client, chunked: bool, method: str, path: str
):
    big = b"{" + b" " * (65 * 1024) + b"}"
    assert len(big) > MAX_PUBLIC_BODY_BYTES

    def stream() -> Iterator[bytes]:  # httpx sends a generator with Transfer-Encoding: chunked
        for i in range(0, len(big), 4096):
            yield big[i : i + 4096]

    response = public.request(
        method,
        f"{PUBLIC}/{shop.company.slug}/{path}",
        content=stream() if chunked else big,
        headers={"content-type": "application/json"},
    )
    assert str(MAX_PUBLIC_BODY_BYTES) in refusal(response, 413)


def test_the_client_address_is_rate_limited_per_company(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/catalog"
    first = public.get(url)
    assert first.headers["x-ratelimit-limit"] == str(PUBLIC_RATE_LIMIT)
    remaining = int(first.headers["x-ratelimit-remaining"])
    for _ in range(remaining):
        assert public.get(url).status_code == 200
    refused = public.get(url)
    assert refusal(refused, 429)
    assert int(refused.headers["retry-after"]) >= 1
    assert all(name in refused.headers for name in RATE_HEADERS)
    # Another company's public API counts on its own.
    other = crewed_company(stack, ())
    assert ok(public.get(f"{PUBLIC}/{other.company.slug}/catalog"))
    # /api/v1 keys are not touched by the public counter.
    with stack.client(shop.key) as api:
        assert api.get(f"{API}/services").status_code == 200


def test_slugs_that_name_no_company_are_counted_together_per_address(stack: Stack):
    server = LiveServer(free_socket())  # a counter of its own: the others are untouched
    server.start(stack.app(server.base_url, RateLimiter()))
    try:
        with httpx.Client(base_url=server.base_url, trust_env=False) as c:
            for n in range(PUBLIC_RATE_LIMIT):
                assert c.get(f"{PUBLIC}/guess-{n}/catalog").status_code == 404, n
            guessed = c.get(f"{PUBLIC}/guess-{PUBLIC_RATE_LIMIT}/catalog")
            assert refusal(guessed, 429)
            assert int(guessed.headers["retry-after"]) >= 1
            # A real company's own count is another one.
            assert c.get(f"{PUBLIC}/{stack.company.slug}/catalog").status_code == 200
    finally:
        server.stop()


def documented(document: dict[str, Any], method: str, path: str, status: str) -> Any:
    """A validator of the answer ``/api/openapi.json`` documents for an operation."""
    answer = document["paths"][PUBLIC + path][method.lower()]["responses"][status]
    schema = answer["content"]["application/json"]["schema"]
    return OAS31Validator(
        {**schema, "components": document["components"]},
        format_checker=OAS31Validator.FORMAT_CHECKER,
    )


def test_answers_match_the_documented_public_schemas(shop: Shop, public: httpx.Client):
    document = public.get("/api/openapi.json").json()
    base = f"{PUBLIC}/{shop.company.slug}"
    day = weekday_ahead(shop.zone, 7)
    where = {"serviceId": "svc_standard_clean", "zip": LOOP}
    answers = [
        ("GET", "/{slug}/catalog", "200", public.get(f"{base}/catalog")),
        ("POST", "/{slug}/quote", "200", public.post(f"{base}/quote", json=DEMO_SELECTION)),
        (
            "GET",
            "/{slug}/slots",
            "200",
            public.get(f"{base}/slots", params={**where, "date": day.isoformat()}),
        ),
        ("GET", "/{slug}/days", "200", public.get(f"{base}/days", params=where)),
        ("GET", "/{slug}/days", "400", public.get(f"{base}/days", params={"zip": "x"})),
        ("GET", "/{slug}/catalog", "404", public.get(f"{PUBLIC}/nobody/catalog")),
        ("POST", "/{slug}/quote", "413", public.post(f"{base}/quote", content=b" " * 70_000)),
    ]
    booking = booking_body(first_open_start(shop, public), LOOP)
    answers += [
        ("POST", "/{slug}/book", "201", public.post(f"{base}/book", json=booking)),
        ("POST", "/{slug}/book", "409", public.post(f"{base}/book", json=booking)),
        (
            "POST",
            "/{slug}/book",
            "400",
            public.post(f"{base}/book", json={**booking, "crewIds": []}),
        ),
    ]
    for method, path, status, response in answers:
        assert str(response.status_code) == status, (path, response.text)
        documented(document, method, path, status).validate(response.json())


JOB = {
    "parameters": [{"id": "par_bedrooms", "quantity": 3}, {"id": "par_bathrooms", "quantity": 2}],
    "extras": [{"id": "ext_oven", "quantity": 1}],
}
"""A one-time clean with a few selections (they set its price and length)."""


def first_open_start(shop: Shop, public: httpx.Client, days_ahead: int = 7) -> str:
    """The best-ranked open start of the ``JOB`` on a weekday ahead, as ``slots`` lists it."""
    day = weekday_ahead(shop.zone, days_ahead)
    params = {
        "serviceId": "svc_standard_clean",
        "date": day.isoformat(),
        "zip": LOOP,
        "parameters": "par_bedrooms:3,par_bathrooms:2",
        "extras": "ext_oven:1",
    }
    slots = ok(public.get(f"{PUBLIC}/{shop.company.slug}/slots", params=params))["data"]
    assert slots, "a working day of a free crew member has openings"
    return str(slots[0]["startIso"])


def created(response: httpx.Response) -> Any:
    """A public booking's answer, after checking status and CORS."""
    assert response.status_code == 201, response.text
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers
    assert all(name in response.headers for name in RATE_HEADERS)
    return response.json()


def listed(stack: Stack, shop: Shop) -> list[dict[str, Any]]:
    """Every booking of the shop, as ``GET /api/v1/bookings`` lists them."""
    with stack.client(shop.key) as api:
        answer = api.get(f"{API}/bookings", params={"limit": 100})
    assert answer.status_code == 200, answer.text
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


def events_about(stack: Stack, company_id: str, event_type: str) -> list[dict[str, Any]]:
    """The subjects of the company's ``event_type`` events in the stack's outbox."""
    query = text("SELECT document FROM outbox_events WHERE company_id = :company AND type = :type")
    with stack.container.database.engine.connect() as connection:
        rows = connection.execute(query, {"company": company_id, "type": event_type})
        return [json.loads(row[0]) for row in rows if row[0] is not None]


def test_a_public_booking_is_an_ordinary_booking(shop: Shop, stack: Stack, public: httpx.Client):
    start = first_open_start(shop, public)
    body = booking_body(start, LOOP, **JOB)
    booked = created(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body))
    assert booked["startIso"] == start
    assert booked["trackingUrl"].startswith("http")
    assert booked["crewIds"] == list(shop.crew_ids)  # the one free crew member was chosen
    # Listed by /api/v1 as the same booking, at the price /api/v1 quotes for the body.
    quote = {k: body[k] for k in ("serviceId", "frequencySlug", *JOB)}
    with stack.client(shop.key) as api:
        priced = api.post(f"{API}/quote", json={**quote, "zip": LOOP, "startIso": start})
    assert priced.status_code == 200, priced.text
    [row] = listed(stack, shop)
    assert row["id"] == booked["id"]
    assert row["price"] == booked["price"] == priced.json()["firstVisit"]
    assert row["price"]["totalCents"] > 0
    assert row["trackingUrl"] == booked["trackingUrl"]
    # booking.created is in the outbox, as for any booking.
    assert [e["id"] for e in events_about(stack, shop.company.id, "booking.created")] == [
        booked["id"]
    ]


def test_a_public_booking_names_no_crew(shop: Shop, stack: Stack, public: httpx.Client):
    body = booking_body(first_open_start(shop, public), LOOP, crewIds=list(shop.crew_ids))
    message = refusal(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body), 400)
    assert "crewIds" in message
    assert listed(stack, shop) == []


def test_the_idempotency_key_is_optional_and_replays_when_given(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/book"
    body = booking_body(first_open_start(shop, public), LOOP)
    key = idem()
    first = created(public.post(url, json=body, headers=key))
    replayed = public.post(url, json=body, headers=key)
    assert created(replayed) == first
    assert replayed.headers["idempotent-replayed"] == "true"
    # The same key with another body is refused, in the public shape.
    other = booking_body(first_open_start(shop, public, days_ahead=8), LOOP)
    assert "Idempotency-Key" in refusal(public.post(url, json=other, headers=key), 409)
    assert [b["id"] for b in listed(stack, shop)] == [first["id"]]
    # A blank key is a client's mistake, said so (not "required": here it is optional).
    blank = refusal(public.post(url, json=other, headers={"Idempotency-Key": ""}), 400)
    assert "empty" in blank
    assert "Required" not in blank
    # Two keys, on a body missing its customer: one answer names both.
    twice = [("content-type", "application/json"), ("Idempotency-Key", "a")] * 2
    short = json.dumps({k: v for k, v in other.items() if k != "customer"})
    both = refusal(public.post(url, content=short, headers=twice[1:]), 400)
    assert "once" in both
    assert "customer" in both
    # With no key, it just books.
    second = created(public.post(url, json=other))
    assert {b["id"] for b in listed(stack, shop)} == {first["id"], second["id"]}


def test_a_public_callers_keys_are_apart_from_the_companys_own(
    shop: Shop, stack: Stack, public: httpx.Client
):
    # Anyone may send a public key: one a public caller used never stands in the way of
    # the company's own /api/v1 write with the same key, nor answers it.
    url = f"{PUBLIC}/{shop.company.slug}/book"
    key = idem()
    body = booking_body(first_open_start(shop, public), LOOP)
    unknown_extra = {**body, "extras": [{"id": "ext_nope", "quantity": 1}]}
    refusal(public.post(url, json=unknown_extra, headers=key), 400)
    kept = public.post(url, json=unknown_extra, headers=key)  # stored under the key
    assert kept.headers["idempotent-replayed"] == "true"
    with stack.client(shop.key) as api:
        made = api.post(f"{API}/bookings", json=body, headers=key)
    assert made.status_code == 201, made.text
    # The company's answer is not the public caller's to read either.
    probe = public.post(url, json=body, headers=key)
    assert "idempotent-replayed" not in probe.headers
    assert [b["id"] for b in listed(stack, shop)] == [made.json()["bookings"][0]["id"]]


def test_two_racing_public_bookings_of_one_slot_make_one_booking(
    shop: Shop, stack: Stack, public: httpx.Client
):
    url = f"{PUBLIC}/{shop.company.slug}/book"
    start = first_open_start(shop, public)
    barrier = threading.Barrier(2)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def racer(headers: dict[str, str]) -> None:
        body = booking_body(start, LOOP)  # each with a customer of its own
        with stack.client(origin="https://shop.example") as c:
            barrier.wait()
            response = c.post(url, json=body, headers=headers)
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=racer, args=(h,)) for h in (idem(), {})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(r.status_code for r in answers) == [201, 409], [r.text for r in answers]
    winner = next(r for r in answers if r.status_code == 201)
    loser = next(r for r in answers if r.status_code == 409)
    assert "taken" in refusal(loser, 409)
    assert [b["id"] for b in listed(stack, shop)] == [created(winner)["id"]]
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_slots_and_days_refuse_a_plan_whose_visits_would_overlap(shop: Shop, public: httpx.Client):
    """An 8-day job repeating weekly cannot be booked whatever the calendar holds: the
    public slots and days refuse it on ``days`` as booking does, offering no start."""
    base = f"{PUBLIC}/{shop.company.slug}"
    params = {"serviceId": "svc_standard_clean", "zip": LOOP, "frequencySlug": "weekly",
              "days": 8}  # fmt: skip
    day = weekday_ahead(shop.zone, 7, weekday=1).isoformat()
    for answer in (
        public.get(f"{base}/slots", params={**params, "date": day}),
        public.get(f"{base}/days", params={**params, "from": day, "count": 3}),
    ):
        assert "cannot repeat every 7 days" in refusal(answer, 400)
    seven = ok(public.get(f"{base}/days", params={**params, "days": 7, "from": day, "count": 3}))
    assert len(seven) == 3
