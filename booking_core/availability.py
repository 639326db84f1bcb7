"""Availability: the open start times of a job, ranked by drive time, and the booking check.

One core decides both (DECISIONS.md, Scheduling), so a listed slot is bookable until
another job takes it. For each eligible crew member and each local date of the job, the
core computes *windows*: ranges of start instants where the whole job, plus the drive
from the previous stop (the job that ended last before it that day, else the member's
home) and the drive to the next stop (that day's next job), fits inside one unbroken run
of working hours without touching another job or time off. ``available_slots`` walks the
quarter-hour grid of the date through those windows; ``check_slot`` looks one start up
in the same windows. Everything inside the loops is integer epoch seconds.

Ranking: drive minutes from the previous stop, then start, then crew ids. One slot per
start time: the crew for a start is the ``crew_size`` free members with the shortest
drives from their previous stops (ties by id), and the slot's drive is the longest of
theirs. See docs/scheduling.md for the rules, the DST handling and the drive constants.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from attrs import field, frozen

from booking_core.clock import require_aware
from booking_core.crew import CrewMember
from booking_core.errors import SlotTaken, SlotUnavailable
from booking_core.ports import DriveTime
from booking_core.timeline import epoch_seconds, epoch_seconds_up
from booking_core.windows import Plan, lookup


def _aware(_: object, attribute: object, value: datetime) -> None:
    require_aware(value, getattr(attribute, "name", "time"))


def _utc(value: datetime) -> datetime:
    if value.tzinfo is UTC:  # as storage gives it: aware, and nothing to convert
        return value
    return require_aware(value, "a busy block's start and end").astimezone(UTC)


@frozen
class Block:
    """A crew member's busy time at a place (an existing job), half-open; kept in UTC."""

    start: datetime = field(converter=_utc)
    end: datetime = field(converter=_utc)
    zip_code: str
    booking_id: str | None = None
    seconds: tuple[int, int] = field(init=False, repr=False, eq=False)
    """Derived: ``(start, end)`` as epoch seconds, start rounded down and end up."""

    def __attrs_post_init__(self) -> None:
        if not self.start < self.end:
            raise ValueError("a busy block ends after it starts")
        object.__setattr__(self, "seconds", (epoch_seconds(self.start), epoch_seconds_up(self.end)))


@frozen
class Slot:
    """An open start: the job's first day ``[start, end)`` in the company's zone, the
    crew that would do it, and the longest of their drives from the previous stop.

    ``spans`` holds every day's ``(start, end)`` of a multi-day job, the first included.
    Times are in the company's zone; Python subtracts two datetimes of one zone on the
    wall clock, so measure lengths in UTC (``end.astimezone(UTC) - start.astimezone(UTC)``).
    """

    start: datetime
    end: datetime
    crew_ids: tuple[str, ...]
    drive_minutes: int
    spans: tuple[tuple[datetime, datetime], ...] = ()


def rank_key(slot: Slot) -> tuple[int, datetime, tuple[str, ...]]:
    """The ranking of slots (best first): drive minutes from the previous stop, then the
    start instant (compared in UTC: on the night the clocks go back, 01:00 EDT comes
    before 01:00 EST, which the zone's wall clock would put level), then the crew ids."""
    return (slot.drive_minutes, slot.start.astimezone(UTC), slot.crew_ids)


def _zone(value: ZoneInfo | str) -> ZoneInfo:
    return value if isinstance(value, ZoneInfo) else ZoneInfo(value)


def _id_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


def _crew_ids(value: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(dict.fromkeys(value))


@frozen
class SlotQuery:
    """What is asked: a service at a zip on a local date, for a job of some length.

    ``crew_ids`` names the members who must all be free together (``crew_size`` is then
    their number); ``days`` books the same wall-clock start on that many consecutive
    local dates, each for the whole duration. ``ignore_booking_ids`` are jobs that do
    not block (a booking being rescheduled). ``zip_field`` names the request field an
    unknown zip is reported on (``zip``, or ``address.zip`` when booking).
    """

    service_id: str
    zip_code: str
    local_date: date
    zone: ZoneInfo = field(converter=_zone)
    duration_minutes: int
    now: datetime = field(validator=_aware)
    min_notice_minutes: int
    crew_size: int = 1
    crew_ids: tuple[str, ...] | None = field(default=None, converter=_crew_ids)
    days: int = 1
    ignore_booking_ids: frozenset[str] = field(default=frozenset(), converter=_id_set)
    zip_field: str = "zip"

    def __attrs_post_init__(self) -> None:
        if self.duration_minutes < 1 or self.min_notice_minutes < 0:
            raise ValueError("duration_minutes >= 1 and min_notice_minutes >= 0")
        if self.crew_size < 1 or self.days < 1:
            raise ValueError("crew_size and days are at least 1")
        if self.crew_ids is not None and not self.crew_ids:
            raise ValueError("crew_ids names at least one member when given")

    @property
    def needed(self) -> int:
        """How many members a slot needs."""
        return len(self.crew_ids) if self.crew_ids is not None else self.crew_size


def available_slots(
    query: SlotQuery,
    *,
    crew: Sequence[CrewMember],
    busy: Mapping[str, Sequence[Block]],
    drive: DriveTime,
) -> list[Slot]:
    """Open starts on ``query.local_date``, best first (see the module docstring).

    ``busy`` maps crew ids to their jobs; only jobs on or next to the date(s) matter, so
    callers pass those. Raises ``UnknownZip`` on ``query.zip_field`` for an unknown zip.
    """
    plan = Plan(query, crew, busy, drive)
    if plan.refusal is not None:
        return []
    grid = plan.days[0].grid
    options: dict[int, list[tuple[int, str]]] = {}
    later: dict[int, tuple[int, ...]] = {}
    for member in plan.members:
        for lo, hi, minutes in member.windows[0]:
            for index in range(bisect_left(grid, lo), bisect_right(grid, hi)):
                longest: int | None = minutes
                if len(plan.days) > 1:
                    if index not in later:
                        later[index] = plan.later_instants(index)
                    longest = member.later_drive(later[index], minutes)
                if longest is not None:
                    options.setdefault(index, []).append((longest, member.id))
    ranked = []
    for index, choices in options.items():
        picked = _pick(choices, query.needed)
        if picked is not None:
            ranked.append((picked[0], grid[index], picked[1], index))
    ranked.sort()
    return [_slot(plan, index, picked_drive, ids) for picked_drive, _, ids, index in ranked]


def check_slot(
    query: SlotQuery,
    start: datetime,
    *,
    crew: Sequence[CrewMember],
    busy: Mapping[str, Sequence[Block]],
    drive: DriveTime,
) -> Slot:
    """The slot at exactly ``start``, decided as ``available_slots`` decides.

    Raises ``SlotTaken`` when only other jobs stand in the way (taken since listing),
    ``SlotUnavailable`` with a reason otherwise, ``UnknownZip`` on ``query.zip_field``.
    """
    require_aware(start, "start")
    local = start.astimezone(query.zone)
    label = local.isoformat()
    plan = Plan(query, crew, busy, drive)
    if local.date() != query.local_date:
        raise SlotUnavailable(label, f"not on {query.local_date.isoformat()}")
    instant = epoch_seconds(start)
    index = plan.days[0].grid_index(instant)
    if (local.minute % 15, local.second, local.microsecond) != (0, 0, 0) or index is None:
        raise SlotUnavailable(label, "not on the quarter hour")
    if instant < epoch_seconds_up(query.now):
        raise SlotUnavailable(label, "in the past")
    if instant < plan.threshold:
        raise SlotUnavailable(label, f"less than {query.min_notice_minutes} minutes' notice")
    if plan.refusal is not None:
        raise SlotUnavailable(label, plan.refusal)
    later = plan.later_instants(index) if len(plan.days) > 1 else ()
    choices = []
    blocked = []
    for member in plan.members:
        minutes = member.drive_at(member.windows, instant, later)
        if minutes is not None:
            choices.append((minutes, member.id))
        elif member.drive_at(plan.windows_without_jobs(member), instant, later) is not None:
            blocked.append(member.id)
    picked = _pick(choices, query.needed)
    if picked is not None:
        return _slot(plan, index, picked[0], picked[1])
    if len(choices) + len(blocked) >= query.needed:
        if later:
            label = _taken_day_label(plan, blocked, query.crew_ids is not None, instant, later)
        raise SlotTaken(label, blocked[0] if query.crew_ids is not None else None)
    raise SlotUnavailable(label, plan.reason(instant, later, {i for _, i in choices}, blocked))


def _taken_day_label(
    plan: Plan, blocked: list[str], named: bool, instant: int, later: tuple[int, ...]
) -> str:
    """The local start of the day of a multi-day job that other jobs take: the first such
    day of the member the refusal names (``named``), else the earliest day on which some
    busy member is taken (it names no member)."""
    starts = (instant, *later)
    members = {m.id: m for m in plan.members}

    def first_taken(member_id: str) -> int:
        windows = members[member_id].windows
        return next((d for d, at in enumerate(starts) if lookup(windows[d], at) is None), 0)

    day = min(first_taken(member_id) for member_id in (blocked[:1] if named else blocked))
    return datetime.fromtimestamp(starts[day], tz=plan.zone).isoformat()


def open_crews_at(
    query: SlotQuery,
    start: datetime,
    *,
    crew: Sequence[CrewMember],
    busy: Mapping[str, Sequence[Block]],
    drive: DriveTime,
) -> list[Slot]:
    """Every member free on their own at exactly ``start``, each as the slot
    ``check_slot`` would give them, best ranked first (drive minutes, then id): the
    choices ``check_slot`` picks the first of. Empty when ``start`` is not a slot at all
    (``check_slot`` says why)."""
    require_aware(start, "start")
    plan = Plan(query, crew, busy, drive)
    instant = epoch_seconds(start)
    index = plan.days[0].grid_index(instant)
    if plan.refusal is not None or index is None or instant < plan.threshold:
        return []
    later = plan.later_instants(index) if len(plan.days) > 1 else ()
    choices = []
    for member in plan.members:
        minutes = member.drive_at(member.windows, instant, later)
        if minutes is not None:
            choices.append((minutes, member.id))
    return [_slot(plan, index, minutes, (member_id,)) for minutes, member_id in sorted(choices)]


def _pick(choices: list[tuple[int, str]], needed: int) -> tuple[int, tuple[str, ...]] | None:
    """The ``needed`` shortest drives (ties by id): (the longest of them, sorted ids)."""
    if len(choices) < needed:
        return None
    if needed == 1:
        best = min(choices)
        return best[0], (best[1],)
    chosen = sorted(choices)[:needed]
    return chosen[-1][0], tuple(sorted(member_id for _, member_id in chosen))


def _slot(plan: Plan, index: int, drive_minutes: int, crew_ids: tuple[str, ...]) -> Slot:
    """The slot at grid position ``index`` for a chosen crew."""
    first = plan.days[0].grid[index]
    starts = (first, *plan.later_instants(index)) if len(plan.days) > 1 else (first,)
    zone, length = plan.zone, plan.duration
    spans = tuple(
        (datetime.fromtimestamp(s, zone), datetime.fromtimestamp(s + length, zone)) for s in starts
    )
    return Slot(spans[0][0], spans[0][1], crew_ids, drive_minutes, spans)
