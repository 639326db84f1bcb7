"""What the PostgreSQL booking benchmarks share: a company with crew, the 90-minute slot
grid its clients book on, the overlap query that counts double bookings, and the
``pgbench`` reference (``-N``, the built-in simple-update script) in a throwaway database.

Used by ``test_bench_bookings.py`` (``make bench``) and ``http_harness.py``
(``make bench-http``), so both measure the same load against the same yardstick.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from datetime import time as clock_time
from zoneinfo import ZoneInfo

import psycopg
from sqlalchemy.engine import make_url

from adapters.sql import Database
from adapters.system import SystemClock
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.demo import demo_catalog
from booking_core.ids import new_id
from booking_core.services import companies as company_cases

ZONE = "America/New_York"
ZIP = "10001"
SERVICE = "svc_handyman_hour"
"""60 minutes; the drive within one zip is 5, so a 90-minute grid never touches."""
FIRST_START = clock_time(6, 30)
STRIDE_MINUTES = 90
JOBS_PER_DAY = 10
"""06:30 to 20:00 starts; the last job ends at 21:00, inside working hours 06:00-22:00."""
ALL_DAY = (clock_time(6), clock_time(22))

OVERLAPPING_OPEN_PAIRS = """
SELECT count(*) FROM booking_assignments a
JOIN booking_assignments b
  ON a.company_id = b.company_id AND a.crew_id = b.crew_id AND a.booking_id < b.booking_id
WHERE a.open AND b.open AND a.starts_at < b.ends_at AND b.starts_at < a.ends_at
"""
"""Pairs of open blocks of one crew member that overlap: double bookings, never > 0."""


def libpq_url(url: str, database: str | None = None) -> str:
    """``url`` as libpq takes it (no SQLAlchemy driver), optionally for another database."""
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


def seed_company(
    db: Database,
    *,
    slug: str,
    members: int,
    zips: Sequence[str] = (ZIP,),
    hours: tuple[clock_time, clock_time] = ALL_DAY,
) -> tuple[str, list[str]]:
    """A company with the demo catalog and ``members`` crew working ``hours`` every day
    and serving ``zips`` (homes spread over them); its id and the crew ids."""
    clock = SystemClock()
    company = company_cases.create_company(
        company_cases.CreateCompany(
            slug=slug,
            name=f"Bench {slug}",
            timezone=ZONE,
            code_prefix="BB",
            catalog=demo_catalog(timezone=ZONE),
        ),
        uow=db.uow(),
        clock=clock,
    )
    week = tuple(WorkingHours(day, *hours) for day in range(1, 8))
    ids = [new_id("crew") for _ in range(members)]
    with db.uow() as uow:
        for n, member_id in enumerate(ids):
            uow.crew.add(
                new_crew_member(
                    member_id=member_id,
                    company_id=company.id,
                    name=f"Bench Crew {n:03d}",
                    home_zip=zips[n % len(zips)],
                    at=clock.now(),
                    service_areas=tuple(zips),
                    working_hours=week,
                )
            )
        uow.commit()
    return company.id, ids


def slot_start(first_day: date, n: int) -> str:
    """The ``n``-th start on the grid (10 a day from 06:30 local, 90 minutes apart, day
    after day from ``first_day``), as ISO 8601 with its offset."""
    day = first_day + timedelta(days=n // JOBS_PER_DAY)
    first = datetime.combine(day, FIRST_START, tzinfo=ZoneInfo(ZONE))
    return (first + timedelta(minutes=(n % JOBS_PER_DAY) * STRIDE_MINUTES)).isoformat()


def booking_body(client: int, member: str, start: str) -> dict[str, object]:
    """A one-hour handyman job for client number ``client`` (one customer each, so a
    client's bookings after its first reuse it) with crew ``member`` at ``start``."""
    return {
        "serviceId": SERVICE,
        "frequencySlug": "one_time",
        "startIso": start,
        "customer": {
            "name": f"Bench Client {client:02d}",
            "email": f"client{client:02d}@bench.example.com",
        },
        "address": {
            "line1": f"{client + 1} Bench St",
            "city": "New York",
            "state": "NY",
            "zip": ZIP,
        },
        "crewIds": [member],
    }


@contextmanager
def throwaway_database(url: str, name: str) -> Iterator[str]:
    """A database ``name`` made fresh and dropped afterwards; its libpq URL."""
    with psycopg.connect(libpq_url(url), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield libpq_url(url, name)
    finally:
        with psycopg.connect(libpq_url(url), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pgbench_init(url: str, *, scale: int) -> None:
    """``pgbench -i`` at ``scale`` (100,000 accounts per unit)."""
    init = subprocess.run(
        ["pgbench", "-i", "-s", str(scale), "-q", url], capture_output=True, text=True, check=False
    )
    if init.returncode != 0:
        raise RuntimeError(f"pgbench -i failed: {init.stderr}")


def pgbench_tps(url: str, *, clients: int, threads: int, seconds: int) -> float:
    """The simple-update script (``-N``) for ``seconds``; its transactions per second."""
    run = subprocess.run(
        ["pgbench", "-N", "-n", "-c", str(clients), "-j", str(threads), "-T", str(seconds), url],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(f"pgbench failed: {run.stderr}")
    found = re.search(r"^tps = ([0-9.]+)", run.stdout, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no tps in pgbench's output: {run.stdout}")
    return float(found.group(1))


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]
