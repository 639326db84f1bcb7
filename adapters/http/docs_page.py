"""``/docs``: the OpenAPI document rendered by Swagger UI 5, served from the files the
``swagger-ui-py`` package ships (no CDN, so it works offline and behind a firewall)."""

from __future__ import annotations

from pathlib import Path

import swagger_ui
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

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
  <script>
    window.ui = SwaggerUIBundle({
      url: "/api/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis],
    });
  </script>
</body>
</html>
"""


async def docs(_: Request) -> HTMLResponse:
    """The API reference page."""
    return HTMLResponse(PAGE)


def docs_routes() -> list[BaseRoute]:
    """``/docs`` and the viewer's static files under ``/docs/static``."""
    return [
        Route("/docs", docs, methods=["GET"]),
        Mount("/docs/static", app=StaticFiles(directory=STATIC), name="docs-static"),
    ]
