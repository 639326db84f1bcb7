"""``/leads``: capture enquiries (folding into open leads), list, fetch, move."""

from __future__ import annotations

from datetime import date
from typing import ClassVar

import attrs
from attrs import frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.queries import PageQuery
from adapters.http.structuring import Email, Id, Note, PersonName, Phone, ShortText
from adapters.http.views.leads import (
    CapturedLeadView,
    LeadView,
    LeadWithTimelineView,
    captured_lead_view,
    lead_view,
    lead_with_timeline_view,
)
from booking_core.errors import ValidationFailed
from booking_core.leads import LeadStage, owner_name
from booking_core.services import leads as cases


@frozen(kw_only=True)
class LeadBody:
    """An enquiry; one whose email or phone matches an open lead folds into it. It
    needs an email or a phone number (or both)."""

    SCHEMA: ClassVar[dict[str, object]] = {
        "anyOf": [
            {"required": ["email"], "properties": {"email": {"type": "string", "minLength": 1}}},
            {"required": ["phone"], "properties": {"phone": {"type": "string", "minLength": 1}}},
        ]
    }

    name: PersonName
    email: Email | None = None
    phone: Phone | None = None
    message: Note = ""
    source: ShortText = "api"
    service_id: Id | None = None


@frozen(kw_only=True)
class LeadPatch:
    """Move stage, reassign (null or blank to unassign; trimmed), or set a follow-up date
    (null to clear)."""

    stage: LeadStage | None = None
    owner: ShortText | None = attrs.field(default=cases.UNSET)  # type: ignore[assignment]
    follow_up_on: date | None = attrs.field(default=cases.UNSET)  # type: ignore[assignment]


@frozen(kw_only=True)
class LeadListQuery(PageQuery):
    """Enquiries by stage or owner."""

    stage: LeadStage | None = None
    owner: ShortText | None = attrs.field(
        default=None, metadata={"description": "who works it (trimmed; not blank)"}
    )


def get_leads(ctx: Context) -> Reply:
    """List enquiries by stage, owner, or recent change."""
    query: LeadListQuery = ctx.query
    stage, owner = query.stage, query.owner
    if owner is not None and (owner := owner_name(owner)) is None:
        raise ValidationFailed({"owner": "Name an owner; a blank one names no one."})
    page = ctx.page_request("leads", {"stage": stage, "owner": owner})
    result = cases.list_leads(ctx.company_id, page, stage=stage, owner=owner, uow=ctx.deps.read())
    render = ctx.render()
    return ctx.page_reply(result, lambda lead: lead_view(lead, render))


def post_lead(ctx: Context) -> Reply:
    """Capture an enquiry: 201 with a new lead, or 200 with the open lead it folded into."""
    body: LeadBody = ctx.body
    lead, folded = cases.capture_lead(
        cases.CaptureLead(
            company_id=ctx.company_id,
            name=body.name,
            email=body.email,
            phone=body.phone,
            message=body.message,
            source=body.source,
            service_id=body.service_id,
        ),
        uow=ctx.deps.uow(),
        clock=ctx.deps.clock,
        phones=ctx.deps.phones,
    )
    return Reply(captured_lead_view(lead, ctx.render(), folded=folded), 200 if folded else 201)


def get_lead(ctx: Context) -> Reply:
    """One lead with its full timeline."""
    lead = cases.get_lead(ctx.company_id, ctx.path_params["id"], uow=ctx.deps.read())
    return Reply(lead_with_timeline_view(lead, ctx.render()))


def patch_lead(ctx: Context) -> Reply:
    """Change stage, owner or follow-up date; each change lands on the timeline."""
    body: LeadPatch = ctx.body
    lead = cases.update_lead(
        cases.UpdateLead(
            company_id=ctx.company_id,
            lead_id=ctx.path_params["id"],
            stage=body.stage,
            owner=body.owner,
            follow_up_on=body.follow_up_on,
            actor=f"key:{ctx.key.id}",
        ),
        uow=ctx.deps.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(lead_with_timeline_view(lead, ctx.render()))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/leads",
        scope="leads:read",
        handler=get_leads,
        response=LeadView,
        paginated=True,
        query=LeadListQuery,
        tag="leads",
        summary="List enquiries by stage, owner, or recent change",
    ),
    Endpoint(
        method="POST",
        path="/leads",
        scope="leads:write",
        handler=post_lead,
        response=CapturedLeadView,
        body=LeadBody,
        success_status=201,
        also={200: "the enquiry folded into an open lead with matching contact"},
        tag="leads",
        summary="Capture an enquiry; folds into an open lead with matching contact (200)",
    ),
    Endpoint(
        method="GET",
        path="/leads/{id}",
        scope="leads:read",
        handler=get_lead,
        response=LeadWithTimelineView,
        tag="leads",
        summary="One lead with its full timeline",
    ),
    Endpoint(
        method="PATCH",
        path="/leads/{id}",
        scope="leads:write",
        handler=patch_lead,
        response=LeadWithTimelineView,
        body=LeadPatch,
        tag="leads",
        summary="Move stage, reassign, or set a follow-up date",
    ),
]
