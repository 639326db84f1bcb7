"""``/payments``: the ledger, money recorded by hand, and reversals of hand entries."""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from adapters.http.endpoint import Context, Endpoint, QueryParam, Reply
from adapters.http.schemas import PAYMENT_SCHEMA
from adapters.http.structuring import Id, Note
from booking_core.errors import ValidationFailed
from booking_core.ledger import Kind, Method
from booking_core.services import payments as cases


@frozen(kw_only=True)
class PaymentBody:
    """Money received outside the service: a PAYMENT or TIP (positive, with a method of
    CASH, CHECK, BANK_TRANSFER or OTHER), or a REFUND given back by hand (stored negative,
    method OFFLINE) which may name the payment it refunds in ``reverses``."""

    booking_id: Id
    kind: Kind
    amount_cents: int
    method: Method | None = None
    note: Note = ""
    reverses: Id | None = None
    customer_id: Id | None = None


@frozen(kw_only=True)
class ReversalBody:
    """Reverse an entry recorded by hand; card money is refunded, never reversed."""

    id: Id
    note: Note


def _window(ctx: Context) -> tuple[datetime | None, datetime | None]:
    bounds: list[datetime | None] = []
    errors: dict[str, str] = {}
    for name in ("from", "to"):
        raw = ctx.query.get(name)
        value = None
        if raw is not None:
            try:
                value = datetime.fromisoformat(raw)
            except ValueError:
                value = None
            if value is None or value.utcoffset() is None:
                errors[name] = "An ISO 8601 time with a UTC offset."
        bounds.append(value)
    if errors:
        raise ValidationFailed(errors)
    return bounds[0], bounds[1]


def get_payments(ctx: Context) -> Reply:
    """The ledger, filtered by customer, booking, or date window ``[from, to)``."""
    created_from, created_until = _window(ctx)
    filters = {
        "customer_id": ctx.query.get("customerId") or None,
        "booking_id": ctx.query.get("bookingId") or None,
        "created_from": created_from,
        "created_until": created_until,
    }
    page = ctx.page_request("payments", filters)
    with ctx.deps.read() as uow:
        result = uow.payments.list(ctx.company_id, page, **filters)  # type: ignore[arg-type]
    return ctx.page_reply(result, ctx.render().payment)


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
    return Reply(ctx.render().payment(entry), 201)


def patch_payments(ctx: Context) -> Reply:
    """Reverse an entry recorded by hand."""
    body: ReversalBody = ctx.body
    entry = cases.reverse_payment(
        cases.ReversePayment(company_id=ctx.company_id, entry_id=body.id, note=body.note),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(ctx.render().payment(entry), 201)


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/payments",
        scope="payments:read",
        handler=get_payments,
        response=PAYMENT_SCHEMA,
        paginated=True,
        query=(
            QueryParam("customerId", "entries of one customer"),
            QueryParam("bookingId", "entries of one booking"),
            QueryParam("from", "created at or after (ISO 8601 with offset)"),
            QueryParam("to", "created before (ISO 8601 with offset)"),
        ),
        tag="payments",
        summary="The ledger, filtered by customer, booking, or date",
    ),
    Endpoint(
        method="POST",
        path="/payments",
        scope="payments:write",
        handler=post_payment,
        response=PAYMENT_SCHEMA,
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
        response=PAYMENT_SCHEMA,
        body=ReversalBody,
        idempotent=True,
        success_status=201,
        tag="payments",
        summary="Reverse an entry recorded by hand (writes a REVERSAL entry)",
    ),
]
