"""The yardsticks for the HTTP benchmarks: bare Starlette endpoints, no auth.

``GET /api/v1/services`` and ``POST /api/v1/quote`` have no storage and answer a body the
size of the demo catalog. ``make bench-http`` sets ``BOOKING_BENCH_BARE_BODIES`` to a
folder holding the real server's answers (``services.json``, ``quote.json``), so the
yardstick serves exactly the same bytes.

``POST /api/v1/bookings`` is the floor of the booking scenario: it reads the JSON body,
runs pgbench's own simple-update transaction (``-N``: update an account, read its
balance, insert a history row, commit) on plain psycopg in the database named by
``BOOKING_BENCH_FLOOR_URL``, in a worker thread (at most ``BOOKING_REQUEST_THREADS`` at
once, as the real server's requests), and answers 201 with the balance. Served like the
real server (uvicorn, the same number of workers), it is what HTTP and Python cost
around exactly the transaction pgbench runs, with no work of the booking's own.
"""

from __future__ import annotations

import json
import os
import random
import threading
from functools import partial
from pathlib import Path

import anyio.to_thread
from psycopg_pool import ConnectionPool
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


FLOOR_THREADS = int(os.environ.get("BOOKING_REQUEST_THREADS", "4"))
ACCOUNTS = 100_000
"""pgbench's accounts per unit of scale (and one branch, ten tellers)."""
_floor: dict[str, object] = {}
_opening = threading.Lock()


def _pgbench_transaction(scale: int, delta: int) -> int:
    """pgbench's ``-N`` script once, on a pooled connection; the account's new balance."""
    with _opening:  # one pool per process, whichever thread comes first
        pool = _floor.get("pool")
        if pool is None:
            url = os.environ["BOOKING_BENCH_FLOOR_URL"]
            pool = _floor["pool"] = ConnectionPool(
                url, min_size=FLOOR_THREADS, max_size=FLOOR_THREADS
            )
    assert isinstance(pool, ConnectionPool)
    aid = random.randint(1, ACCOUNTS * scale)
    tid, bid = random.randint(1, 10 * scale), random.randint(1, scale)
    with pool.connection() as connection:  # commits as the block ends
        connection.execute(
            "UPDATE pgbench_accounts SET abalance = abalance + %s WHERE aid = %s", (delta, aid)
        )
        row = connection.execute(
            "SELECT abalance FROM pgbench_accounts WHERE aid = %s", (aid,)
        ).fetchone()
        connection.execute(
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)"
            " VALUES (%s, %s, %s, %s, CURRENT_TIMESTAMP)",
            (tid, bid, aid, delta),
        )
    assert row is not None
    return int(row[0])


async def floor(request: Request) -> Response:
    body = json.loads(await request.body())
    limiter = _floor.get("limiter")
    if limiter is None:  # made on the event loop, on first use
        limiter = _floor.setdefault("limiter", anyio.CapacityLimiter(FLOOR_THREADS))
    assert isinstance(limiter, anyio.CapacityLimiter)
    scale = int(os.environ.get("BOOKING_BENCH_FLOOR_SCALE", "10"))
    work = partial(_pgbench_transaction, scale, random.randint(-5000, 5000))
    balance = await anyio.to_thread.run_sync(work, limiter=limiter)
    answer = {"balance": balance, "startIso": body.get("startIso")}
    return Response(json.dumps(answer).encode(), 201, media_type="application/json")


app = Starlette(
    routes=[
        Route("/api/v1/services", services, methods=["GET"]),
        Route("/api/v1/quote", quote, methods=["POST"]),
        Route("/api/v1/bookings", floor, methods=["POST"]),
    ]
)
