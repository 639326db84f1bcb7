"""Local dates as integers: the instants of one wall-clock date in a timezone.

Availability works on epoch seconds (``int``) inside its loops; this module turns a
local date of a zone into the integer facts it needs, once per (zone, date) and cached:

- ``pieces``: the instants whose wall-clock date is that date, cut where the UTC offset
  changes, so that inside a piece the wall clock is the instant plus one offset;
- ``grid``: every instant of the date whose wall-clock time is on the quarter hour.

DST rule (docs/scheduling.md): wall-clock working hours mean what the clock on the wall
says. A stretch ``09:00-17:00`` is the set of instants of that date whose wall-clock
reading lies in ``[09:00, 17:00)``. A wall time that a DST gap skips is simply not in
the set (hours starting at 02:30 on a spring-forward night start at 03:00); a wall time
that repeats is in it twice (hours 01:00-03:00 on a fall-back night last three hours).
Quarter hours that repeat are two candidates, told apart by their UTC offset.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from attrs import frozen

DAY_SECONDS = 86_400
QUARTER_SECONDS = 900
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_SAMPLE_SECONDS = 3_600
"""Offsets are sampled hourly and transitions found by bisection; no zone in the tz
database changes offset twice within an hour (the closest are about a week apart)."""

Interval = tuple[int, int]
"""Half-open ``[start, end)`` in epoch seconds."""


def epoch_seconds(value: datetime) -> int:
    """An aware instant as whole epoch seconds, rounded down."""
    return math.floor(value.timestamp())


def epoch_seconds_up(value: datetime) -> int:
    """An aware instant as whole epoch seconds, rounded up."""
    return math.ceil(value.timestamp())


_ONE_SECOND = timedelta(seconds=1)


def wall_seconds(value: time) -> int:
    """Seconds since local midnight of a wall-clock time (sub-second parts dropped)."""
    return value.hour * 3_600 + value.minute * 60 + value.second


def _offset_at(zone: ZoneInfo, instant: int) -> int:
    offset = datetime.fromtimestamp(instant, zone).utcoffset()
    assert offset is not None  # a ZoneInfo always answers
    return offset // _ONE_SECOND


@frozen
class LocalDay:
    """One local date of a zone as integers (see the module docstring)."""

    zone: ZoneInfo
    day: date
    base: int
    """Epoch seconds of the date's midnight read as if it were UTC: wall = t + offset - base."""
    pieces: tuple[tuple[int, int, int], ...]
    """``(start, end, offset)`` in instant order; together, every instant of the date."""
    grid: tuple[int, ...]
    """Instants on the local quarter hour, ascending."""
    grid_walls: tuple[int, ...]
    """Wall-clock seconds since midnight of each grid instant."""
    grid_folds: tuple[int, ...]
    """1 for the second reading of a wall time that repeats, else 0."""

    @property
    def start(self) -> int:
        """The first instant of the date."""
        return self.pieces[0][0] if self.pieces else self.base

    @property
    def end(self) -> int:
        """The instant after the date's last one."""
        return self.pieces[-1][1] if self.pieces else self.base

    def runs(self, walls: Iterable[Interval]) -> list[Interval]:
        """The unbroken runs of instants whose wall-clock reading lies in one of ``walls``
        (seconds since midnight, half-open), touching runs merged, in order."""
        found: list[Interval] = []
        for p_start, p_end, offset in self.pieces:
            shift = self.base - offset
            for w_start, w_end in walls:
                lo = max(p_start, w_start + shift)
                hi = min(p_end, w_end + shift)
                if lo < hi:
                    found.append((lo, hi))
        found.sort()
        merged: list[Interval] = []
        for lo, hi in found:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        return merged

    def grid_index(self, instant: int) -> int | None:
        """The position of ``instant`` in ``grid``, or None when it is not on it."""
        index = bisect_left(self.grid, instant)
        if index < len(self.grid) and self.grid[index] == instant:
            return index
        return None


@lru_cache(maxsize=4_096)
def local_day(zone: ZoneInfo, day: date) -> LocalDay:
    """The integer facts of ``day`` in ``zone`` (cached)."""
    if not 2 <= day.year <= 9_998:
        raise ValueError("local dates are supported in the years 2..9998")
    base = (day.toordinal() - _EPOCH_ORDINAL) * DAY_SECONDS
    segments = _segments(zone, base - DAY_SECONDS - _SAMPLE_SECONDS, base + 2 * DAY_SECONDS)
    pieces = []
    for s_start, s_end, offset in segments:
        lo = max(s_start, base - offset)
        hi = min(s_end, base + DAY_SECONDS - offset)
        if lo < hi:
            pieces.append((lo, hi, offset))
    grid: list[int] = []
    walls: list[int] = []
    folds: list[int] = []
    seen: set[int] = set()
    for p_start, p_end, offset in pieces:
        first_wall = -(-(p_start + offset - base) // QUARTER_SECONDS) * QUARTER_SECONDS
        for instant in range(first_wall - offset + base, p_end, QUARTER_SECONDS):
            wall = instant + offset - base
            grid.append(instant)
            walls.append(wall)
            folds.append(1 if wall in seen else 0)
            seen.add(wall)
    return LocalDay(zone, day, base, tuple(pieces), tuple(grid), tuple(walls), tuple(folds))


def _segments(zone: ZoneInfo, start: int, end: int) -> list[tuple[int, int, int]]:
    """``[start, end)`` cut into ``(start, end, offset)`` stretches of one UTC offset."""
    result: list[tuple[int, int, int]] = []
    seg_start, seg_offset = start, _offset_at(zone, start)
    previous = start
    for step in range(start + _SAMPLE_SECONDS, end + _SAMPLE_SECONDS, _SAMPLE_SECONDS):
        sample = min(step, end)
        offset = _offset_at(zone, sample)
        if offset != seg_offset:
            lo, hi = previous, sample  # offset(lo) == seg_offset != offset(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _offset_at(zone, mid) == seg_offset:
                    lo = mid
                else:
                    hi = mid
            result.append((seg_start, hi, seg_offset))
            seg_start, seg_offset = hi, offset
        previous = sample
    result.append((seg_start, end, seg_offset))
    return result


@lru_cache(maxsize=65_536)
def wall_clock_instant(zone: ZoneInfo, day: date, wall: int, fold: int = 0) -> int:
    """The instant the clocks of ``zone`` show ``wall`` (seconds since midnight) on
    ``day``: a repeated wall time takes ``fold`` (0: the first reading); one that a DST
    gap skips moves forward by the gap (02:30 becomes 03:30).

    This is the rule by which a multi-day job's later days are placed (the start's
    wall-clock time on each later date; ``booking_core.bookings.wall_clock_instant``).
    """
    naive = datetime.combine(day, time()) + timedelta(seconds=wall)
    local = naive.replace(tzinfo=zone, fold=fold)
    instant = epoch_seconds(local)
    if fold and datetime.fromtimestamp(instant, zone).replace(tzinfo=None) != naive:
        instant = epoch_seconds(local.replace(fold=0))
    return instant


def subtract(lo: int, hi: int, holes: Sequence[Interval]) -> list[Interval]:
    """``[lo, hi)`` less the sorted ``holes``, as the non-empty pieces that remain."""
    pieces: list[Interval] = []
    cursor = lo
    for h_start, h_end in holes:
        if h_end <= cursor:
            continue
        if h_start >= hi:
            break
        if h_start > cursor:
            pieces.append((cursor, h_start))
        cursor = max(cursor, h_end)
        if cursor >= hi:
            return pieces
    if cursor < hi:
        pieces.append((cursor, hi))
    return pieces


def merge_walls(stretches: Iterable[Interval]) -> list[Interval]:
    """Wall-clock stretches sorted, overlapping or touching ones merged."""
    merged: list[Interval] = []
    for lo, hi in sorted(stretches):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged
