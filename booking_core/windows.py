"""Where a job fits for each crew member: the shared core of listing and checking.

For each eligible member and each local date of the job, ``Plan`` computes *windows*:
ranges of start instants (epoch seconds) where the whole job, the drive from the
previous stop and the drive to the next stop fit inside one unbroken run of working
hours without touching another job or time off. ``booking_core.availability`` walks the
quarter-hour grid through them (listing) or looks one start up in them (checking).

Stops: the previous stop is the job of that local date that ended last at or before the
start (ties: the later-starting one), else the member's home; the next stop is that
date's next job. A pair of zips without a known drive time makes the gap unusable. Time
off is not a stop: the member's place is unchanged, but neither the job nor its drives
may overlap it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple
from zoneinfo import ZoneInfo

from booking_core.crew import CrewMember
from booking_core.drive import drive_table, require_known_zip
from booking_core.ports import DriveTime
from booking_core.timeline import (
    Interval,
    LocalDay,
    epoch_seconds,
    epoch_seconds_up,
    local_day,
    merge_walls,
    subtract,
    wall_clock_instant,
    wall_seconds,
)

if TYPE_CHECKING:
    from booking_core.availability import Block, SlotQuery

_NEVER = -(2**62)
_FOREVER = 2**62
_LAST_STOP: tuple[int, int, str | None] = (_FOREVER, _NEVER, None)
"""Closes the day's last gap: no job follows, so no drive to a next stop."""
_WEEKDAYS = ("", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


Window = tuple[int, int, int]
"""``(first start, last start, drive minutes from the previous stop)``, epoch seconds."""


class DayFacts(NamedTuple):
    """One member's working runs, jobs and time off on one local date."""

    runs: list[Interval]
    jobs: list[tuple[int, int, str]]
    time_off: list[Interval]


class MemberPlan:
    """One eligible member's facts and windows, day by day."""

    __slots__ = ("days", "id", "member", "windows")

    def __init__(self, member: CrewMember, days: list[DayFacts]) -> None:
        self.member = member
        self.id = member.id
        self.days = days
        self.windows: list[list[Window]] = []

    @staticmethod
    def drive_at(windows: list[list[Window]], instant: int, later: tuple[int, ...]) -> int | None:
        """Drive minutes if the job fits at ``instant`` (and the later days), else None."""
        worst = lookup(windows[0], instant)
        for day, day_instant in enumerate(later, start=1):
            if worst is None:
                return None
            found = lookup(windows[day], day_instant)
            worst = None if found is None else max(worst, found)
        return worst

    def later_drive(self, later: tuple[int, ...], first: int) -> int | None:
        """The longest drive over the later days of a multi-day job, or None."""
        worst = first
        for day, day_instant in enumerate(later, start=1):
            found = lookup(self.windows[day], day_instant)
            if found is None:
                return None
            worst = max(worst, found)
        return worst


def lookup(windows: list[Window], instant: int) -> int | None:
    """The drive minutes of the window holding ``instant``, or None."""
    position = bisect_right(windows, (instant, _FOREVER, _FOREVER)) - 1
    if position >= 0 and instant <= windows[position][1]:
        return windows[position][2]
    return None


class Plan:
    """Everything one query needs, computed once: the shared core of listing and checking."""

    def __init__(
        self,
        query: SlotQuery,
        crew: Sequence[CrewMember],
        busy: Mapping[str, Sequence[Block]],
        drive: DriveTime,
    ) -> None:
        require_known_zip(drive, query.zip_code, query.zip_field)
        self.query = query
        self.zone = query.zone
        self.days = tuple(
            local_day(query.zone, date.fromordinal(query.local_date.toordinal() + offset))
            for offset in range(query.days)
        )
        self.duration = query.duration_minutes * 60
        self.threshold = epoch_seconds_up(query.now) + query.min_notice_minutes * 60
        members, self.refusal = eligible(query, crew)
        self.members = [
            MemberPlan(m, _facts(m, self.days, busy.get(m.id, ()), query)) for m in members
        ]
        homes = {m.member.home_zip for m in self.members}
        stops = {job[2] for m in self.members for day in m.days for job in day.jobs}
        into = drive_table(drive, homes | stops, [query.zip_code])
        self.into = {origin: minutes for (origin, _), minutes in into.items()}
        out = drive_table(drive, [query.zip_code], stops)
        self.out = {stop: minutes for (_, stop), minutes in out.items()}
        for member in self.members:
            member.windows = [self._windows(member, day) for day in member.days]

    def _windows(self, member: MemberPlan, day: DayFacts, *, jobs: bool = True) -> list[Window]:
        runs = day.runs
        if not runs:
            return []
        found: list[Window] = []
        into_table, out_table = self.into, self.out
        threshold, duration = self.threshold, self.duration
        day_lo, day_hi = runs[0][0], runs[-1][1]
        lo, previous = _NEVER, member.member.home_zip
        for hi, job_end, following in (*(day.jobs if jobs else ()), _LAST_STOP):
            # The gap [lo, hi) between the stop before (``previous``) and ``following``.
            if hi - lo >= duration and hi > day_lo and lo < day_hi:
                into = into_table.get(previous)
                out = 0 if following is None else out_table.get(following)
                if into is not None and out is not None:  # else no known drive: unusable
                    before, after = into * 60, out * 60 + duration
                    for run_lo, run_hi in runs:
                        free_lo, free_hi = max(lo, run_lo), min(hi, run_hi)
                        if free_hi - free_lo < duration:
                            continue
                        if day.time_off:
                            pieces = subtract(free_lo, free_hi, day.time_off)
                        else:
                            pieces = [(free_lo, free_hi)]
                        for piece_lo, piece_hi in pieces:
                            first, last = max(piece_lo + before, threshold), piece_hi - after
                            if first <= last:
                                found.append((first, last, into))
            if job_end >= lo:
                lo, previous = job_end, following or previous
        return found

    def windows_without_jobs(self, member: MemberPlan) -> list[list[Window]]:
        """The member's windows as if no other job existed (to tell taken from closed)."""
        return [self._windows(member, day, jobs=False) for day in member.days]

    def later_instants(self, index: int) -> tuple[int, ...]:
        """Where the later days of a multi-day job start, for grid position ``index``."""
        first = self.days[0]
        wall, fold = first.grid_walls[index], first.grid_folds[index]
        return tuple(wall_clock_instant(self.zone, d.day, wall, fold) for d in self.days[1:])

    def reason(
        self, instant: int, later: tuple[int, ...], free: set[str], blocked: list[str]
    ) -> str:
        """Why no crew can take the start: the reason of the member closest to fitting."""
        explained = []
        for member in self.members:
            if member.id in free or member.id in blocked:
                continue
            rank, text = self._member_reason(member, (instant, *later))
            explained.append((-rank, member.id, text))
        if self.query.crew_ids is not None:
            order = {member_id: n for n, member_id in enumerate(self.query.crew_ids)}
            _, member_id, text = min(explained, key=lambda e: order[e[1]])
            return f"crew member {member_id}: {text}"
        _, _, text = min(explained)
        if self.query.needed > 1:
            return f"needs {self.query.needed} crew members, {len(free)} free; {text}"
        return text

    def _member_reason(self, member: MemberPlan, starts: tuple[int, ...]) -> tuple[int, str]:
        for offset, (day, start) in enumerate(zip(member.days, starts, strict=True)):
            prefix = f"on {self.days[offset].day.isoformat()}: " if offset else ""
            end = start + self.duration
            weekday = _WEEKDAYS[self.days[offset].day.isoweekday()]
            if not day.runs:
                return 0, f"{prefix}no working hours on {weekday}"
            run = next((r for r in day.runs if r[0] <= start and end <= r[1]), None)
            if run is None:
                return 1, f"{prefix}outside working hours"
            if _overlaps(day.time_off, start, end):
                return 2, f"{prefix}time off"
            home = member.member.home_zip
            into = self.into.get(home)
            if into is None:
                return 3, f"{prefix}no known drive time from home ({home})"
            if start - into * 60 < run[0] or _overlaps(day.time_off, start - into * 60, end):
                return 3, f"{prefix}no room for the {into}-minute drive from home ({home})"
        return 4, "not free then"


def _overlaps(intervals: list[Interval], lo: int, hi: int) -> bool:
    return any(s < hi and lo < e for s, e in intervals)


def eligible(query: SlotQuery, crew: Sequence[CrewMember]) -> tuple[list[CrewMember], str | None]:
    """Members who may take the job (sorted by id), and why too few may, if so."""
    zip_code, service = query.zip_code, query.service_id
    if query.crew_ids is not None:
        roster = {m.id: m for m in crew if m.active}
        for member_id in query.crew_ids:
            member = roster.get(member_id)
            if member is None:
                return [], f"crew member {member_id} is not on the active roster"
            if not member.serves(zip_code):
                return [], f"crew member {member_id} does not serve zip {zip_code}"
            if not member.may_do(service):
                return [], f"crew member {member_id} does not do service {service}"
        return sorted((roster[i] for i in query.crew_ids), key=lambda m: m.id), None
    serving = [m for m in crew if m.active and m.serves(zip_code)]
    eligible = sorted((m for m in serving if m.may_do(service)), key=lambda m: m.id)
    if len(eligible) >= query.needed:
        return eligible, None
    if not serving:
        return [], f"no crew member serves zip {zip_code}"
    if not eligible:
        return [], f"no crew member serving zip {zip_code} does service {service}"
    return [], f"needs {query.needed} crew members; {len(eligible)} can do it in {zip_code}"


def _facts(
    member: CrewMember, days: tuple[LocalDay, ...], blocks: Sequence[Block], query: SlotQuery
) -> list[DayFacts]:
    ignore = query.ignore_booking_ids
    since, until = days[0].start, days[-1].end
    jobs = []
    for block in blocks:
        start, end = block.seconds
        if end >= since and start < until and block.booking_id not in ignore:
            jobs.append((start, end, block.zip_code))
    jobs.sort()
    time_off = sorted((epoch_seconds(t.start), epoch_seconds_up(t.end)) for t in member.time_off)
    facts = []
    for day in days:
        weekday = day.day.isoweekday()
        walls = tuple(
            merge_walls(
                (wall_seconds(h.start), wall_seconds(h.end))
                for h in member.working_hours
                if h.weekday == weekday
            )
        )
        runs = _runs(day.zone, day.day, walls) if walls else []
        lo, hi = day.start, day.end
        facts.append(
            DayFacts(
                runs,
                [j for j in jobs if j[1] >= lo and j[0] < hi],
                [t for t in time_off if runs and t[1] > runs[0][0] and t[0] < runs[-1][1]],
            )
        )
    return facts


@lru_cache(maxsize=16_384)
def _runs(zone: ZoneInfo, day: date, walls: tuple[Interval, ...]) -> list[Interval]:
    """The unbroken runs of working instants on ``day`` for merged wall-clock stretches
    (cached; callers never change the list)."""
    return local_day(zone, day).runs(walls)
