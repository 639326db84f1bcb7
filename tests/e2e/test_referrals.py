"""The referral programme over HTTP (docs/scheduling.md, "Referrals"): every customer has a
code; a new customer's first booking with another customer's code gets the company's
referral discount off its first visit; each refusal is 422 and writes nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    error_of,
    idem,
    unique_email,
    weekday_ahead,
)

PUBLIC = "/api/public"
CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{8}$")
OFF = "Referral codes are not enabled for this company."


def _shop(stack: Stack, discount: int) -> Shop:
    shop = crewed_company(stack, (CrewSpec("Rosa", "10001", ("10001", "10002")),))
    update_company_settings(
        UpdateCompanySettings(company_id=shop.company.id, referral_discount_cents=discount),
        uow=stack.container.uow(),
    )
    return shop


@pytest.fixture
def shop(stack: Stack) -> Shop:
    """A company with its referral programme on: $25 off."""
    return _shop(stack, 2_500)


@pytest.fixture
def client(stack: Stack, shop: Shop) -> Iterator[httpx.Client]:
    with stack.client(shop.key) as c:
        yield c


@pytest.fixture
def day(shop: Shop) -> date:
    return weekday_ahead(shop.zone, 3)


def customer(client: httpx.Client, name: str = "Friend") -> dict[str, Any]:
    made = client.post(f"{API}/customers", json={"name": name, "email": unique_email("ref")})
    assert made.status_code == 201, made.text
    return dict(made.json())


def book(client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"{API}/bookings", json=body, headers=idem())


def at(shop: Shop, day: date, hhmm: str) -> str:
    return at_local(day, hhmm, shop.zone)


def customers_named(client: httpx.Client, email: str) -> list[dict[str, Any]]:
    found = client.get(f"{API}/customers", params={"search": email})
    assert found.status_code == 200, found.text
    return list(found.json()["data"])


def test_every_customer_has_an_own_referral_code_in_the_api(client: httpx.Client):
    one, two = customer(client, "One"), customer(client, "Two")
    assert CODE.match(one["referralCode"])
    assert one["referralCode"] != two["referralCode"]
    listed = {c["id"]: c["referralCode"] for c in client.get(f"{API}/customers").json()["data"]}
    assert listed[one["id"]] == one["referralCode"]
    again = client.post(f"{API}/customers", json={"name": "One", "email": one["email"]})
    assert again.json()["referralCode"] == one["referralCode"]  # the existing customer's


def test_a_new_customer_booking_with_a_friends_code_gets_the_discount_and_names_the_friend(
    client: httpx.Client, shop: Shop, day: date
):
    friend = customer(client)
    typed = f"  {friend['referralCode'].lower()} "  # trimmed, any case
    plain = book(client, booking_body(at(shop, day, "09:00"))).json()
    made = book(client, booking_body(at(shop, day, "13:00"), referralCode=typed))

    assert made.status_code == 201, made.text
    price = made.json()["price"]
    assert price["referralDiscountCents"] == 2_500
    assert [d["kind"] for d in price["discounts"]] == ["referral"]
    assert price["discountedSubtotalCents"] == plain["price"]["discountedSubtotalCents"] - 2_500
    created = made.json()["activity"][0]
    assert created["kind"] == "created"
    assert created["details"]["referredBy"] == friend["id"]
    assert "referredBy" not in plain["activity"][0]["details"]


def test_a_plan_and_several_dates_take_the_discount_on_the_first_visit_only(
    client: httpx.Client, shop: Shop, day: date
):
    friend, other = customer(client), customer(client)
    plan = book(
        client,
        booking_body(
            at(shop, day, "09:00"), frequencySlug="weekly", referralCode=friend["referralCode"]
        ),
    )
    several = book(
        client,
        booking_body(
            at(shop, day, "13:00"),
            additionalStartIsos=[at(shop, day + timedelta(days=1), "13:00")],
            referralCode=other["referralCode"],
        ),
    )

    assert plan.status_code == 201, plan.text
    visits = plan.json()["bookings"]
    assert len(visits) > 1
    assert [v["price"]["referralDiscountCents"] for v in visits] == [2_500] + [0] * (
        len(visits) - 1
    )
    assert several.status_code == 201, several.text
    dates = several.json()["bookings"]
    assert [v["price"]["referralDiscountCents"] for v in dates] == [2_500, 0]


def test_the_quote_takes_the_discount_off_the_first_visit_on_both_apis(
    stack: Stack, client: httpx.Client, shop: Shop
):
    friend = customer(client)
    body = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "weekly",
        "referralCode": friend["referralCode"].lower(),
    }
    private = client.post(f"{API}/quote", json=body)
    with stack.client() as anon:
        public = anon.post(f"{PUBLIC}/{shop.company.slug}/quote", json=body)
        plain = anon.post(
            f"{PUBLIC}/{shop.company.slug}/quote",
            json={k: v for k, v in body.items() if k != "referralCode"},
        )

    assert private.status_code == 200, private.text
    assert public.json() == private.json()
    first, later = private.json()["firstVisit"], private.json()["laterVisits"]
    assert first["referralDiscountCents"] == 2_500
    assert later["referralDiscountCents"] == 0
    assert first["totalCents"] < plain.json()["firstVisit"]["totalCents"]


def test_a_code_while_the_programme_is_off_is_refused_everywhere_and_writes_nothing(
    stack: Stack,
):
    shop = _shop(stack, 0)
    with stack.client(shop.key) as client, stack.client() as anon:
        friend = customer(client)
        day = weekday_ahead(shop.zone, 3)
        body = booking_body(at(shop, day, "10:00"), referralCode=friend["referralCode"])
        quote = {"serviceId": "svc_standard_clean", "referralCode": friend["referralCode"]}
        slug = shop.company.slug

        assert error_of(book(client, body), 422, "unprocessable")["message"] == OFF
        assert (
            error_of(client.post(f"{API}/quote", json=quote), 422, "unprocessable")["message"]
            == OFF
        )
        for path, sent in (("book", body), ("quote", quote)):
            refused = anon.post(f"{PUBLIC}/{slug}/{path}", json=sent)
            assert refused.status_code == 422, refused.text
            assert refused.json() == {"error": OFF}
        assert customers_named(client, body["customer"]["email"]) == []
        assert client.get(f"{API}/bookings").json()["data"] == []


def test_empty_codes_are_no_codes_on_both_apis(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    """A website's empty coupon or referral field sent as "" (or blanks) prices and books
    as if it were left out, where it was refused as a code nobody has."""
    plain = {"serviceId": "svc_standard_clean"}
    empty = {**plain, "couponCode": "", "referralCode": "  "}
    with stack.client() as anon:
        for post in (client.post, anon.post):
            path = f"{API}/quote" if post == client.post else f"{PUBLIC}/{shop.company.slug}/quote"
            quoted, expected = post(path, json=empty), post(path, json=plain)
            assert quoted.status_code == 200, quoted.text
            assert quoted.json() == expected.json()
    body = booking_body(at(shop, day, "10:00"), couponCode="", referralCode="")
    made = book(client, body)
    assert made.status_code == 201, made.text
    assert made.json()["price"]["referralDiscountCents"] == 0


def test_a_code_no_customer_has_is_refused_naming_it(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    body = booking_body(at(shop, day, "10:00"), referralCode="ZZZZ9999")
    error = error_of(book(client, body), 422, "unprocessable")
    assert "ZZZZ9999" in error["message"]
    quoted = client.post(
        f"{API}/quote", json={"serviceId": "svc_standard_clean", "referralCode": "ZZZZ9999"}
    )
    assert "ZZZZ9999" in error_of(quoted, 422, "unprocessable")["message"]
    with stack.client() as anon:
        public = anon.post(f"{PUBLIC}/{shop.company.slug}/book", json=body)
    assert public.status_code == 422
    assert "ZZZZ9999" in public.json()["error"]
    assert customers_named(client, body["customer"]["email"]) == []


def test_a_past_start_is_said_before_an_unknown_code_as_with_a_coupon(
    stack: Stack, client: httpx.Client, shop: Shop
):
    """The code was looked up first: a past start with an unknown code answered only
    "No customer ... has the referral code", a past start with an unknown coupon only
    the start's 400."""
    past = "2020-01-06T10:00:00-05:00"
    for code in ({"referralCode": "ZZZZ9999"}, {"couponCode": "NOSUCHCOUPON"}):
        body = booking_body(past, **code)
        error = error_of(book(client, body), 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"startIso"}, (code, error)
        with stack.client() as anon:
            public = anon.post(f"{PUBLIC}/{shop.company.slug}/book", json=body)
        assert public.status_code == 400, public.text
        assert "startIso" in public.json()["error"]


def test_a_customer_cannot_use_their_own_code(client: httpx.Client, shop: Shop, day: date):
    me = customer(client, "Me")
    body = booking_body(at(shop, day, "10:00"), referralCode=me["referralCode"])
    body["customer"] = {"name": "Me", "email": me["email"].upper()}  # matched by email

    error = error_of(book(client, body), 422, "unprocessable")

    assert error["message"] == "A customer cannot use their own referral code."
    assert client.get(f"{API}/bookings", params={"customerId": me["id"]}).json()["data"] == []


def test_a_customer_who_has_booked_before_gets_no_referral_discount(
    client: httpx.Client, shop: Shop, day: date
):
    friend = customer(client)
    before = booking_body(at(shop, day, "09:00"))
    first = book(client, before).json()
    cancelled = client.post(
        f"{API}/bookings/{first['id']}/cancel", json={"scope": "this"}, headers=idem()
    )
    assert cancelled.status_code == 200, cancelled.text  # any status counts
    again = booking_body(at(shop, day, "13:00"), referralCode=friend["referralCode"])
    again["customer"] = before["customer"]

    error = error_of(book(client, again), 422, "unprocessable")

    assert error["message"] == (
        "The referral discount is for a new customer's first booking; "
        "this customer has booked before."
    )
    mine = client.get(f"{API}/bookings", params={"customerId": first["customerId"]})
    assert [b["id"] for b in mine.json()["data"]] == [first["id"]]


def test_a_merged_records_code_stands_for_its_survivor(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    survivor, merged = customer(client, "Survivor"), customer(client, "Merged")
    merging = client.post(
        f"{API}/customers/{survivor['id']}/merge", json={"mergedId": merged["id"]}, headers=idem()
    )
    assert merging.status_code == 200, merging.text
    made = book(client, booking_body(at(shop, day, "10:00"), referralCode=merged["referralCode"]))
    own = booking_body(at(shop, day, "14:00"), referralCode=merged["referralCode"])
    own["customer"] = {"name": "Survivor", "email": survivor["email"]}

    assert made.status_code == 201, made.text
    assert made.json()["activity"][0]["details"]["referredBy"] == survivor["id"]
    refused = error_of(book(client, own), 422, "unprocessable")
    assert refused["message"] == "A customer cannot use their own referral code."


def test_a_code_over_100_characters_is_invalid_on_api_v1_and_422_naming_it_publicly(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    long = "x" * 101
    body = booking_body(at(shop, day, "10:00"), referralCode=long)
    quote = {"serviceId": "svc_standard_clean", "referralCode": long}
    for refused in (book(client, body), client.post(f"{API}/quote", json=quote)):
        error = error_of(refused, 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"referralCode"}
    with stack.client() as anon:
        for path, sent in (("book", body), ("quote", quote)):
            answer = anon.post(f"{PUBLIC}/{shop.company.slug}/{path}", json=sent)
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"].startswith(
                "referralCode is over its limit of 100 characters."
            )


def test_the_demo_companies_run_the_programme_out_of_the_box(stack: Stack):
    company = stack.company
    assert company.referral_discount_cents == 2_500
    with stack.client(stack.key) as client:
        friend = customer(client)
        quoted = client.post(
            f"{API}/quote",
            json={"serviceId": "svc_standard_clean", "referralCode": friend["referralCode"]},
        )
    assert quoted.status_code == 200, quoted.text
    assert quoted.json()["firstVisit"]["referralDiscountCents"] == 2_500


def test_the_openapi_document_describes_referral_codes(client: httpx.Client):
    document = client.get("/api/openapi.json").json()
    customer_schema = document["components"]["schemas"]["Customer"]
    assert customer_schema["properties"]["referralCode"]["pattern"] == "^[0-9A-HJKMNP-TV-Z]{8}$"
    assert "referralCode" in customer_schema["required"]
    for path in (f"{API}/quote", f"{API}/bookings", f"{PUBLIC}/{{slug}}/quote"):
        body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        code = body["schema"]["properties"]["referralCode"]
        assert code["maxLength"] == 100, path
