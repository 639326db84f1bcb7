"""Crew members: roster fields as columns, service areas and hours as JSON documents.

Availability reads the whole active roster on every request, so a row is decoded once
per stored content (``_decoded``): the cache is keyed by every value the member is
built from, so an edited member is a new key and is served at once, never a stale one.
The whole active roster is also kept in the read cache (``adapters.sql.readcache``) while
the change feed vouches for it, and its pages are cut from it; adding or saving a member
announces the change in the same transaction.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import select, update

from adapters.sql import codecs
from adapters.sql.changes import Kind
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.readcache import announce, through
from adapters.sql.tables import crew_members
from booking_core.crew import CrewMember, TimeOff, WorkingHours
from booking_core.errors import NotFoundError
from booking_core.paging import Page, PageRequest, Position, page_of

Zips = tuple[str, ...]
ServiceIds = frozenset[str]
Hours = tuple[WorkingHours, ...]
Absences = tuple[TimeOff, ...]


def _values(member: CrewMember) -> dict[str, Any]:
    return {
        "company_id": member.company_id,
        "id": member.id,
        "name": member.name,
        "home_zip": member.home_zip,
        "service_areas": codecs.dumps(member.service_areas, Zips),
        "excluded_service_ids": codecs.dumps(member.excluded_service_ids, ServiceIds),
        "working_hours": codecs.dumps(member.working_hours, Hours),
        "time_off": codecs.dumps(member.time_off, Absences),
        "active": member.active,
        "created_at": member.created_at,
        "updated_at": member.updated_at,
    }


*_STORED, _CHANGED_AT, _CHANGED_XID = (column.name for column in crew_members.columns)
"""What a member is decoded from: every column of a row (they come first, in table
order, in every query here) but the last two, the change stamps."""
assert (_CHANGED_AT, _CHANGED_XID) == ("changed_at", "changed_xid"), "stamps come last"

DECODED_MEMBERS = 4096
"""Decoded members kept (least recently used go first): a few large rosters' worth."""


def _member(row: AnyRow) -> CrewMember:
    return _decoded(row[: len(_STORED)])


@lru_cache(maxsize=DECODED_MEMBERS)
def _decoded(stored: tuple[Any, ...]) -> CrewMember:
    """The member a row's stored values describe (``_STORED`` order), decoded once."""
    row = dict(zip(_STORED, stored, strict=True))
    return CrewMember(
        id=row["id"],
        company_id=row["company_id"],
        name=row["name"],
        home_zip=row["home_zip"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        service_areas=codecs.loads_any(row["service_areas"], Zips),
        excluded_service_ids=codecs.loads_any(row["excluded_service_ids"], ServiceIds),
        working_hours=codecs.loads_any(row["working_hours"], Hours),
        time_off=codecs.loads_any(row["time_off"], Absences),
        active=row["active"],
    )


class SqlCrewRepository:
    """Crew members by company; lists show active members only."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, member_id: str) -> CrewMember:
        return _member(self._cx.row(crew_members, company_id, member_id, "crew member"))

    def get_for_update(self, company_id: str, member_id: str) -> CrewMember:
        return _member(
            self._cx.row(crew_members, company_id, member_id, "crew member", locked=True)
        )

    def add(self, member: CrewMember) -> None:
        conflict = f"Crew member {member.id} already exists."
        self._cx.insert_new(crew_members, _values(member), conflict)
        self._cx.touch(crew_members, member.company_id, member.id)
        announce(self._cx, Kind.CREW, member.company_id)

    def save(self, member: CrewMember) -> None:
        statement = (
            update(crew_members)
            .where(crew_members.c.company_id == member.company_id, crew_members.c.id == member.id)
            .values(**without_keys(_values(member)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("crew member", member.id)
        self._cx.touch(crew_members, member.company_id, member.id)
        announce(self._cx, Kind.CREW, member.company_id)

    def list_active(self, company_id: str, page: PageRequest) -> Page[CrewMember]:
        if page.by_change or (page.after is not None and page.after.at.tzinfo is None):
            return self._page(company_id, page)
        # Every availability check and booking reads the whole active roster, newest
        # first, page after page (``MAX_LIMIT`` members a page): it is kept whole in the
        # read cache while the change feed vouches for it, and each page is cut from it.
        roster = through(self._cx, Kind.CREW, company_id, lambda: self._roster(company_id))
        return _cut(roster, page)

    def _page(self, company_id: str, page: PageRequest) -> Page[CrewMember]:
        where = [crew_members.c.active]
        return self._cx.keyset_page(crew_members, company_id, page, where, _member)

    def _roster(self, company_id: str) -> tuple[CrewMember, ...]:
        """Every active member, newest first: the keyset order, ``(created_at, id)``
        descending (ids sort by byte, as Python's strings do)."""
        c = crew_members.c
        statement = (
            select(crew_members)
            .where(c.company_id == company_id, c.active)
            .order_by(c.created_at.desc(), c.id.desc())
        )
        return tuple(_member(row) for row in self._cx.execute(statement))


def _cut(roster: tuple[CrewMember, ...], page: PageRequest) -> Page[CrewMember]:
    """The page of the newest-first ``roster`` that ``keyset_page`` would read: the
    members strictly before ``page.after``, at most ``page.limit`` of them."""
    start = 0
    if page.after is not None:
        cursor = (page.after.at, page.after.id)
        start = next(
            (n for n, m in enumerate(roster) if (m.created_at, m.id) < cursor), len(roster)
        )
    rows = roster[start : start + page.limit + 1]
    return page_of([(Position(m.created_at, m.id), m) for m in rows], page)
