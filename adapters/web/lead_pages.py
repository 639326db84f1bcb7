"""The leads pages (``/admin/leads``): the enquiries the company's website and tools send
(``POST /api/v1/leads``), newest first, by stage; one lead with its contact, what was
asked and its whole timeline, and a form that moves its stage, gives it an owner and sets
its follow-up date, through the use case ``PATCH /api/v1/leads/:id`` runs
(``update_lead``), so each change lands on the timeline and records ``lead.updated``.

Owners and dispatchers, as the calendar. The form sends only what the person changed, and
refuses (as every edit form of the workspace does) a form opened before someone else saved
the lead: a stage moved meanwhile is never silently moved back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.admin_booking import long_date
from adapters.web.calendar import read_date
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import Visit, page, pager_links, read_position
from adapters.web.setup_forms import SHOWN_FIELD, STALE, FieldErrors, fingerprint, stale
from adapters.web.time_text import moment
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.leads import (
    OWNER_MAX,
    Lead,
    LeadStage,
    TimelineEntry,
    TimelineKind,
    owner_problem,
)
from booking_core.paging import PageRequest
from booking_core.plain_text import quoted
from booking_core.services.leads import UNSET, UpdateLead, get_lead, list_leads, update_lead

LEADS = "/admin/leads"
PAGE_SIZE = 50
STAGES: Mapping[LeadStage, str] = {
    LeadStage.NEW: "New",
    LeadStage.CONTACTED: "Contacted",
    LeadStage.QUOTED: "Quoted",
    LeadStage.WON: "Won",
    LeadStage.LOST: "Lost",
}
"""The stages in their order, as the pages name them."""
FIELDS = ("stage", "owner", "follow_up_on")


@frozen
class LeadRow:
    """One line of the list."""

    id: str
    name: str
    email: str | None
    phone: str | None
    stage: LeadStage
    owner: str
    follow_up: str
    overdue: bool
    received: str


def _follow_up_text(lead: Lead, today: date) -> tuple[str, bool]:
    """(the follow-up date as read, whether it is due or past for an open lead)."""
    if lead.follow_up_on is None:
        return "", False
    day = lead.follow_up_on
    text = "Today" if day == today else f"{day:%a}, {day:%b} {day.day}, {day.year}"
    return text, lead.stage.open and day <= today


def leads_page(visit: Visit) -> Response:
    """``GET /admin/leads``: the company's leads, newest first; ``?stage=`` one stage;
    ``?after=`` the page after a position (the "Older" link)."""
    company = visit.signed_in_company
    query = visit.request.query_params
    chosen = query.get("stage", "")
    stage = LeadStage(chosen) if chosen in {s.value for s in STAGES} else None
    after = read_position(query.get("after", ""))
    found = list_leads(
        company.id, PageRequest(limit=PAGE_SIZE, after=after), stage=stage, uow=visit.deps.reader()
    )
    zone = ZoneInfo(company.timezone)
    today = visit.deps.clock.now().astimezone(zone).date()
    rows = []
    for lead in found.items:
        follow_up, overdue = _follow_up_text(lead, today)
        rows.append(
            LeadRow(
                id=lead.id,
                name=lead.name,
                email=lead.email,
                phone=lead.phone_e164,
                stage=lead.stage,
                owner=lead.owner or "",
                follow_up=follow_up,
                overdue=overdue,
                received=moment(lead.created_at, zone),
            )
        )
    older, newest = pager_links(LEADS, found, [("stage", stage.value)] if stage else [])
    tabs = [("All", LEADS, stage is None)] + [
        (label, f"{LEADS}?{urlencode({'stage': s.value})}", s is stage)
        for s, label in STAGES.items()
    ]
    return visit.render(
        "leads.html",
        rows=rows,
        stages=STAGES,
        stage=stage,
        tabs=tabs,
        older=older,
        first_page=after is None,
        newest=newest,
    )


def _values(lead: Lead) -> dict[str, str]:
    """The form's fields as the stored lead fills them."""
    return {
        "stage": lead.stage.value,
        "owner": lead.owner or "",
        "follow_up_on": lead.follow_up_on.isoformat() if lead.follow_up_on else "",
    }


def _day_text(text: str | None) -> str:
    if not text:
        return "none"
    try:
        return long_date(date.fromisoformat(text))
    except ValueError:
        return text


def _stage(text: str | None) -> str:
    """A stage as a timeline entry stored it, as the pages name it."""
    known = {s.value: label for s, label in STAGES.items()}
    return known.get(text or "", text or "none")


def timeline(
    lead: Lead, services: Mapping[str, str], keys: Mapping[str, str]
) -> list[tuple[TimelineEntry, str, str]]:
    """Each entry of the lead's timeline, oldest first: (the entry, what happened, a later
    enquiry's message or who did it: a person, or the API key by its name, ``keys``
    mapping a key's id to it)."""
    said: list[tuple[TimelineEntry, str, str]] = []
    for entry in lead.timeline:
        data = entry.details
        actor = data.get("by") or ""
        if actor.startswith("key:"):  # a change made through the API (PATCH /leads/:id)
            actor = f"API key {keys.get(actor.removeprefix('key:'), 'since deleted')}"
        by = f"by {actor}" if actor else ""
        if entry.kind in (TimelineKind.CREATED, TimelineKind.FOLDED):
            what = "Enquiry received" if entry.kind is TimelineKind.CREATED else "Enquired again"
            asked = services.get(data.get("serviceId", ""), "")
            source = data.get("source", "")
            extra = ", ".join(p for p in (f"about {asked}" if asked else "", source) if p)
            # The first enquiry's message is the lead's own, shown above the history.
            message = data.get("message", "") if entry.kind is TimelineKind.FOLDED else ""
            said.append((entry, f"{what} ({extra})" if extra else what, message))
        elif entry.kind is TimelineKind.STAGE_CHANGED:
            moved = f"{_stage(data.get('from'))} \u2192 {_stage(data.get('to'))}"
            said.append((entry, f"Stage {moved}", by))
        elif entry.kind is TimelineKind.OWNER_CHANGED:
            said.append(
                (entry, f"Owner {data.get('from') or 'none'} \u2192 {data.get('to') or 'none'}", by)
            )
        else:
            said.append(
                (
                    entry,
                    f"Follow-up {_day_text(data.get('from'))} \u2192 {_day_text(data.get('to'))}",
                    by,
                )
            )
    return said


def _lead_page(
    visit: Visit,
    lead: Lead,
    *,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    alert: str = "",
    status: int = 200,
) -> Response:
    company = visit.signed_in_company
    zone = ZoneInfo(company.timezone)
    with visit.deps.reader() as uow:
        catalog = uow.catalogs.get(company.id)
        keys = {key.id: key.name for key in uow.api_keys.list(company.id)}
    services = {s.id: s.name for s in catalog.services()}
    stored = _values(lead)
    return visit.render(
        "lead.html",
        status=status,
        lead=lead,
        stage_label=STAGES[lead.stage],
        service=services.get(lead.service_id or "", ""),
        received=moment(lead.created_at, zone),
        entries=[
            (moment(e.at, zone), what, more) for e, what, more in timeline(lead, services, keys)
        ],
        stages=STAGES,
        choices=[s for s in STAGES if lead.stage is not LeadStage.WON or s is LeadStage.WON],
        values=values or stored,
        shown=fingerprint(stored),
        shown_field=SHOWN_FIELD,
        errors=errors or {},
        alert=alert,
        owner_max=OWNER_MAX,
    )


def lead_page(visit: Visit) -> Response:
    """``GET /admin/leads/{id}``: the lead and its timeline; ``POST``: move its stage,
    reassign it, set or clear its follow-up date."""
    company = visit.signed_in_company
    lead = get_lead(company.id, visit.request.path_params["lead_id"], uow=visit.deps.reader())
    if visit.request.method != "POST":
        return _lead_page(visit, lead)
    stored = _values(lead)
    if stale(visit.form, stored):
        return _lead_page(visit, lead, alert=STALE.format(what="lead"), status=422)
    # A field the post does not carry stays as stored; so does one it carries unchanged.
    typed = {name: visit.form.get(name, stored[name]).strip() for name in FIELDS}
    errors = FieldErrors()
    stage: LeadStage | None = None
    if typed["stage"] not in {s.value for s in STAGES}:
        errors.add("stage", "Choose a stage from the list.")
    elif typed["stage"] != stored["stage"]:
        stage = LeadStage(typed["stage"])
    follow_up: date | None = None
    if typed["follow_up_on"]:
        follow_up = read_date(typed["follow_up_on"])
        if follow_up is None:
            errors.add(
                "follow_up_on",
                f"Not a date: {quoted(typed['follow_up_on'])}. Choose one, or leave the field"
                " empty for none.",
            )
    owner_changed = typed["owner"] != stored["owner"]
    if owner_changed and (problem := owner_problem(typed["owner"])):
        errors.add("owner", problem)
    if errors:
        # A date field shows no value it cannot read (2026-02-30 would come back empty,
        # and a second Save would clear the date): it shows the date kept.
        unread = "follow_up_on" in errors
        shown = {**typed, "follow_up_on": stored["follow_up_on"]} if unread else typed
        return _lead_page(visit, lead, values=shown, errors=errors, status=422)
    follow_up_changed = typed["follow_up_on"] != stored["follow_up_on"]
    if stage is None and not owner_changed and not follow_up_changed:
        return visit.redirect(f"{LEADS}/{lead.id}", flash="Nothing changed.")
    user = visit.signed_in_user
    deps = visit.deps
    try:
        update_lead(
            UpdateLead(
                company_id=company.id,
                lead_id=lead.id,
                stage=stage,
                owner=typed["owner"] if owner_changed else UNSET,
                follow_up_on=follow_up if follow_up_changed else UNSET,
                actor=user.name or user.email,
            ),
            uow=deps.uow(),
            clock=deps.clock,
        )
    except ValidationFailed as refused:
        for name, text in refused.field_errors.items():
            errors.add(name if name in FIELDS else "stage", text)
        return _lead_page(visit, lead, values=typed, errors=errors, status=422)
    except InvalidTransition as refused:
        errors.add("stage", f"Not moved: {refused.reason}")
        return _lead_page(visit, lead, values=typed, errors=errors, status=409)
    return visit.redirect(f"{LEADS}/{lead.id}", flash="Saved.")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The leads list and one lead."""
    return [
        page(LEADS, deps, leads_page, roles=ADMINS),
        page(f"{LEADS}/{{lead_id}}", deps, lead_page, methods=("GET", "POST"), roles=ADMINS),
    ]
