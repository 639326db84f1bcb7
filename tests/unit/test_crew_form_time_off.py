"""The crew form's time-off text (``adapters.web.setup_crew``): whole days of the
company's timezone read as dates; anything else (an import's exact times, or days set
before the company's timezone changed) shows its times, marked as exact, never as
"set by import", and reads back to the same instants."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import attrs

from adapters.web.setup_crew import _time_off, _time_off_text
from adapters.web.setup_forms import FieldErrors
from booking_core.crew import CrewMember, TimeOff, new_crew_member

NEW_YORK, LOS_ANGELES = ZoneInfo("America/New_York"), ZoneInfo("America/Los_Angeles")


def _member(off: TimeOff) -> CrewMember:
    member = new_crew_member(
        member_id="crew_rosa",
        company_id="cmp_1",
        name="Rosa Diaz",
        home_zip="10001",
        at=datetime(2026, 11, 1, tzinfo=NEW_YORK),
    )
    return attrs.evolve(member, time_off=(off,))


def test_days_off_set_in_new_york_read_as_exact_times_once_the_company_is_in_los_angeles():
    days = TimeOff(datetime(2026, 12, 24, tzinfo=NEW_YORK), datetime(2026, 12, 27, tzinfo=NEW_YORK))
    assert _time_off_text(_member(days), NEW_YORK) == "2026-12-24 to 2026-12-26"
    shown = _time_off_text(_member(days), LOS_ANGELES)
    assert shown == "2026-12-23 21:00 to 2026-12-26 21:00 (exact times)"
    assert "import" not in shown  # nobody imported it
    errors = FieldErrors()
    (back,) = _time_off(errors, shown, LOS_ANGELES)
    assert not errors
    assert (back.start, back.end) == (days.start, days.end)
    assert back.end - back.start == timedelta(days=3)
