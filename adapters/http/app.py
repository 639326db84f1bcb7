"""The ASGI application: ``/api/v1`` from the endpoint table, the public API
(``/api/public``, ``adapters.http.public``), the OpenAPI document, and one error shape
for unknown routes and wrong methods. ``/api/v1`` sends no CORS headers; everything under
``/api/public`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route, Router

from adapters.http.deps import HttpDeps
from adapters.http.docs_page import docs_routes
from adapters.http.endpoint import (
    Endpoint,
    admit,
    build_routes,
    credential,
    json_response,
    rate_limited,
    unauthorized,
)
from adapters.http.errors import ApiError, not_found_route
from adapters.http.middleware import RequestContextMiddleware
from adapters.http.public import (
    PUBLIC_ENDPOINTS,
    PUBLIC_PREFIX,
    PublicCors,
    public_error,
    public_routes,
)
from adapters.http.wire import AbsoluteForm, EncodedSlashes, SingleFraming

API_PREFIX = "/api/v1"


async def _http_error(request: Request, exc: Exception) -> Response:
    """Unknown routes and wrong methods, in the one error shape.

    Under ``/api/v1`` the key is checked first, as on every route: no key is 401, and a
    known key is counted and gets its rate-limit headers on the 404 or 405 too.
    """
    request_id = getattr(request.state, "request_id", "")
    status = getattr(exc, "status_code", 500)
    headers: dict[str, str] = {}
    path = request.url.path
    if path == PUBLIC_PREFIX or path.startswith(PUBLIC_PREFIX + "/"):
        if status == 405:
            allow = dict(getattr(exc, "headers", None) or {})
            return public_error(405, f"{request.method} is not allowed here.", allow)
        if status == 404:
            return public_error(404, "No such route. See /api/openapi.json.")
        return public_error(status, "The request could not be read.")
    if request.url.path.startswith(API_PREFIX):
        deps: HttpDeps = request.app.state.deps
        admitted = await run_in_threadpool(admit, deps, credential(request))
        if admitted is None:
            return json_response(401, unauthorized().body(request_id), {})
        key, verdict = admitted
        request.state.key = key
        headers = verdict.headers()
        if not verdict.allowed:
            error = rate_limited(verdict)
            return json_response(429, error.body(request_id), headers)
    if status == 405:
        error = ApiError(405, "method_not_allowed", f"{request.method} is not allowed here.")
        headers.update(getattr(exc, "headers", None) or {})
    elif status == 404:
        error = not_found_route()
    else:
        error = ApiError(status, "invalid_request", "The request could not be read.")
    return json_response(error.status, error.body(request_id), headers)


def create_app(
    deps: HttpDeps, endpoints: Sequence[Endpoint], extra_routes: Sequence[BaseRoute] = ()
) -> Starlette:
    """The application serving ``endpoints`` under ``/api/v1`` plus ``extra_routes``."""
    from adapters.http.openapi import openapi_document

    document: dict[str, Any] = openapi_document(
        endpoints, server=deps.base_url, public=PUBLIC_ENDPOINTS
    )

    async def openapi(_: Request) -> Response:
        return json_response(200, document, {})

    # No trailing-slash redirects: Starlette would answer ``/api/v1/services/`` with a 307
    # before any key is checked; here it is a 404 (or 401) in the one error shape.
    api = Mount(
        API_PREFIX,
        app=Router(routes=build_routes(endpoints, deps), redirect_slashes=False),
    )
    public = Mount(PUBLIC_PREFIX, app=Router(routes=public_routes(deps), redirect_slashes=False))
    app = Starlette(
        routes=[
            Route("/api/openapi.json", openapi, methods=["GET"]),
            api,
            public,
            *docs_routes(),
            *extra_routes,
        ],
        # PublicCors outermost: even a 500 that escapes everything carries its header.
        middleware=[
            Middleware(SingleFraming),
            Middleware(AbsoluteForm),
            Middleware(EncodedSlashes),
            Middleware(PublicCors),
            Middleware(RequestContextMiddleware),
        ],
        exception_handlers={HTTPException: _http_error},
    )
    app.router.redirect_slashes = False
    app.state.deps = deps
    return app
