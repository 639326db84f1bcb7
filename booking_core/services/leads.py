"""Lead use cases: capture an enquiry (folding into an open lead), change a lead, read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from attrs import frozen

from booking_core import leads
from booking_core.customers import normalize_email
from booking_core.errors import UnknownCatalogItem
from booking_core.events import EventType, event
from booking_core.ids import new_id
from booking_core.leads import Enquiry, Lead, LeadStage
from booking_core.paging import Page, PageRequest
from booking_core.ports import Clock, PhoneNormalizer, UnitOfWork
from booking_core.services.customers import normalized_phone

UNSET: object = leads.UNSET
"""Marks a field of ``UpdateLead`` that is not being changed."""


@frozen(kw_only=True)
class CaptureLead:
    """``POST /leads``: an enquiry as a person typed it."""

    company_id: str
    name: str
    email: str | None = None
    phone: str | None = None
    message: str = ""
    source: str = "api"
    service_id: str | None = None


def capture_lead(
    cmd: CaptureLead, *, uow: UnitOfWork, clock: Clock, phones: PhoneNormalizer
) -> tuple[Lead, bool]:
    """The lead the enquiry landed in and whether it folded into an existing open lead:
    ``lead.updated`` for a folded enquiry, ``lead.created`` for a new lead."""
    enquiry = Enquiry(
        name=cmd.name,
        email=cmd.email.strip() if cmd.email else None,
        phone_e164=normalized_phone(cmd.phone, phones),
        message=cmd.message,
        source=cmd.source,
        service_id=cmd.service_id,
    )
    with uow:
        if cmd.service_id is not None:
            service = uow.catalogs.get(cmd.company_id).services_by_id.get(cmd.service_id)
            if service is None or not service.active:
                raise UnknownCatalogItem("service_id", "service", cmd.service_id)
        email_key = normalize_email(enquiry.email) if enquiry.email else None
        keys = [key for key in (email_key, enquiry.phone_e164) if key]
        uow.leads.lock_contact(cmd.company_id, keys)
        candidates = uow.leads.open_matching(cmd.company_id, enquiry.email, enquiry.phone_e164)
        at = clock.now()
        lead, folded = leads.capture(
            enquiry,
            company_id=cmd.company_id,
            candidates=candidates,
            new_lead_id=new_id("lead"),
            at=at,
        )
        if folded:
            uow.leads.save(lead)
        else:
            uow.leads.add(lead)
        kind = EventType.LEAD_UPDATED if folded else EventType.LEAD_CREATED
        uow.outbox.add(event(kind, lead, company_id=lead.company_id, at=at))
        uow.commit()
    return lead, folded


@frozen(kw_only=True)
class UpdateLead:
    """``PATCH /leads/:id``: move stage, reassign, set a follow-up date (UNSET = keep)."""

    company_id: str
    lead_id: str
    stage: LeadStage | None = None
    owner: str | object | None = UNSET
    follow_up_on: date | object | None = UNSET
    actor: str | None = None


def update_lead(cmd: UpdateLead, *, uow: UnitOfWork, clock: Clock) -> Lead:
    """Apply the changes; each lands on the lead's timeline. A change records
    ``lead.updated``; a request that changes nothing records nothing."""
    at = clock.now()
    with uow:
        lead = uow.leads.get_for_update(cmd.company_id, cmd.lead_id)
        twins: Sequence[Lead] = ()
        if cmd.stage is not None and cmd.stage.open and not lead.stage.open:
            # Reopening: as capture_lead does, hold the contact so no enquiry starts a
            # lead for it meanwhile, then look for another open lead of the contact.
            keys = [key for key in (lead.email_key, lead.phone_e164) if key]
            uow.leads.lock_contact(cmd.company_id, keys)
            twins = uow.leads.open_matching(cmd.company_id, lead.email, lead.phone_e164)
        changed = leads.update(
            lead,
            at=at,
            stage=cmd.stage,
            owner=cmd.owner,
            follow_up_on=cmd.follow_up_on,
            actor=cmd.actor,
            open_twins=twins,
        )
        if changed is not lead:
            uow.leads.save(changed)
            uow.outbox.add(
                event(EventType.LEAD_UPDATED, changed, company_id=changed.company_id, at=at)
            )
            uow.commit()
    return changed


def get_lead(company_id: str, lead_id: str, *, uow: UnitOfWork) -> Lead:
    """One lead with its full timeline."""
    with uow:
        return uow.leads.get(company_id, lead_id)


def list_leads(
    company_id: str,
    page: PageRequest,
    *,
    stage: LeadStage | None = None,
    owner: str | None = None,
    uow: UnitOfWork,
) -> Page[Lead]:
    """A page of leads by stage, owner, or recent change."""
    with uow:
        return uow.leads.list(company_id, page, stage=stage, owner=owner)
