"""Crew members as ``GET /crew`` answers them: active members only, never teams, with
the services they may not be given and (deprecated) the full list they may."""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import RenderContext
from booking_core.catalog import Catalog
from booking_core.crew import CrewMember, deprecated_service_ids


@frozen
class CrewMemberView:
    """An active crew member; every active service not excluded may be given."""

    id: str
    name: str
    home_zip: str
    service_areas: tuple[str, ...]
    excluded_service_ids: tuple[str, ...]
    service_ids: tuple[str, ...] = field(
        metadata=schema(
            deprecated=True,
            description="Every active service the member may be given, in full; "
            "removed after 2027-01-13. Use excludedServiceIds.",
        )
    )
    created_at: datetime
    updated_at: datetime


def crew_member_view(member: CrewMember, catalog: Catalog, ctx: RenderContext) -> CrewMemberView:
    """The view of a crew member; ``catalog`` decides the deprecated ``serviceIds``."""
    return CrewMemberView(
        id=member.id,
        name=member.name,
        home_zip=member.home_zip,
        service_areas=member.service_areas,
        excluded_service_ids=tuple(sorted(member.excluded_service_ids)),
        service_ids=tuple(deprecated_service_ids(member, catalog)),
        created_at=ctx.time(member.created_at),
        updated_at=ctx.time(member.updated_at),
    )
