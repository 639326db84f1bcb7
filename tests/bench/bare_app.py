"""The yardstick for the HTTP benchmark: a bare Starlette JSON endpoint, no auth, no
storage, answering a body the size of the demo catalog."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from booking_core.demo import demo_catalog

BODY = json.dumps(
    {"services": [s.name for s in demo_catalog().services()], "padding": "x" * 3_900}
).encode()


async def services(_: Request) -> Response:
    return Response(BODY, media_type="application/json")


async def quote(request: Request) -> Response:
    await request.body()
    return Response(BODY, media_type="application/json")


app = Starlette(
    routes=[
        Route("/api/v1/services", services, methods=["GET"]),
        Route("/api/v1/quote", quote, methods=["POST"]),
    ]
)
