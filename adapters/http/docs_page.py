"""``/docs``: the OpenAPI document rendered by Swagger UI 5, served from the files the
``swagger-ui-py`` package ships (no CDN, so it works offline and behind a firewall)."""

from __future__ import annotations

from pathlib import Path

import swagger_ui
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(swagger_ui.__file__).parent / "static"

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Booking API reference</title>
  <link rel="stylesheet" href="/docs/static/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/static/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/static/swagger-ui-bundle.js"></script>
  <script src="/docs/start.js"></script>
</body>
</html>
"""

START = """window.ui = SwaggerUIBundle({
  url: "/api/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
});
"""
"""The viewer's start, a file of its own: the page's policy allows no inline script."""

HEADERS = {
    # Scripts and styles from this server only (Swagger UI sets style attributes, hence
    # 'unsafe-inline' for styles alone); the document fetched from here; never framed,
    # so no other site can overlay the page where a key is pasted into "Authorize".
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self'; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}
"""The headers of the reference and of each of its files, as the pages' (docs/web.md)."""


async def docs(_: Request) -> HTMLResponse:
    """The API reference page."""
    return HTMLResponse(PAGE, headers={**HEADERS, "cache-control": "no-cache"})


async def start(_: Request) -> Response:
    """The script that starts the viewer."""
    return Response(START, media_type="text/javascript", headers=HEADERS)


class _WithHeaders:
    """The viewer's static files with ``HEADERS`` on every answer (its bundled
    ``oauth2-redirect.html``, unused here, then runs no script either)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)


def docs_routes() -> list[BaseRoute]:
    """``/docs``, its start script and the viewer's static files under ``/docs/static``."""
    return [
        Route("/docs", docs, methods=["GET"]),
        Route("/docs/start.js", start, methods=["GET"]),
        Mount("/docs/static", app=_WithHeaders(StaticFiles(directory=STATIC)), name="docs-static"),
    ]
