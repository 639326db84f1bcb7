"""``GET /availability`` over real HTTP on both backends: open starts for a service, date
and zip, ranked by drive minutes and then time, inside working hours, after the minimum
notice, only from crew who serve the zip and do the service; a listed start books.

Each test makes a company of its own with known crew (``crewed_company``), so the lists
are exact; times are compared as the API writes them, in the company's zone with offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    error_of,
    idem,
    midday_zone,
    weekday_ahead,
)

CHICAGO = ZoneInfo("America/Chicago")
LINCOLN_PARK, LOOP, LAKEVIEW = "60614", "60601", "60657"
STANDARD = "svc_standard_clean"  # 145 minutes: 90, and 1 bedroom and 1 bathroom at least
STANDARD_MINUTES = 145
DEEP = "svc_deep_clean"  # 180 minutes
EVERY_DAY = (1, 2, 3, 4, 5, 6, 7)
ALL_DAY = ("00:00", "23:59")


def listed(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = client.get(f"{API}/availability", params=params)
    assert response.status_code == 200, response.text
    slots: list[dict[str, Any]] = response.json()["data"]
    return slots


def instant(iso: str) -> datetime:
    value = datetime.fromisoformat(iso)
    assert value.utcoffset() is not None, iso
    return value


def quarter_hours(day: date, first: str, last: str, zone: ZoneInfo) -> list[str]:
    """Every quarter-hour start from ``first`` to ``last`` (inclusive), as the API writes."""
    lo = datetime.combine(day, datetime.strptime(first, "%H:%M").time(), tzinfo=zone)
    hi = datetime.combine(day, datetime.strptime(last, "%H:%M").time(), tzinfo=zone)
    out = []
    while lo <= hi:
        out.append(lo.isoformat())
        lo += timedelta(minutes=15)
    return out


def first_quarter_after(day: date, hhmm: str, minutes: int, zone: ZoneInfo) -> str:
    """``HH:MM`` of the first quarter hour at or after ``hhmm`` plus ``minutes``."""
    start = datetime.combine(day, datetime.strptime(hhmm, "%H:%M").time(), tzinfo=zone)
    start += timedelta(minutes=minutes + (-minutes) % 15)
    return start.strftime("%H:%M")


@pytest.fixture
def chicago(stack: Stack) -> Shop:
    """Al works afternoons from home in Lincoln Park; Bea all day from the Loop."""
    return crewed_company(
        stack,
        (
            CrewSpec("Afternoon Al", LINCOLN_PARK, (LINCOLN_PARK, LOOP), hours=("13:00", "18:00")),
            CrewSpec("All-day Bea", LOOP, (LINCOLN_PARK, LOOP)),
        ),
        timezone="America/Chicago",
        code_prefix="CH",
    )


@pytest.fixture
def client(stack: Stack, chicago: Shop) -> Iterator[httpx.Client]:
    with stack.client(chicago.key) as c:
        yield c


def test_slots_are_ranked_by_drive_minutes_then_by_time(
    stack: Stack, chicago: Shop, client: httpx.Client
):
    al, bea = chicago.crew_ids
    day = weekday_ahead(CHICAGO, 8, weekday=2)
    near = stack.container.drive.minutes(LINCOLN_PARK, LINCOLN_PARK)
    far = stack.container.drive.minutes(LOOP, LINCOLN_PARK)
    assert near < far

    slots = listed(client, serviceId=STANDARD, date=day.isoformat(), zip=LINCOLN_PARK)

    # Al, five minutes away, takes every start he can (13:00 + drive, up to the last quarter
    # hour that ends by 18:00); Bea, farther, gets the starts he cannot: the morning, up to
    # 13:00. Shorter drives come first even though they are later in the day.
    afternoon = quarter_hours(
        day, first_quarter_after(day, "13:00", near, CHICAGO), "15:30", CHICAGO
    )
    morning = quarter_hours(day, first_quarter_after(day, "08:00", far, CHICAGO), "13:00", CHICAGO)
    assert [s["startIso"] for s in slots] == afternoon + morning
    assert [s["crewIds"] for s in slots] == [[al]] * len(afternoon) + [[bea]] * len(morning)
    assert [s["driveMinutes"] for s in slots] == [near] * len(afternoon) + [far] * len(morning)
    ranks = [(s["driveMinutes"], instant(s["startIso"])) for s in slots]
    assert ranks == sorted(ranks)
    for slot in slots:
        start, end = instant(slot["startIso"]), instant(slot["endIso"])
        assert start.utcoffset() == end.utcoffset() == start.astimezone(CHICAGO).utcoffset()
        assert end - start == timedelta(minutes=STANDARD_MINUTES)
        assert start.minute % 15 == 0


def test_a_longer_job_shortens_the_day(client: httpx.Client):
    day = weekday_ahead(CHICAGO, 8, weekday=3)
    bare = listed(client, serviceId=STANDARD, date=day.isoformat(), zip=LINCOLN_PARK)
    # Three bedrooms and the oven: 145 + 2 x 30 + 30 minutes, so the last start that still
    # ends by 18:00 is 14:00 (14:05 is off the quarter hour).
    bigger = listed(
        client,
        serviceId=STANDARD,
        date=day.isoformat(),
        zip=LINCOLN_PARK,
        parameters="par_bedrooms:3",
        extras="ext_oven",
    )
    for slot in bigger:
        length = instant(slot["endIso"]) - instant(slot["startIso"])
        assert length == timedelta(minutes=STANDARD_MINUTES + 60 + 30)
    assert max(s["startIso"] for s in bare) == at_local(day, "15:30", CHICAGO)
    assert max(s["startIso"] for s in bigger) == at_local(day, "14:00", CHICAGO)


def test_a_multi_day_job_needs_the_crew_on_every_day(client: httpx.Client):
    thursday = weekday_ahead(CHICAGO, 8, weekday=4)
    friday = thursday + timedelta(days=1)
    query = {"serviceId": STANDARD, "zip": LINCOLN_PARK}
    one_day = listed(client, date=thursday.isoformat(), **query)
    two_days = listed(client, date=thursday.isoformat(), days="2", **query)
    assert two_days == one_day
    # Nobody works on Saturday, so a two-day job cannot start on Friday.
    assert listed(client, date=friday.isoformat(), **query)
    assert listed(client, date=friday.isoformat(), days="2", **query) == []
    assert listed(client, date=thursday.isoformat(), days="3", **query) == []


def test_no_slots_on_a_day_nobody_works(client: httpx.Client):
    saturday = weekday_ahead(CHICAGO, 8, weekday=6).isoformat()
    sunday = weekday_ahead(CHICAGO, 8, weekday=7).isoformat()
    assert listed(client, serviceId=STANDARD, date=saturday, zip=LINCOLN_PARK) == []
    assert listed(client, serviceId=STANDARD, date=sunday, zip=LOOP) == []


def test_a_zip_no_crew_serves_has_no_slots(client: httpx.Client, api: httpx.Client):
    day = weekday_ahead(CHICAGO, 8, weekday=2).isoformat()
    # Lakeview is a real zip next door, but nobody here serves it.
    assert listed(client, serviceId=STANDARD, date=day, zip=LAKEVIEW) == []
    # The demo company's crew serve New York zips, not Beverly Hills.
    demo_day = weekday_ahead(ZoneInfo("America/New_York"), 8, weekday=2).isoformat()
    assert listed(api, serviceId=STANDARD, date=demo_day, zip="10001")
    assert listed(api, serviceId=STANDARD, date=demo_day, zip="90210") == []


def test_a_crew_member_excluded_from_a_service_is_never_offered_for_it(stack: Stack):
    shop = crewed_company(
        stack,
        (
            CrewSpec("No-deep Nia", LINCOLN_PARK, (LINCOLN_PARK, LAKEVIEW), excluded=(DEEP,)),
            CrewSpec("Deep Dan", LOOP, (LOOP, LINCOLN_PARK)),
        ),
        timezone="America/Chicago",
    )
    nia, dan = shop.crew_ids
    day = weekday_ahead(CHICAGO, 9, weekday=4).isoformat()
    with stack.client(shop.key) as client:
        standard = listed(client, serviceId=STANDARD, date=day, zip=LINCOLN_PARK)
        deep = listed(client, serviceId=DEEP, date=day, zip=LINCOLN_PARK)
        # Only Nia serves Lakeview, and she does not do deep cleans.
        assert listed(client, serviceId=STANDARD, date=day, zip=LAKEVIEW)
        assert listed(client, serviceId=DEEP, date=day, zip=LAKEVIEW) == []
    # Nia is nearer, so she takes the standard cleans; the deep cleans all go to Dan.
    assert {tuple(s["crewIds"]) for s in standard} == {(nia,)}
    assert deep
    assert {tuple(s["crewIds"]) for s in deep} == {(dan,)}
    assert all(s["driveMinutes"] > standard[0]["driveMinutes"] for s in deep)


def test_nothing_is_offered_sooner_than_the_minimum_notice(stack: Stack):
    zone = midday_zone()
    crew = (CrewSpec("Any-hour Ike", "10001", ("10001",), weekdays=EVERY_DAY, hours=ALL_DAY),)
    default = crewed_company(stack, crew, timezone=zone.key)  # 120 minutes' notice
    longer = crewed_company(stack, crew, timezone=zone.key, min_notice_minutes=360)
    for shop, notice in ((default, 120), (longer, 360)):
        before = datetime.now(UTC)
        with stack.client(shop.key) as client:
            slots = listed(
                client, serviceId=STANDARD, date=datetime.now(zone).date().isoformat(), zip="10001"
            )
        after = datetime.now(UTC)
        starts = sorted(instant(s["startIso"]) for s in slots)
        assert starts, notice
        # The first start is the first quarter hour once the notice has passed.
        assert starts[0] >= before + timedelta(minutes=notice)
        assert starts[0] < after + timedelta(minutes=notice + 15)
        assert all(s.utcoffset() == s.astimezone(zone).utcoffset() for s in starts)


def test_an_unknown_zip_is_invalid_on_zip(client: httpx.Client):
    day = weekday_ahead(CHICAGO, 8, weekday=2).isoformat()
    for bad in ("00000", "6061", "ABCDE"):
        response = client.get(
            f"{API}/availability", params={"serviceId": STANDARD, "date": day, "zip": bad}
        )
        assert set(error_of(response, 400, "invalid_request")["fieldErrors"]) == {"zip"}, bad


EIGHT_DAYS_WEEKLY = {"days": "8", "frequencySlug": "weekly"}


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, {"serviceId", "date", "zip"}),
        ({"serviceId": STANDARD, "zip": LOOP}, {"date"}),
        ({"date": "2030-01-08", "zip": LOOP}, {"serviceId"}),
        ({"serviceId": STANDARD, "date": "2030-01-08"}, {"zip"}),
        ({"serviceId": STANDARD, "date": "2030-02-30", "zip": LOOP}, {"date"}),
        ({"serviceId": STANDARD, "date": "tomorrow", "zip": LOOP}, {"date"}),
        ({"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, "days": "0"}, {"days"}),
        ({"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, "days": "x"}, {"days"}),
        (  # a plan whose visits would overlap: booking refuses it whatever the calendar
            {"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, **EIGHT_DAYS_WEEKLY},
            {"days"},
        ),
        ({"serviceId": "svc_nope", "date": "2030-01-08", "zip": LOOP}, {"serviceId"}),
        ({"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, "crewIds": ","}, {"crewIds"}),
        (
            {"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, "crewIds": "crew_a,crew_a"},
            {"crewIds.1"},
        ),  # as a booking's crewIds: none twice
        ({"serviceId": STANDARD, "date": "2030-01-08", "zip": LOOP, "extras": "ext_nope"}, None),
    ],
)
def test_missing_or_invalid_parameters_are_named(
    client: httpx.Client, params: dict[str, str], named: set[str] | None
):
    response = client.get(f"{API}/availability", params=params)
    errors = error_of(response, 400, "invalid_request")["fieldErrors"]
    if named is None:
        assert len(errors) == 1
        assert next(iter(errors)).startswith("extras")
    else:
        assert set(errors) == named


def test_a_listed_slot_books_and_then_is_no_longer_listed(stack: Stack):
    shop = crewed_company(stack, (CrewSpec("Only Olga", "10003", ("10001", "10003")),))
    (olga,) = shop.crew_ids
    day = weekday_ahead(shop.zone, 10, weekday=2)
    query = {"serviceId": STANDARD, "date": day.isoformat(), "zip": "10001"}
    with stack.client(shop.key) as client:
        before = listed(client, **query)
        chosen = next(s for s in before if s["startIso"] == at_local(day, "11:00", shop.zone))
        made = client.post(f"{API}/bookings", json=booking_body(chosen["startIso"]), headers=idem())
        assert made.status_code == 201, made.text
        booking = made.json()
        assert (booking["startIso"], booking["endIso"]) == (chosen["startIso"], chosen["endIso"])
        assert booking["crewIds"] == chosen["crewIds"] == [olga]
        after = listed(client, **query)

    assert chosen not in after
    job_start, job_end = instant(booking["startIso"]), instant(booking["endIso"])
    assert after
    for slot in after:
        start, end = instant(slot["startIso"]), instant(slot["endIso"])
        # The drive to and from the job keeps other jobs clear of it, not just the job.
        assert end + timedelta(minutes=5) <= job_start or start >= job_end + timedelta(minutes=5), (
            slot
        )
    # Starts before and after the job are still offered.
    assert any(instant(s["startIso"]) < job_start for s in after)
    assert any(instant(s["startIso"]) > job_end for s in after)
