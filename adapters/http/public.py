"""``/api/public/{slug}/...``: what a company's customers may ask with no key or cookie:
``catalog``, ``quote``, ``slots``, ``days``, ``booking-forms/{id}``, ``book`` and
``waitlist``.

Each route is an ``Endpoint`` of the ``/api/v1`` kind whose handler *is* its ``/api/v1``
twin's (``GET /services``, ``POST /quote``, ``GET /availability``, ``POST /bookings``), run
through the same pipeline (``endpoint.process_request``: query and body structuring,
idempotency, the handler, the mapping of refusals) for the company the slug names, so a
public price or slot is the server's own and a public booking an ordinary one. The caller
is a key made for the request, never stored, whose only scope is its endpoint's: no public
request can pass any other ``/api/v1`` scope check. What differs is at the edge:

- No key or cookie is read. Requests are counted per client address and company slug
  (``PUBLIC_RATE_LIMIT`` a minute, in the rate limiter of ``/api/v1``: Redis when
  configured), with the same ``x-ratelimit-*`` headers; over it is 429 with
  ``retry-after``.
- A body over ``MAX_PUBLIC_BODY_BYTES`` is 413 before any JSON is parsed, counted while
  it streams (chunked or not).
- A refusal is ``{"error": "<message>"}``; a field over its SPEC.md ceiling is 422 whose
  message names the field and the limit; other invalid input is 400.
- ``booking-forms/{id}`` answers an active booking form of the company
  (``GET /api/v1/booking-forms/{id}``'s form resolved against the catalog: its services
  with their parameters and offered extras, its frequencies, its questions); an inactive
  or unknown one is 404. A ``book`` body naming its ``formId`` is checked against it.
- ``book`` takes the ``POST /api/v1/bookings`` body less ``crewIds`` (the best-ranked free
  crew is chosen; ``crewIds`` is an unknown field, 400); its ``Idempotency-Key`` is
  optional: given, it is handled as on ``/api/v1``; absent, the request just books.
- ``waitlist`` asks for a date or range with no opening (``waitlist.post_waitlist``, whose
  key holds ``customers:write`` alone); the company lists it under ``/api/v1/waitlist``,
  and ``waitlist.created`` is recorded with it.
- CORS (``PublicCors``): every answer under ``/api/public`` carries
  ``Access-Control-Allow-Origin: *``, whatever its status, and ``OPTIONS`` on a public
  route is a 204 preflight. ``Access-Control-Allow-Credentials`` is never sent, so a
  browser refuses any credentialed request (cookies, HTTP auth): none is needed.
  Starlette's ``CORSMiddleware`` does not fit: its preflight answers 200, and it would
  apply to ``/api/v1`` too, which sends no CORS headers.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Annotated, Any

import attrs
from attrs import field, frozen
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders, State
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.http import idempotency
from adapters.http.deps import HttpDeps
from adapters.http.endpoint import (
    Context,
    Endpoint,
    Incoming,
    Items,
    Reply,
    json_response,
    process_request,
    rate_limited,
    refusal_answer,
)
from adapters.http.errors import ApiError
from adapters.http.ratelimit import Verdict
from adapters.http.reading import json_body, read_limited
from adapters.http.routes.booking_forms import get_public_booking_form
from adapters.http.routes.bookings import (
    AvailabilityQuery,
    BookingBody,
    get_availability,
    post_booking,
    selected_items,
)
from adapters.http.routes.catalog import PriceRequest, get_services, post_quote
from adapters.http.routes.waitlist import WaitlistBody, post_waitlist
from adapters.http.structuring import (
    YEARS_TEXT,
    Between,
    Days,
    Id,
    ItemSpec,
    Zip,
)
from adapters.http.views.booking_forms import PublicBookingFormView
from adapters.http.views.bookings import AvailabilityView, CreatedBookingView
from adapters.http.views.catalog import CatalogView
from adapters.http.views.prices import PlanPriceView
from adapters.http.views.waitlist import WaitlistEntryView
from booking_core.auth import ApiKey, KeyStatus
from booking_core.booking_orders import LAST_JOB_DATE
from booking_core.companies import SLUG_PATTERN
from booking_core.errors import ValidationFailed
from booking_core.services import scheduling

PUBLIC_PREFIX = "/api/public"
MAX_PUBLIC_BODY_BYTES = 64 * 1024
"""The largest public body read (SPEC.md section 8: 64 KB); counted while it streams."""
PUBLIC_RATE_LIMIT = 120
"""Requests a minute per client address and company."""
MAX_DAYS_LISTED = 62
"""The most dates one ``days`` request covers (two months of a calendar)."""
ALLOW_HEADERS = "content-type, idempotency-key, x-request-id"
EXPOSE_HEADERS = (
    "retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-request-id, "
    "idempotent-replayed"
)
"""The answer's headers a page on another origin may read (beside the CORS-safelisted)."""
PREFLIGHT_MAX_AGE = "600"
"""Seconds a browser may keep a preflight's answer."""
PUBLIC_SCOPE = "catalog:read"
"""The scope of the public reads (catalog, price, slots, days)."""
BOOK_SCOPE = "bookings:write"
"""The scope of ``book``: a public request's key holds its endpoint's scope alone."""
WAITLIST_SCOPE = "customers:write"
"""The scope of ``waitlist``: it stores a person's contact details, as customers do."""

_CEILING = re.compile(r"^At most (\d+) (characters|items)\.$")
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@frozen(kw_only=True)
class DaysQuery:
    """Which of ``count`` dates from ``from`` have any open start for the job."""

    service_id: Id
    zip: Zip
    from_: date | None = field(
        default=None,
        metadata={"description": "the first local date, YYYY-MM-DD; today in the company's"},
    )
    count: Annotated[int, Between(1, MAX_DAYS_LISTED)] = field(
        default=14, metadata={"description": f"how many dates, 1 to {MAX_DAYS_LISTED}"}
    )
    frequency_slug: Id = "one_time"
    parameters: tuple[ItemSpec, ...] = field(
        default=(), metadata={"description": "id:quantity,... (job length)"}
    )
    extras: tuple[ItemSpec, ...] = field(
        default=(), metadata={"description": "id:quantity,... (job length)"}
    )
    days: Days = field(default=1, metadata={"description": "a multi-day job's length"})


@frozen
class DayView:
    """One local date and whether any start is open on it."""

    date: date
    available: bool


def get_days(ctx: Context) -> Reply:
    """For each date of the range, whether ``GET slots`` would list any start."""
    query: DaysQuery = ctx.query
    first = query.from_ or ctx.now().astimezone(ctx.render().zone).date()
    room = (LAST_JOB_DATE - first).days + 1  # dates are read up to 2199 only
    if query.count > room:
        raise ValidationFailed({"count": f"At most {room} from {first}: {YEARS_TEXT}"})
    days = scheduling.open_days(
        scheduling.AvailabilityRequest(
            company_id=ctx.company_id,
            service_id=query.service_id,
            local_date=first,
            zip_code=query.zip,
            frequency_slug=query.frequency_slug,
            parameters=selected_items(query.parameters),
            extras=selected_items(query.extras),
            days=query.days,
        ),
        query.count,
        uow=ctx.deps.read(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
    )
    return Reply(Items(tuple(DayView(day, open_) for day, open_ in days)))


def _without(cls: type, *names: str, name: str, doc: str) -> type:
    """``cls`` less the fields ``names``: the same types, defaults and descriptions, so
    the derived body cannot drift from its ``/api/v1`` twin; a field left out is an
    unknown field (400 naming it)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    kept = {
        f.name: attrs.field(type=hints[f.name], default=f.default, metadata=f.metadata)
        for f in attrs.fields(cls)
        if f.name not in names
    }
    derived = attrs.make_class(name, kept, frozen=True, kw_only=True)
    derived.__doc__ = doc
    derived.__module__ = __name__
    return derived


PublicBookingBody = _without(
    BookingBody,
    "crew_ids",
    name="PublicBookingBody",
    doc="A booking, as ``POST /api/v1/bookings`` takes it less ``crewIds``: the "
    "best-ranked free crew is chosen.",
)


def post_public_booking(ctx: Context) -> Reply:
    """``POST /api/v1/bookings`` for a public body (no crew named)."""
    body = BookingBody(**attrs.asdict(ctx.body, recurse=False))
    return post_booking(attrs.evolve(ctx, body=body))


PUBLIC_ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/{slug}/catalog",
        scope=PUBLIC_SCOPE,
        handler=get_services,
        response=CatalogView,
        tag="public",
        summary="The company's catalog, as GET /api/v1/services answers it",
    ),
    Endpoint(
        method="POST",
        path="/{slug}/quote",
        scope=PUBLIC_SCOPE,
        handler=post_quote,
        response=PlanPriceView,
        body=PriceRequest,
        tag="public",
        summary="Price a selection, as POST /api/v1/quote does",
    ),
    Endpoint(
        method="GET",
        path="/{slug}/slots",
        scope=PUBLIC_SCOPE,
        handler=get_availability,
        response=AvailabilityView,
        query=AvailabilityQuery,
        tag="public",
        summary="Open start times, as GET /api/v1/availability lists them",
    ),
    Endpoint(
        method="GET",
        path="/{slug}/days",
        scope=PUBLIC_SCOPE,
        handler=get_days,
        response=DayView,
        listed=True,
        query=DaysQuery,
        tag="public",
        summary="Which dates have any open start (for a calendar)",
    ),
    Endpoint(
        method="GET",
        path="/{slug}/booking-forms/{id}",
        scope=PUBLIC_SCOPE,
        handler=get_public_booking_form,
        response=PublicBookingFormView,
        tag="public",
        summary="An active booking form: its services, frequencies, extras and questions",
    ),
    Endpoint(
        method="POST",
        path="/{slug}/book",
        scope=BOOK_SCOPE,
        handler=post_public_booking,
        response=CreatedBookingView,
        body=PublicBookingBody,
        idempotent=True,
        success_status=201,
        tag="public",
        summary="Book, as POST /api/v1/bookings does, with the best-ranked free crew",
    ),
    Endpoint(
        method="POST",
        path="/{slug}/waitlist",
        scope=WAITLIST_SCOPE,
        handler=post_waitlist,
        response=WaitlistEntryView,
        body=WaitlistBody,
        success_status=201,
        tag="public",
        summary="Ask for a date or range with no opening; listed under /api/v1/waitlist",
    ),
]


def public_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """A public refusal: ``{"error": "<message>"}``."""
    return json_response(status, {"error": message}, headers or {})


def _public_key(company_id: str, scope: str) -> ApiKey:
    """The caller of a public request, as the pipeline sees it: the company's public,
    allowed the one endpoint's ``scope`` (no secret, never stored)."""
    return ApiKey(
        id=f"public:{company_id}",
        company_id=company_id,
        name="public",
        scopes=frozenset({scope}),
        rate_limit_per_minute=PUBLIC_RATE_LIMIT,
        lookup_prefix="",
        secret_hash="",
        status=KeyStatus.ACTIVE,
        created_at=_EPOCH,
        updated_at=_EPOCH,
    )


def _idempotency_space(company_id: str) -> str:
    """Where public callers' ``Idempotency-Key`` names live: anyone may send one, so they
    are kept apart from the company's own ``/api/v1`` keys, which a caller without a key
    can then neither claim nor probe."""
    return f"public:{company_id}"


def _company_id(deps: HttpDeps, slug: str) -> str | None:
    if not 1 <= len(slug) <= 63 or not SLUG_PATTERN.match(slug):
        return None
    with deps.read() as uow:
        company = uow.companies.by_slug(slug)
    return company.id if company is not None else None


def public_message(status: int, body: bytes) -> tuple[int, str]:
    """The status and message of a public refusal made from an ``/api/v1`` one: a field
    over its ceiling is 422 naming the field and the limit (each such field, then any
    other problem); other field problems are 400 naming each field."""
    error: dict[str, Any] = json.loads(body)["error"]
    message: str = error["message"]
    problems: dict[str, str] = error.get("fieldErrors") or {}
    over, others = [], []
    for name, problem in problems.items():
        ceiling = _CEILING.match(problem)
        if ceiling:
            limit, unit = ceiling.groups()
            over.append(f"{name} is over its limit of {limit} {unit}.")
        elif problem.rstrip(".").lower() not in message.lower():  # not said twice
            others.append(f"{name}: {problem}")
    if over:
        return 422, " ".join(over + others)
    if others:
        message = f"{message} " + " ".join(others)
    return status, message


def _run(
    deps: HttpDeps,
    endpoint: Endpoint,
    incoming: Incoming,
    slug: str,
    address: str,
    state: State | None = None,
) -> Response:
    """The slug's company, then the ``/api/v1`` pipeline for it (in a worker thread);
    the company is noted on the request's ``state`` for its log line."""
    assert incoming.admitted is not None
    headers = incoming.admitted[1].headers()
    try:
        company_id = _company_id(deps, slug)
    except Exception as error:  # the database failed: 500, in the public shape
        fault = refusal_answer(error, incoming.request_id, endpoint.path)
        return public_error(*public_message(fault.status, fault.body), headers)
    if company_id is None:
        # Each slug has its own count, so slugs that name no company are counted once
        # more, together per address: guessing slugs is limited like any other use.
        verdict = deps.rate_limiter.hit(f"public-unknown:{address}", PUBLIC_RATE_LIMIT)
        if not verdict.allowed:
            return public_error(429, rate_limited(verdict).message, verdict.headers())
        return public_error(404, "No such company.", verdict.headers())
    if state is not None:
        state.company_id = company_id
    admitted = (_public_key(company_id, endpoint.scope), incoming.admitted[1])
    if endpoint.idempotent and idempotency.HEADER not in incoming.headers:
        endpoint = attrs.evolve(endpoint, idempotent=False)  # optional here: just book
    public = attrs.evolve(
        incoming, admitted=admitted, idempotency_space=_idempotency_space(company_id)
    )
    outcome = process_request(endpoint, deps, public)
    if outcome.status < 400:
        return Response(
            outcome.body,
            outcome.status,
            headers=dict(outcome.headers),
            media_type="application/json",
        )
    status, message = public_message(outcome.status, outcome.body)
    return public_error(status, message, dict(outcome.headers))


def call_public(
    deps: HttpDeps,
    company_id: str,
    slug: str,
    name: str,
    *,
    query: Sequence[tuple[str, str]] = (),
    body: object = None,
    idempotency_key: str | None = None,
    request_id: str = "",
    path_params: Mapping[str, str] | None = None,
) -> tuple[int, Any]:
    """A public endpoint's answer, asked in process (the booking page): ``name`` is the
    rest of its path after the slug (``catalog``, ``quote``, ``slots``, ``days``,
    ``book``, ``booking-forms/{id}`` with ``path_params={"id": ...}``); the answer is
    its status and decoded JSON in the ``/api/v1`` shape (a refusal is
    ``{"error": {"code", "message", "fieldErrors"}}``). The same pipeline as over HTTP:
    structuring, the ceilings, idempotency, the handler; no rate limit (the page is
    not a client of its own)."""
    endpoint = next(e for e in PUBLIC_ENDPOINTS if e.path == f"/{{slug}}/{name}")
    params = dict(path_params or {})
    for key, value in params.items():
        name = name.replace(f"{{{key}}}", value)
    headers = {"content-type": "application/json"}
    if idempotency_key is not None:
        headers[idempotency.HEADER] = idempotency_key
    elif endpoint.idempotent:
        endpoint = attrs.evolve(endpoint, idempotent=False)
    verdict = Verdict(
        allowed=True, limit=PUBLIC_RATE_LIMIT, remaining=PUBLIC_RATE_LIMIT, reset_seconds=60
    )
    incoming = Incoming(
        request_id=request_id,
        secret=None,
        method=endpoint.method,
        path=f"{PUBLIC_PREFIX}/{slug}/{name}",
        headers=headers,
        path_params={"slug": slug, **params},
        query=tuple(query),
        raw_body=b"" if body is None else json.dumps(body).encode(),
        admitted=(_public_key(company_id, endpoint.scope), verdict),
        idempotency_space=_idempotency_space(company_id),
    )
    outcome = process_request(endpoint, deps, incoming)
    return outcome.status, json.loads(outcome.body)


def stored_public_answer(deps: HttpDeps, company_id: str, key: str) -> tuple[int, Any] | None:
    """The answer a public write sent with ``Idempotency-Key: key`` was given and stored
    (its status and decoded JSON, as ``call_public`` gives it), None while there is none:
    the booking page names the booking its form already made."""
    with deps.read() as uow:
        record = uow.idempotency.get(_idempotency_space(company_id), key)
    if record is None or record.response_status is None or record.response_body is None:
        return None
    return record.response_status, json.loads(record.response_body)


def client_address(request: Request) -> str:
    """Who a request comes from, as the server sees it (behind a proxy, the address the
    server is told: uvicorn's ``--forwarded-allow-ips``)."""
    return request.client.host if request.client is not None else "unknown"


def _handler(endpoint: Endpoint, deps: HttpDeps) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        request_id: str = request.state.request_id
        slug = str(request.path_params.get("slug", ""))[:63]
        address = client_address(request)
        counted = f"public:{slug}:{address}"
        if deps.rate_limiter.shared:
            verdict = await run_in_threadpool(deps.rate_limiter.hit, counted, PUBLIC_RATE_LIMIT)
        else:
            verdict = deps.rate_limiter.hit(counted, PUBLIC_RATE_LIMIT)
        if not verdict.allowed:
            return public_error(429, rate_limited(verdict).message, verdict.headers())
        early: ApiError | None = None
        raw_body = b""
        try:
            if endpoint.body is not None:
                raw_body = await json_body(request, MAX_PUBLIC_BODY_BYTES)
            else:  # a body on a read is ignored, but counted like any other
                await read_limited(request, MAX_PUBLIC_BODY_BYTES)
        except ApiError as refusal:
            if refusal.status == 413:
                return public_error(413, refusal.message, verdict.headers())
            early = refusal
        incoming = Incoming.of(
            request,
            request_id,
            secret=None,
            raw_body=raw_body,
            admitted=(_public_key("", endpoint.scope), verdict),
            early=early,
        )
        return await run_in_threadpool(_run, deps, endpoint, incoming, slug, address, request.state)

    return run


def preflight(methods: Sequence[str]) -> Response:
    """The CORS preflight of a public route: 204, what may be sent, for how long."""
    return Response(
        status_code=204,
        headers={
            "access-control-allow-methods": ", ".join(methods),
            "access-control-allow-headers": ALLOW_HEADERS,
            "access-control-max-age": PREFLIGHT_MAX_AGE,
        },
    )


def public_routes(deps: HttpDeps, endpoints: Sequence[Endpoint] = PUBLIC_ENDPOINTS) -> list[Route]:
    """One route per public path: its method, and ``OPTIONS`` for the preflight."""
    routes = []
    for endpoint in endpoints:
        methods = [endpoint.method, "OPTIONS"]
        routes.append(
            Route(endpoint.path, _dispatch(_handler(endpoint, deps), methods), methods=methods)
        )
    return routes


def _dispatch(
    handler: Callable[[Request], Awaitable[Response]], methods: Sequence[str]
) -> Callable[[Request], Awaitable[Response]]:
    allowed = [*methods, "HEAD"] if "GET" in methods else list(methods)

    async def dispatch(request: Request) -> Response:
        if request.method == "OPTIONS":
            return preflight(allowed)
        return await handler(request)

    return dispatch


class PublicCors:
    """``Access-Control-Allow-Origin: *`` on every answer under ``/api/public``, whatever
    made it (a route, a 404 or 405, a 500 that escaped everything else). Outermost, so
    nothing answers without it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path == PUBLIC_PREFIX or path.startswith(PUBLIC_PREFIX + "/")):
            await self.app(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["access-control-allow-origin"] = "*"
                headers["access-control-expose-headers"] = EXPOSE_HEADERS
                if "access-control-allow-credentials" in headers:
                    del headers["access-control-allow-credentials"]
            await send(message)

        await self.app(scope, receive, send_with_cors)
