"""Booking forms: a form is checked against its company's catalog, naming every field;
a booking through a form must stay within its offer and answer its questions, within the
SPEC.md ceilings of an answer (500 characters) and of answers (100)."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from booking_core.booking_forms import (
    MAX_ANSWER_LENGTH,
    Answer,
    BookingForm,
    FormDraft,
    Question,
    QuestionDraft,
    QuestionKind,
    build_form,
    check_answers,
    draft_of,
    form_errors,
)
from booking_core.demo import demo_catalog
from booking_core.errors import ValidationFailed
from booking_core.pricing import SelectedItem, Selection
from tests import factories

AT = datetime(2026, 11, 23, 15, tzinfo=UTC)
CATALOG = attrs.evolve(demo_catalog(), company_id="cmp_demo")
GATE = Question(id="gate-code", label="Gate code?", required=True)
PETS = Question(
    id="pets", label="Pets at home?", kind=QuestionKind.CHOICE, choices=("None", "Cat", "Dog")
)
FORM = BookingForm(
    id="bf_spring",
    company_id="cmp_demo",
    name="Spring clean",
    service_ids=("svc_standard_clean",),
    frequency_slugs=("one_time", "weekly"),
    extra_ids=("ext_oven",),
    questions=(GATE, PETS),
    created_at=AT,
    updated_at=AT,
)
JOB = Selection(service_id="svc_standard_clean", frequency_slug="one_time")


def errors_of(call: object) -> dict[str, str]:
    assert callable(call)
    with pytest.raises(ValidationFailed) as refused:
        call()
    return refused.value.field_errors


# --- The form -------------------------------------------------------------------------


def test_a_form_of_the_catalogs_items_is_valid():
    assert form_errors(FORM, CATALOG) == {}
    everything = attrs.evolve(FORM, frequency_slugs=(), extra_ids=(), questions=())
    assert form_errors(everything, CATALOG) == {}


def test_every_problem_of_a_form_is_named_at_its_path():
    bad = attrs.evolve(
        FORM,
        name=" ",
        service_ids=("svc_standard_clean", "svc_nope", "svc_standard_clean"),
        frequency_slugs=("fortnightly",),
        extra_ids=("ext_oven", "ext_nope"),
        questions=(
            Question(id="Gate Code", label="x" * 201),
            Question(id="pets", label="Pets", kind=QuestionKind.CHOICE),
            Question(id="pets", label="Again", choices=("a",)),
            Question(id="size", label="Size", kind=QuestionKind.CHOICE, choices=("S", "S", "")),
        ),
    )
    assert form_errors(bad, CATALOG) == {
        "name": "Required: may not be empty.",
        "service_ids.1": "No service 'svc_nope' in the catalog.",
        "service_ids.2": "Listed twice.",
        "frequency_slugs.0": "No frequency 'fortnightly' in the catalog.",
        "extra_ids.1": "No extra 'ext_nope' on the form's services.",
        "questions.0.id": (
            "Lower-case letters, digits, - and _ (at most 64), starting with a letter or digit."
        ),
        "questions.0.label": "At most 200 characters.",
        "questions.1.choices": "A choice question has at least one choice.",
        "questions.2.choices": "Only a choice question has choices.",
        "questions.2.id": "Another question has this id.",
        "questions.3.choices.1": "Listed twice.",
        "questions.3.choices.2": "Required: may not be empty.",
    }


def test_a_form_books_at_least_one_service_and_asks_at_most_100_questions():
    many = tuple(Question(id=f"q{n}", label=f"Q{n}") for n in range(101))
    problems = form_errors(attrs.evolve(FORM, service_ids=(), questions=many), CATALOG)
    assert problems == {
        "service_ids": "List at least one service the form books.",
        "extra_ids.0": "No extra 'ext_oven' on the form's services.",
        "questions": "At most 100 items.",
    }
    choices = tuple(f"c{n}" for n in range(51))
    wide = Question(id="wide", label="Wide", kind=QuestionKind.CHOICE, choices=choices)
    assert form_errors(attrs.evolve(FORM, questions=(wide,)), CATALOG) == {
        "questions.0.choices": "At most 50 items."
    }


def test_a_form_of_retired_services_only_is_refused_one_with_an_active_one_is_not():
    """A form whose every service is retired would book nothing: refused on its
    services. One retired service beside an active one is kept (it may come back)."""
    retired = factories.with_service_retired(CATALOG, "svc_deep_clean")
    deep_only = attrs.evolve(FORM, service_ids=("svc_deep_clean",), extra_ids=())
    assert form_errors(deep_only, retired) == {
        "service_ids": "None of these services is offered now: list an active one."
    }
    both = attrs.evolve(deep_only, service_ids=("svc_deep_clean", "svc_standard_clean"))
    assert form_errors(both, retired) == {}
    assert form_errors(deep_only, CATALOG) == {}


def test_build_form_gives_ids_and_keeps_them_on_a_change():
    draft = FormDraft(
        name="Spring clean",
        service_ids=("svc_standard_clean",),
        questions=(QuestionDraft(label="Anything else?"),),
    )
    made = build_form(draft, CATALOG, at=AT)
    assert made.id.startswith("bf_")
    assert made.questions[0].id.startswith("q_")
    assert made.company_id == "cmp_demo"
    later = datetime(2026, 11, 24, tzinfo=UTC)
    changed = build_form(
        attrs.evolve(draft_of(made), name="Renamed"), CATALOG, at=later, stored=made
    )
    assert changed == attrs.evolve(made, name="Renamed", updated_at=later)
    with pytest.raises(ValidationFailed) as refused:
        build_form(attrs.evolve(draft, id="not a form id"), CATALOG, at=AT)
    assert set(refused.value.field_errors) == {"id"}


# --- A booking through the form -------------------------------------------------------


def test_the_answers_are_kept_with_the_questions_label_in_the_order_given():
    given = (("pets", "Cat"), ("gate-code", "#4521"))
    assert check_answers(FORM, JOB, given) == (
        Answer("pets", "Pets at home?", "Cat"),
        Answer("gate-code", "Gate code?", "#4521"),
    )
    # A blank optional answer is not kept.
    assert check_answers(FORM, JOB, (("gate-code", "1"), ("pets", ""))) == (
        Answer("gate-code", "Gate code?", "1"),
    )


def test_a_missing_or_blank_required_answer_names_the_question():
    for given in ((("pets", "Cat"),), (("gate-code", "   "),)):
        problems = errors_of(lambda given=given: check_answers(FORM, JOB, given))
        assert problems == {"answers": "Answer the required question 'Gate code?' (gate-code)."}


def test_an_answer_over_500_characters_is_at_most_500_characters():
    long = "x" * (MAX_ANSWER_LENGTH + 1)
    problems = errors_of(lambda: check_answers(FORM, JOB, (("gate-code", long),)))
    assert problems == {"answers.0.answer": "At most 500 characters."}
    exact = "x" * MAX_ANSWER_LENGTH
    assert check_answers(FORM, JOB, (("gate-code", exact),))[0].answer == exact


def test_more_than_100_answers_is_at_most_100_items():
    given = (("gate-code", "1"),) * 101
    assert errors_of(lambda: check_answers(FORM, JOB, given)) == {"answers": "At most 100 items."}


def test_unknown_repeated_and_off_list_answers_are_named():
    given = (("gate-code", "1"), ("nope", "?"), ("gate-code", "2"), ("pets", "Fish"))
    assert errors_of(lambda: check_answers(FORM, JOB, given)) == {
        "answers.1.question_id": "No question 'nope' on this form.",
        "answers.2.question_id": "Answered twice.",
        "answers.3.answer": "Must be one of: 'None', 'Cat', 'Dog'",
    }


def test_a_booking_outside_the_forms_offer_is_refused():
    outside = Selection(
        service_id="svc_deep_clean",
        frequency_slug="monthly",
        extras=(SelectedItem("ext_oven"), SelectedItem("ext_windows", 2)),
    )
    assert errors_of(lambda: check_answers(FORM, outside, (("gate-code", "1"),))) == {
        "service_id": "This booking form does not offer this service.",
        "frequency_slug": "This booking form does not offer this frequency.",
        "extras.1.id": "This booking form does not offer this extra.",
    }
    open_offer = attrs.evolve(FORM, frequency_slugs=(), extra_ids=())
    inside = attrs.evolve(outside, service_id="svc_standard_clean")
    assert check_answers(open_offer, inside, (("gate-code", "1"),))


def test_an_inactive_form_takes_no_booking():
    closed = attrs.evolve(FORM, active=False)
    assert errors_of(lambda: check_answers(closed, JOB, (("gate-code", "1"),))) == {
        "form_id": "This booking form is not taking bookings."
    }
