"""Booking forms over real HTTP on both backends: ``/api/v1/booking-forms`` (create,
list, fetch, change, delete; ``catalog:read`` to read, ``bookings:write`` to write), the
public ``booking-forms/{id}``, and bookings made through a form: their answers stored
and shown by ``/api/v1``, the form's offer and questions enforced, the SPEC.md ceilings
of an answer (500 characters, 100 answers) a 422 naming the field on the public API.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests import factories
from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    booking_body,
    crewed_company,
    error_of,
)
from tests.e2e.test_public_api import (
    JOB,
    LOOP,
    PUBLIC,
    created,
    first_open_start,
    listed,
    ok,
    refusal,
)

FORM = {
    "name": "Spring clean, Chicago (café district)",
    "serviceIds": ["svc_standard_clean"],
    "frequencySlugs": ["one_time", "weekly"],
    "extraIds": ["ext_oven", "ext_windows"],
    "questions": [
        {"id": "gate-code", "label": "Gate code?", "required": True},
        {
            "label": "Pets at home?",
            "kind": "choice",
            "choices": ["None", "Cat", "Dog"],
        },
    ],
}


@pytest.fixture
def shop(stack: Stack) -> Shop:
    return crewed_company(stack, (CrewSpec("Loop Lou", LOOP, (LOOP,)),))


@pytest.fixture
def public(stack: Stack) -> Any:
    with stack.client(origin="https://shop.example") as c:
        yield c


def make_form(stack: Stack, shop: Shop, **changes: Any) -> dict[str, Any]:
    with stack.client(shop.key) as api:
        answer = api.post(f"{API}/booking-forms", json={**FORM, **changes})
    assert answer.status_code == 201, answer.text
    form: dict[str, Any] = answer.json()
    return form


# --- /api/v1/booking-forms ------------------------------------------------------------


def test_a_form_is_created_listed_fetched_changed_and_deleted(stack: Stack, shop: Shop):
    form = make_form(stack, shop)
    assert form["id"].startswith("bf_")
    assert form["serviceIds"] == ["svc_standard_clean"]
    gate, pets = form["questions"]
    assert gate == {
        "id": "gate-code",
        "label": "Gate code?",
        "kind": "text",
        "required": True,
        "choices": [],
    }
    assert pets["id"].startswith("q_")
    assert pets["choices"] == ["None", "Cat", "Dog"]
    assert form["active"] is True
    older = make_form(stack, shop, name="Second")
    with stack.client(shop.key) as api:
        page = api.get(f"{API}/booking-forms", params={"limit": 1}).json()
        assert [f["id"] for f in page["data"]] == [older["id"]]  # newest first
        rest = api.get(f"{API}/booking-forms", params={"cursor": page["nextCursor"]}).json()
        assert [f["id"] for f in rest["data"]] == [form["id"]]
        assert api.get(f"{API}/booking-forms/{form['id']}").json() == form

        changed = api.patch(
            f"{API}/booking-forms/{form['id']}",
            json={"name": "Renamed", "questions": [gate], "active": False},
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["name"] == "Renamed"
        assert changed.json()["questions"] == [gate]
        assert changed.json()["extraIds"] == ["ext_oven", "ext_windows"]  # kept
        assert changed.json()["active"] is False

        deleted = api.delete(f"{API}/booking-forms/{form['id']}")
        assert deleted.json() == {"id": form["id"], "deleted": True}
        error_of(api.get(f"{API}/booking-forms/{form['id']}"), 404, "not_found")
        error_of(api.delete(f"{API}/booking-forms/{form['id']}"), 404, "not_found")


def test_a_form_is_checked_against_the_catalog_naming_every_field(stack: Stack, shop: Shop):
    body = {
        **FORM,
        "serviceIds": ["svc_standard_clean", "svc_nope"],
        "frequencySlugs": ["fortnightly-ish"],
        "extraIds": ["ext_oven", "ext_nope"],
        "questions": [
            {"id": "a", "label": "A", "kind": "choice"},
            {"id": "a", "label": "B"},
        ],
    }
    with stack.client(shop.key) as api:
        error = error_of(api.post(f"{API}/booking-forms", json=body), 400, "invalid_request")
        assert set(error["fieldErrors"]) == {
            "serviceIds.1",
            "frequencySlugs.0",
            "extraIds.1",
            "questions.0.choices",
            "questions.1.id",
        }
        empty = api.post(f"{API}/booking-forms", json={**FORM, "serviceIds": []})
        assert "serviceIds" in error_of(empty, 400, "invalid_request")["fieldErrors"]
        long_label = [{"label": "x" * 201}]
        too_long = api.post(f"{API}/booking-forms", json={**FORM, "questions": long_label})
        fields = error_of(too_long, 400, "invalid_request")["fieldErrors"]
        assert fields == {"questions.0.label": "At most 200 characters."}
        assert api.get(f"{API}/booking-forms").json()["data"] == []


def test_forms_are_read_with_catalog_read_and_written_with_bookings_write(stack: Stack, shop: Shop):
    form = make_form(stack, shop)
    reader = stack.issue_key(frozenset({"catalog:read"}), company_id=shop.company.id).secret
    with stack.client(reader) as api:
        assert api.get(f"{API}/booking-forms").status_code == 200
        assert api.get(f"{API}/booking-forms/{form['id']}").status_code == 200
        for response in (
            api.post(f"{API}/booking-forms", json=FORM),
            api.patch(f"{API}/booking-forms/{form['id']}", json={"name": "x"}),
            api.delete(f"{API}/booking-forms/{form['id']}"),
        ):
            assert error_of(response, 403, "insufficient_scope")["requiredScope"] == (
                "bookings:write"
            )
    writer = stack.issue_key(frozenset({"bookings:write"}), company_id=shop.company.id).secret
    with stack.client(writer) as api:
        error = error_of(api.get(f"{API}/booking-forms"), 403, "insufficient_scope")
        assert error["requiredScope"] == "catalog:read"
        assert api.patch(f"{API}/booking-forms/{form['id']}", json={"name": "x"}).is_success


def test_another_companys_form_is_not_found(stack: Stack, shop: Shop, public: httpx.Client):
    form = make_form(stack, shop)
    other = crewed_company(stack, (CrewSpec("Other", LOOP, (LOOP,)),))
    with stack.client(other.key) as api:
        error_of(api.get(f"{API}/booking-forms/{form['id']}"), 404, "not_found")
    url = f"{PUBLIC}/{other.company.slug}/booking-forms/{form['id']}"
    refusal(public.get(url), 404)


# --- The public form ------------------------------------------------------------------


def test_the_public_form_resolves_what_it_offers(stack: Stack, shop: Shop, public: httpx.Client):
    form = make_form(stack, shop)
    shown = ok(public.get(f"{PUBLIC}/{shop.company.slug}/booking-forms/{form['id']}"))
    assert shown["id"] == form["id"]
    assert shown["name"] == FORM["name"]
    [service] = shown["services"]
    assert service["id"] == "svc_standard_clean"
    assert service["name"]
    assert [e["id"] for e in service["extras"]] == ["ext_oven", "ext_windows"]
    assert {p["id"] for p in service["parameters"]} >= {"par_bedrooms", "par_bathrooms"}
    assert [f["slug"] for f in shown["frequencies"]] == ["one_time", "weekly"]
    assert all(f["name"] for f in shown["frequencies"])
    assert shown["questions"] == form["questions"]


def test_an_inactive_or_unknown_public_form_is_404(stack: Stack, shop: Shop, public: httpx.Client):
    form = make_form(stack, shop, active=False)
    slug = shop.company.slug
    assert "booking form" in refusal(public.get(f"{PUBLIC}/{slug}/booking-forms/{form['id']}"), 404)
    refusal(public.get(f"{PUBLIC}/{slug}/booking-forms/bf_nope"), 404)


# --- Booking through a form -----------------------------------------------------------


def form_booking(shop: Shop, public: httpx.Client, form: dict[str, Any], **fields: Any) -> Any:
    pets = form["questions"][1]["id"]
    answers = [
        {"questionId": "gate-code", "answer": "#4521, sonnez deux fois ✓"},
        {"questionId": pets, "answer": "Cat"},
    ]
    body = booking_body(first_open_start(shop, public), LOOP, **JOB)
    return {**body, "formId": form["id"], "answers": answers, **fields}


def test_a_public_booking_through_a_form_keeps_its_answers(
    stack: Stack, shop: Shop, public: httpx.Client
):
    form = make_form(stack, shop)
    body = form_booking(shop, public, form)
    booked = created(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body))
    pets = form["questions"][1]["id"]
    expected = [
        {
            "questionId": "gate-code",
            "question": "Gate code?",
            "answer": "#4521, sonnez deux fois ✓",
        },
        {"questionId": pets, "question": "Pets at home?", "answer": "Cat"},
    ]
    assert booked["formId"] == form["id"]
    assert booked["answers"] == expected
    with stack.client(shop.key) as api:
        fetched = api.get(f"{API}/bookings/{booked['id']}").json()
        # The booking keeps the question as it was asked, whatever becomes of the form.
        api.patch(f"{API}/booking-forms/{form['id']}", json={"questions": []})
        api.delete(f"{API}/booking-forms/{form['id']}")
        later = api.get(f"{API}/bookings/{booked['id']}").json()
    assert fetched["formId"] == later["formId"] == form["id"]
    assert fetched["answers"] == later["answers"] == expected
    [row] = listed(stack, shop)
    assert row["answers"] == expected


def test_a_booking_without_a_form_has_no_answers(stack: Stack, shop: Shop, public: httpx.Client):
    body = booking_body(first_open_start(shop, public), LOOP)
    booked = created(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body))
    assert booked["formId"] is None
    assert booked["answers"] == []
    answers = [{"questionId": "gate-code", "answer": "1"}]
    message = refusal(
        public.post(f"{PUBLIC}/{shop.company.slug}/book", json={**body, "answers": answers}), 400
    )
    assert "formId" in message


def test_a_missing_required_answer_is_refused_naming_the_question(
    stack: Stack, shop: Shop, public: httpx.Client
):
    form = make_form(stack, shop)
    body = form_booking(shop, public, form)
    body["answers"] = body["answers"][1:]
    message = refusal(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body), 400)
    assert "Gate code?" in message
    assert "gate-code" in message
    blank = {**body, "answers": [{"questionId": "gate-code", "answer": "  "}]}
    assert "Gate code?" in refusal(
        public.post(f"{PUBLIC}/{shop.company.slug}/book", json=blank), 400
    )
    assert listed(stack, shop) == []


def test_an_answer_over_500_characters_is_422_naming_the_field_and_limit(
    stack: Stack, shop: Shop, public: httpx.Client
):
    form = make_form(stack, shop)
    body = form_booking(shop, public, form)
    body["answers"][0]["answer"] = "x" * 501
    message = refusal(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body), 422)
    assert "answers.0.answer" in message
    assert "500 characters" in message
    body["answers"][0]["answer"] = "x" * 500  # the ceiling itself is fine
    created(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body))


@pytest.mark.parametrize("count", [101, 201, 1_000])
def test_more_than_100_answers_is_422(stack: Stack, shop: Shop, public: httpx.Client, count: int):
    questions = [{"id": f"q{n}", "label": f"Question {n}"} for n in range(100)]
    form = make_form(stack, shop, questions=questions)
    body = form_booking(shop, public, form)
    body["answers"] = [{"questionId": f"q{n % 100}", "answer": "yes"} for n in range(count)]
    message = refusal(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body), 422)
    assert "answers" in message
    assert "100 items" in message


def test_a_booking_outside_the_forms_offer_is_refused(
    stack: Stack, shop: Shop, public: httpx.Client
):
    form = make_form(stack, shop, extraIds=["ext_windows"])
    url = f"{PUBLIC}/{shop.company.slug}/book"
    body = form_booking(shop, public, form)
    deep = refusal(public.post(url, json={**body, "serviceId": "svc_deep_clean"}), 400)
    assert "serviceId" in deep
    assert "does not offer this service" in deep
    oven = refusal(public.post(url, json=body), 400)  # JOB has the oven extra
    assert "extras.0.id" in oven
    monthly = refusal(public.post(url, json={**body, "frequencySlug": "monthly"}), 400)
    assert "frequencySlug" in monthly
    unknown = {**body, "answers": [*body["answers"], {"questionId": "nope", "answer": "?"}]}
    assert "answers.2.questionId" in refusal(public.post(url, json=unknown), 400)
    wrong_choice = {
        **body,
        "answers": [body["answers"][0], {**body["answers"][1], "answer": "Fish"}],
    }
    assert "answers.1.answer" in refusal(public.post(url, json=wrong_choice), 400)
    assert "formId" in refusal(public.post(url, json={**body, "formId": "bf_nope"}), 400)
    assert listed(stack, shop) == []


def test_an_inactive_form_takes_no_bookings(stack: Stack, shop: Shop, public: httpx.Client):
    form = make_form(stack, shop, active=False)
    body = form_booking(shop, public, form)
    message = refusal(public.post(f"{PUBLIC}/{shop.company.slug}/book", json=body), 400)
    assert "formId" in message


def test_a_form_whose_services_were_all_retired_since_still_changes_and_books_nothing(
    stack: Stack, shop: Shop, public: httpx.Client
):
    """Retiring a form's only service (what setup.md advises instead of removing it)
    leaves a form that still saves as it is (so it exports and imports back), is 404 to
    the public like an inactive form, and cannot be given retired services anew."""
    form = make_form(stack, shop)
    with stack.container.uow() as uow:
        catalog = uow.catalogs.get(shop.company.id)
        uow.catalogs.save(factories.with_service_retired(catalog, "svc_standard_clean"))
        uow.commit()
    with stack.client(shop.key) as api:
        renamed = api.patch(f"{API}/booking-forms/{form['id']}", json={"name": "Renamed"})
        assert renamed.status_code == 200, renamed.text
        again = api.post(f"{API}/booking-forms", json=FORM)
        assert "serviceIds" in error_of(again, 400, "invalid_request")["fieldErrors"]
    slug = shop.company.slug
    refusal(public.get(f"{PUBLIC}/{slug}/booking-forms/{form['id']}"), 404)
