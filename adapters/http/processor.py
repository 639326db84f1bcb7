"""``POST /api/processor/stripe``: the card processor's events, outside ``/api/v1``.

No API key: Stripe signs each delivery (``Stripe-Signature``) with the endpoint's secret,
and the reader given here verifies it. A body over ``MAX_EVENT_BYTES`` is 413 before it is
read whole; a missing or wrong signature, or a signed body that is no event, is 400 in
the error shape of ``/api/v1``, and nothing is written. Every verified event is answered
200, saying what became of it: ``ingested``, ``duplicate`` (delivered before) or
``ignored`` (with the reason), so that Stripe retries only what a retry could mend (a
5xx, or a 409 lost race). With no reader (no signing secret configured) the route
answers 503, and Stripe keeps the events until it is set up.

One log line per event (``processor_event``): id, type, account, company, outcome and
reason; never the body or the signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from adapters.http.deps import HttpDeps
from adapters.http.endpoint import json_response
from adapters.http.errors import ApiError, from_domain
from adapters.http.reading import read_limited
from booking_core.errors import DomainError
from booking_core.services.processor import (
    IgnoredNotice,
    IngestProcessorEvent,
    IngestResult,
    Outcome,
    ingest,
)

STRIPE_PATH = "/api/processor/stripe"
MAX_EVENT_BYTES = 256 * 1024
"""The largest event body read (Stripe's events are a few kilobytes)."""

EventReader = Callable[[bytes, str | None], IngestProcessorEvent]
"""Verifies a body against its signature header and reads the event; raises
``ValidationFailed`` when it does not verify."""

log = structlog.get_logger("booking.processor")


def _answer(result: IngestResult) -> dict[str, Any]:
    body: dict[str, Any] = {"outcome": result.outcome.value}
    if result.reason:
        body["reason"] = result.reason
    if result.entry is not None:
        body["paymentId"] = result.entry.id
    return body


def processor_routes(stripe: EventReader | None) -> Sequence[BaseRoute]:
    """The processor's webhook route, reading Stripe events with ``stripe`` (None: not set
    up, 503)."""

    async def stripe_events(request: Request) -> Response:
        request_id: str = request.state.request_id
        if stripe is None:
            error = ApiError(503, "unavailable", "Stripe events are not set up on this server.")
            return json_response(503, error.body(request_id), {})
        try:
            try:
                payload = await read_limited(request, MAX_EVENT_BYTES)
            except ApiError as error:
                if error.status != 413:
                    raise
                raise ApiError(
                    413, "payload_too_large", f"The body is over {MAX_EVENT_BYTES} bytes."
                ) from None
            signature = request.headers.get("stripe-signature")
            deps: HttpDeps = request.app.state.deps
            event, result = await run_in_threadpool(_ingest, stripe, payload, signature, deps)
        except ApiError as error:
            return json_response(error.status, error.body(request_id), error.headers)
        except DomainError as error:
            refused = from_domain(error)
            log.warning(
                "processor_event_refused",
                processor="stripe",
                request_id=request_id,
                code=refused.code,
                status=refused.status,
            )
            return json_response(refused.status, refused.body(request_id), {})
        meant_to_land = not isinstance(event.notice, IgnoredNotice)
        report = log.warning if result.outcome is Outcome.IGNORED and meant_to_land else log.info
        report(
            "processor_event",
            processor="stripe",
            request_id=request_id,
            event_id=event.event_id,
            event_type=event.event_type,
            account_id=event.account_id,
            company_id=result.company_id,
            outcome=result.outcome.value,
            reason=result.reason or None,
            payment_id=result.entry.id if result.entry is not None else None,
        )
        return json_response(200, _answer(result), {})

    return [Route(STRIPE_PATH, stripe_events, methods=["POST"])]


def _ingest(
    read: EventReader, payload: bytes, signature: str | None, deps: HttpDeps
) -> tuple[IngestProcessorEvent, IngestResult]:
    event = read(payload, signature)
    return event, ingest(event, uow=deps.uow(), clock=deps.clock)
