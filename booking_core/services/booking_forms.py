"""Booking form use cases: create, change, delete, read and list a company's forms, the
public read of an active one, and the forms document (``booking forms export|import``).

Every write checks the form against the company's catalog as it is then
(``booking_forms.build_form``); a document is checked whole before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import attrs
from attrs import frozen

from booking_core.booking_forms import (
    BookingForm,
    FormDraft,
    FormsDraft,
    build_form,
    draft_of,
    same_content,
)
from booking_core.catalog import Catalog
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.paging import MAX_LIMIT, Page, PageRequest
from booking_core.ports import Clock, UnitOfWork


def company_catalog(uow: UnitOfWork, company_id: str) -> Catalog:
    """The company's catalog; an empty one while it has none (every id is then unknown)."""
    company = uow.companies.get(company_id)
    try:
        return uow.catalogs.get(company.id)
    except NotFoundError:
        return Catalog(company_id=company.id, timezone=company.timezone)


def create_form(company_id: str, draft: FormDraft, *, uow: UnitOfWork, clock: Clock) -> BookingForm:
    """Check and store a new form (a new ``bf_...`` id; the draft's id is not used)."""
    with uow:
        catalog = company_catalog(uow, company_id)
        form = build_form(attrs.evolve(draft, id=None), catalog, at=clock.now())
        uow.booking_forms.add(form)
        uow.commit()
    return form


FORM_FIELDS = frozenset(f.name for f in attrs.fields(FormDraft)) - {"id"}
"""What a change may set (a form's id never changes)."""


def update_form(
    company_id: str,
    form_id: str,
    changes: Mapping[str, Any],
    *,
    uow: UnitOfWork,
    clock: Clock,
) -> BookingForm:
    """Change the given fields of a stored form (``FORM_FIELDS``; a list replaces the
    whole list), checked again against the catalog as a whole."""
    unknown = set(changes) - FORM_FIELDS
    if unknown:
        raise ValueError(f"not form fields: {sorted(unknown)}")
    with uow:
        stored = uow.booking_forms.get_for_update(company_id, form_id)
        catalog = company_catalog(uow, company_id)
        draft = attrs.evolve(draft_of(stored), **changes)
        form = build_form(draft, catalog, at=clock.now(), stored=stored)
        uow.booking_forms.save(form)
        uow.commit()
    return form


def delete_form(company_id: str, form_id: str, *, uow: UnitOfWork) -> None:
    """Remove a form; the bookings made through it keep their ``formId`` and answers."""
    with uow:
        uow.booking_forms.delete(company_id, form_id)
        uow.commit()


def get_form(company_id: str, form_id: str, *, uow: UnitOfWork) -> BookingForm:
    """One form, active or not."""
    with uow:
        return uow.booking_forms.get(company_id, form_id)


def list_forms(company_id: str, page: PageRequest, *, uow: UnitOfWork) -> Page[BookingForm]:
    """A page of the company's forms, newest first."""
    with uow:
        return uow.booking_forms.list(company_id, page)


def public_form(company_id: str, form_id: str, *, uow: UnitOfWork) -> tuple[BookingForm, Catalog]:
    """An active form with the catalog it offers from; an inactive one, or one whose
    services are all retired, is ``NotFoundError`` exactly like an unknown one (a page
    cannot take bookings on it)."""
    with uow:
        form = uow.booking_forms.get(company_id, form_id)
        catalog = company_catalog(uow, company_id)
        offered = (catalog.services_by_id.get(s) for s in form.service_ids)
        if not form.active or not any(s is not None and s.active for s in offered):
            raise NotFoundError("booking form", form_id)
        return form, catalog


def all_forms(uow: UnitOfWork, company_id: str) -> list[BookingForm]:
    """Every form of the company, oldest first (in the caller's unit)."""
    forms: list[BookingForm] = []
    after = None
    while True:
        page = uow.booking_forms.list(company_id, PageRequest(limit=MAX_LIMIT, after=after))
        forms.extend(page.items)
        if not page.has_more:
            return forms[::-1]
        after = page.next_after


def export_forms(company_id: str, *, uow: UnitOfWork) -> FormsDraft:
    """The company's forms as a document, oldest first: what ``import_forms`` takes back
    without a change."""
    with uow:
        uow.companies.get(company_id)
        return FormsDraft(forms=tuple(draft_of(f) for f in all_forms(uow, company_id)))


@frozen(kw_only=True)
class ImportForms:
    """Add or change the forms of ``forms``: an entry with the id of a stored form
    replaces it, any other adds a form (with its id when it gives one). Forms the document
    leaves out are kept. ``dry_run`` only checks."""

    company_id: str
    forms: FormsDraft
    dry_run: bool = False


@frozen(kw_only=True)
class FormChanges:
    """What an import did (or would do): forms added, changed and unchanged."""

    added: tuple[BookingForm, ...] = ()
    updated: tuple[BookingForm, ...] = ()
    unchanged: tuple[BookingForm, ...] = ()


def import_forms(cmd: ImportForms, *, uow: UnitOfWork, clock: Clock) -> FormChanges:
    """Check every form of the document against the catalog first (``ValidationFailed``
    naming each problem at ``forms.<n>.*``, nothing written), then write them in one unit."""
    at = clock.now()
    with uow:
        catalog = company_catalog(uow, cmd.company_id)
        stored = {f.id: f for f in all_forms(uow, cmd.company_id)}
        errors: dict[str, str] = {}
        built: list[tuple[BookingForm, BookingForm | None]] = []
        seen: set[str] = set()
        for index, draft in enumerate(cmd.forms.forms):
            if draft.id is not None and draft.id in seen:
                errors[f"forms.{index}.id"] = "Another form of the document has this id."
                continue
            if draft.id is not None:
                seen.add(draft.id)
            before = stored.get(draft.id) if draft.id is not None else None
            try:
                # A microsecond apart, so that forms added together list in document order.
                when = at + timedelta(microseconds=index)
                built.append((build_form(draft, catalog, at=when, stored=before), before))
            except ValidationFailed as problem:
                errors.update({f"forms.{index}.{k}": v for k, v in problem.field_errors.items()})
        if errors:
            raise ValidationFailed(errors, "The forms document has problems; nothing was saved.")
        added = tuple(form for form, before in built if before is None)
        updated = tuple(
            form for form, before in built if before is not None and not same_content(form, before)
        )
        unchanged = tuple(
            before
            for _, before in built
            if before is not None and before.id not in {u.id for u in updated}
        )
        if not cmd.dry_run:
            for form in added:
                uow.booking_forms.add(form)
            for form in updated:
                uow.booking_forms.save(form)
            uow.commit()
    return FormChanges(added=added, updated=updated, unchanged=unchanged)
