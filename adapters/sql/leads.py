"""Leads: contact fields as indexed columns for matching, the timeline as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select, update

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import leads
from booking_core.customers import normalize_email
from booking_core.errors import NotFoundError
from booking_core.leads import OPEN_STAGES, Lead, LeadStage, TimelineEntry
from booking_core.paging import Page, PageRequest

Timeline = tuple[TimelineEntry, ...]


def _values(lead: Lead) -> dict[str, Any]:
    return {
        "company_id": lead.company_id,
        "id": lead.id,
        "name": lead.name,
        "email": lead.email,
        "email_key": lead.email_key,
        "phone_e164": lead.phone_e164,
        "stage": lead.stage.value,
        "owner": lead.owner,
        "follow_up_on": lead.follow_up_on,
        "source": lead.source,
        "message": lead.message,
        "service_id": lead.service_id,
        "timeline": codecs.dumps(lead.timeline, Timeline),
        "created_at": lead.created_at,
        "updated_at": lead.updated_at,
    }


def _lead(row: AnyRow) -> Lead:
    return Lead(
        id=row.id,
        company_id=row.company_id,
        name=row.name,
        email=row.email,
        phone_e164=row.phone_e164,
        stage=LeadStage(row.stage),
        created_at=row.created_at,
        updated_at=row.updated_at,
        owner=row.owner,
        follow_up_on=row.follow_up_on,
        source=row.source,
        message=row.message,
        service_id=row.service_id,
        timeline=codecs.loads_any(row.timeline, Timeline),
    )


class SqlLeadRepository:
    """Leads with their timelines."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def lock_contact(self, company_id: str, contact_keys: Sequence[str]) -> None:
        # SQLite already runs one writer at a time (BEGIN IMMEDIATE). On PostgreSQL a
        # transaction-scoped advisory lock per key, taken in sorted order so two enquiries
        # never wait on each other in a circle; released at commit or rollback.
        if self._cx.dialect != "postgresql":
            return
        for key in sorted(set(contact_keys)):
            lock = func.pg_advisory_xact_lock(func.hashtextextended(f"lead:{company_id}:{key}", 0))
            self._cx.execute(select(lock))

    def get(self, company_id: str, lead_id: str) -> Lead:
        return _lead(self._cx.row(leads, company_id, lead_id, "lead"))

    def get_for_update(self, company_id: str, lead_id: str) -> Lead:
        return _lead(self._cx.row(leads, company_id, lead_id, "lead", locked=True))

    def open_matching(
        self, company_id: str, email: str | None, phone_e164: str | None
    ) -> Sequence[Lead]:
        same: list[ColumnElement[bool]] = []
        if email is not None:
            same.append(leads.c.email_key == normalize_email(email))
        if phone_e164 is not None:
            same.append(leads.c.phone_e164 == phone_e164)
        if not same:
            return []
        statement = (
            select(leads)
            .where(
                leads.c.company_id == company_id,
                leads.c.stage.in_(sorted(stage.value for stage in OPEN_STAGES)),
                or_(*same),
            )
            .order_by(leads.c.created_at, leads.c.id)
        )
        if self._cx.dialect == "postgresql":
            # Held until the unit ends, like ``get_for_update``: the enquiry folded into
            # one of them is never lost to a PATCH of it, nor a PATCH to the enquiry.
            statement = statement.with_for_update()
        return [_lead(row) for row in self._cx.execute(statement)]

    def add(self, lead: Lead) -> None:
        self._cx.insert_new(leads, _values(lead), f"Lead {lead.id} already exists.")
        self._cx.touch(leads, lead.company_id, lead.id)

    def save(self, lead: Lead) -> None:
        statement = (
            update(leads)
            .where(leads.c.company_id == lead.company_id, leads.c.id == lead.id)
            .values(**without_keys(_values(lead)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("lead", lead.id)
        self._cx.touch(leads, lead.company_id, lead.id)

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        stage: LeadStage | None = None,
        owner: str | None = None,
        follow_up_on: date | None = None,
    ) -> Page[Lead]:
        where: list[ColumnElement[bool]] = []
        if stage is not None:
            where.append(leads.c.stage == stage.value)
        if owner is not None:
            where.append(leads.c.owner == owner)
        if follow_up_on is not None:
            where.append(leads.c.follow_up_on == follow_up_on)
        return self._cx.keyset_page(leads, company_id, page, where, _lead)
