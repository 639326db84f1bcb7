"""Shared hypothesis strategies for our own tests.

The catalog and selection strategies are the public ones of ``booking_core.testing``
(so the strategies companies use are the ones we test with); this module adds what
only our tests need.
"""

from __future__ import annotations

from hypothesis import strategies as st

from booking_core.testing import (
    PRICING_INSTANT,
    catalogs,
    catalogs_and_selections,
    coupons,
    extras,
    fee_definitions,
    frequencies,
    parameters,
    selections,
    services,
)

__all__ = [
    "PRICING_INSTANT",
    "catalogs",
    "catalogs_and_selections",
    "coupons",
    "extras",
    "fee_definitions",
    "frequencies",
    "parameters",
    "selections",
    "services",
    "weights",
]

weights = st.lists(st.integers(min_value=0, max_value=1_000_000), min_size=1, max_size=20).filter(
    lambda ws: sum(ws) > 0
)
"""Non-negative allocation weights, not all zero."""

# --- Keys, customers, leads, idempotency -------------------------------------------------

from datetime import UTC, datetime, timedelta  # noqa: E402

from booking_core.auth import SCOPES  # noqa: E402
from booking_core.customers import Visit, VisitStatus  # noqa: E402

__all__ += [
    "BASE62",
    "churn_instants",
    "json_values",
    "key_bodies",
    "scope_sets",
    "visit_histories",
    "visits",
]

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""The base62 alphabet of API keys: digits, capitals, then small letters."""

key_bodies = st.text(alphabet=BASE62, min_size=40, max_size=40)
"""The 40 random characters between an API key's prefix and its checksum."""

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)
"""Any non-empty set of SPEC.md scopes."""

_VISITS_FROM = datetime(2025, 1, 1, tzinfo=UTC)
_VISITS_SPAN_MINUTES = 3 * 365 * 24 * 60

churn_instants = st.integers(min_value=0, max_value=_VISITS_SPAN_MINUTES).map(
    lambda m: _VISITS_FROM + timedelta(minutes=m)
)
"""Aware instants over three years, on the whole minute."""

visits = st.builds(Visit, start=churn_instants, status=st.sampled_from(VisitStatus))
"""One visit of any status, in the past or the future of any ``churn_instants``."""

visit_histories = st.lists(visits, max_size=30)
"""A customer's visits, in no particular order; possibly none."""

_json_text = st.text(st.characters(exclude_categories=()))
"""Any text a JSON string can parse to, lone surrogates (``"\\ud800"``) included."""

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _json_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_json_text, inner, max_size=5),
    max_leaves=20,
)
"""Any value a JSON request body can parse to."""

# --- Bookings and plans ------------------------------------------------------------------

from datetime import date, time  # noqa: E402
from string import ascii_uppercase  # noqa: E402

__all__ += ["code_prefixes", "plan_dates", "plan_intervals", "quarter_hours", "zones"]

code_prefixes = st.text(alphabet=ascii_uppercase, min_size=2, max_size=2)
"""A company's two-letter ``codePrefix``."""

zones = st.timezones()
"""Any IANA timezone the zone database knows."""

quarter_hours = st.integers(min_value=0, max_value=95).map(lambda q: time(q // 4, q % 4 * 15))
"""A wall-clock time on the quarter hour."""

plan_dates = st.dates(min_value=date(2026, 1, 1), max_value=date(2028, 12, 31))
"""A local date for a plan's first visit."""

plan_intervals = st.sampled_from((7, 14, 28)) | st.integers(min_value=1, max_value=60)
"""A recurring frequency's ``intervalDays``: the demo's, or any other."""

# --- Availability ------------------------------------------------------------------------

from datetime import date  # noqa: E402
from datetime import time as wall_time  # noqa: E402
from functools import lru_cache  # noqa: E402
from zoneinfo import ZoneInfo, available_timezones  # noqa: E402

import attrs  # noqa: E402

from booking_core.availability import Block, SlotQuery  # noqa: E402
from booking_core.crew import CrewMember, TimeOff, WorkingHours  # noqa: E402
from booking_core.drive import TableDriveTime  # noqa: E402
from booking_core.timeline import local_day  # noqa: E402

__all__ += [
    "ALL_ZONES",
    "AVAILABILITY_ZIPS",
    "AvailabilityCase",
    "availability_cases",
    "transition_dates",
    "zone_days",
]

AVAILABILITY_ZIPS = ("10001", "10002", "10003", "10004")
ALL_ZONES = tuple(sorted(available_timezones()))
"""Every IANA zone this machine knows."""
_CASE_ZONES = ("America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC")
_LONG_AGO = datetime(1960, 1, 1, tzinfo=UTC)


@lru_cache(maxsize=8_192)
def transition_dates(zone_name: str, year: int) -> tuple[date, ...]:
    """Local dates of ``year`` on which ``zone_name`` changes its UTC offset."""
    zone = ZoneInfo(zone_name)
    found: list[date] = []
    start = datetime(year, 1, 1, tzinfo=UTC)
    previous = start.astimezone(zone).utcoffset()
    for day in range(1, 367):
        instant = start + timedelta(days=day)
        offset = instant.astimezone(zone).utcoffset()
        if offset != previous:
            found.append((instant - timedelta(hours=12)).astimezone(zone).date())
        previous = offset
    return tuple(found)


@st.composite
def zone_days(draw: st.DrawFn, zones: tuple[str, ...] = ALL_ZONES) -> tuple[ZoneInfo, date]:
    """A zone and a local date, usually within two days of one of its offset changes."""
    name = draw(st.sampled_from(zones))
    year = draw(st.integers(1970, 2037))
    changes = transition_dates(name, year)
    if changes and draw(st.integers(0, 4)):
        day = draw(st.sampled_from(changes)) + timedelta(days=draw(st.integers(-2, 2)))
    else:
        day = date(year, 1, 1) + timedelta(days=draw(st.integers(0, 364)))
    return ZoneInfo(name), day


@attrs.frozen
class AvailabilityCase:
    """Everything ``available_slots`` takes."""

    query: SlotQuery
    crew: tuple[CrewMember, ...]
    busy: dict[str, tuple[Block, ...]]
    drive: TableDriveTime


def _wall(minutes: int) -> wall_time:
    return wall_time(minutes // 60, minutes % 60)


@st.composite
def _member(draw: st.DrawFn, member_id: str) -> CrewMember:
    hours = []
    for weekday in range(1, 8):
        start = draw(st.integers(0, 20 * 60))
        end = draw(st.integers(start + 15, min(start + 14 * 60, 24 * 60 - 1)))
        hours.append(WorkingHours(weekday, _wall(start), _wall(end)))
        if draw(st.integers(0, 3)) == 0 and end + 15 < 24 * 60 - 1:
            later = draw(st.integers(end, 24 * 60 - 16))
            hours.append(WorkingHours(weekday, _wall(later), _wall(24 * 60 - 1)))
    return CrewMember(
        id=member_id,
        company_id="cmp_1",
        name=member_id,
        home_zip=draw(st.sampled_from(AVAILABILITY_ZIPS)),
        created_at=_LONG_AGO,
        updated_at=_LONG_AGO,
        service_areas=tuple(draw(st.sets(st.sampled_from(AVAILABILITY_ZIPS), min_size=2))),
        excluded_service_ids=frozenset({"svc_other"} if draw(st.integers(0, 3)) == 0 else ()),
        working_hours=tuple(hours),
        active=draw(st.integers(0, 9)) > 0,
    )


@st.composite
def availability_cases(
    draw: st.DrawFn, zones: tuple[str, ...] = _CASE_ZONES, max_days: int = 2
) -> AvailabilityCase:
    """A small crew with hours, time off and jobs around a date, and a query for it."""
    zone, day = draw(zone_days(zones))
    days = draw(st.integers(1, max_days))
    origin = local_day(zone, day).start - 12 * 3_600  # epoch seconds, half a day before

    def instant(minutes: int) -> datetime:
        return datetime.fromtimestamp(origin + minutes * 60, UTC)

    span = (24 * days + 24) * 60
    crew = tuple(draw(_member(f"crew_{n}")) for n in range(draw(st.integers(1, 4))))
    busy: dict[str, tuple[Block, ...]] = {}
    for n, member in enumerate(crew):
        offs = []
        for _ in range(draw(st.integers(0, 2))):
            start = draw(st.integers(0, span))
            offs.append(TimeOff(instant(start), instant(start + draw(st.integers(15, 300)))))
        crew = (*crew[:n], attrs.evolve(member, time_off=tuple(offs)), *crew[n + 1 :])
        blocks = []
        for number in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, span))
            length = draw(st.integers(15, 240))
            zip_code = draw(st.sampled_from(AVAILABILITY_ZIPS))
            blocks.append(Block(instant(start), instant(start + length), zip_code, f"b{n}{number}"))
        busy[member.id] = tuple(blocks)
    table = {(a, b): draw(st.integers(0, 45)) for a in AVAILABILITY_ZIPS for b in AVAILABILITY_ZIPS}
    ids = [m.id for m in crew]
    crew_ids = None
    if draw(st.integers(0, 3)) == 0:
        crew_ids = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True))
    query = SlotQuery(
        service_id=draw(st.sampled_from(["svc_clean", "svc_clean", "svc_other"])),
        zip_code=draw(st.sampled_from(AVAILABILITY_ZIPS)),
        local_date=day,
        zone=zone,
        duration_minutes=draw(st.sampled_from([15, 30, 45, 60, 90, 120, 180, 240])),
        now=instant(draw(st.integers(0, 16 * 60) | st.integers(0, span))),
        min_notice_minutes=draw(st.sampled_from([0, 30, 120])),
        crew_size=draw(st.sampled_from([1, 1, 2])),
        crew_ids=crew_ids,
        days=days,
        ignore_booking_ids=frozenset(draw(st.sets(st.sampled_from(["b00", "b10"]), max_size=1))),
    )
    return AvailabilityCase(query, crew, busy, TableDriveTime(table, default=30, same_zip=0))
