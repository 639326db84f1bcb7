"""``/booking-forms``: a company's booking forms (what its booking pages offer and ask).

Read with ``catalog:read`` (a form is part of what the company offers); written with
``bookings:write`` (a form shapes the bookings a website takes; SPEC.md's scope list is
closed, docs/decisions.md). Every write is checked against the catalog as it is then.
"""

from __future__ import annotations

from typing import Annotated, Any

import attrs
from attrs import frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.jsonschema import schema
from adapters.http.routes.webhooks import NewestFirstQuery
from adapters.http.structuring import Id, Matches, Name, ShortText
from adapters.http.views.booking_forms import (
    BookingFormView,
    DeletedBookingFormView,
    booking_form_view,
    public_booking_form_view,
)
from booking_core.booking_forms import (
    MAX_CHOICES,
    MAX_QUESTIONS,
    QUESTION_ID,
    QUESTION_ID_TEXT,
    FormDraft,
    QuestionDraft,
    QuestionKind,
)
from booking_core.services import booking_forms as cases

READ_SCOPE = "catalog:read"
WRITE_SCOPE = "bookings:write"

QuestionId = Annotated[str, Matches(QUESTION_ID, QUESTION_ID_TEXT)]
KEEP: Any = attrs.make_class("Keep", {}, repr=False)()
"""The default of a ``PATCH`` field left out: the stored value is kept."""


@frozen(kw_only=True)
class QuestionBody:
    """An intake question: ``text`` (free text, answers at most 500 characters) or
    ``choice`` (one of 1 to 50 ``choices``)."""

    id: QuestionId | None = attrs.field(
        default=None, metadata={"description": "your slug (gate-code); made (q_...) if left out"}
    )
    label: Name
    kind: QuestionKind = QuestionKind.TEXT
    required: bool = False
    choices: tuple[ShortText, ...] = attrs.field(
        default=(), metadata=schema(maxItems=MAX_CHOICES, uniqueItems=True)
    )

    def draft(self) -> QuestionDraft:
        """The question as the core takes it."""
        return QuestionDraft(
            id=self.id,
            label=self.label,
            kind=self.kind,
            required=self.required,
            choices=self.choices,
        )


@frozen(kw_only=True)
class BookingFormBody:
    """A new booking form: the services it books (at least one), the frequencies and
    extras it offers (empty: every one), and up to 100 questions."""

    name: Name
    service_ids: tuple[Id, ...] = attrs.field(metadata=schema(minItems=1, uniqueItems=True))
    frequency_slugs: tuple[Id, ...] = attrs.field(
        default=(),
        metadata={
            "description": "empty: every frequency of the catalog",
            **schema(uniqueItems=True),
        },
    )
    extra_ids: tuple[Id, ...] = attrs.field(
        default=(),
        metadata={
            "description": "empty: every extra of the form's services",
            **schema(uniqueItems=True),
        },
    )
    questions: tuple[QuestionBody, ...] = attrs.field(
        default=(), metadata=schema(maxItems=MAX_QUESTIONS)
    )
    active: bool = True


@frozen(kw_only=True)
class BookingFormPatch:
    """Change a form; a field left out is kept, a list given replaces the whole list
    (questions given without an id get new ones)."""

    name: Name = attrs.field(default=KEEP)
    service_ids: tuple[Id, ...] = attrs.field(
        default=KEEP, metadata=schema(minItems=1, uniqueItems=True)
    )
    frequency_slugs: tuple[Id, ...] = attrs.field(default=KEEP, metadata=schema(uniqueItems=True))
    extra_ids: tuple[Id, ...] = attrs.field(default=KEEP, metadata=schema(uniqueItems=True))
    questions: tuple[QuestionBody, ...] = attrs.field(
        default=KEEP, metadata=schema(maxItems=MAX_QUESTIONS)
    )
    active: bool = attrs.field(default=KEEP)


def get_booking_forms(ctx: Context) -> Reply:
    """The company's forms, newest first."""
    page = ctx.page_request("booking-forms", {})
    result = cases.list_forms(ctx.company_id, page, uow=ctx.deps.read())
    render = ctx.render()
    return ctx.page_reply(result, lambda form: booking_form_view(form, render))


def get_booking_form(ctx: Context) -> Reply:
    """One form, active or not."""
    form = cases.get_form(ctx.company_id, ctx.path_params["id"], uow=ctx.deps.read())
    return Reply(booking_form_view(form, ctx.render()))


def post_booking_form(ctx: Context) -> Reply:
    """Create a form, checked against the catalog."""
    body: BookingFormBody = ctx.body
    draft = FormDraft(
        name=body.name,
        service_ids=body.service_ids,
        frequency_slugs=body.frequency_slugs,
        extra_ids=body.extra_ids,
        questions=tuple(q.draft() for q in body.questions),
        active=body.active,
    )
    form = cases.create_form(ctx.company_id, draft, uow=ctx.uow(), clock=ctx.deps.clock)
    return Reply(booking_form_view(form, ctx.render()), 201)


def patch_booking_form(ctx: Context) -> Reply:
    """Change the fields given; the whole form is checked against the catalog again."""
    body: BookingFormPatch = ctx.body
    changes: dict[str, Any] = {
        a.name: getattr(body, a.name)
        for a in attrs.fields(BookingFormPatch)
        if getattr(body, a.name) is not KEEP
    }
    if "questions" in changes:
        changes["questions"] = tuple(q.draft() for q in changes["questions"])
    form = cases.update_form(
        ctx.company_id, ctx.path_params["id"], changes, uow=ctx.uow(), clock=ctx.deps.clock
    )
    return Reply(booking_form_view(form, ctx.render()))


def delete_booking_form(ctx: Context) -> Reply:
    """Delete a form; bookings made through it keep their formId and answers."""
    form_id = ctx.path_params["id"]
    cases.delete_form(ctx.company_id, form_id, uow=ctx.uow())
    return Reply(DeletedBookingFormView(id=form_id, deleted=True))


def get_public_booking_form(ctx: Context) -> Reply:
    """An active form with what it offers resolved from the catalog."""
    form, catalog = cases.public_form(ctx.company_id, ctx.path_params["id"], uow=ctx.deps.read())
    return Reply(public_booking_form_view(form, catalog))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/booking-forms",
        scope=READ_SCOPE,
        handler=get_booking_forms,
        response=BookingFormView,
        paginated=True,
        query=NewestFirstQuery,
        tag="booking forms",
        summary="List the company's booking forms, newest first",
    ),
    Endpoint(
        method="POST",
        path="/booking-forms",
        scope=WRITE_SCOPE,
        handler=post_booking_form,
        response=BookingFormView,
        body=BookingFormBody,
        success_status=201,
        tag="booking forms",
        summary="Create a booking form: services, frequencies and extras offered, questions",
    ),
    Endpoint(
        method="GET",
        path="/booking-forms/{id}",
        scope=READ_SCOPE,
        handler=get_booking_form,
        response=BookingFormView,
        tag="booking forms",
        summary="One booking form",
    ),
    Endpoint(
        method="PATCH",
        path="/booking-forms/{id}",
        scope=WRITE_SCOPE,
        handler=patch_booking_form,
        response=BookingFormView,
        body=BookingFormPatch,
        tag="booking forms",
        summary="Change a booking form (a list given replaces the whole list)",
    ),
    Endpoint(
        method="DELETE",
        path="/booking-forms/{id}",
        scope=WRITE_SCOPE,
        handler=delete_booking_form,
        response=DeletedBookingFormView,
        tag="booking forms",
        summary="Delete a booking form; bookings made through it keep their answers",
    ),
]
