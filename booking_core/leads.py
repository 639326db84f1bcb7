"""Leads (enquiries): stages, owner, follow-up date, and a timeline of every change.

A new enquiry whose normalised email or E.164 phone matches an *open* lead folds into
that lead (its timeline records the folded enquiry) instead of creating a second one.
One contact has at most one open lead: a fold never copies onto its lead an email or
phone that another open lead holds.
Phones reach the core already in E.164 (the ``PhoneNormalizer`` port does that).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime

import attrs
from attrs import frozen

from booking_core.customers import (
    PHONE_MAX,
    email_errors,
    name_errors,
    normalize_email,
)
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.plain_text import one_line_problem

MESSAGE_MAX = 2_000


class LeadStage(enum.StrEnum):
    """Where a lead stands; the first three are open."""

    NEW = "new"
    CONTACTED = "contacted"
    QUOTED = "quoted"
    WON = "won"
    LOST = "lost"

    @property
    def open(self) -> bool:
        """True for new, contacted and quoted."""
        return self in OPEN_STAGES


OPEN_STAGES = frozenset({LeadStage.NEW, LeadStage.CONTACTED, LeadStage.QUOTED})


class TimelineKind(enum.StrEnum):
    """What a timeline entry records."""

    CREATED = "created"
    FOLDED = "folded"
    STAGE_CHANGED = "stage_changed"
    OWNER_CHANGED = "owner_changed"
    FOLLOW_UP_SET = "follow_up_set"


@frozen
class TimelineEntry:
    """One event in a lead's history; ``data`` holds its details as strings."""

    at: datetime
    kind: TimelineKind
    data: tuple[tuple[str, str], ...] = ()

    @property
    def details(self) -> dict[str, str]:
        """``data`` as a dict."""
        return dict(self.data)


@frozen
class Enquiry:
    """What a person asked, as captured (phone already E.164 or None)."""

    name: str
    email: str | None = None
    phone_e164: str | None = None
    message: str = ""
    source: str = "api"
    service_id: str | None = None

    def errors(self) -> dict[str, str]:
        """Field errors of the enquiry."""
        errors: dict[str, str] = {}
        errors.update(name_errors(self.name))
        if self.email is None and self.phone_e164 is None:
            errors["email"] = "Give an email or a phone number."
        if self.email is not None:
            errors.update(email_errors(self.email))
        if self.phone_e164 is not None and len(self.phone_e164) > PHONE_MAX:
            errors["phone"] = f"At most {PHONE_MAX} characters."
        if len(self.message) > MESSAGE_MAX:
            errors["message"] = f"At most {MESSAGE_MAX} characters."
        return errors


@frozen
class Lead:
    """An enquiry being worked: stage, owner, follow-up date and full timeline."""

    id: str
    company_id: str
    name: str
    email: str | None
    phone_e164: str | None
    stage: LeadStage
    created_at: datetime
    updated_at: datetime
    owner: str | None = None
    follow_up_on: date | None = None
    source: str = "api"
    message: str = ""
    service_id: str | None = None
    timeline: tuple[TimelineEntry, ...] = ()

    @property
    def email_key(self) -> str | None:
        """The normalised email used to match enquiries."""
        return normalize_email(self.email) if self.email else None

    def matches(self, email: str | None, phone_e164: str | None) -> bool:
        """True when the contact is the same person: same normalised email or E.164 phone."""
        same_email = email is not None and normalize_email(email) == self.email_key
        same_phone = phone_e164 is not None and phone_e164 == self.phone_e164
        return same_email or same_phone


def _entry(at: datetime, kind: TimelineKind, data: Mapping[str, str | None]) -> TimelineEntry:
    return TimelineEntry(at, kind, tuple((k, v) for k, v in data.items() if v is not None))


def capture(
    enquiry: Enquiry,
    *,
    company_id: str,
    candidates: Iterable[Lead],
    new_lead_id: str,
    at: datetime,
) -> tuple[Lead, bool]:
    """Fold ``enquiry`` into the oldest matching open lead, or start a new lead.

    A folded enquiry fills the lead's missing email or phone, unless another open lead
    in ``candidates`` holds that contact. Returns the lead and whether the enquiry was folded.
    """
    errors = enquiry.errors()
    if errors:
        raise ValidationFailed(errors)
    matching = sorted(
        (
            lead
            for lead in candidates
            if lead.company_id == company_id
            and lead.stage.open
            and lead.matches(enquiry.email, enquiry.phone_e164)
        ),
        key=lambda lead: (lead.created_at, lead.id),
    )
    details = {
        "name": enquiry.name,
        "email": enquiry.email,
        "phone": enquiry.phone_e164,
        "message": enquiry.message or None,
        "source": enquiry.source,
        "serviceId": enquiry.service_id,
    }
    email = enquiry.email.strip() if enquiry.email else None
    if matching:
        lead, *others = matching
        # An enquiry may match two open leads (its email one, its phone another). It
        # folds into the oldest; a missing detail is filled only from a contact no other
        # open lead holds, so one contact keeps at most one open lead.
        held_emails = {other.email_key for other in others}
        held_phones = {other.phone_e164 for other in others}
        email_key = normalize_email(email) if email else None
        fill_email = email if email_key not in held_emails else None
        fill_phone = enquiry.phone_e164 if enquiry.phone_e164 not in held_phones else None
        folded = attrs.evolve(
            lead,
            email=lead.email or fill_email,
            phone_e164=lead.phone_e164 or fill_phone,
            updated_at=at,
            timeline=(*lead.timeline, _entry(at, TimelineKind.FOLDED, details)),
        )
        return folded, True
    lead = Lead(
        id=new_lead_id,
        company_id=company_id,
        name=enquiry.name.strip(),
        email=email,
        phone_e164=enquiry.phone_e164,
        stage=LeadStage.NEW,
        created_at=at,
        updated_at=at,
        source=enquiry.source,
        message=enquiry.message,
        service_id=enquiry.service_id,
        timeline=(_entry(at, TimelineKind.CREATED, details),),
    )
    return lead, False


OWNER_MAX = 200
"""An owner (a name or an email address) is a short text, as in the API."""

UNSET: object = object()
"""Marks an argument of ``update`` that is not being changed."""


def owner_name(owner: str) -> str | None:
    """An owner as kept: trimmed, and a blank one is no owner (the lead is unassigned),
    so ``" Maria "`` is Maria and ``"   "`` assigns no one."""
    return owner.strip() or None


def owner_problem(owner: str) -> str | None:
    """What is wrong with an owner as kept (``owner_name``), None when nothing: shown on the
    leads pages and used as an email address, it is one line of at most ``OWNER_MAX``
    characters, as names are."""
    if len(owner) > OWNER_MAX:
        return f"At most {OWNER_MAX} characters."
    return one_line_problem(owner)


def update(
    lead: Lead,
    *,
    at: datetime,
    stage: LeadStage | None = None,
    owner: str | object | None = UNSET,
    follow_up_on: date | object | None = UNSET,
    actor: str | None = None,
    open_twins: Sequence[Lead] = (),
) -> Lead:
    """Move stage, reassign, and/or set the follow-up date; each change is on the timeline.

    A won lead is final (the work became a customer); a lost lead may be reopened, unless
    another lead of the same contact is open (``open_twins``): enquiries fold into one
    open lead per contact, so two would leave it unclear which one they join.
    """
    entries: list[TimelineEntry] = []
    new = lead
    if stage is not None and stage is not lead.stage:
        if lead.stage is LeadStage.WON:
            raise InvalidTransition(
                "lead", lead.id, lead.stage, f"move to {stage}", "a won lead is final."
            )
        twins = [t for t in open_twins if t.id != lead.id]
        if stage.open and not lead.stage.open and twins:
            raise InvalidTransition(
                "lead",
                lead.id,
                lead.stage,
                f"move to {stage}",
                f"lead {twins[0].id} is open for the same contact and takes its enquiries;"
                " close that one first.",
            )
        new = attrs.evolve(new, stage=stage)
        entries.append(
            _entry(at, TimelineKind.STAGE_CHANGED, {"from": lead.stage, "to": stage, "by": actor})
        )
    if isinstance(owner, str):
        owner = owner_name(owner)
        if owner is not None and (problem := owner_problem(owner)):
            raise ValidationFailed({"owner": problem})
    if owner is not UNSET and owner != lead.owner:
        assert owner is None or isinstance(owner, str)
        new = attrs.evolve(new, owner=owner)
        entries.append(
            _entry(at, TimelineKind.OWNER_CHANGED, {"from": lead.owner, "to": owner, "by": actor})
        )
    if follow_up_on is not UNSET and follow_up_on != lead.follow_up_on:
        assert follow_up_on is None or isinstance(follow_up_on, date)
        new = attrs.evolve(new, follow_up_on=follow_up_on)
        entries.append(
            _entry(
                at,
                TimelineKind.FOLLOW_UP_SET,
                {
                    "from": lead.follow_up_on.isoformat() if lead.follow_up_on else None,
                    "to": follow_up_on.isoformat() if follow_up_on else None,
                    "by": actor,
                },
            )
        )
    if not entries:
        return lead
    return attrs.evolve(new, updated_at=at, timeline=(*lead.timeline, *entries))
