"""Busy calendars for ``make bench-http``'s availability scenarios, written fast.

A company gets crew working 08:00-18:00 every day and serving the Manhattan and
Brooklyn zips of the in-process benchmark; one real booking is made through the
booking use case (``template``), then cloned in SQL with ``INSERT ... SELECT
generate_series`` into ``bookings`` and ``booking_assignments`` (every column copied
from the template but the ones that make a clone its own: id, code, tracking token,
status, times, and in the document its crew member, zip and completion time):

- the measured day: four one-hour jobs per member, 150 minutes apart from 08:00 (plus
  0, 15 or 30 minutes by member), open (scheduled), at varied zips;
- history: ``history`` completed (closed) jobs before today, four a day per member,
  going back day by day; 1,000,000 of them is the issue's "1M bookings" calendar.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta
from datetime import time as clock_time
from zoneinfo import ZoneInfo

from sqlalchemy import text

from adapters.drivetime import ZipCentroidDriveTime
from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.sql.tables import bookings
from adapters.system import SystemClock
from booking_core.customers import Address
from booking_core.services import scheduling
from tests.bench.pg_bench import SERVICE, ZONE, seed_company
from tests.bench.test_bench_availability import ZIPS

HOURS = (clock_time(8), clock_time(18))
JOBS_PER_DAY = 4
STRIDE_MINUTES = 150
"""Starts 08:00, 10:30, 13:00 and 15:30 (plus 0, 15 or 30 minutes by member): 90-minute
gaps, so an hour's job fits between two where the drives are short."""
JOB_MINUTES = 60
"""The template's service (``svc_handyman_hour``) lasts an hour, so clones agree with it."""

_CLONE = """
WITH crew AS (
    SELECT id, (row_number() OVER (ORDER BY id)) - 1 AS n
    FROM crew_members WHERE company_id = :company
), src AS (
    SELECT g, crew.id AS crew_id,
        CAST(:base AS timestamptz) + make_interval(
            days => CAST(:step * ((g / :members) / :per_day) AS int),
            mins => CAST(((g / :members) % :per_day) * :stride + (crew.n % 3) * 15 AS int)
        ) AS starts_at,
        (CAST(:zips AS text[]))[1 + ((crew.n * 7 + g) % :nzips)] AS zip
    FROM generate_series(:first, :first + :count - 1) AS g
    JOIN crew ON crew.n = g % :members
), made AS (
    INSERT INTO bookings ({columns})
    SELECT {values} FROM src, bookings t WHERE t.company_id = :company AND t.id = :template
)
INSERT INTO booking_assignments (company_id, booking_id, crew_id, starts_at, ends_at,
                                 zip_code, open)
SELECT :company, :template || '_' || g, crew_id, starts_at,
       starts_at + make_interval(mins => :minutes), zip, :open
FROM src
"""

_DOCUMENT = (
    "jsonb_set(jsonb_set(jsonb_set(CAST(t.document AS jsonb), '{crew_ids}',"
    " jsonb_build_array(src.crew_id)), '{address,zip}', to_jsonb(src.zip)),"
    " '{completed_at}', CASE WHEN :open THEN 'null'::jsonb"
    " ELSE to_jsonb(src.starts_at + make_interval(mins => :minutes)) END)::text"
)
_OWN = {
    "id": "t.id || '_' || src.g",
    "code": "t.code || '-' || src.g",
    "status": ":status",
    "starts_at": "src.starts_at",
    "ends_at": "src.starts_at + make_interval(mins => :minutes)",
    "tracking_token": "t.tracking_token || '-' || src.g",
    "created_at": "src.starts_at - interval '14 days'",
    "changed_at": "src.starts_at - interval '14 days'",
    "document": _DOCUMENT,
}
"""What makes a clone its own; every other column is the template's."""


def _template(db: Database, company_id: str, crew_id: str, day: date) -> str:
    """One booking made by the real use case, far after the measured day; its id."""
    start = datetime.combine(day + timedelta(days=300), clock_time(10), tzinfo=ZoneInfo(ZONE))
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id=SERVICE,
            frequency_slug="one_time",
            start=start,
            customer=scheduling.CustomerDetails(name="Bench Template", email="t@bench.example"),
            address=Address(line1="1 Bench St", city="New York", state="NY", zip=ZIPS[0]),
            crew_ids=(crew_id,),
        ),
        uow=db.uow(),
        clock=SystemClock(),
        drive=ZipCentroidDriveTime(),
        phones=PhonenumbersNormalizer(),
    )
    assert made[0].duration_minutes == JOB_MINUTES, made[0].duration_minutes
    return made[0].id


def _clone(
    db: Database,
    *,
    company_id: str,
    template: str,
    members: int,
    first: int,
    count: int,
    base: datetime,
    step_days: int,
    status: str,
) -> None:
    columns = [c.name for c in bookings.columns]
    values = ", ".join(_OWN.get(name, f"t.{name}") for name in columns)
    statement = _CLONE.format(columns=", ".join(columns), values=values)
    with db.engine.begin() as connection:
        connection.execute(
            text(statement),
            {
                "company": company_id,
                "template": template,
                "members": members,
                "per_day": JOBS_PER_DAY,
                "stride": STRIDE_MINUTES,
                "minutes": JOB_MINUTES,
                "base": base,
                "step": step_days,
                "zips": list(ZIPS),
                "nzips": len(ZIPS),
                "first": first,
                "count": count,
                "status": status,
                "open": status == "scheduled",
            },
        )


def busy_company(
    db: Database, *, slug: str, members: int, day: date, history: int
) -> tuple[str, float]:
    """Seed ``slug`` with ``members`` crew, a full ``day`` and ``history`` completed jobs
    before today (see the module's docstring); its id and the seconds the history took."""
    company_id, crew = seed_company(db, slug=slug, members=members, zips=ZIPS, hours=HOURS)
    template = _template(db, company_id, crew[0], day)
    zone = ZoneInfo(ZONE)
    common = {"company_id": company_id, "template": template, "members": members}
    _clone(
        db,
        **common,
        first=0,
        count=members * JOBS_PER_DAY,
        base=datetime.combine(day, HOURS[0], tzinfo=zone),
        step_days=1,
        status="scheduled",
    )
    started = time.perf_counter()
    _clone(
        db,
        **common,
        first=members * JOBS_PER_DAY,
        count=history,
        base=datetime.combine(datetime.now(zone).date(), HOURS[0], tzinfo=zone),
        step_days=-1,
        status="completed",
    )
    return company_id, time.perf_counter() - started
