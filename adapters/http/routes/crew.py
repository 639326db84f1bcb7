"""``GET /crew``: active crew members (never teams)."""

from __future__ import annotations

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.schemas import INSTANT, STRING, STRINGS, closed
from booking_core.crew import CrewMember, deprecated_service_ids

CREW_MEMBER_SCHEMA = closed(
    "CrewMember",
    "An active crew member; every active service not excluded may be given.",
    {
        "id": STRING,
        "name": STRING,
        "homeZip": STRING,
        "serviceAreas": STRINGS,
        "excludedServiceIds": STRINGS,
        "serviceIds": {
            **STRINGS,
            "deprecated": True,
            "description": "Every active service the member may be given, in full; "
            "removed after 2027-01-13. Use excludedServiceIds.",
        },
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
    },
)


def get_crew(ctx: Context) -> Reply:
    """Active crew members with service areas and excluded services."""
    page = ctx.page_request("crew", {})
    with ctx.deps.read() as uow:
        result = uow.crew.list_active(ctx.company_id, page)
        catalog = uow.catalogs.get(ctx.company_id)

    def render(member: CrewMember) -> dict[str, object]:
        return {
            "id": member.id,
            "name": member.name,
            "homeZip": member.home_zip,
            "serviceAreas": list(member.service_areas),
            "excludedServiceIds": sorted(member.excluded_service_ids),
            "serviceIds": deprecated_service_ids(member, catalog),
            "createdAt": ctx.render().time(member.created_at),
            "updatedAt": ctx.render().time(member.updated_at),
        }

    return ctx.page_reply(result, render)


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/crew",
        scope="crews:read",
        handler=get_crew,
        paginated=True,
        response=CREW_MEMBER_SCHEMA,
        tag="crew",
        summary="Active crew members (not teams) with service areas and excluded services",
    )
]
