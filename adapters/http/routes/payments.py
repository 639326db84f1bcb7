"""``/payments``: the ledger, money recorded by hand, and reversals of hand entries."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from attrs import field, frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.jsonschema import schema
from adapters.http.queries import PageQuery
from adapters.http.structuring import HandCents, Id, Matches, MaxLength, Note
from adapters.http.views.payments import PaymentView, payment_view
from booking_core.ledger import HAND_KINDS, HAND_METHODS, Kind, Method
from booking_core.services import payments as cases
from booking_core.services.scheduling import booking_id_of

HAND_KIND_NAMES = [kind.value for kind in Kind if kind in HAND_KINDS]
HAND_METHOD_NAMES = [
    method.value for method in Method if method in HAND_METHODS or method is Method.OFFLINE
]
"""What ``POST /payments`` accepts, as its schema states: the core refuses every other kind
and method with a reason (card money is the processor's; a refund's method is OFFLINE)."""


@frozen(kw_only=True)
class PaymentBody:
    """Money received outside the service: a PAYMENT or TIP (positive, with a method of
    CASH, CHECK, BANK_TRANSFER or OTHER), or a REFUND given back by hand (stored negative,
    method OFFLINE) which may name the payment it refunds in ``reverses``."""

    booking_id: Id = field(metadata=schema(description="the booking's id or its human code"))
    kind: Kind = field(metadata=schema(enum=HAND_KIND_NAMES))
    amount_cents: HandCents = field(
        metadata=schema(description="positive; a REFUND is given positive and stored negative")
    )
    method: Method | None = field(
        default=None,
        metadata=schema(
            enum=[*HAND_METHOD_NAMES, None],
            description="CASH, CHECK, BANK_TRANSFER or OTHER for a PAYMENT or TIP; OFFLINE "
            "(or left out) for a REFUND",
        ),
    )
    note: Note = ""
    reverses: Id | None = None
    customer_id: Id | None = field(
        default=None,
        metadata={
            "description": "the booking's customer (or a record merged with it); the entry is"
            " filed under the booking's customer, and another customer is refused"
        },
    )


ReversalNote = Annotated[
    str,
    Matches(re.compile(r"[\s\S]*\S[\s\S]*\Z"), "Say why the entry is reversed."),
    MaxLength(2_000),
]
"""Why the entry is reversed: not blank."""


@frozen(kw_only=True)
class ReversalBody:
    """Reverse an entry recorded by hand; card money is refunded, never reversed."""

    id: Id
    note: ReversalNote


@frozen(kw_only=True)
class PaymentListQuery(PageQuery):
    """Ledger entries by customer, booking, or creation window ``[from, to)``."""

    customer_id: Id | None = field(default=None, metadata={"description": "one customer's"})
    booking_id: Id | None = field(
        default=None, metadata={"description": "one booking's (its id or its human code)"}
    )
    from_: datetime | None = field(
        default=None, metadata={"description": "created at or after (ISO 8601 with offset)"}
    )
    to: datetime | None = field(
        default=None, metadata={"description": "created before (ISO 8601 with offset)"}
    )


def get_payments(ctx: Context) -> Reply:
    """The ledger, filtered by customer, booking, or date window ``[from, to)``."""
    query: PaymentListQuery = ctx.query
    with ctx.deps.read() as uow:
        booking_id = query.booking_id
        if booking_id is not None:  # a human code stands for its booking, as in a fetch
            booking_id = booking_id_of(uow, ctx.company_id, booking_id)
        filters = {
            "customer_id": query.customer_id,
            "booking_id": booking_id,
            "created_from": query.from_,
            "created_until": query.to,
        }
        page = ctx.page_request("payments", filters)
        result = uow.payments.list(ctx.company_id, page, **filters)  # type: ignore[arg-type]
    render = ctx.render()
    return ctx.page_reply(result, lambda entry: payment_view(entry, render))


def post_payment(ctx: Context) -> Reply:
    """Record money received (or given back) outside the service."""
    body: PaymentBody = ctx.body
    entry = cases.record_payment(
        cases.RecordPayment(
            company_id=ctx.company_id,
            booking_id=body.booking_id,
            kind=body.kind,
            amount_cents=body.amount_cents,
            method=body.method,
            note=body.note,
            reverses=body.reverses,
            customer_id=body.customer_id,
        ),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(payment_view(entry, ctx.render()), 201)


def patch_payments(ctx: Context) -> Reply:
    """Reverse an entry recorded by hand."""
    body: ReversalBody = ctx.body
    entry = cases.reverse_payment(
        cases.ReversePayment(company_id=ctx.company_id, entry_id=body.id, note=body.note),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(payment_view(entry, ctx.render()), 201)


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/payments",
        scope="payments:read",
        handler=get_payments,
        response=PaymentView,
        paginated=True,
        query=PaymentListQuery,
        tag="payments",
        summary="The ledger, filtered by customer, booking, or date",
    ),
    Endpoint(
        method="POST",
        path="/payments",
        scope="payments:write",
        handler=post_payment,
        response=PaymentView,
        body=PaymentBody,
        idempotent=True,
        success_status=201,
        tag="payments",
        summary="Record money received outside the service",
    ),
    Endpoint(
        method="PATCH",
        path="/payments",
        scope="payments:write",
        handler=patch_payments,
        response=PaymentView,
        body=ReversalBody,
        idempotent=True,
        success_status=201,
        tag="payments",
        summary="Reverse an entry recorded by hand (writes a REVERSAL entry)",
    ),
]
