"""``/api/public/{slug}/...`` over real HTTP on both backends: ``catalog``, ``quote``,
``slots`` and ``days`` answer as their ``/api/v1`` twins for the company the slug names,
with no key; every answer carries ``Access-Control-Allow-Origin: *`` and never
``Access-Control-Allow-Credentials``; preflights are 204; refusals are
``{"error": "<message>"}``; a body over 64 KB is 413 while it streams; the client address
is rate-limited with the headers of ``/api/v1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator

from adapters.http.public import MAX_PUBLIC_BODY_BYTES, PUBLIC_RATE_LIMIT
from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    booking_body,
    crewed_company,
    idem,
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
    assert {"content-type", "idempotency-key"} <= set(allowed)
    assert int(response.headers["access-control-max-age"]) > 0
    # A credentialed request is never granted: no allow-credentials, and the origin is *.
    assert "access-control-allow-credentials" not in response.headers


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
    many = {**DEMO_SELECTION, "extras": [{"id": "ext_oven", "quantity": 1}] * 201}
    message = refusal(public.post(f"{base}/quote", json=many), 422)
    assert "extras" in message
    assert "200" in message
    assert refusal(public.post(f"{base}/quote", content=b"{not json"), 400)
    unknown = {**DEMO_SELECTION, "serviceId": "svc_nothing"}
    assert "serviceId" in refusal(public.post(f"{base}/quote", json=unknown), 400)


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_body_over_64_kb_is_413_before_parsing(shop: Shop, public: httpx.Client, chunked: bool):
    big = b"{" + b" " * (65 * 1024) + b"}"
    assert len(big) > MAX_PUBLIC_BODY_BYTES

    def stream() -> Iterator[bytes]:  # httpx sends a generator with Transfer-Encoding: chunked
        for i in range(0, len(big), 4096):
            yield big[i : i + 4096]

    response = public.post(
        f"{PUBLIC}/{shop.company.slug}/quote",
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
    for method, path, status, response in answers:
        assert str(response.status_code) == status, (path, response.text)
        documented(document, method, path, status).validate(response.json())
