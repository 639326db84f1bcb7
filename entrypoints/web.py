"""The web application wired from settings: the HTTP adapter over the configured stores,
the health probes (``/healthz``, ``/readyz``) over the same stores, and the pages (sign-in,
the admin workspace, the crew portal) beside ``/api``."""

from __future__ import annotations

import os

import attrs
import structlog
from starlette.applications import Starlette

from adapters.drivetime import centroids
from adapters.http.app import create_app
from adapters.http.cursors import CursorCodec
from adapters.http.deps import HttpDeps, NotInMemory
from adapters.http.health import Check, health_routes
from adapters.http.keycache import CachedAuthenticator
from adapters.http.processor import processor_routes
from adapters.http.ratelimit import RateLimiter
from adapters.http.routes import all_endpoints
from adapters.processor.stripe import StripeWebhook
from adapters.sql import Database
from adapters.web import SessionCodec, SignInThrottle, WebDeps, web_routes
from adapters.web.deps import new_portal_throttle
from booking_core.services.companies import authenticate
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.logs import configure_logging
from entrypoints.settings import Settings

SECRET_ENV = "BOOKING_SECRET_KEY"
SESSION_SECRET_ENV = "BOOKING_SESSION_SECRET"


def cursor_secret(database: Database) -> bytes:
    """The secret signing pagination cursors: ``BOOKING_SECRET_KEY``, else the one kept in
    the database (``Database.kept_secret``), so every worker and server of the database
    signs alike and a poller's cursor outlives a restart."""
    configured = os.environ.get(SECRET_ENV)
    return (configured or database.kept_secret("cursors")).encode()


def session_secret(settings: Settings, database: Database) -> bytes:
    """The secret signing the pages' session cookies: ``BOOKING_SESSION_SECRET``, else the
    one kept in the database, like the cursor secret: a restart signs nobody out."""
    configured = settings.session_secret or os.environ.get(SESSION_SECRET_ENV)
    return (configured or database.kept_secret("sessions")).encode()


def web_deps(container: Container, throttle: SignInThrottle | None = None) -> WebDeps:
    """The pages' dependencies from a container (``throttle`` default: counts on Redis
    when configured, in memory otherwise)."""
    settings = container.settings
    return WebDeps(
        uow=container.uow,
        reader=container.reader,
        clock=container.clock,
        hasher=container.hasher,
        sessions=SessionCodec(lambda: session_secret(settings, container.database)),
        throttle=throttle or SignInThrottle(settings.redis_url or "memory://"),
        base_url=settings.base_url,
        drive=container.drive,
        resolver=container.resolver,
        webhook_allow_hosts=container.webhook_allow_hosts,
        portal_throttle=new_portal_throttle(settings.redis_url or "memory://"),
        phones=container.phones,
        composer=container.composer,
    )


def http_deps(container: Container, rate_limiter: RateLimiter | None = None) -> HttpDeps:
    """The HTTP layer's dependencies from a container."""
    settings = container.settings
    database = container.database
    keys = CachedAuthenticator(
        lambda secret: authenticate(secret, uow=container.reader()), stamp=database.key_stamp
    )
    return HttpDeps(
        uow=container.uow,
        clock=container.clock,
        phones=container.phones,
        rate_limiter=rate_limiter or RateLimiter(settings.redis_url or "memory://"),
        cursors=CursorCodec(lambda: cursor_secret(database)),
        authenticate=keys,
        base_url=settings.base_url,
        reader=container.reader,
        memory_reader=lambda: database.memory_reader(NotInMemory),
        known_key=keys.known,
        drive=container.drive,
        resolver=container.resolver,
        webhook_allow_hosts=container.webhook_allow_hosts,
        request_threads=settings.request_threads,
    )


def readiness_checks(container: Container, rate_limiter: RateLimiter) -> dict[str, Check]:
    """What ``/readyz`` checks: the database, and Redis when the rate limits count there."""
    checks: dict[str, Check] = {"database": container.database.ping}
    if rate_limiter.shared:
        checks["redis"] = rate_limiter.ping
    return checks


def web_app(
    container: Container, deps: HttpDeps | None = None, pages: WebDeps | None = None
) -> Starlette:
    """``/api/v1``, the health probes, the card processor's webhook route and the pages
    over ``container`` (``deps`` and ``pages`` default: its own)."""
    deps = deps or http_deps(container)
    pages = pages or web_deps(container)
    if pages.api is None:  # the booking page books through the API's own pipeline
        pages = attrs.evolve(pages, api=deps)
    probes = health_routes(readiness_checks(container, deps.rate_limiter))
    secret = container.settings.stripe_webhook_secret
    stripe = processor_routes(StripeWebhook(secret).read if secret else None)
    return create_app(deps, all_endpoints(), extra_routes=[*probes, *stripe, *web_routes(pages)])


def warn_about_allowed_hosts(settings: Settings) -> None:
    """Log a warning when ``BOOKING_WEBHOOK_ALLOW_HOSTS`` exempts hosts from the webhook
    URL policy: right on a developer's machine, a hole in production."""
    if settings.webhook_allow_hosts:
        structlog.get_logger("booking").warning(
            "webhook_allow_hosts_set",
            hosts=sorted(settings.webhook_allow_hosts),
            note="these hosts may receive webhooks over http and on private addresses;"
            " for development and tests only",
        )


def build_app(settings: Settings | None = None) -> Starlette:
    """The ASGI application for ``settings`` (default: the environment)."""
    configure_logging()
    container = bootstrap(settings)
    warn_about_allowed_hosts(container.settings)
    centroids()  # the zip data, loaded before the first request rather than by it
    return web_app(container)
