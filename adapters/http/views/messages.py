"""Messages (emails to customers and staff) as answers: what was sent, what waits for a
retry and why, what failed. The bodies are not shown."""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import RenderContext
from booking_core.notifications import Message, MessageKind, MessageStatus


@frozen
class MessageView:
    """One email, queued with its cause and sent by the worker."""

    id: str = field(metadata=schema(description="msg_...; the email's Message-ID names it"))
    kind: MessageKind
    to: str
    subject: str
    subject_id: str | None = field(
        metadata=schema(description="The booking, quote, lead or customer it is about.")
    )
    status: MessageStatus = field(
        metadata=schema(
            description="pending (waiting for its next try), sent (the mail server took it),"
            " failed (refused for good, or every retry failed)"
        )
    )
    attempts: int = field(metadata=schema(description="Tries made so far."))
    next_attempt_at: datetime | None = field(
        metadata=schema(description="When a pending message is tried next; null otherwise.")
    )
    last_error: str | None = field(
        metadata=schema(description="Why the last try failed; null after a success.")
    )
    sent_at: datetime | None
    created_at: datetime


def message_view(message: Message, ctx: RenderContext) -> MessageView:
    """The view of a message."""
    pending = message.status is MessageStatus.PENDING
    return MessageView(
        id=message.id,
        kind=message.kind,
        to=message.to,
        subject=message.subject,
        subject_id=message.subject_id,
        status=message.status,
        attempts=message.attempts,
        next_attempt_at=ctx.time(message.next_attempt_at) if pending else None,
        last_error=message.last_error,
        sent_at=ctx.time(message.sent_at),
        created_at=ctx.time(message.created_at),
    )
