"""The body of a webhook delivery: an event's envelope, its ``data`` the subject exactly as
the API renders that resource.

``data`` is built by the same view function and written by the same encoder
(``adapters.http.views.to_json``) as the answer of the resource's own ``GET``, with the
company's ``RenderContext`` (timezone, base URL, slug, custom domain), so a receiver can
parse a delivery with the models it already has for the API:

| Subject | View (the answer of) |
|---|---|
| booking | ``booking_with_activity_view`` (``GET /bookings/{id}``) |
| customer | ``customer_view``, its statistics read at dispatch (``POST /customers``) |
| customer merge | ``customer_merge_view``: ``survivorId`` and ``mergedId`` (``customer.merged``) |
| lead | ``lead_with_timeline_view`` (``GET /leads/{id}``) |
| quote | ``quote_with_follow_ups_view``, as of the event (``GET /quotes/{id}``) |
| payment | ``payment_view`` (``GET /payments``) |
| waitlist | ``waitlist_entry_view`` (``GET /waitlist/{id}``) |
| none | ``{}`` (``webhook.test`` has none, but is never dispatched: the test route
writes its delivery itself) |

The subject is the record as the change left it (the event's snapshot), not as it is when
the worker renders it; only a customer's lifetime statistics are read then. A booking's
ledger totals (``paidCents``, ``tipsCents``) count the entries recorded up to the event.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from adapters.http.views import RenderContext, to_json
from adapters.http.views.bookings import booking_with_activity_view
from adapters.http.views.customers import customer_merge_view, customer_view
from adapters.http.views.leads import lead_with_timeline_view
from adapters.http.views.payments import payment_view
from adapters.http.views.quotes import quote_with_follow_ups_view
from adapters.http.views.waitlist import waitlist_entry_view
from booking_core.bookings import Booking
from booking_core.customers import Customer, CustomerMerge
from booking_core.events import Event
from booking_core.leads import Lead
from booking_core.ledger import PaymentEntry
from booking_core.ports import UnitOfWork
from booking_core.quotes import Quote
from booking_core.services.customers import customer_standing
from booking_core.services.payments import booking_totals
from booking_core.waitlist import WaitlistEntry
from booking_core.webhooks import envelope


class EventRenderer:
    """``Render`` of ``booking_core.services.webhook_delivery``: an event's delivery body
    for a service whose public address is ``base_url`` (``BOOKING_BASE_URL``)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def __call__(self, event: Event, uow: UnitOfWork) -> bytes:
        """The envelope of ``event``, read inside the open unit of work ``uow``."""
        company = uow.companies.get(event.company_id)
        ctx = RenderContext(
            zone=ZoneInfo(company.timezone),
            base_url=self.base_url,
            slug=company.slug,
            custom_domain=company.custom_domain,
        )
        return envelope(
            event.id, event.type.value, ctx.time(event.created_at), data(event, ctx, uow)
        )


def data(event: Event, ctx: RenderContext, uow: UnitOfWork) -> dict[str, object]:
    """The ``data`` of ``event``'s envelope: its subject as the API renders it."""
    subject = event.subject
    if isinstance(subject, Booking):
        totals = booking_totals(uow, subject.company_id, [subject.id], until=event.created_at)
        return to_json(booking_with_activity_view(subject, ctx, totals[subject.id]))
    if isinstance(subject, Customer):
        lifetime, churn = customer_standing(subject, uow=uow, at=event.created_at)
        return to_json(customer_view(subject, lifetime, churn, ctx))
    if isinstance(subject, CustomerMerge):
        return to_json(customer_merge_view(subject))
    if isinstance(subject, Lead):
        return to_json(lead_with_timeline_view(subject, ctx))
    if isinstance(subject, Quote):
        return to_json(quote_with_follow_ups_view(subject, event.created_at, ctx))
    if isinstance(subject, PaymentEntry):
        return to_json(payment_view(subject, ctx))
    if isinstance(subject, WaitlistEntry):
        return to_json(waitlist_entry_view(subject, ctx))
    return {}
