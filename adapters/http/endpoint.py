"""Endpoints as data: one ``Endpoint`` per route says its method, path, scope, body type,
idempotency and handler. The same table builds the Starlette routes and the OpenAPI
description, so the two cannot drift apart.

Every request runs the same steps: authenticate (401 carries no rate-limit headers),
count against the key's rate limit, check the scope, read and structure the body,
claim the idempotency key, run the handler in a worker thread (at most
``HttpDeps.request_threads`` at once), and answer JSON. Every
authenticated answer, success or refusal, carries the ``x-ratelimit-*`` headers.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import attrs
import structlog
from attrs import define, frozen
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.http import idempotency
from adapters.http.cursors import CursorCodec
from adapters.http.deprecation import Deprecation
from adapters.http.deps import HttpDeps, NotInMemory
from adapters.http.errors import ApiError, from_domain, internal_error
from adapters.http.fieldpaths import merged
from adapters.http.queries import PageQuery
from adapters.http.ratelimit import Verdict
from adapters.http.reading import MAX_BODY_BYTES, json_body, parse_json, read_limited, read_query
from adapters.http.redaction import error_fields
from adapters.http.structuring import RequestInvalid, structure, structure_query
from adapters.http.views import PageView, RenderContext, to_json
from adapters.jsontext import compact
from booking_core.auth import ApiKey
from booking_core.errors import DomainError, ValidationFailed
from booking_core.paging import Page, PageRequest
from booking_core.ports import UnitOfWork

MAX_PATH_PARAM = 200
JSON = "application/json"

log = structlog.get_logger("booking.http")

T = TypeVar("T")


@frozen
class Items:
    """An answer that is a bare JSON array of views (an endpoint with ``listed=True``)."""

    items: tuple[attrs.AttrsInstance, ...]


@frozen
class Reply:
    """A successful answer: a view (``adapters.http.views``), or ``Items`` of views, with
    any headers of its own (``Deprecation``, ``Sunset``)."""

    view: attrs.AttrsInstance
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def body(self) -> object:
        """The view as camelCase JSON (a list of them for ``Items``)."""
        if isinstance(self.view, Items):
            return [to_json(item) for item in self.view.items]
        return to_json(self.view)


@frozen(kw_only=True)
class Endpoint:
    """One route of ``/api/v1`` and everything the platform needs to know about it."""

    method: str
    path: str
    scope: str
    handler: Callable[[Context], Reply]
    summary: str
    body: type | None = None
    body_required: bool | None = None
    """Whether the OpenAPI description says a request carries a body; None: when the body's
    schema requires a field (a body whose fields all have defaults may be left out, as a
    plain cancel's), True where no request without one can pass (a quote needs a
    customer or lead and a selection or lines, each optional alone)."""
    idempotent: bool = False
    query: type | None = None
    """The attrs class the query string is structured into (``PageQuery`` for lists)."""
    paginated: bool = False
    listed: bool = False
    """The answer is a bare JSON array of ``response`` views (``Reply(Items(...))``)."""
    response: type | None = None
    """The view class of a success answer (of each item, on a paginated endpoint)."""
    success_status: int = 200
    tag: str = "api"
    body_scopes: Callable[[Any], Sequence[str]] | None = None
    """Further scopes a particular body needs, told from its decoded JSON (any JSON
    value) before its shape is checked, so a missing scope is answered first."""
    also: Mapping[int, str] = attrs.field(factory=dict)
    """Other success statuses answering the same body, with what each means."""
    deprecation: Callable[[Any], Deprecation | None] | None = None
    """The deprecated form a request uses, if any, told from its decoded JSON body (None
    on a route without a body, whose form its address alone says): every reply to it,
    refusals included (a body or query string refused for its shape too), carries
    ``Deprecation`` and ``Sunset`` headers."""
    in_memory: bool = False
    """Whether the request may run on the event loop, with no worker thread, when its key
    and everything its handler reads are in memory (``HttpDeps.in_memory``); anything
    else it needs makes it start again in a worker thread. For handlers that only read,
    through ``ctx.deps.read()``."""
    answer_of: Callable[[Context], object] | None = None
    """For an ``in_memory`` endpoint whose 200 answer is a pure function of the company,
    the body and a few stored values (no query, no headers of its own): those values,
    read from memory (the context has no body). While they stay equal (``==``), the
    encoded answer to the same body is sent again without running the handler."""


@define
class Context:
    """What a handler gets: the caller's key and company, inputs, and the adapters."""

    request_id: str
    key: ApiKey
    path_params: Mapping[str, str]
    query: Any
    """The structured query string: an instance of the endpoint's ``query`` class."""
    body: Any
    deps: HttpDeps
    unit: UnitOfWork | None = None
    """The request's one transaction, on endpoints with an ``Idempotency-Key``."""
    cursor_scope: str = ""
    _render_context: RenderContext | None = None

    def render(self) -> RenderContext:
        """How answers to the caller's company are written (its timezone, its addresses)."""
        if self._render_context is None:
            self._render_context = self.deps.render_context_for(self.company_id)
        return self._render_context

    def now(self) -> datetime:
        """The current instant from the wired clock."""
        now: datetime = self.deps.clock.now()
        return now

    @property
    def company_id(self) -> str:
        """The company, taken from the key alone."""
        return self.key.company_id

    def uow(self) -> UnitOfWork:
        """A unit of work for a write. On endpoints with an ``Idempotency-Key`` it is the
        request's one transaction, which commits with the stored answer
        (``idempotency.run_once``)."""
        if self.unit is not None:
            return self.unit
        return self.deps.uow()

    def page_request(self, list_name: str, filters: Mapping[str, object]) -> PageRequest:
        """The page this request asks for: its ``limit``, ``cursor`` and ``updatedSince``."""
        query: PageQuery = self.query
        since = query.updated_since
        codec: CursorCodec = self.deps.cursors
        # The company is part of the scope: another company's cursor is refused like a
        # tampered one, never read as a position in this company's list.
        scope = codec.scope_of(
            list_name, since is not None, {**filters, "since": since, "company": self.company_id}
        )
        after = codec.decode(query.cursor, scope) if query.cursor else None
        self.cursor_scope = scope
        return PageRequest(limit=query.limit, after=after, updated_since=since)

    def page_reply(self, page: Page[T], view: Callable[[T], attrs.AttrsInstance]) -> Reply:
        """The list shape of SPEC.md: ``data`` (each item's view), ``hasMore``,
        ``nextCursor`` (a string, always: SPEC.md types it so). With nowhere further to go
        it is the cursor this request was given, so that an empty poll of ``updatedSince``
        hands back the position the poller already had, else ``""`` (which, passed back,
        is the first page)."""
        codec: CursorCodec = self.deps.cursors
        query: PageQuery = self.query
        next_cursor = (
            codec.encode(page.next_after, self.cursor_scope)
            if page.next_after
            else (query.cursor or "")
            if query.updated_since is not None
            else ""
        )
        data = tuple(view(item) for item in page.items)
        return Reply(PageView(data=data, has_more=page.has_more, next_cursor=next_cursor))


def admit(deps: HttpDeps, secret: str | None) -> tuple[ApiKey, Verdict] | None:
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
    payload = _encode(body)
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


def _announced(endpoint: Endpoint, raw: Any) -> dict[str, str]:
    """``Deprecation`` and ``Sunset`` when the request uses a deprecated form (``raw``:
    its decoded body, None on a route without one), else nothing."""
    deprecated = endpoint.deprecation(raw) if endpoint.deprecation else None
    return deprecated.headers() if deprecated is not None else {}


def _inputs(
    endpoint: Endpoint, incoming: Incoming, raw: Any, found: Mapping[str, str]
) -> tuple[Any, Any]:
    """The structured query and the structured body (``raw`` decoded, with the problems
    ``found`` in it); every problem of the query string and the body in one answer."""
    problems: dict[str, str] = {}
    query: Any = None
    try:
        query = structure_query(incoming.query, endpoint.query)
    except ValidationFailed as failed:
        problems.update(failed.field_errors)
    # A parameter that is not UTF-8 was left out: its own problem says why ("Required."
    # would not).
    problems.update(incoming.query_problems)
    body: Any = None
    if endpoint.body is not None:
        try:
            body = structure(raw, endpoint.body)
        except ValidationFailed as failed:
            problems.update(failed.field_errors)
        problems = merged(problems, found)
    if problems:
        raise RequestInvalid(merged(problems, _key_problem(endpoint, incoming)))
    return query, body


def _key_problem(endpoint: Endpoint, incoming: Incoming) -> dict[str, str]:
    """A missing, blank or overlong ``Idempotency-Key`` of a write that needs one, named
    beside the body's problems so that one answer names them all (alone, the header's
    own answer says more)."""
    if not endpoint.idempotent:
        return {}
    try:
        idempotency.key_from(incoming.headers)
    except ApiError as refused:
        return dict(refused.field_errors or {})
    return {}


def _with_key_problem(error: ApiError, endpoint: Endpoint, incoming: Incoming) -> ApiError:
    """``error`` (a body or header the write cannot be read from: not JSON, a header
    sent twice) naming the ``Idempotency-Key``'s own problem beside its own, so that one
    answer names them all."""
    extra = _key_problem(endpoint, incoming) if error.status == 400 else {}
    if not extra or set(extra) <= set(error.field_errors or {}):
        return error
    return ApiError(
        error.status,
        error.code,
        error.message,
        field_errors={**(error.field_errors or {}), **extra},
        headers=error.headers,
        **error.extra,
    )


def _safe_path_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Path ids no record can have (NUL, overlong) become one that matches nothing, so
    they answer the same ``not_found`` as any other unknown id."""
    return {
        name: value
        if isinstance(value, str) and len(value) <= MAX_PATH_PARAM and "\x00" not in value
        else "-"
        for name, value in params.items()
    }


@frozen
class Incoming:
    """What the worker thread needs of a request (read on the event loop)."""

    request_id: str
    secret: str | None
    method: str
    path: str
    headers: Mapping[str, str]
    path_params: Mapping[str, str]
    query: Sequence[tuple[str, str]]
    raw_body: bytes
    admitted: tuple[ApiKey, Verdict] | None = None
    """Set when the key was checked before the body was read."""
    early: ApiError | None = None
    """A refusal found while reading the body (413, a content type other than JSON)."""
    query_problems: Mapping[str, str] = attrs.field(factory=dict)
    """Query parameters that are not UTF-8 once percent-decoded (``read_query``)."""
    idempotency_space: str | None = None
    """Whose ``Idempotency-Key`` names these are, when not the key's company's: the
    public routes keep their callers' keys apart (``public.py``)."""

    @classmethod
    def of(
        cls,
        request: Request,
        request_id: str,
        *,
        secret: str | None,
        raw_body: bytes,
        admitted: tuple[ApiKey, Verdict] | None,
        early: ApiError | None,
    ) -> Incoming:
        """What the worker thread needs of ``request``."""
        query, query_problems = read_query(request.scope.get("query_string", b""))
        return cls(
            request_id=request_id,
            secret=secret,
            method=request.method,
            path=request.url.path,
            headers=request.headers,
            path_params=request.path_params,
            query=query,
            raw_body=raw_body,
            admitted=admitted,
            early=early,
            query_problems=query_problems,
        )


@frozen
class _Outcome:
    status: int
    body: bytes
    headers: Mapping[str, str]
    key: ApiKey | None


def _has_body(request: Request) -> bool:
    """Whether the request says it carries a body (a length above 0, or chunks)."""
    headers = request.headers
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


def process_request(endpoint: Endpoint, deps: HttpDeps, incoming: Incoming) -> _Outcome:
    """Every step of a request after its bytes are read, in one worker thread."""
    request_id = incoming.request_id
    # Without a body, the address alone says the form: every answer announces it.
    announced = _announced(endpoint, None) if endpoint.body is None else {}
    admitted = incoming.admitted or admit(deps, incoming.secret)
    if admitted is None:
        return _Outcome(401, _encode(unauthorized().body(request_id)), announced, None)
    key, verdict = admitted
    headers = {**verdict.headers(), **announced}
    try:
        if not verdict.allowed:
            raise rate_limited(verdict)
        if not key.allows(endpoint.scope):
            raise insufficient_scope(endpoint.scope)
        if incoming.early is not None:
            raise _with_key_problem(incoming.early, endpoint, incoming)
        raw: Any = None
        found: dict[str, str] = {}
        if endpoint.body is not None:
            try:
                raw, found = parse_json(incoming.raw_body)
            except ApiError as unreadable:
                raise _with_key_problem(unreadable, endpoint, incoming) from None
            # Told before the body's shape is checked: its refusal announces the form too.
            headers = {**headers, **_announced(endpoint, raw)}
            # So is the further scope a body asks for: a missing scope is the answer,
            # whatever else is wrong with the body.
            for scope in endpoint.body_scopes(raw) if endpoint.body_scopes else ():
                if not key.allows(scope):
                    raise insufficient_scope(scope)
        query, body = _inputs(endpoint, incoming, raw, found)
        context = Context(
            request_id=request_id,
            key=key,
            path_params=_safe_path_params(incoming.path_params),
            query=query,
            body=body,
            deps=deps,
        )
        if endpoint.idempotent:
            gate = idempotency.Gate.of(
                incoming.idempotency_space or key.company_id,
                idempotency.key_from(incoming.headers),
                incoming.method,
                incoming.path,
                raw,
                deps.clock.now(),
            )
            answer = _as_this_request(
                idempotency.run_once(
                    deps.uow,
                    gate,
                    lambda unit: _answer(endpoint, attrs.evolve(context, unit=unit)),
                    lambda error: refusal_answer(error, request_id, endpoint.path),
                ),
                request_id,
            )
        else:
            answer = _answer(endpoint, context)
    except Exception as error:
        answer = refusal_answer(error, request_id, endpoint.path)
    return _Outcome(answer.status, answer.body, {**headers, **answer.headers}, key)


def _as_this_request(answer: idempotency.Answer, request_id: str) -> idempotency.Answer:
    """A replayed refusal carries this request's id in ``error.requestId``, as its
    ``x-request-id`` header does, and the first request's in ``original-request-id``;
    every other answer is given as it is."""
    if answer.status < 400 or answer.headers.get("idempotent-replayed") != "true":
        return answer
    payload = json.loads(answer.body)
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict) or error.get("requestId") in (None, request_id):
        return answer
    body = _encode({**payload, "error": {**error, "requestId": request_id}})
    headers = {**answer.headers, "original-request-id": str(error["requestId"])}
    return idempotency.Answer(answer.status, body, headers)


def _answer(endpoint: Endpoint, context: Context) -> idempotency.Answer:
    """The handler's reply, encoded."""
    reply = endpoint.handler(context)
    return idempotency.Answer(reply.status, _encode(reply.body), reply.headers)


def refusal_answer(error: Exception, request_id: str, route: str) -> idempotency.Answer:
    """The answer to what a request raised: its refusal, or ``internal_error`` (logged)."""
    if isinstance(error, ApiError):
        return idempotency.Answer(error.status, _encode(error.body(request_id)), error.headers)
    if isinstance(error, DomainError):
        mapped = from_domain(error)
        return idempotency.Answer(mapped.status, _encode(mapped.body(request_id)))
    # Its class and place only: its text may quote customer data or SQL.
    log.error("unexpected_error", request_id=request_id, route=route, **error_fields(error))
    fault = internal_error()
    return idempotency.Answer(fault.status, _encode(fault.body(request_id)))


def _encode(payload: Any) -> bytes:
    return compact(payload)  # a lone surrogate echoed in a field path comes escaped


def build_routes(endpoints: Sequence[Endpoint], deps: HttpDeps) -> list[Route]:
    """One Starlette route per path, dispatching on the method, so that a wrong method is
    a 405 whose ``allow`` header lists every method the path takes."""
    by_path: dict[str, dict[str, Callable[[Request], Awaitable[Response]]]] = {}
    for endpoint in endpoints:
        by_path.setdefault(endpoint.path, {})[endpoint.method] = _handler(endpoint, deps)
    return [_route(path, handlers) for path, handlers in by_path.items()]


def _route(path: str, handlers: Mapping[str, Callable[[Request], Awaitable[Response]]]) -> Route:
    async def dispatch(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await handlers[method](request)

    return Route(path, dispatch, methods=list(handlers), name=path)


def _handler(endpoint: Endpoint, deps: HttpDeps) -> Callable[[Request], Awaitable[Response]]:
    """The coroutine running ``endpoint`` through the platform's steps.

    A route with a body checks the key, its rate limit and its scope first, so nobody
    unauthenticated gets a byte of a body read; then the body is read on the event loop,
    counted as it streams. Everything else happens in one trip to a worker thread, or,
    on an ``in_memory`` endpoint whose key and reads are all in memory, on the event loop
    itself (a worker thread costs more than such a request's whole work).
    """
    memory = deps.in_memory() if endpoint.in_memory else None
    answers = _Answers(endpoint, memory) if memory is not None else None
    # A key memory knows is admitted on the event loop when the limits count in this
    # process: a write then makes one trip to a worker thread, not two.
    admits_in_memory = memory is not None or (
        endpoint.body is not None and not deps.rate_limiter.shared
    )

    async def run(request: Request) -> Response:
        request_id: str = request.state.request_id
        secret = credential(request)
        admitted = _admitted_in_memory(deps, secret) if admits_in_memory else None
        if admitted is None and endpoint.body is not None:
            admitted = await deps.in_thread(admit, deps, secret)
            if admitted is None:
                return Response(_encode(unauthorized().body(request_id)), 401, media_type=JSON)
        early: ApiError | None = None
        raw_body = b""
        if endpoint.body is None and _has_body(request):
            # A body on a read is not used, but counted like any other (413 past the limit).
            try:
                await read_limited(request, MAX_BODY_BYTES)
            except ApiError as refusal:
                early = refusal
        if admitted is not None:
            key, verdict = admitted
            request.state.key = key
            if verdict.allowed and key.allows(endpoint.scope):
                if endpoint.body is not None:
                    try:
                        raw_body = await json_body(request)
                    except ApiError as refusal:
                        early = refusal
                if answers is not None and early is None and _plain(request):
                    sent = answers.sent_before(request_id, key, raw_body)
                    if sent is not None:
                        return Response(sent, 200, headers=verdict.headers(), media_type=JSON)
        incoming = Incoming.of(
            request, request_id, secret=secret, raw_body=raw_body, admitted=admitted, early=early
        )
        outcome = None
        if memory is not None and answers is not None and admitted is not None:
            outcome = answers.answer(incoming, _plain(request) and early is None)
        if outcome is None:
            outcome = await deps.in_thread(process_request, endpoint, deps, incoming)
        if outcome.key is not None:
            request.state.key = outcome.key
        return Response(
            outcome.body, outcome.status, headers=dict(outcome.headers), media_type=JSON
        )

    return run


def _admitted_in_memory(deps: HttpDeps, secret: str | None) -> tuple[ApiKey, Verdict] | None:
    """The caller's key, when memory knows it, and its rate-limit verdict (counted in
    this process's memory); None when only storage can say who the caller is."""
    key = deps.known_key(secret) if secret and deps.known_key is not None else None
    if key is None:
        return None
    return key, deps.rate_limiter.hit(key.id, key.rate_limit_per_minute)


def _plain(request: Request) -> bool:
    """No query string: the answer depends on the company, the body and stored values."""
    return not request.scope.get("query_string")


class _Answers:
    """Runs an ``in_memory`` endpoint on the event loop, and keeps its last encoded 200
    answers (with ``answer_of``) per company and body, each with what it was made of."""

    MAX_KEPT = 1024

    def __init__(self, endpoint: Endpoint, memory: HttpDeps) -> None:
        self._endpoint = endpoint
        self._memory = memory
        self._kept: dict[tuple[str, bytes], tuple[tuple[object], bytes]] = {}
        self._keeps = endpoint.answer_of is not None and endpoint.deprecation is None

    def sent_before(self, request_id: str, key: ApiKey, raw_body: bytes) -> bytes | None:
        """The answer kept for this company and body, if what it was made of is
        unchanged (compared with ``==``: the cache hands out the same decoded values, so
        an unchanged one is recognised at once)."""
        kept = self._kept.get((key.company_id, raw_body)) if self._keeps else None
        if kept is None:
            return None
        made_of = self._made_of(request_id, key)
        return kept[1] if made_of is not None and (made_of,) == kept[0] else None

    def answer(self, incoming: Incoming, keepable: bool) -> _Outcome | None:
        """``process_request`` on the event loop over memory; None when the request needs storage
        (it has then changed nothing: an ``in_memory`` handler only reads). A 200 answer
        is kept when what it is made of is the same before and after it was made."""
        key = incoming.admitted[0] if incoming.admitted else None
        keep = self._keeps and keepable and key is not None
        before = self._made_of(incoming.request_id, key) if keep and key else None
        try:
            outcome = process_request(self._endpoint, self._memory, incoming)
        except NotInMemory:
            return None
        if before is not None and key is not None and outcome.status == 200:
            after = self._made_of(incoming.request_id, key)
            if (after,) == (before,):
                if len(self._kept) >= self.MAX_KEPT:
                    self._kept.clear()
                self._kept[(key.company_id, incoming.raw_body)] = ((before,), outcome.body)
        return outcome

    def _made_of(self, request_id: str, key: ApiKey) -> object | None:
        """What the endpoint's answer to ``key``'s company is made of, from memory; None
        when memory does not hold it (or it cannot be had: the handler will say why)."""
        if self._endpoint.answer_of is None:
            return None
        context = Context(
            request_id=request_id,
            key=key,
            path_params={},
            query=None,
            body=None,
            deps=self._memory,
        )
        try:
            return self._endpoint.answer_of(context)
        except (NotInMemory, DomainError):
            return None
