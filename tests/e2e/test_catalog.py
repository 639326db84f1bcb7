"""``GET /services`` and ``POST /quote``: the catalog and server-authoritative prices."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.support import API, Stack, error_of

DEMO_SELECTION = {
    "serviceId": "svc_standard_clean",
    "frequencySlug": "biweekly",
    "parameters": [
        {"id": "par_bedrooms", "quantity": 3},
        {"id": "par_bathrooms", "quantity": 2},
    ],
    "extras": [
        {"id": "ext_oven", "quantity": 1},
        {"id": "ext_windows", "quantity": 4},
        {"id": "ext_supplies", "quantity": 1},
        {"id": "ext_first_deep", "quantity": 1},
    ],
    "couponCode": "welcome10",
    "zip": "02554",
    "startIso": "2030-12-07T09:00:00-05:00",  # a Saturday: the weekend surcharge applies
    "manualFeeIds": ["fee_pets"],
}


def test_services_lists_industries_services_parameters_extras_frequencies_and_fees(
    api: httpx.Client,
):
    catalog = api.get(f"{API}/services").json()
    assert {"industries", "frequencies", "fees"} <= set(catalog)
    services = {s["id"]: s for i in catalog["industries"] for s in i["services"]}
    assert {"svc_standard_clean", "svc_deep_clean", "svc_handyman_hour"} <= set(services)
    standard = services["svc_standard_clean"]
    assert {p["id"] for p in standard["parameters"]} == {"par_bedrooms", "par_bathrooms"}
    assert isinstance(standard["basePriceCents"], int)
    assert [f["slug"] for f in catalog["frequencies"]] == [
        "one_time",
        "weekly",
        "biweekly",
        "every_four_weeks",
    ]
    assert {f["kind"] for f in catalog["fees"]} == {"date", "zip", "service", "manual"}


def test_every_extra_carries_frequency_slugs_discount_exempt_and_first_visit_only(
    api: httpx.Client,
):
    catalog = api.get(f"{API}/services").json()
    extras = {e["id"]: e for i in catalog["industries"] for s in i["services"] for e in s["extras"]}
    assert extras
    for extra in extras.values():
        assert isinstance(extra["frequencySlugs"], list)
        assert isinstance(extra["discountExempt"], bool)
        assert isinstance(extra["firstVisitOnly"], bool)
    assert extras["ext_move_out"]["frequencySlugs"] == ["one_time"]
    assert extras["ext_oven"]["frequencySlugs"] == []  # empty: offered on every plan
    assert extras["ext_supplies"]["discountExempt"] is True
    assert extras["ext_first_deep"]["firstVisitOnly"] is True


def test_each_company_sees_its_own_catalog(stack: Stack):
    with stack.client(stack.other_key) as c:
        catalog = c.get(f"{API}/services").json()
    services = [s["id"] for i in catalog["industries"] for s in i["services"]]
    assert services == ["svc_handyman_hour"]


def parts_sum(visit: dict[str, Any]) -> None:
    """The breakdown's parts add up to its total, to the cent."""
    assert sum(line["amountCents"] for line in visit["lines"]) == visit["subtotalCents"]
    assert sum(d["amountCents"] for d in visit["discounts"]) == visit["discountCents"]
    assert sum(f["amountCents"] for f in visit["fees"]) == visit["feesCents"]
    assert (
        visit["subtotalCents"]
        - visit["discountCents"]
        - visit["referralDiscountCents"]
        + visit["feesCents"]
        + visit["taxCents"]
        == visit["totalCents"]
    )
    assert visit["totalCents"] >= 0


def test_a_priced_selections_parts_sum_to_its_total(api: httpx.Client):
    response = api.post(f"{API}/quote", json=DEMO_SELECTION)
    assert response.status_code == 200, response.text
    price = response.json()
    first, later = price["firstVisit"], price["laterVisits"]
    parts_sum(first)
    parts_sum(later)
    assert {d["kind"] for d in first["discounts"]} >= {"frequency", "coupon"}
    assert {f["id"] for f in first["fees"]} == {"fee_weekend", "fee_island", "fee_pets"}
    # The first-visit-only extra is on the first visit only.
    assert "ext_first_deep" in {line["id"] for line in first["lines"]}
    assert "ext_first_deep" not in {line["id"] for line in later["lines"]}


@pytest.mark.parametrize(
    ("frequency", "start", "first_fees", "later_fees"),
    [
        # Thursday the 17th: no fee; a week later is the demo holiday of the 24th.
        ("weekly", "2026-12-17T10:00:00-05:00", set(), {"fee_holiday"}),
        # The holiday itself: two weeks later (January 14th) is a plain Thursday.
        ("biweekly", "2026-12-31T10:00:00-05:00", {"fee_holiday"}, set()),
        # Saturday: every later visit of a weekly plan is a Saturday too.
        ("weekly", "2030-12-07T09:00:00-05:00", {"fee_weekend"}, {"fee_weekend"}),
    ],
)
def test_later_visits_are_priced_at_the_second_visits_own_date(
    api: httpx.Client, frequency, start, first_fees, later_fees
):
    """A date fee of the first date is not carried to the later visits, nor one of theirs
    left out: ``laterVisits`` is the second visit, at its date, as booking prices it."""
    body = {"serviceId": "svc_standard_clean", "frequencySlug": frequency, "startIso": start}
    price = api.post(f"{API}/quote", json=body).json()
    first, later = price["firstVisit"], price["laterVisits"]
    assert {f["id"] for f in first["fees"] if f["kind"] == "date"} == first_fees
    assert {f["id"] for f in later["fees"] if f["kind"] == "date"} == later_fees
    parts_sum(later)


def test_a_one_time_price_has_no_later_visits(api: httpx.Client):
    price = api.post(f"{API}/quote", json={"serviceId": "svc_deep_clean"}).json()
    assert price["laterVisits"] is None
    parts_sum(price["firstVisit"])
    assert "fee_deep_kit" in {f["id"] for f in price["firstVisit"]["fees"]}


def test_an_extra_outside_its_frequency_slugs_is_422_naming_the_extra(api: httpx.Client):
    response = api.post(
        f"{API}/quote",
        json={
            "serviceId": "svc_standard_clean",
            "frequencySlug": "weekly",
            "extras": [{"id": "ext_move_out"}],
        },
    )
    error = error_of(response, 422, "unprocessable")
    assert "ext_move_out" in error["message"]
    assert "Move-out detail" in error["message"]
    # On its own plan the same extra is priced.
    ok = api.post(
        f"{API}/quote",
        json={"serviceId": "svc_standard_clean", "extras": [{"id": "ext_move_out"}]},
    )
    assert ok.status_code == 200


@pytest.mark.parametrize(
    ("coupon", "words"),
    [("NOPE", "no coupon"), ("SPRING25", "$150.00")],
)
def test_a_coupon_that_fails_a_rule_is_422_naming_the_rule(
    api: httpx.Client, coupon: str, words: str
):
    response = api.post(
        f"{API}/quote", json={"serviceId": "svc_standard_clean", "couponCode": coupon}
    )
    error = error_of(response, 422, "unprocessable")
    assert coupon in error["message"]
    assert words in error["message"]


def test_an_unknown_catalog_id_is_a_field_error(api: httpx.Client):
    response = api.post(
        f"{API}/quote",
        json={"serviceId": "svc_standard_clean", "extras": [{"id": "ext_jacuzzi"}]},
    )
    error = error_of(response, 400, "invalid_request")
    assert error["fieldErrors"] == {"extras.0.id": "No extra with id 'ext_jacuzzi'."}
    missing = api.post(f"{API}/quote", json={"serviceId": "svc_handyman_weekend"})
    assert "serviceId" in error_of(missing, 400, "invalid_request")["fieldErrors"]


def test_another_companys_service_is_unknown_here(stack: Stack):
    with stack.client(stack.other_key) as c:
        response = c.post(f"{API}/quote", json={"serviceId": "svc_standard_clean"})
    assert "serviceId" in error_of(response, 400, "invalid_request")["fieldErrors"]
