"""Probes for load balancers and orchestrators, outside ``/api/v1``: no key, no rate limit.

``GET /healthz`` says the process is up and serving (``200 {"status": "ok"}``); it
touches nothing else, so a slow database never gets a live process restarted.
``GET /readyz`` says whether requests can be served now: each named check (the
database's ``SELECT 1``; Redis's ``PING`` when Redis is configured) runs, and the answer
is ``200`` with every check ``"ok"``, or ``503`` naming the ones ``"unavailable"``. No
exception text is ever shown: the reason is in the log line, by class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from adapters.http.endpoint import json_response
from adapters.http.redaction import error_fields

Check = Callable[[], object]
"""Raises, or returns False, when what it checks cannot serve requests."""

OK = "ok"
UNAVAILABLE = "unavailable"
NO_STORE = {"cache-control": "no-store"}

log = structlog.get_logger("booking.health")


def run_checks(checks: Mapping[str, Check]) -> dict[str, str]:
    """Each check's name and ``ok`` or ``unavailable``, in the order given."""
    results: dict[str, str] = {}
    for name, check in checks.items():
        try:
            passed = check() is not False
        except Exception as error:
            log.warning("readiness_check_failed", check=name, **error_fields(error))
            passed = False
        else:
            if not passed:
                log.warning("readiness_check_failed", check=name)
        results[name] = OK if passed else UNAVAILABLE
    return results


def health_routes(checks: Mapping[str, Check]) -> Sequence[BaseRoute]:
    """``/healthz`` and ``/readyz``, the latter running ``checks``."""

    async def healthz(_: Request) -> Response:
        return json_response(200, {"status": OK}, NO_STORE)

    async def readyz(_: Request) -> Response:
        results = await run_in_threadpool(run_checks, checks)
        ready = all(result == OK for result in results.values())
        body = {"status": OK if ready else UNAVAILABLE, "checks": results}
        return json_response(200 if ready else 503, body, NO_STORE)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
