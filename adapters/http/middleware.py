"""Request ids and one structured log line per request, as pure ASGI middleware.

A caller's ``x-request-id`` is kept when it is sane (at most 64 characters of
``[A-Za-z0-9._-]``), otherwise one is made. It is echoed in the header, put in
``error.requestId`` and bound to every log line. Logs never hold keys, bodies, query
strings, exception text or the tokens of public paths (``adapters.http.redaction``).

A client that goes away while its body is read has ended the request itself: that is no
fault of ours, so it is logged as ``client_disconnected`` (info) and its request line
has ``CLIENT_GONE`` for a status; nothing ran and nothing is answered.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any

import structlog
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.http.endpoint import json_response
from adapters.http.errors import internal_error
from adapters.http.redaction import error_fields, masked_path

SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")
CLIENT_GONE = 499
"""The status a request line gives a client that hung up before its answer (nginx's
"client closed request"); never sent, there is nobody left to send it to."""
log = structlog.get_logger("booking.http")


def request_id_from(scope: Scope) -> str:
    """The caller's request id if sane, else a fresh one."""
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            text: str = value.decode("latin-1")
            if SANE_REQUEST_ID.match(text):
                return text
            break
    return f"req_{secrets.token_hex(12)}"


class RequestContextMiddleware:
    """Sets ``request.state.request_id``, adds the header, logs the request, and turns an
    exception that escaped everything else into ``internal_error``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                MutableHeaders(scope=message)["x-request-id"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except ClientDisconnect:
            status = CLIENT_GONE
            log.info(
                "client_disconnected", request_id=request_id, path=masked_path(scope.get("path"))
            )
        except Exception as error:
            log.error(
                "unhandled_error",
                request_id=request_id,
                path=masked_path(scope.get("path")),
                **error_fields(error),
            )
            if response_started:
                raise
            status = 500
            error = internal_error()
            response = json_response(500, error.body(request_id), {"x-request-id": request_id})
            await response(scope, receive, send)
        finally:
            state: dict[str, Any] = scope.get("state", {})
            key = state.get("key")
            log.info(
                "request",
                request_id=request_id,
                method=scope.get("method"),
                route=masked_path(route_of(scope)),
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                company_id=getattr(key, "company_id", state.get("company_id")),
                key_id=getattr(key, "id", None),
            )


def route_of(scope: Scope) -> str | None:
    """The route's template as a whole path (``/api/v1/bookings/{id}``,
    ``/api/public/{slug}/book``: a mount's prefix and its route's path), else the path
    itself when no route matched."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str) or isinstance(route, Mount):  # no route inside it
        path = scope.get("path")
        return path if isinstance(path, str) else None
    mounted = str(scope.get("root_path", ""))
    mounted = mounted.removeprefix(str(scope.get("app_root_path", "")))
    return mounted + template
