"""The yardstick for the HTTP benchmarks: a bare Starlette JSON endpoint, no auth, no
storage, answering a body the size of the demo catalog.

``make bench-http`` sets ``BOOKING_BENCH_BARE_BODIES`` to a folder holding the real
server's answers (``services.json``, ``quote.json``), so the yardstick serves exactly
the same bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from booking_core.demo import demo_catalog

BODY = json.dumps(
    {"services": [s.name for s in demo_catalog().services()], "padding": "x" * 3_900}
).encode()


def _body(name: str) -> bytes:
    """The real server's answer saved under ``name`` when the harness gave one, else BODY."""
    folder = os.environ.get("BOOKING_BENCH_BARE_BODIES")
    saved = Path(folder, name) if folder else None
    return saved.read_bytes() if saved is not None and saved.is_file() else BODY


SERVICES_BODY = _body("services.json")
QUOTE_BODY = _body("quote.json")


async def services(_: Request) -> Response:
    return Response(SERVICES_BODY, media_type="application/json")


async def quote(request: Request) -> Response:
    await request.body()
    return Response(QUOTE_BODY, media_type="application/json")


app = Starlette(
    routes=[
        Route("/api/v1/services", services, methods=["GET"]),
        Route("/api/v1/quote", quote, methods=["POST"]),
    ]
)
