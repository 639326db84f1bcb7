"""How the pages write a time of day: as people in the US read a clock (``9:00 AM``), in
the company's timezone, with the zone's abbreviation wherever the wall clock alone would
mislead.

On the night the clocks fall back, 1:30 AM comes twice (EDT, then EST). A time in that
repeated hour carries its abbreviation (``1:30 AM EDT``), and each end of a range does
when either end is in such an hour or the two ends lie on either side of a change
(``1:30 AM EDT \u2013 1:30 AM EST``, ``1:30 AM EST \u2013 3:30 AM EDT``), so that a person can
tell the two 1:30s apart and read a range's length right. Every other time reads as it
always has.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from booking_core.clock import zone_abbreviation

DASH = "\u2013"
"""The en dash between the two ends of a range."""


def _clock(local: datetime, seconds: bool = False) -> str:
    hour = local.hour % 12 or 12
    clock = f"{hour}:{local.minute:02d}" + (f":{local.second:02d}" if seconds else "")
    return f"{clock} {'AM' if local.hour < 12 else 'PM'}"


def repeated(local: datetime) -> bool:
    """Whether ``local``'s wall-clock time comes twice in its zone (the hour a clock falls
    back), so that the time alone names two instants."""
    return local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset()


def zone_label(local: datetime) -> str:
    """``EST``: the abbreviation of ``local``'s zone at that instant (``UTC-03`` for a zone
    written by its offset alone, ``booking_core.clock.zone_abbreviation``); its UTC offset
    (``UTC+3``) where the two sides of a change share one abbreviation."""
    name = zone_abbreviation(local)
    twin = local.replace(fold=1 - local.fold)
    shared = twin.utcoffset() != local.utcoffset() and zone_abbreviation(twin) == name
    if name and not shared:
        return name
    offset = local.utcoffset() or timedelta()
    sign = "-" if offset < timedelta() else "+"
    hours, rest = divmod(int(abs(offset).total_seconds()) // 60, 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def clock_time(local: datetime, *, seconds: bool = False) -> str:
    """``9:00 AM``, ``12:30 PM`` (``5:30:07 PM`` with ``seconds``); ``1:30 AM EDT`` when
    the wall-clock time comes twice that night."""
    text = _clock(local, seconds)
    return f"{text} {zone_label(local)}" if repeated(local) else text


def needs_zones(start: datetime, end: datetime) -> bool:
    """Whether the ends of a range must each carry their zone: either is in a repeated
    hour, or a clock change lies between them."""
    return repeated(start) or repeated(end) or start.utcoffset() != end.utcoffset()


def clock_range(start: datetime, end: datetime) -> tuple[str, str]:
    """The two ends of a range as ``clock_time`` writes them, both with their zone when
    ``needs_zones``."""
    if needs_zones(start, end):
        return f"{_clock(start)} {zone_label(start)}", f"{_clock(end)} {zone_label(end)}"
    return _clock(start), _clock(end)


def zoned_range(start: datetime, end: datetime) -> str:
    """``9:00 AM \u2013 12:00 PM EST``: a range and its zone; ``1:30 AM EDT \u2013 1:30 AM EST``
    when its ends need a zone each."""
    starts, ends = clock_range(start, end)
    zone = "" if needs_zones(start, end) else zone_label(start)
    return f"{starts} {DASH} {ends} {zone}".strip()


def short_range(start: datetime, end: datetime) -> str:
    """The range for a narrow cell: ``8:00\u201310:25 AM``, ``11:00 AM\u20131:25 PM``; both
    ends whole when they need a zone each."""
    starts, ends = clock_range(start, end)
    if not needs_zones(start, end) and starts[-2:] == ends[-2:]:
        starts = starts[:-3]
    return f"{starts}{DASH}{ends}"


def moment(instant: datetime, zone: ZoneInfo, *, seconds: bool = False) -> str:
    """``Mar 10, 2026, 9:15 AM`` in ``zone`` (``9:15:07 AM`` with ``seconds``)."""
    local = instant.astimezone(zone)
    return f"{local:%b} {local.day}, {local.year}, {clock_time(local, seconds=seconds)}"
