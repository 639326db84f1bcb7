"""The crew portal over HTTP (no browser): a crew member made inactive loses the portal at
once (no job, no address, no access notes, no start); starting a job more than an hour
away asks first (docs/web.md, "The crew portal")."""

from __future__ import annotations

import html
from collections.abc import Iterator

import attrs
import httpx
import pytest

from booking_core.bookings import BookingStatus
from booking_core.users import Role
from tests.browser.support import PASSWORD, Job, Site
from tests.browser.test_brand_http import csrf


@pytest.fixture
def job(site: Site) -> Job:
    return site.crew_job()


@pytest.fixture
def crew(site: Site, job: Job) -> Iterator[httpx.Client]:
    """The job's crew member, signed in."""
    user = site.user(job.company, Role.CREW, crew_member_id=job.member_id, name="Rosa Diaz")
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as browser:
        form = browser.get("/sign-in")
        answer = browser.post(
            "/sign-in", data={"csrf_token": csrf(form), "email": user.email, "password": PASSWORD}
        )
        assert answer.status_code == 303, answer.text
        yield browser


def test_a_crew_member_made_inactive_sees_no_job_and_can_start_none(
    site: Site, job: Job, crew: httpx.Client
) -> None:
    portal = crew.get("/crew")
    assert portal.status_code == 200
    assert "9 Compiler Ct" in portal.text
    assert "code 4711" in portal.text
    token = csrf(portal)

    with site.container.uow() as uow:  # the office unticks Active
        member = uow.crew.get(job.company.id, job.member_id)
        uow.crew.save(attrs.evolve(member, active=False))
        uow.commit()

    refused = crew.get("/crew")
    assert refused.status_code == 403
    assert "Your crew profile is inactive" in html.unescape(refused.text)
    assert "Back to my jobs" not in refused.text  # it would lead to this page again
    for secret in ("9 Compiler Ct", "4711", "Grace", job.booking.code, job.booking.id):
        assert secret not in refused.text
    for action in ("/crew/start", "/crew/complete"):
        answer = crew.post(action, data={"csrf_token": token, "booking": job.booking.id})
        assert answer.status_code == 403
        assert job.booking.code not in answer.text
    assert site.booking(job).status is BookingStatus.SCHEDULED

    with site.container.uow() as uow:  # made active again: the portal is back
        uow.crew.save(attrs.evolve(member, active=True))
        uow.commit()
    assert "9 Compiler Ct" in crew.get("/crew").text


def test_starting_a_job_more_than_an_hour_away_asks_first(
    site: Site, job: Job, crew: httpx.Client
) -> None:
    token = csrf(crew.get("/crew"))
    asked = crew.post("/crew/start", data={"csrf_token": token, "booking": job.booking.id})
    assert asked.status_code == 200
    local = job.booking.start.astimezone(job.booking.zone)
    hour = local.strftime("%I:%M %p").lstrip("0")
    question = f"This job starts on {local:%A}, {local:%B} {local.day} at {hour}. Start it now?"
    assert question in asked.text
    assert 'name="confirmed" value="yes"' in asked.text
    assert site.booking(job).status is BookingStatus.SCHEDULED  # asked, not started

    started = crew.post(
        "/crew/start",
        data={"csrf_token": csrf(asked), "booking": job.booking.id, "confirmed": "yes"},
    )
    assert started.status_code == 303
    assert site.booking(job).status is BookingStatus.IN_PROGRESS
