"""Ledger entries as answers (``/payments``): never changed once written, so a view is
the whole entry as recorded, its time in the company's timezone."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import Cents, RenderContext, copied
from booking_core.ledger import Kind, Method, PaymentEntry


@frozen
class PaymentView:
    """One ledger entry; never changed once written."""

    TITLE: ClassVar[str] = "PaymentEntry"

    id: str
    kind: Kind
    method: Method
    offline: bool
    amount_cents: Cents = field(
        metadata=schema(description="US cents; negative for money given back.")
    )
    note: str
    reverses: str | None
    external_ref: str | None
    booking_id: str | None
    customer_id: str | None
    dispute: bool
    created_at: datetime


def payment_view(e: PaymentEntry, ctx: RenderContext) -> PaymentView:
    """The view of a ledger entry."""
    return copied(PaymentView, e, created_at=ctx.time(e.created_at))
