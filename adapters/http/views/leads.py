"""Leads as answers: a lead in a list, alone with its timeline, and as captured by
``POST /leads`` (new, or folded into an open lead)."""

from __future__ import annotations

from datetime import date, datetime

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import RenderContext, extend
from booking_core.leads import Lead, LeadStage, TimelineEntry, TimelineKind


@frozen
class LeadView:
    """An enquiry being worked."""

    id: str
    name: str
    email: str | None
    phone: str | None = field(metadata=schema(description="E.164."))
    stage: LeadStage
    open: bool
    owner: str | None
    follow_up_on: date | None
    source: str
    message: str
    service_id: str | None
    created_at: datetime
    updated_at: datetime


@frozen
class TimelineEntryView:
    """One event in a lead's history."""

    at: datetime
    kind: TimelineKind
    details: dict[str, str]


@frozen
class LeadWithTimelineView(LeadView):
    """A lead with its full timeline, oldest event first."""

    timeline: tuple[TimelineEntryView, ...]


@frozen
class CapturedLeadView(LeadWithTimelineView):
    """The lead an enquiry started (201) or folded into (200)."""

    folded: bool = field(metadata=schema(description="True when folded into an open lead."))


def lead_view(lead: Lead, ctx: RenderContext) -> LeadView:
    """The view of a lead, as lists show it."""
    return LeadView(
        id=lead.id,
        name=lead.name,
        email=lead.email,
        phone=lead.phone_e164,
        stage=lead.stage,
        open=lead.stage.open,
        owner=lead.owner,
        follow_up_on=lead.follow_up_on,
        source=lead.source,
        message=lead.message,
        service_id=lead.service_id,
        created_at=ctx.time(lead.created_at),
        updated_at=ctx.time(lead.updated_at),
    )


def timeline_entry_view(entry: TimelineEntry, ctx: RenderContext) -> TimelineEntryView:
    """The view of one event of a lead's timeline."""
    return TimelineEntryView(at=ctx.time(entry.at), kind=entry.kind, details=entry.details)


def lead_with_timeline_view(lead: Lead, ctx: RenderContext) -> LeadWithTimelineView:
    """The view of a lead fetched alone: with its full timeline."""
    timeline = tuple(timeline_entry_view(e, ctx) for e in lead.timeline)
    return extend(lead_view(lead, ctx), LeadWithTimelineView, timeline=timeline)


def captured_lead_view(lead: Lead, ctx: RenderContext, *, folded: bool) -> CapturedLeadView:
    """``POST /leads``: the lead with its timeline, and whether the enquiry folded."""
    return extend(lead_with_timeline_view(lead, ctx), CapturedLeadView, folded=folded)
