"""``/messages``: the emails the service queued for the company's customers and staff,
with their delivery state (docs/notifications.md)."""

from __future__ import annotations

import attrs
from attrs import frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.routes.webhooks import NewestFirstQuery
from adapters.http.structuring import Id
from adapters.http.views.messages import MessageView, message_view
from booking_core.services import notifications as cases

READ_SCOPE = "customers:read"
"""Messages carry customers' addresses, as customers do."""


@frozen(kw_only=True)
class MessageListQuery(NewestFirstQuery):
    """Messages, optionally only those about one booking, quote, lead or customer."""

    subject_id: Id | None = attrs.field(
        default=None,
        metadata={"description": "only messages about this booking, quote, lead or customer"},
    )


def get_messages(ctx: Context) -> Reply:
    """The company's messages, newest first."""
    query: MessageListQuery = ctx.query
    page = ctx.page_request("messages", {"subjectId": query.subject_id})
    result = cases.list_messages(
        ctx.company_id, page, subject_id=query.subject_id, uow=ctx.deps.read()
    )
    render = ctx.render()
    return ctx.page_reply(result, lambda message: message_view(message, render))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/messages",
        scope=READ_SCOPE,
        handler=get_messages,
        response=MessageView,
        paginated=True,
        query=MessageListQuery,
        tag="messages",
        summary="List the emails queued and sent (status, attempts, last error), newest first",
    ),
]
