"""``/waitlist``: the company's waitlist (requests for dates with no opening) to read and
clear; customers join it through ``POST /api/public/{slug}/waitlist`` (``post_waitlist``)."""

from __future__ import annotations

from datetime import date

from attrs import field, frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.routes.webhooks import NewestFirstQuery
from adapters.http.structuring import Email, Id, Note, PersonName, Phone, Zip
from adapters.http.views.waitlist import (
    DeletedWaitlistEntryView,
    WaitlistEntryView,
    waitlist_entry_view,
)
from booking_core.services import waitlist as cases
from booking_core.waitlist import MAX_RANGE_DAYS

READ_SCOPE = "customers:read"
WRITE_SCOPE = "customers:write"
"""Joining (the public route's key holds this alone) and deleting an entry."""


@frozen(kw_only=True)
class WaitlistBody:
    """A date, or a range of dates, wanted for a job with no opening on it."""

    service_id: Id
    zip: Zip
    date_from: date = field(metadata={"description": "the first local date wanted; today or later"})
    date_to: date | None = field(
        default=None,
        metadata={
            "description": f"the last local date wanted (default dateFrom); at most "
            f"{MAX_RANGE_DAYS} days, both ends included"
        },
    )
    frequency_slug: Id = "one_time"
    name: PersonName
    email: Email
    phone: Phone | None = None
    note: Note = ""


def post_waitlist(ctx: Context) -> Reply:
    """Join the waitlist: 201 with the entry; ``waitlist.created`` is recorded with it."""
    body: WaitlistBody = ctx.body
    entry = cases.join_waitlist(
        cases.JoinWaitlist(
            company_id=ctx.company_id,
            service_id=body.service_id,
            zip=body.zip,
            date_from=body.date_from,
            date_to=body.date_to,
            frequency_slug=body.frequency_slug,
            name=body.name,
            email=body.email,
            phone=body.phone,
            note=body.note,
        ),
        uow=ctx.deps.uow(),
        clock=ctx.deps.clock,
        phones=ctx.deps.phones,
    )
    return Reply(waitlist_entry_view(entry, ctx.render()), 201)


def get_waitlist(ctx: Context) -> Reply:
    """The company's waitlist, newest first."""
    page = ctx.page_request("waitlist", {})
    result = cases.list_entries(ctx.company_id, page, uow=ctx.deps.read())
    render = ctx.render()
    return ctx.page_reply(result, lambda entry: waitlist_entry_view(entry, render))


def get_waitlist_entry(ctx: Context) -> Reply:
    """One waitlist entry."""
    entry = cases.get_entry(ctx.company_id, ctx.path_params["id"], uow=ctx.deps.read())
    return Reply(waitlist_entry_view(entry, ctx.render()))


def delete_waitlist_entry(ctx: Context) -> Reply:
    """Remove an entry the company has dealt with."""
    entry_id = ctx.path_params["id"]
    cases.delete_entry(ctx.company_id, entry_id, uow=ctx.deps.uow())
    return Reply(DeletedWaitlistEntryView(id=entry_id, deleted=True))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/waitlist",
        scope=READ_SCOPE,
        handler=get_waitlist,
        response=WaitlistEntryView,
        paginated=True,
        query=NewestFirstQuery,
        tag="waitlist",
        summary="List the waitlist (requests for dates with no opening), newest first",
    ),
    Endpoint(
        method="GET",
        path="/waitlist/{id}",
        scope=READ_SCOPE,
        handler=get_waitlist_entry,
        response=WaitlistEntryView,
        tag="waitlist",
        summary="One waitlist entry",
    ),
    Endpoint(
        method="DELETE",
        path="/waitlist/{id}",
        scope=WRITE_SCOPE,
        handler=delete_waitlist_entry,
        response=DeletedWaitlistEntryView,
        tag="waitlist",
        summary="Delete an entry the company has dealt with",
    ),
]
