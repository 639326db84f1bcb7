"""The ``/api/v1`` endpoints, one module per resource."""

from __future__ import annotations

from adapters.http.endpoint import Endpoint


def all_endpoints() -> list[Endpoint]:
    """Every endpoint of ``/api/v1``, in the order of SPEC.md's table."""
    from adapters.http.routes import (
        booking_forms,
        bookings,
        catalog,
        crew,
        customers,
        leads,
        messages,
        payments,
        quotes,
        waitlist,
        webhooks,
    )

    return [
        *catalog.ENDPOINTS,
        *bookings.ENDPOINTS,
        *booking_forms.ENDPOINTS,
        *customers.ENDPOINTS,
        *leads.ENDPOINTS,
        *waitlist.ENDPOINTS,
        *quotes.ENDPOINTS,
        *payments.ENDPOINTS,
        *crew.ENDPOINTS,
        *webhooks.ENDPOINTS,
        *messages.ENDPOINTS,
    ]
