"""Endpoints as data: one ``Endpoint`` per route says its method, path, scope, body type,
idempotency and handler. The same table builds the Starlette routes and the OpenAPI
description, so the two cannot drift apart.

Every request runs the same steps: authenticate (401 carries no rate-limit headers),
count against the key's rate limit, check the scope, read and structure the body,
claim the idempotency key, run the handler in a worker thread, and answer JSON. Every
authenticated answer, success or refusal, carries the ``x-ratelimit-*`` headers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
import structlog
from attrs import define, frozen
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.http import idempotency
from adapters.http.cursors import CursorCodec
from adapters.http.errors import ApiError, from_domain, internal_error
from adapters.http.ratelimit import Verdict
from adapters.http.render import Renderer
from adapters.http.structuring import structure
from booking_core.auth import ApiKey
from booking_core.errors import DomainError, ValidationFailed
from booking_core.paging import DEFAULT_LIMIT, MAX_LIMIT, Page, PageRequest
from booking_core.ports import UnitOfWork

MAX_BODY_BYTES = 1_000_000

log = structlog.get_logger("booking.http")


@frozen
class Reply:
    """A successful answer."""

    body: Any
    status: int = 200


@frozen(kw_only=True)
class Endpoint:
    """One route of ``/api/v1`` and everything the platform needs to know about it."""

    method: str
    path: str
    scope: str
    handler: Callable[[Context], Reply]
    summary: str
    body: type | None = None
    idempotent: bool = False
    query: tuple[QueryParam, ...] = ()
    paginated: bool = False
    response: Mapping[str, Any] = attrs.field(factory=dict)
    success_status: int = 200
    tag: str = "api"
    body_scopes: Callable[[Any], Sequence[str]] | None = None
    """Further scopes a particular body needs (checked before any idempotency claim)."""
    also: Mapping[int, str] = attrs.field(factory=dict)
    """Other success statuses answering the same body, with what each means."""


@frozen
class QueryParam:
    """A documented query parameter (strings unless ``schema`` says otherwise)."""

    name: str
    description: str
    schema: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "string"})


@define
class Context:
    """What a handler gets: the caller's key and company, inputs, and the adapters."""

    request_id: str
    key: ApiKey
    path_params: Mapping[str, str]
    query: Mapping[str, str]
    body: Any
    deps: Any
    claim: idempotency.Claim | None = None
    cursor_scope: str = ""
    _renderer: Renderer | None = None

    def render(self) -> Renderer:
        """The renderer for the caller's company (its timezone and public addresses)."""
        if self._renderer is None:
            self._renderer = self.deps.renderer_for(self.company_id)
        return self._renderer

    def now(self) -> datetime:
        """The current instant from the wired clock."""
        now: datetime = self.deps.clock.now()
        return now

    @property
    def company_id(self) -> str:
        """The company, taken from the key alone."""
        return self.key.company_id

    def uow(self) -> UnitOfWork:
        """A unit of work; on idempotent endpoints its commit also marks the key used."""
        inner: UnitOfWork = self.deps.uow()
        if self.claim is None:
            return inner
        return idempotency.MarkingUnitOfWork(inner, self.claim.company_id, self.claim.key)  # type: ignore[return-value]

    def page_request(self, list_name: str, filters: Mapping[str, object]) -> PageRequest:
        """``limit``, ``cursor`` and ``updatedSince`` of this request, checked."""
        errors: dict[str, str] = {}
        limit = DEFAULT_LIMIT
        raw_limit = self.query.get("limit")
        if raw_limit is not None:
            if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_LIMIT:
                errors["limit"] = f"A whole number from 1 to {MAX_LIMIT}."
            else:
                limit = int(raw_limit)
        since = None
        if "updatedSince" in self.query:
            try:
                since = structure({"t": self.query["updatedSince"]}, _Since).t
            except ValidationFailed as failed:
                errors["updatedSince"] = failed.field_errors["t"]
        if errors:
            raise ValidationFailed(errors)
        codec: CursorCodec = self.deps.cursors
        # The company is part of the scope: another company's cursor is refused like a
        # tampered one, never read as a position in this company's list.
        scope = codec.scope_of(
            list_name, since is not None, {**filters, "since": since, "company": self.company_id}
        )
        cursor = self.query.get("cursor")
        after = codec.decode(cursor, scope) if cursor else None
        self.cursor_scope = scope
        return PageRequest(limit=limit, after=after, updated_since=since)

    def page_reply(self, page: Page[Any], render: Callable[[Any], Any]) -> Reply:
        """The list shape of SPEC.md: ``data``, ``hasMore``, ``nextCursor``."""
        codec: CursorCodec = self.deps.cursors
        next_cursor = codec.encode(page.next_after, self.cursor_scope) if page.next_after else None
        return Reply(
            {
                "data": [render(item) for item in page.items],
                "hasMore": page.has_more,
                "nextCursor": next_cursor,
            }
        )


@frozen
class _Since:
    t: datetime


def admit(deps: Any, secret: str | None) -> tuple[ApiKey, Verdict] | None:
    """The caller's key and its rate-limit verdict, or None when no key is identified.

    One trip to a worker thread for both: they are the first two steps of every request.
    """
    key = deps.authenticate(secret) if secret else None
    if key is None:
        return None
    return key, deps.rate_limiter.hit(key.id, key.rate_limit_per_minute)


def unauthorized() -> ApiError:
    """The 401 for a request whose key is missing, unknown or revoked."""
    return ApiError(401, "unauthorized", "Send a valid API key as Authorization: Bearer <key>.")


def rate_limited(verdict: Verdict) -> ApiError:
    """The 429 for a key over its limit."""
    return ApiError(
        429,
        "rate_limited",
        f"Rate limit of {verdict.limit} requests per minute exceeded; "
        f"retry after {verdict.reset_seconds} seconds.",
    )


def insufficient_scope(scope: str) -> ApiError:
    """The 403 naming the missing scope."""
    return ApiError(
        403,
        "insufficient_scope",
        f"This API key lacks the {scope} scope needed for this request.",
        requiredScope=scope,
    )


def json_response(status: int, body: Any, headers: Mapping[str, str]) -> Response:
    """A JSON answer with compact encoding."""
    payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(payload, status, headers=dict(headers), media_type="application/json")


def credential(request: Request) -> str | None:
    """The key a request presents: ``Authorization: Bearer`` first, else ``x-api-key``."""
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    api_key = request.headers.get("x-api-key")
    return api_key.strip() if api_key and api_key.strip() else None


def _too_large() -> ApiError:
    return ApiError(413, "payload_too_large", f"The body is over {MAX_BODY_BYTES} bytes.")


def _parse_json(raw: bytes) -> Any:
    if len(raw) > MAX_BODY_BYTES:
        raise _too_large()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(
            400,
            "invalid_request",
            "The body is not valid JSON.",
            field_errors={"body": "Not valid JSON."},
        ) from None


@frozen
class _Incoming:
    """What the worker thread needs of a request (read on the event loop)."""

    request_id: str
    secret: str | None
    method: str
    path: str
    headers: Mapping[str, str]
    path_params: Mapping[str, str]
    query: Mapping[str, str]
    raw_body: bytes
    too_large: bool = False


@frozen
class _Outcome:
    status: int
    body: bytes
    headers: Mapping[str, str]
    key: ApiKey | None


def _process(endpoint: Endpoint, deps: Any, incoming: _Incoming) -> _Outcome:
    """Every step of a request after its bytes are read, in one worker thread."""
    request_id = incoming.request_id
    admitted = admit(deps, incoming.secret)
    if admitted is None:
        return _Outcome(401, _encode(unauthorized().body(request_id)), {}, None)
    key, verdict = admitted
    headers = verdict.headers()
    claimed: idempotency.Claim | None = None
    try:
        if not verdict.allowed:
            raise rate_limited(verdict)
        if not key.allows(endpoint.scope):
            raise insufficient_scope(endpoint.scope)
        if incoming.too_large:
            raise _too_large()
        raw = _parse_json(incoming.raw_body) if endpoint.body is not None else None
        body = structure(raw, endpoint.body) if endpoint.body is not None else None
        for scope in endpoint.body_scopes(body) if endpoint.body_scopes else ():
            if not key.allows(scope):
                raise insufficient_scope(scope)
        if endpoint.idempotent:
            claimed = idempotency.claim(
                deps.uow,
                key.company_id,
                idempotency.key_from(incoming.headers),
                incoming.method,
                incoming.path,
                raw,
                deps.clock.now(),
            )
            if claimed.replay is not None:
                stored = claimed.replay
                replayed = {**headers, "idempotent-replayed": "true"}
                return _Outcome(
                    stored.response_status or 200, stored.response_body or b"", replayed, key
                )
        context = Context(
            request_id=request_id,
            key=key,
            path_params=incoming.path_params,
            query=incoming.query,
            body=body,
            deps=deps,
            claim=claimed,
        )
        reply = endpoint.handler(context)
        status, payload = reply.status, reply.body
    except ApiError as error:
        status, payload = error.status, error.body(request_id)
        headers = {**headers, **error.headers}
    except DomainError as domain_error:
        error = from_domain(domain_error)
        status, payload = error.status, error.body(request_id)
    except Exception:
        log.exception("unexpected_error", request_id=request_id, route=endpoint.path)
        error = internal_error()
        status, payload = error.status, error.body(request_id)
    encoded = _encode(payload)
    if claimed is not None:
        try:
            idempotency.store_answer(deps.uow, claimed, status, encoded)
        except Exception:
            # The effect stands; only the replay copy is lost, so the answer still goes out.
            log.exception("idempotency_store_failed", request_id=request_id)
    return _Outcome(status, encoded, headers, key)


def _encode(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def build_route(endpoint: Endpoint, deps: Any) -> Route:
    """The Starlette route running ``endpoint`` through the platform's steps: the body is
    read on the event loop, everything else happens in one trip to a worker thread."""

    async def run(request: Request) -> Response:
        declared = request.headers.get("content-length", "")
        too_large = declared.isdigit() and int(declared) > MAX_BODY_BYTES
        read = endpoint.body is not None and not too_large
        raw_body = await request.body() if read else b""
        incoming = _Incoming(
            request_id=request.state.request_id,
            secret=credential(request),
            method=request.method,
            path=request.url.path,
            headers=request.headers,
            path_params=request.path_params,
            query=request.query_params,
            raw_body=raw_body,
            too_large=too_large,
        )
        outcome = await run_in_threadpool(_process, endpoint, deps, incoming)
        if outcome.key is not None:
            request.state.key = outcome.key
        return Response(
            outcome.body,
            outcome.status,
            headers=dict(outcome.headers),
            media_type="application/json",
        )

    return Route(
        endpoint.path, run, methods=[endpoint.method], name=f"{endpoint.method} {endpoint.path}"
    )
