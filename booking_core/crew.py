"""The crew roster: crew members with service areas, excluded services, weekly working
hours in company local time and time off; and teams, whose jobs are each member's jobs.

Teams are their own records and are not in the API (SPEC.md change log, 2026-10-13).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, time

import attrs
from attrs import frozen

from booking_core.catalog import Catalog
from booking_core.errors import ValidationFailed


@frozen
class WorkingHours:
    """One stretch of a weekday (ISO 1 = Monday) in company local wall-clock time."""

    weekday: int
    start: time
    end: time

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.weekday <= 7:
            raise ValueError("weekday is an ISO weekday number 1..7")
        if not self.start < self.end:
            raise ValueError("working hours end after they start")


@frozen
class TimeOff:
    """An absence, as a half-open interval of instants."""

    start: datetime
    end: datetime

    def __attrs_post_init__(self) -> None:
        if self.start.utcoffset() is None or self.end.utcoffset() is None:
            raise ValueError("time off is given in aware instants")
        if not self.start < self.end:
            raise ValueError("time off ends after it starts")


@frozen(kw_only=True)
class CrewMember:
    """A person who does jobs. Every service not in ``excluded_service_ids`` may be given."""

    id: str
    company_id: str
    name: str
    home_zip: str
    created_at: datetime
    updated_at: datetime
    service_areas: tuple[str, ...] = ()
    excluded_service_ids: frozenset[str] = frozenset()
    working_hours: tuple[WorkingHours, ...] = ()
    time_off: tuple[TimeOff, ...] = ()
    active: bool = True

    def may_do(self, service_id: str) -> bool:
        """True unless the member is excluded from the service."""
        return service_id not in self.excluded_service_ids

    def serves(self, zip_code: str) -> bool:
        """True when ``zip_code`` is in the member's service areas."""
        return zip_code in self.service_areas


@frozen(kw_only=True)
class Team:
    """Crew members who work jobs together; a team's job is each member's job.

    A team is a name for a set of the company's crew members (``member_ids``, in the
    order they were chosen); it is stored apart from the members and is not in the API.
    Booking a team is booking its members together (``crewIds`` naming them all)."""

    id: str
    company_id: str
    name: str
    member_ids: tuple[str, ...]
    created_at: datetime
    updated_at: datetime


def deprecated_service_ids(member: CrewMember, catalog: Catalog) -> list[str]:
    """The deprecated ``serviceIds``: every active service of the company the member may be
    given, always in full (removed after 2027-01-13)."""
    return [s.id for s in catalog.services() if s.active and member.may_do(s.id)]


def new_crew_member(
    *,
    member_id: str,
    company_id: str,
    name: str,
    home_zip: str,
    at: datetime,
    service_areas: Iterable[str] = (),
    excluded_service_ids: Iterable[str] = (),
    working_hours: Iterable[WorkingHours] = (),
) -> CrewMember:
    """A crew member after checking its fields."""
    errors: dict[str, str] = {}
    if not name.strip() or len(name) > 200:
        errors["name"] = "Required, at most 200 characters."
    areas = tuple(dict.fromkeys(service_areas))
    for index, zip_code in enumerate((home_zip, *areas)):
        if len(zip_code) != 5 or not zip_code.isdigit():
            errors["home_zip" if index == 0 else f"service_areas.{index - 1}"] = "A 5-digit zip."
    if errors:
        raise ValidationFailed(errors)
    return CrewMember(
        id=member_id,
        company_id=company_id,
        name=name.strip(),
        home_zip=home_zip,
        created_at=at,
        updated_at=at,
        service_areas=areas,
        excluded_service_ids=frozenset(excluded_service_ids),
        working_hours=tuple(working_hours),
    )


def deactivate(member: CrewMember, *, at: datetime) -> CrewMember:
    """Take a member off the active roster."""
    return attrs.evolve(member, active=False, updated_at=at)
