"""uvicorn's HTTP protocols with one change: a request that cannot be read as HTTP (a
malformed request line or header, contradictory framing, a broken chunk) is answered in
the service's error shape instead of uvicorn's plain-text ``Invalid HTTP request
received.``.

The answer is 400: ``{"error": {"code": "invalid_request", "message", "requestId"}}``
with ``x-request-id``, or, when the broken request is known to be for ``/api/public/*``
(its head was read and its body was not, or its request line names such a path though
a header after it is broken), ``{"error": "<message>"}``
with ``Access-Control-Allow-Origin: *`` and the public answers' expose-headers;
``x-request-id`` on both. No key has been read,
so there are no rate-limit headers. The connection is closed, as uvicorn closes it, and
one ``http_unreadable`` line is logged in place of uvicorn's plain-text warning.

``AutoProtocol`` picks the parser as uvicorn's ``auto`` does (httptools when it is
installed, else h11), so ``booking serve`` keeps the set-up docs/decisions.md describes.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

import orjson
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

from adapters.http.middleware import request_id_from
from adapters.http.public import EXPOSE_HEADERS
from adapters.http.redaction import masked_path

MESSAGE = "The request could not be read as HTTP (a malformed request line, header or body)."
PUBLIC_PREFIX = "/api/public/"
log = structlog.get_logger("booking.http")


def error_response(scope: dict[str, Any] | None) -> tuple[bytes, str]:
    """The whole 400 answer, status line to body, for the request of ``scope`` (None: its
    head could not be read), and its request id."""
    headers, body, request_id = _error_parts(scope)
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 400 Bad Request\r\n" + head + b"\r\n" + body, request_id


def _error_parts(scope: dict[str, Any] | None) -> tuple[list[tuple[bytes, bytes]], bytes, str]:
    """The 400 answer's headers and body for the request of ``scope``, and its id."""
    request_id = request_id_from(scope or {})
    path = scope.get("path") if scope is not None else None
    headers = [(b"x-request-id", request_id.encode("ascii"))]
    if isinstance(path, str) and path.startswith(PUBLIC_PREFIX):
        body = orjson.dumps({"error": MESSAGE})
        headers += [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-expose-headers", EXPOSE_HEADERS.encode("ascii")),
        ]
    else:
        body = orjson.dumps(
            {"error": {"code": "invalid_request", "message": MESSAGE, "requestId": request_id}}
        )
    headers += [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
    ]
    return headers, body, request_id


class SingleFraming:
    """ASGI middleware, outermost: a request that says its body's length two ways
    (``Content-Length`` and ``Transfer-Encoding`` both) is not read as HTTP either. The
    parser goes by ``Transfer-Encoding`` and would keep the connection open, so what the
    sender meant as this request's body could be run as another request (RFC 9112, 6.3:
    answer, then close). It is answered as any unreadable request is (400, the service's
    shape, ``connection: close``, which ends the connection), and nothing runs."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            names = {name.lower() for name, _ in scope.get("headers", ())}
            if b"transfer-encoding" in names and b"content-length" in names:
                headers, body, request_id = _error_parts(scope)
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                log.info(
                    "http_unreadable",
                    request_id=request_id,
                    path=masked_path(scope.get("path")),
                    status=400,
                )
                return
        await self.app(scope, receive, send)


ABSOLUTE_FORM = re.compile(r"\Ahttps?://[^/]*", re.IGNORECASE)


class AbsoluteForm:
    """ASGI middleware: a request target in absolute form (``GET http://host/api/...``,
    which RFC 9112, 3.2.2, says a server must accept) is routed by its path, as the same
    request in origin form (``GET /api/...``) is; uvicorn hands the whole URL on as the
    path, which matched no route."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and ABSOLUTE_FORM.match(scope.get("path", "")):
            path = ABSOLUTE_FORM.sub("", scope["path"], count=1) or "/"
            raw = scope.get("raw_path")
            raw_path = (
                ABSOLUTE_FORM.sub("", raw.decode("latin-1"), count=1).encode("latin-1") or b"/"
                if isinstance(raw, bytes)
                else raw
            )
            scope = {**scope, "path": path, "raw_path": raw_path}
        await self.app(scope, receive, send)


ENCODED_SLASH = re.compile(rb"%2f", re.IGNORECASE)


class EncodedSlashes:
    """ASGI middleware: a ``%2F`` in the path stays ``%2F`` in the path that is routed.
    The server decodes the whole path, so ``/api/v1%2Fservices`` was served as
    ``/api/v1/services`` and ``/bookings/a%2Fcancel`` reached the cancel route of ``a``.
    An encoded slash is part of a segment (no id holds one): such a path names the route
    its real slashes name, with a segment no record has (404, as any unknown id).

    A ``%0A`` stays ``%0A`` too: a mount's pattern (``.*``) does not cross a line feed,
    so ``/api/v1/bookings/a%0Ab`` matched no route at all ("No such route", 404 for a
    wrong method too) where any other id no record has is "No such booking"."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if isinstance(raw, bytes) and ENCODED_SLASH.search(raw):
            parts = ENCODED_SLASH.split(raw)
            path = "%2F".join(unquote(part.decode("latin-1")) for part in parts)
            scope = {**scope, "path": path}
        if scope["type"] == "http" and "\n" in scope["path"]:
            scope = {**scope, "path": scope["path"].replace("\n", "%0A")}
        await self.app(scope, receive, send)


class _UvicornLine(logging.Filter):
    """Drops uvicorn's own plain-text line for an unreadable request: the protocol below
    logs it as a structured line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Invalid HTTP request received."


logging.getLogger("uvicorn.error").addFilter(_UvicornLine())


REQUEST_LINE = re.compile(rb"(?:\A|\n)[A-Za-z]+ (/[^ ?#\r\n]*)[^\r\n]* HTTP/")
HEAD_SEEN = 2048
"""How much of what arrives between requests is kept to read a request line from when
the head as a whole cannot be read (a broken header after a good request line)."""


class _JsonBadRequest:
    """Mixed in before uvicorn's protocol class: its ``send_400_response`` replaced, and
    what arrives between requests kept (``data_received``; each request's head dropped
    from it once parsed, when its cycle begins) so that a request whose head is
    unreadable but whose request line names a ``/api/public/*`` path is answered in the
    public shape, with its CORS headers. Behind pipelined requests this is best effort
    (a request line straight after a body, or arriving while an answer is under way, is
    not seen): browsers, the only readers of CORS headers, never pipeline."""

    transport: asyncio.Transport
    _head: bytes = b""

    @property
    def cycle(self) -> Any:
        return self.__dict__.get("_cycle")

    @cycle.setter
    def cycle(self, value: Any) -> None:
        self.__dict__["_cycle"] = value
        if value is not None:  # a request's head was parsed: keep what follows it
            line = REQUEST_LINE.search(self._head)
            end = self._head.find(b"\r\n\r\n", line.end()) if line else -1
            self._head = self._head[end + 4 :] if end >= 0 else b""

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        between = cycle is None or cycle.response_complete
        if between and len(self._head) < HEAD_SEEN:
            self._head = (self._head + data)[:HEAD_SEEN]
        super().data_received(data)  # type: ignore[misc]

    def _head_scope(self) -> dict[str, Any] | None:
        """What the kept bytes say of a request whose head could not be read: its path,
        when its request line names a ``/api/public/*`` one (else None, the plain
        shape)."""
        line = REQUEST_LINE.search(self._head)
        path = unquote(line.group(1).decode("latin-1")) if line else ""
        return {"path": path} if path.startswith(PUBLIC_PREFIX) else None

    def send_400_response(self, msg: str) -> None:
        cycle = getattr(self, "cycle", None)
        scope = None
        if cycle is None or cycle.response_complete:  # a new request's head was unreadable
            scope = self._head_scope()
            answer, request_id = error_response(scope)
        elif not cycle.response_started:  # its head was read, its body was not
            scope = cycle.scope
            answer, request_id = error_response(scope)
        else:  # an answer is under way: only close
            self.transport.close()
            return
        self.transport.write(answer)
        self.transport.close()
        log.info(
            "http_unreadable",
            request_id=request_id,
            path=masked_path(scope.get("path") if scope is not None else None),
            status=400,
        )


class JsonErrorH11Protocol(_JsonBadRequest, H11Protocol):
    """uvicorn's h11 protocol, answering malformed requests in the service's shape."""


AutoProtocol: type[asyncio.Protocol] = JsonErrorH11Protocol
"""What ``booking serve`` hands uvicorn (by its import path, which every worker process
imports): httptools' protocol when httptools is installed, else h11's."""

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is not installed: h11 it is
    pass
else:

    class JsonErrorHttpToolsProtocol(_JsonBadRequest, HttpToolsProtocol):
        """uvicorn's httptools protocol, answering malformed requests in the service's
        shape."""

    AutoProtocol = JsonErrorHttpToolsProtocol
