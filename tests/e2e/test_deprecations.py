"""Deprecated forms announce themselves: ``Deprecation`` (RFC 9745) and ``Sunset``
(RFC 8594) on every reply that uses one, refusals included, and on no other reply."""

from __future__ import annotations

import httpx

from tests.e2e.support import API, Stack, idem

DEPRECATED_SINCE = "@1791849600"  # 2026-10-13T00:00:00Z, SPEC.md section 9
SUNSET = "Thu, 14 Jan 2027 00:00:00 GMT"  # serviceIds is removed after 2027-01-13


def test_the_crew_list_carrying_service_ids_announces_their_sunset(api: httpx.Client):
    response = api.get(f"{API}/crew")
    assert response.status_code == 200
    assert all("serviceIds" in member for member in response.json()["data"])
    assert response.headers["deprecation"] == DEPRECATED_SINCE
    assert response.headers["sunset"] == SUNSET


def test_the_booking_id_convert_form_is_announced_even_when_refused(api: httpx.Client):
    refused = api.post(
        f"{API}/quotes/quo_missing",
        json={"action": "convert", "bookingId": "bkg_missing"},
        headers=idem(),
    )
    assert refused.status_code == 404
    assert refused.headers["deprecation"] == DEPRECATED_SINCE
    assert refused.headers["sunset"] == SUNSET


def test_current_forms_carry_no_deprecation(api: httpx.Client):
    current = api.post(
        f"{API}/quotes/quo_missing",
        json={"action": "convert", "startIso": "2030-01-08T10:00:00-05:00"},
        headers=idem(),
    )
    assert current.status_code == 404
    for response in (current, api.get(f"{API}/bookings"), api.get(f"{API}/services")):
        assert "deprecation" not in response.headers
        assert "sunset" not in response.headers


def test_a_deprecated_form_refused_for_its_shape_is_announced_too(api: httpx.Client):
    """A 400 from reading the body or the query string is a reply to the form as well."""
    bad_body = api.post(
        f"{API}/quotes/quo_missing",
        json={"action": "convert", "bookingId": "bkg_nope", "extra": 1},
        headers=idem(),
    )
    bad_query = api.get(f"{API}/crew", params={"limit": "0"})
    for response in (bad_body, bad_query):
        assert response.status_code == 400, response.text
        assert response.headers["deprecation"] == DEPRECATED_SINCE
        assert response.headers["sunset"] == SUNSET


def test_every_refusal_of_the_crew_list_is_announced(stack: Stack):
    """Every GET /crew reply is to the deprecated form, whoever asks and however it ends."""
    with stack.client() as anonymous, stack.client(stack.new_key("catalog:read")) as narrow:
        refusals = [(anonymous.get(f"{API}/crew"), 401), (narrow.get(f"{API}/crew"), 403)]
    for response, status in refusals:
        assert response.status_code == status, response.text
        assert response.headers["deprecation"] == DEPRECATED_SINCE
        assert response.headers["sunset"] == SUNSET


def test_a_current_form_refused_for_its_shape_carries_no_deprecation(api: httpx.Client):
    refused = api.post(
        f"{API}/quotes/quo_missing",
        json={"action": "convert", "startIso": "2030-01-08T10:00:00-05:00", "extra": 1},
        headers=idem(),
    )
    assert refused.status_code == 400
    assert "deprecation" not in refused.headers
    assert "sunset" not in refused.headers
