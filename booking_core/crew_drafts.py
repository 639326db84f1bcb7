"""Crew members as a company writes them, before they are checked: drafts, the rules each
must meet (every problem at once, each at its field path), and how a list of drafts is
merged into the roster (by id, else by name).

A draft with an ``id`` changes that member (an id the company does not have is refused:
ids are drawn by the service, never chosen). A draft without one changes the active
member of that name (case and spacing aside) if there is exactly one, else adds a member.
Nobody is removed: a member leaves the roster by ``active: false``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, time, timedelta

import attrs
from attrs import frozen

from booking_core.catalog import Catalog
from booking_core.catalog_rules import ZIP_PATTERN, Problems, zip_problem
from booking_core.crew import CrewMember, TimeOff, WorkingHours
from booking_core.errors import ValidationFailed

MAX_HOURS = 100
"""Working-hour stretches one member may have (a week of split shifts is far fewer)."""


@frozen(kw_only=True)
class WorkingHoursDraft:
    """A stretch of a weekday (ISO 1 = Monday), company local time, as written."""

    weekday: int
    start: time
    end: time


@frozen(kw_only=True)
class TimeOffDraft:
    """An absence from ``start`` to ``end`` (half-open), as written."""

    start: datetime
    end: datetime


@frozen(kw_only=True)
class CrewMemberDraft:
    """A crew member as written; without ``id`` it is matched by name or added."""

    id: str | None = None
    name: str
    home_zip: str
    service_areas: tuple[str, ...] = ()
    excluded_service_ids: tuple[str, ...] = ()
    working_hours: tuple[WorkingHoursDraft, ...] = ()
    time_off: tuple[TimeOffDraft, ...] = ()
    active: bool = True


@frozen(kw_only=True)
class CrewDraft:
    """Crew members to add or change."""

    members: tuple[CrewMemberDraft, ...] = ()


@frozen
class CrewChanges:
    """What merging a crew draft does: members to add, to save, and left as they were."""

    added: tuple[CrewMember, ...] = ()
    updated: tuple[CrewMember, ...] = ()
    unchanged: tuple[CrewMember, ...] = ()
    still_booked: tuple[tuple[CrewMember, int], ...] = ()
    """Members this merge makes inactive who still hold scheduled jobs from now on, with
    how many: the jobs stay theirs until the office gives them to someone else."""


def name_key(name: str) -> str:
    """How names are matched: case-folded, runs of spaces as one."""
    return " ".join(name.split()).casefold()


def _member_problems(
    problems: Problems,
    path: str,
    draft: CrewMemberDraft,
    *,
    service_ids: set[str],
    known_zip: Callable[[str], bool],
) -> None:
    problems.name(f"{path}.name", draft.name)
    for where, zip_code in (
        ("home_zip", draft.home_zip),
        *((f"service_areas.{i}", z) for i, z in enumerate(draft.service_areas)),
    ):
        if not ZIP_PATTERN.match(zip_code):
            problems.add(f"{path}.{where}", zip_problem(zip_code, listed=where != "home_zip"))
        elif not known_zip(zip_code):
            problems.add(f"{path}.{where}", f"Unknown US zip code {zip_code!r}.")
    problems.entries(f"{path}.service_areas", draft.service_areas)
    problems.unique(f"{path}.service_areas", draft.service_areas, "Listed twice.")
    for index, service_id in enumerate(draft.excluded_service_ids):
        if service_id not in service_ids:
            problems.add(
                f"{path}.excluded_service_ids.{index}", f"No service {service_id!r} in the catalog."
            )
    problems.unique(f"{path}.excluded_service_ids", draft.excluded_service_ids, "Listed twice.")
    problems.entries(f"{path}.working_hours", draft.working_hours, MAX_HOURS)
    for index, hours in enumerate(draft.working_hours):
        problems.between(f"{path}.working_hours.{index}.weekday", hours.weekday, 1, 7)
        if not hours.start < hours.end:
            problems.add(f"{path}.working_hours.{index}.end", "After start.")
        elif any(
            other.weekday == hours.weekday and other.start < hours.end and hours.start < other.end
            for other in draft.working_hours[:index]
        ):
            problems.add(f"{path}.working_hours.{index}", "Overlaps another stretch of that day.")
    problems.entries(f"{path}.time_off", draft.time_off)
    for index, off in enumerate(draft.time_off):
        if off.start.utcoffset() is None or off.end.utcoffset() is None:
            problems.add(f"{path}.time_off.{index}", "Times with a UTC offset.")
        elif not off.start < off.end:
            problems.add(f"{path}.time_off.{index}.end", "After start.")


def merge_crew(
    draft: CrewDraft,
    *,
    company_id: str,
    catalog: Catalog,
    stored: Mapping[str, CrewMember],
    roster: Sequence[CrewMember],
    at: datetime,
    mint_id: Callable[[], str],
    known_zip: Callable[[str], bool] = lambda _: True,
) -> CrewChanges:
    """The members ``draft`` adds and changes, or ``ValidationFailed`` naming every problem
    (``members.1.home_zip``). ``stored``: the company's members the draft names by id (an
    id missing from it is not the company's); ``roster``: its active members, whom a draft
    without id is matched with by name; ``known_zip``: whether drive times know a zip."""
    problems = Problems()
    problems.entries("members", draft.members)
    service_ids = {s.id for s in catalog.services()}
    by_name: dict[str, list[CrewMember]] = {}
    for member in roster:
        by_name.setdefault(name_key(member.name), []).append(member)
    targets: dict[str, int] = {}
    added: list[CrewMember] = []
    updated: list[CrewMember] = []
    unchanged: list[CrewMember] = []
    for index, item in enumerate(draft.members):
        path = f"members.{index}"
        _member_problems(problems, path, item, service_ids=service_ids, known_zip=known_zip)
        current: CrewMember | None = None
        if item.id is not None:
            current = stored.get(item.id)
            if current is None:
                problems.add(
                    f"{path}.id",
                    "No crew member of this company has this id; leave it out to add one.",
                )
                continue
        else:
            same = by_name.get(name_key(item.name), [])
            if len(same) > 1:
                problems.add(
                    f"{path}.name",
                    f"{len(same)} active crew members have this name: give the one meant by id.",
                )
                continue
            current = same[0] if same else None
        key = current.id if current is not None else f"new:{name_key(item.name)}"
        if key in targets:
            problems.add(
                f"{path}.id" if item.id else f"{path}.name",
                f"The same crew member as members.{targets[key]}.",
            )
            continue
        targets[key] = index
        if problems.errors:
            continue  # nothing is built once anything is wrong; the checks go on
        # Members added together are a microsecond apart, so that the roster (oldest
        # first) and an export keep the document's order.
        when = at if current is not None else at + timedelta(microseconds=len(added))
        member = _merged(item, current, company_id=company_id, at=when, mint_id=mint_id)
        if current is None:
            added.append(member)
        elif member == attrs.evolve(current, updated_at=at):
            unchanged.append(current)
        else:
            updated.append(member)
    if problems.errors:
        raise ValidationFailed(problems.errors, "The crew has problems; nothing was saved.")
    return CrewChanges(tuple(added), tuple(updated), tuple(unchanged))


def _merged(
    draft: CrewMemberDraft,
    current: CrewMember | None,
    *,
    company_id: str,
    at: datetime,
    mint_id: Callable[[], str],
) -> CrewMember:
    return CrewMember(
        id=current.id if current is not None else mint_id(),
        company_id=company_id,
        name=draft.name,
        home_zip=draft.home_zip,
        created_at=current.created_at if current is not None else at,
        updated_at=at,
        service_areas=draft.service_areas,
        excluded_service_ids=frozenset(draft.excluded_service_ids),
        working_hours=tuple(WorkingHours(h.weekday, h.start, h.end) for h in draft.working_hours),
        time_off=tuple(TimeOff(t.start, t.end) for t in draft.time_off),
        active=draft.active,
    )


def member_draft(member: CrewMember) -> CrewMemberDraft:
    """``member`` as a draft (its excluded services sorted): what an export writes."""
    return CrewMemberDraft(
        id=member.id,
        name=member.name,
        home_zip=member.home_zip,
        service_areas=member.service_areas,
        excluded_service_ids=tuple(sorted(member.excluded_service_ids)),
        working_hours=tuple(
            WorkingHoursDraft(weekday=h.weekday, start=h.start, end=h.end)
            for h in member.working_hours
        ),
        time_off=tuple(TimeOffDraft(start=t.start, end=t.end) for t in member.time_off),
        active=member.active,
    )


def crew_draft(members: Sequence[CrewMember]) -> CrewDraft:
    """A roster as a draft, oldest member first."""
    ordered = sorted(members, key=lambda m: (m.created_at, m.id))
    return CrewDraft(members=tuple(member_draft(m) for m in ordered))
