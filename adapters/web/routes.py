"""Every route of the pages: sign-in, the admin workspace, the crew portal, the stylesheet.

A module of pages adds its ``routes(deps)`` to ``PAGE_MODULES`` (and its pages to
``adapters.web.nav``). Unknown addresses answer a 404 page, not the API's JSON: the
workspace's under ``/admin``, ``/crew`` and ``/account``, a customer page's under any
other ``/{slug}/...``; only ``/api/...`` keeps the API's JSON 404.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from adapters.web import (
    admin,
    admin_booking,
    book,
    calendar,
    crew,
    customer,
    customer_pages,
    keys,
    lead_pages,
    people,
    portal,
    quote_page,
    setup_pages,
    signin,
    track,
    webhook_pages,
)
from adapters.web.customer import NOT_FOUND, customer_page
from adapters.web.deps import WebDeps
from adapters.web.pages import ANY_METHOD, ASSET_VERSION, STATIC, PageError, Visit, page
from booking_core.services.users import session_user

PAGE_MODULES: tuple[Callable[[WebDeps], list[BaseRoute]], ...] = (
    signin.routes,
    admin.routes,
    crew.routes,
    setup_pages.routes,
    calendar.routes,
    admin_booking.routes,
    customer_pages.routes,
    lead_pages.routes,
    keys.routes,
    webhook_pages.routes,
    people.routes,
    track.routes,
    quote_page.routes,
    book.routes,
    customer.routes,
    portal.routes,
)
STYLESHEET = (STATIC / "app.css").read_bytes()
ICON = (STATIC / "icon.svg").read_bytes()


async def icon(_: Request) -> Response:
    """``/assets/icon.svg``, also at ``/favicon.ico`` (which browsers ask for whatever a
    page links): the pages' tab icon, the brand mark's "B"."""
    return Response(
        ICON,
        media_type="image/svg+xml",
        headers={"cache-control": "public, max-age=86400", "x-content-type-options": "nosniff"},
    )


async def stylesheet(request: Request) -> Response:
    """``/assets/app.css``: cached for a year; its address carries its version."""
    cache = "public, max-age=31536000, immutable"
    if request.query_params.get("v") != ASSET_VERSION:
        cache = "public, max-age=300"
    return Response(
        STYLESHEET,
        media_type="text/css",
        headers={"cache-control": cache, "x-content-type-options": "nosniff"},
    )


def _not_found(path: str, deps: WebDeps) -> BaseRoute:
    def handler(visit: Visit) -> Response:
        # Signed in, the 404 page keeps the top bar and offers the way home, not sign-in.
        session = visit.session
        if session.user_id is not None:
            user = session_user(session.user_id, session.epoch, uow=deps.reader())
            if user is not None:
                visit.user = user
                with deps.reader() as uow:
                    visit.company = uow.companies.get(user.company_id)
        raise PageError(404, "Not found", "There is nothing here, or it is not yours to see.")

    return page(path, deps, handler, methods=("GET", "POST"))


def _no_customer_page(_: Visit) -> Response:
    raise NOT_FOUND


class _OutsideApi(Route):
    """A route that never matches an address under ``/api``: those keep the API's own
    404 and 405 answers, in its error shape."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if str(scope.get("path", "")).startswith("/api/"):
            return Match.NONE, {}
        return super().matches(scope)


def web_routes(deps: WebDeps) -> list[BaseRoute]:
    """The routes of every page, then the 404 pages of unknown addresses: the
    workspace's, a customer page's, and the API's JSON one under ``/api``."""
    routes: list[BaseRoute] = [
        Route("/assets/app.css", stylesheet, methods=["GET"]),
        Route("/assets/icon.svg", icon, methods=["GET"]),
        Route("/favicon.ico", icon, methods=["GET"]),
    ]
    for module_routes in PAGE_MODULES:
        routes.extend(module_routes(deps))
    routes.extend(
        _not_found(path, deps)
        for path in ("/admin/{rest:path}", "/crew/{rest:path}", "/account/{rest:path}")
    )
    unknown = customer_page(  # writes nothing, so a POST needs no CSRF token to learn that
        "/{slug}/{rest:path}", deps, _no_customer_page, methods=ANY_METHOD, csrf=lambda _: True
    )
    routes.append(_OutsideApi(unknown.path, unknown.endpoint, methods=ANY_METHOD))
    return routes
