"""Request bodies and query strings that cannot be used: ``400 invalid_request`` with every
problem at once in ``fieldErrors``, keyed by dotted paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.support import API, error_of, idem, unique_email
from tests.factories import email_of_length


def field_errors(response: httpx.Response) -> dict[str, str]:
    errors: dict[str, str] = error_of(response, 400, "invalid_request")["fieldErrors"]
    return errors


def test_a_body_that_is_not_json_is_invalid_request_on_body(api: httpx.Client):
    for raw in (b"{nope", b"\xff\xfe", b'{"name": "a",}'):
        response = api.post(
            f"{API}/customers", content=raw, headers={"content-type": "application/json"}
        )
        assert field_errors(response) == {"body": "Not valid JSON."}


@pytest.mark.parametrize("body", ["[]", '"text"', "42", "null"])
def test_a_body_that_is_not_an_object_is_refused(api: httpx.Client, body: str):
    response = api.post(f"{API}/customers", content=body)
    assert "body" in field_errors(response)


def test_every_field_problem_is_reported_at_once_on_dotted_paths(api: httpx.Client):
    response = api.post(
        f"{API}/customers",
        json={
            "name": 7,
            "email": True,
            "creditCents": 500,  # removed from the API (SPEC.md, Versioning)
            "address": {"line1": "1 Main St", "city": ["NYC"], "state": "NY", "zip": "1234"},
        },
    )
    errors = field_errors(response)
    assert errors == {
        "name": "Expected a string.",
        "email": "Expected a string.",
        "creditCents": "Unknown field.",
        "address.city": "Expected a string.",
        "address.zip": "A 5-digit US zip code.",
    }


def test_missing_required_fields_are_named(api: httpx.Client):
    errors = field_errors(api.post(f"{API}/customers", json={}))
    assert errors == {"name": "Required.", "email": "Required."}


def test_items_in_arrays_are_addressed_by_index(api: httpx.Client):
    response = api.post(
        f"{API}/quote",
        json={
            "serviceId": "svc_standard_clean",
            "parameters": [{"id": "par_bedrooms", "quantity": 2}, {"id": 3, "quantity": "2"}],
            "extras": [{"id": "ext_oven", "qty": 1}],
        },
    )
    errors = field_errors(response)
    assert errors == {
        "parameters.1.id": "Expected a string.",
        "parameters.1.quantity": "Expected a whole number.",
        "extras.0.qty": "Unknown field.",
    }


@pytest.mark.parametrize(
    ("value", "kind"),
    [(2, "int"), (2.5, "float"), ("2", "numeric string"), (True, "bool"), (None, "null")],
)
def test_numbers_and_strings_are_never_coerced(api: httpx.Client, value: Any, kind: str):
    body = {"serviceId": "svc_standard_clean", "extras": [{"id": "ext_windows", "quantity": value}]}
    response = api.post(f"{API}/quote", json=body)
    if kind == "int":
        assert response.status_code == 200
    else:
        assert field_errors(response) == {"extras.0.quantity": "Expected a whole number."}


def test_an_unknown_enum_value_is_a_field_error_listing_the_options(api: httpx.Client):
    response = api.post(
        f"{API}/payments",
        json={"bookingId": "bkg_x", "kind": "CREDIT", "amountCents": 100, "method": "CREDIT"},
        headers=idem(),
    )
    errors = field_errors(response)
    assert set(errors) == {"kind", "method"}
    assert "PAYMENT" in errors["kind"]
    assert "CASH" in errors["method"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/quote", {"serviceId": "svc_standard_clean"}, "startIso"),
        ("POST", "/quotes", {"customerId": "cus_x", "manualLines": []}, "expiresAt"),
        ("POST", "/quotes/quo_x", {"action": "convert"}, "startIso"),
    ],
)
def test_a_time_without_offset_is_refused(
    api: httpx.Client, method: str, path: str, body: dict[str, Any], field: str
):
    response = api.request(
        method, f"{API}{path}", json={**body, field: "2030-05-01T09:00:00"}, headers=idem()
    )
    errors = field_errors(response)
    assert "offset" in errors[field]


NOT_INSTANTS = [
    "2030-05-01T09:00:00",
    "yesterday",
    "2030-13-01T00:00:00Z",
    "2026-11-24T00:00:00+00",  # an offset of hours only
    "2026-11-24T00:00:00+0000",
    "2026-11-24T00:00:00-05:00:30",
    "2026-11-24 00:00:00Z",
    "2026-11-24X00:00:00Z",
    "20261124T000000Z",
    "2026-W48-2T00:00:00Z",
    "2026-11-24T00Z",
    "2026-11-24T00:00:00,5Z",
]


@pytest.mark.parametrize("value", NOT_INSTANTS)
def test_a_bad_updated_since_is_refused(api: httpx.Client, value: str):
    response = api.get(f"{API}/leads", params={"updatedSince": value})
    assert set(field_errors(response)) == {"updatedSince"}


@pytest.mark.parametrize("value", NOT_INSTANTS[3:])
def test_a_body_instant_is_read_as_updated_since_is(api: httpx.Client, value: str):
    response = api.post(f"{API}/quote", json={"serviceId": "svc_standard_clean", "startIso": value})
    assert set(field_errors(response)) == {"startIso"}


@pytest.mark.parametrize(
    "value",
    ["2030-02-29T10:00:00-05:00", "2030-05-01T24:00:00-04:00", "2030-05-01T23:59:60-04:00",
     "2030-05-01T09:00:00+24:00"],
)  # fmt: skip
def test_a_time_that_does_not_exist_is_said_to_be_no_real_time(api: httpx.Client, value: str):
    # It has its offset: "Must be an ISO 8601 time with a UTC offset" sent people looking
    # for a mistake they had not made.
    response = api.post(f"{API}/quote", json={"serviceId": "svc_standard_clean", "startIso": value})
    assert field_errors(response)["startIso"].startswith("Not a real date and time"), value


def test_an_offset_whose_plus_a_query_string_read_as_a_space_says_to_encode_it(
    api: httpx.Client,
):
    response = api.get(f"{API}/leads?updatedSince=2030-05-01T09:00:00+10:30")
    assert "%2B" in field_errors(response)["updatedSince"]
    encoded = api.get(f"{API}/leads?updatedSince=2030-05-01T09:00:00%2B10:30")
    assert encoded.status_code == 200, encoded.text


@pytest.mark.parametrize(
    "value",
    ["20301124", "2030-W48-2", "2030-11-24T00:00", "2030-1-24", "\u0662\u0660\u0663\u0660-11-24"],
)
def test_a_date_is_written_yyyy_mm_dd_only(api: httpx.Client, value: str):
    # fromisoformat takes the basic form and week dates too; the API writes one form.
    query = {"serviceId": "svc_standard_clean", "zip": "10001", "date": value}
    assert set(field_errors(api.get(f"{API}/availability", params=query))) == {"date"}


@pytest.mark.parametrize(
    "value",
    ["2030-05-01T09:00:00Z", "2030-05-01T09:00-04:00", "2030-05-01T09:00:00.123456789+05:30"],
)
def test_instants_in_iso_8601_extended_form_with_an_offset_are_taken(api: httpx.Client, value: str):
    listed = api.get(f"{API}/leads", params={"updatedSince": value})
    assert listed.status_code == 200, listed.text
    priced = api.post(f"{API}/quote", json={"serviceId": "svc_standard_clean", "startIso": value})
    assert priced.status_code == 200, priced.text


def test_a_bad_list_filter_is_refused(api: httpx.Client):
    assert "stage" in field_errors(api.get(f"{API}/leads", params={"stage": "hot"}))
    assert "status" in field_errors(api.get(f"{API}/quotes", params={"status": "open"}))
    assert "from" in field_errors(api.get(f"{API}/payments", params={"from": "2030-01-01"}))


Body = Callable[[str], tuple[str, dict[str, Any]]]


def _customer(**fields: Any) -> dict[str, Any]:
    return {"name": "Ceiling Test", "email": unique_email(), **fields}


def _address(**fields: str) -> dict[str, Any]:
    return {"line1": "1 Main St", "city": "Albany", "state": "NY", "zip": "12207", **fields}


CEILINGS: dict[str, tuple[int, str, Body]] = {
    "customer name": (200, "name", lambda s: ("/customers", _customer(name=s))),
    "lead name": (200, "name", lambda s: ("/leads", {"name": s, "email": unique_email()})),
    "email": (
        254,
        "email",
        lambda s: ("/customers", _customer(email=email_of_length(len(s)))),
    ),
    "phone": (40, "phone", lambda s: ("/customers", _customer(phone=s))),
    "city": (120, "address.city", lambda s: ("/customers", _customer(address=_address(city=s)))),
    "street": (
        200,
        "address.line1",
        lambda s: ("/customers", _customer(address=_address(line1=s))),
    ),
    "access notes": (
        2_000,
        "address.accessNotes",
        lambda s: ("/customers", _customer(address=_address(accessNotes=s))),
    ),
    "coupon": (
        100,
        "couponCode",
        lambda s: ("/quote", {"serviceId": "svc_standard_clean", "couponCode": s}),
    ),
}


@pytest.mark.parametrize("name", list(CEILINGS))
def test_strings_over_their_spec_ceiling_are_refused_and_at_it_are_not(
    api: httpx.Client, name: str
):
    limit, field, build = CEILINGS[name]
    path, over = build("a" * (limit + 1))
    refused = api.post(f"{API}{path}", json=over)
    assert field_errors(refused)[field] == f"At most {limit} characters."

    path, at = build("a" * limit)
    answered = api.post(f"{API}{path}", json=at)
    if answered.status_code == 400:  # e.g. 40 letters are no phone number; but not too long
        assert "At most" not in answered.json()["error"]["fieldErrors"].get(field, "")
    else:
        assert answered.status_code in (200, 201, 422), answered.text


def test_a_body_over_one_megabyte_is_413_before_it_is_parsed(api: httpx.Client):
    huge = b'{"name": "' + b"a" * 1_000_001 + b'"}'
    response = api.post(f"{API}/customers", content=huge)
    error_of(response, 413, "payload_too_large")
    assert "x-ratelimit-remaining" in response.headers
