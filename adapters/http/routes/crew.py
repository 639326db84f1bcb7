"""``GET /crew``: active crew members (never teams)."""

from __future__ import annotations

from adapters.http.deprecation import SERVICE_IDS
from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.queries import PageQuery
from adapters.http.views.crew import CrewMemberView, crew_member_view


def get_crew(ctx: Context) -> Reply:
    """Active crew members with service areas and excluded services."""
    page = ctx.page_request("crew", {})
    with ctx.deps.read() as uow:
        result = uow.crew.list_active(ctx.company_id, page)
        catalog = uow.catalogs.get(ctx.company_id)
    render = ctx.render()
    return ctx.page_reply(result, lambda member: crew_member_view(member, catalog, render))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/crew",
        scope="crews:read",
        handler=get_crew,
        paginated=True,
        query=PageQuery,
        response=CrewMemberView,
        deprecation=lambda _: SERVICE_IDS,
        tag="crew",
        summary="Active crew members (not teams) with service areas and excluded services",
    )
]
