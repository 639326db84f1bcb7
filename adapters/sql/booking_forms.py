"""Booking forms: one row each, the name and active flag as columns and what the form
offers and asks (services, frequencies, extras, questions) one JSON document."""

from __future__ import annotations

from typing import Any

from attrs import frozen
from sqlalchemy import delete, update

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import booking_forms
from booking_core.booking_forms import BookingForm, Question
from booking_core.errors import NotFoundError
from booking_core.paging import Page, PageRequest


@frozen(kw_only=True)
class _Document:
    """What a form offers and asks, stored whole."""

    service_ids: tuple[str, ...]
    frequency_slugs: tuple[str, ...]
    extra_ids: tuple[str, ...]
    questions: tuple[Question, ...]


def _values(form: BookingForm) -> dict[str, Any]:
    document = _Document(
        service_ids=form.service_ids,
        frequency_slugs=form.frequency_slugs,
        extra_ids=form.extra_ids,
        questions=form.questions,
    )
    return {
        "company_id": form.company_id,
        "id": form.id,
        "name": form.name,
        "active": form.active,
        "document": codecs.dumps(document),
        "created_at": form.created_at,
        "updated_at": form.updated_at,
    }


def _form(row: AnyRow) -> BookingForm:
    document = codecs.loads(row.document, _Document)
    return BookingForm(
        id=row.id,
        company_id=row.company_id,
        name=row.name,
        active=bool(row.active),
        service_ids=document.service_ids,
        frequency_slugs=document.frequency_slugs,
        extra_ids=document.extra_ids,
        questions=document.questions,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SqlBookingFormRepository:
    """Booking forms by company, listed newest first."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, form_id: str) -> BookingForm:
        return _form(self._cx.row(booking_forms, company_id, form_id, "booking form"))

    def get_for_update(self, company_id: str, form_id: str) -> BookingForm:
        return _form(self._cx.row(booking_forms, company_id, form_id, "booking form", locked=True))

    def add(self, form: BookingForm) -> None:
        self._cx.insert_new(booking_forms, _values(form), f"Booking form {form.id} already exists.")

    def save(self, form: BookingForm) -> None:
        t = booking_forms
        statement = (
            update(t)
            .where(t.c.company_id == form.company_id, t.c.id == form.id)
            .values(**without_keys(_values(form)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("booking form", form.id)

    def delete(self, company_id: str, form_id: str) -> None:
        t = booking_forms
        statement = delete(t).where(t.c.company_id == company_id, t.c.id == form_id)
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("booking form", form_id)

    def list(self, company_id: str, page: PageRequest) -> Page[BookingForm]:
        if page.by_change:  # the table carries no change stamps
            raise ValueError("booking forms are listed newest first only, not by change")
        return self._cx.keyset_page(booking_forms, company_id, page, [], _form)
