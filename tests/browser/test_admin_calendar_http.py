"""The admin calendar over HTTP (no browser): a date's blocks in one crew member's lane
come in the order of that date's times, and a row counts jobs, not days."""

from __future__ import annotations

from datetime import time, timedelta
from zoneinfo import ZoneInfo

from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_admin_calendar import _book
from tests.browser.test_admin_stale_forms_http import signed_in


def test_a_lane_lists_a_dates_blocks_by_that_dates_times_and_counts_jobs(site: Site):
    """Day 3 of a 10:00 job came above that date's 7:00 job (blocks were in the order of
    each booking's first start), and the week's row counted the job's 3 days as 3 jobs."""
    company, _ = site.new_company()
    ann = site.add_member(company, "Ann Allday", (time(6), time(20)))
    first = site.container.clock.now().astimezone(ZoneInfo(company.timezone)).date()
    first += timedelta(days=7 - first.weekday())  # next Monday: one week holds it all
    long_job = _book(site, company, ann, first, 10, "Grace Hopper", days=3)
    early = _book(site, company, ann, first + timedelta(days=2), 7, "Ada Lovelace")
    owner = signed_in(site, company, Role.OWNER)
    try:
        day = (first + timedelta(days=2)).isoformat()
        for view in ("day", "week"):
            page = owner.get("/admin/calendar", params={"view": view, "date": day})
            assert page.status_code == 200, page.text
            text = page.text
            if view == "day":
                assert text.index(early.code) < text.index(long_job.code)
            else:
                assert "2 jobs" in text
    finally:
        owner.close()
