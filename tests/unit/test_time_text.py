"""How the pages write times of day (``adapters.web.time_text``): as before on an
ordinary day, and with a zone on each end wherever the wall clock alone would mislead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from adapters.web.time_text import (
    clock_range,
    clock_time,
    moment,
    repeated,
    short_range,
    zone_label,
    zoned_range,
)

NEW_YORK = ZoneInfo("America/New_York")


def local(text: str, zone: ZoneInfo = NEW_YORK) -> datetime:
    """An ISO instant with its offset, in ``zone``."""
    return datetime.fromisoformat(text).astimezone(zone)


def test_an_ordinary_range_reads_as_it_always_has():
    start, end = local("2026-03-10T09:00:00-04:00"), local("2026-03-10T12:25:00-04:00")
    assert clock_time(start) == "9:00 AM"
    assert clock_range(start, end) == ("9:00 AM", "12:25 PM")
    assert zoned_range(start, end) == "9:00 AM \u2013 12:25 PM EDT"
    assert short_range(start, end) == "9:00 AM\u201312:25 PM"
    assert short_range(start, start + timedelta(hours=1)) == "9:00\u201310:00 AM"
    assert moment(start, NEW_YORK) == "Mar 10, 2026, 9:00 AM"
    assert moment(start + timedelta(seconds=7), NEW_YORK, seconds=True) == (
        "Mar 10, 2026, 9:00:07 AM"
    )


def test_the_fall_back_hour_shows_each_end_with_its_abbreviation():
    start, end = local("2027-11-07T01:30:00-04:00"), local("2027-11-07T01:30:00-05:00")
    assert repeated(start)
    assert repeated(end)
    assert clock_time(start) == "1:30 AM EDT"
    assert clock_time(end) == "1:30 AM EST"
    assert clock_range(start, end) == ("1:30 AM EDT", "1:30 AM EST")
    assert zoned_range(start, end) == "1:30 AM EDT \u2013 1:30 AM EST"
    assert short_range(start, end) == "1:30 AM EDT\u20131:30 AM EST"
    assert moment(end, NEW_YORK) == "Nov 7, 2027, 1:30 AM EST"


def test_a_range_across_a_change_marks_both_ends_though_neither_is_repeated():
    spring = local("2027-03-14T01:30:00-05:00"), local("2027-03-14T03:30:00-04:00")
    assert not any(repeated(t) for t in spring)
    assert zoned_range(*spring) == "1:30 AM EST \u2013 3:30 AM EDT"
    assert short_range(*spring) == "1:30 AM EST\u20133:30 AM EDT"
    fall = local("2027-11-07T00:30:00-04:00"), local("2027-11-07T03:00:00-05:00")
    assert clock_time(fall[0]) == "12:30 AM"  # alone, an hour before the repeated one
    assert clock_range(*fall) == ("12:30 AM EDT", "3:00 AM EST")


def test_a_repeated_hour_sharing_one_abbreviation_is_told_by_its_utc_offset():
    moscow = ZoneInfo("Europe/Moscow")  # 2014-10-26: MSK from UTC+4 to UTC+3 at 2 AM
    first, second = (
        local("2014-10-26T01:30:00+04:00", moscow),
        local("2014-10-26T01:30:00+03:00", moscow),
    )
    assert zoned_range(first, second) == "1:30 AM UTC+4 \u2013 1:30 AM UTC+3"
    assert zone_label(local("2014-10-27T09:00:00+03:00", moscow)) == "MSK"


def test_a_zone_written_by_its_offset_alone_reads_as_utc_and_the_offset_everywhere():
    """The tz database writes some zones by their offset ("-03", "+0545"); alone, "-03"
    reads as a minus sign. The pages and the emails both write "UTC-03"."""
    from booking_core.services.notifications import when

    sao_paulo, kathmandu = ZoneInfo("America/Sao_Paulo"), ZoneInfo("Asia/Kathmandu")
    noon = local("2026-12-01T12:00:00-03:00", sao_paulo)
    assert zone_label(noon) == "UTC-03"
    assert zone_label(local("2026-12-01T12:00:00+05:45", kathmandu)) == "UTC+0545"
    assert when(noon, sao_paulo).endswith("12:00 PM UTC-03")


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin", "Australia/Sydney"])
def test_no_two_half_hours_of_a_year_read_alike(zone: str):
    tz = ZoneInfo(zone)
    seen: dict[str, datetime] = {}
    at = datetime(2027, 1, 1, tzinfo=UTC)
    while at.year == 2027:
        text = moment(at, tz)
        assert seen.setdefault(text, at) == at, text
        at += timedelta(minutes=30)
