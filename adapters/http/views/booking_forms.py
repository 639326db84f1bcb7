"""Booking forms as answers (``/booking-forms``, and the public ``booking-forms/{id}``),
and the intake answers a booking shows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import attrs
from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import RenderContext
from adapters.http.views.catalog import (
    FrequencyView,
    ServiceView,
    extra_view,
    frequency_view,
    service_view,
)
from booking_core.booking_forms import Answer, BookingForm, Question, QuestionKind
from booking_core.catalog import Catalog


@frozen
class QuestionView:
    """An intake question; choices are a choice question's options (empty for text)."""

    id: str
    label: str
    kind: QuestionKind
    required: bool
    choices: tuple[str, ...]


@frozen
class BookingFormView:
    """A booking form: the services it books, the frequencies and extras it offers (an
    empty list offers every one of the catalog), and the questions it asks."""

    id: str
    name: str
    service_ids: tuple[str, ...]
    frequency_slugs: tuple[str, ...] = field(
        metadata=schema(description="Frequencies offered; empty: every one of the catalog.")
    )
    extra_ids: tuple[str, ...] = field(
        metadata=schema(description="Extras offered; empty: every one of the services'.")
    )
    questions: tuple[QuestionView, ...]
    active: bool = field(metadata=schema(description="False: the public form is not found."))
    created_at: datetime
    updated_at: datetime


@frozen
class DeletedBookingFormView:
    """A deleted form (bookings made through it keep their formId and answers)."""

    id: str
    deleted: Literal[True]


@frozen
class PublicBookingFormView:
    """A booking form as a booking page renders it: the active services it books (each
    with its parameters and the extras the form offers), the frequencies it offers and
    its questions. Prices come from quote, open times from slots and days."""

    id: str
    name: str
    services: tuple[ServiceView, ...]
    frequencies: tuple[FrequencyView, ...]
    questions: tuple[QuestionView, ...]


@frozen
class AnswerView:
    """One intake answer: the question's id, its label when the booking was made, and
    the answer."""

    question_id: str
    question: str
    answer: str


def question_view(q: Question) -> QuestionView:
    """The view of a question."""
    return QuestionView(id=q.id, label=q.label, kind=q.kind, required=q.required, choices=q.choices)


def booking_form_view(form: BookingForm, ctx: RenderContext) -> BookingFormView:
    """The view of a form, as ``/api/v1`` shows it."""
    return BookingFormView(
        id=form.id,
        name=form.name,
        service_ids=form.service_ids,
        frequency_slugs=form.frequency_slugs,
        extra_ids=form.extra_ids,
        questions=tuple(question_view(q) for q in form.questions),
        active=form.active,
        created_at=ctx.time(form.created_at),
        updated_at=ctx.time(form.updated_at),
    )


def public_booking_form_view(form: BookingForm, catalog: Catalog) -> PublicBookingFormView:
    """The form resolved against the catalog: its services in the form's order (inactive
    or removed ones left out), each with only the extras the form offers; its
    frequencies in the catalog's order."""
    services = []
    for service_id in form.service_ids:
        service = catalog.services_by_id.get(service_id)
        if service is None or not service.active:
            continue
        view = service_view(service)
        extras = tuple(extra_view(e) for e in service.extras if form.offers_extra(e.id))
        services.append(attrs.evolve(view, extras=extras))
    return PublicBookingFormView(
        id=form.id,
        name=form.name,
        services=tuple(services),
        frequencies=tuple(
            frequency_view(f) for f in catalog.frequencies if form.offers_frequency(f.slug)
        ),
        questions=tuple(question_view(q) for q in form.questions),
    )


def answer_views(answers: Sequence[Answer]) -> tuple[AnswerView, ...]:
    """The views of a booking's intake answers, in the order given."""
    return tuple(AnswerView(a.question_id, a.question, a.answer) for a in answers)
