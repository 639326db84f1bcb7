"""What the browser tests share: the site under test, and the companies, crew, jobs and
users each test makes for itself (so that no two tests touch one booking)."""

from __future__ import annotations

import base64
import io
import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import httpx

from booking_core.bookings import Booking
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.ids import new_id
from booking_core.plans import CancelScope
from booking_core.pricing import SelectedItem
from booking_core.services import companies as company_cases
from booking_core.services import scheduling
from booking_core.services import users as user_cases
from booking_core.users import Role, User
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.cli import Cli
from entrypoints.demo_data import DemoCompany
from entrypoints.settings import Settings
from tests.e2e.support import LiveServer

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "a long and careful passphrase"
PARAMETERS = (SelectedItem("par_bedrooms", 3), SelectedItem("par_bathrooms", 2))


@attrs.frozen
class Job:
    """A crew member of a fresh company, their next job, and the customer's email."""

    company: Company
    api_key: str
    member_id: str
    booking: Booking
    customer_email: str


@attrs.define
class ShiftedClock:
    """The system's time moved on by ``shift`` (``Site.later`` moves it and back)."""

    shift: timedelta = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.shift


@attrs.define
class Site:
    """The application under test, its container and the demo it was loaded with."""

    container: Container
    server: LiveServer
    demo: list[DemoCompany]
    settings: Settings

    @property
    def base_url(self) -> str:
        """Where the server listens."""
        return self.server.base_url

    @contextmanager
    def later(self, by: timedelta) -> Iterator[None]:
        """The site's clock (a ``ShiftedClock``) moved on by ``by`` meanwhile."""
        clock = self.container.clock
        assert isinstance(clock, ShiftedClock), "the site runs on a ShiftedClock"
        clock.shift += by
        try:
            yield
        finally:
            clock.shift -= by

    def cli(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        """Run ``booking`` in process on the site's database."""
        out, err = io.StringIO(), io.StringIO()
        cli = Cli(lambda: bootstrap(self.settings), out=out, err=err, stdin=io.StringIO(stdin))
        return cli.run(list(argv)), out.getvalue(), err.getvalue()

    def api(self, key: str) -> httpx.Client:
        """A client of ``/api/v1`` holding ``key``."""
        return httpx.Client(
            base_url=self.base_url,
            headers={"authorization": f"Bearer {key}"},
            timeout=30,
            trust_env=False,
        )

    def new_company(self, catalog: Catalog | None = None) -> tuple[Company, str]:
        """A company of its own (``catalog``, else the demo's) and a full-access API key."""
        slug = f"web-{secrets.token_hex(4)}"
        container = self.container
        company = company_cases.create_company(
            company_cases.CreateCompany(
                slug=slug,
                name="Brightside Cleaning",
                timezone="America/New_York",
                tax_rate_bps=887,
                code_prefix="BC",
                catalog=catalog or demo_catalog(),
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        key = company_cases.create_key(
            company_cases.CreateKey(company_id=company.id, name="browser tests"),
            uow=container.uow(),
            clock=container.clock,
        )
        return company, key.secret

    def crew_job(self, name: str = "Rosa Diaz") -> Job:
        """A fresh company with one crew member and one job of theirs tomorrow at the first
        open start, for a customer with access notes and extras."""
        company, key = self.new_company()
        member_id = self.add_member(company, name)
        email = f"grace-{secrets.token_hex(4)}@example.com"
        booking = self.book(company, email, "Grace Hopper", days_ahead=1)
        return Job(company, key, member_id, booking, email)

    def add_member(
        self,
        company: Company,
        name: str = "Rosa Diaz",
        hours: tuple[time, time] = (time(8), time(18)),
    ) -> str:
        """A crew member of ``company`` at home in 10001 and serving it every day for
        ``hours``; their id."""
        member = new_crew_member(
            member_id=new_id("crew"),
            company_id=company.id,
            name=name,
            home_zip="10001",
            at=self.container.clock.now(),
            service_areas=("10001",),
            working_hours=tuple(WorkingHours(day, *hours) for day in range(1, 8)),
        )
        with self.container.uow() as uow:
            uow.crew.add(member)
            uow.commit()
        return member.id

    def book(
        self,
        company: Company,
        email: str,
        name: str,
        *,
        days_ahead: int,
        latest: bool = False,
        access_notes: str = "Key in the lockbox by the door, code 4711. Friendly cat.",
        street: tuple[str, str] = ("9 Compiler Ct", "Apt 4B"),
        extras: tuple[SelectedItem, ...] = (
            SelectedItem("ext_oven"),
            SelectedItem("ext_windows", 4),
        ),
        parameters: tuple[SelectedItem, ...] = PARAMETERS,
        frequency: str = "one_time",
    ) -> Booking:
        """A job some days ahead at the first (or ``latest``: last) open start, with
        parameters, extras and access notes (of a plan: its first visit)."""
        container = self.container
        zone = ZoneInfo(company.timezone)
        day = container.clock.now().astimezone(zone).date() + timedelta(days=days_ahead)
        slots = scheduling.list_availability(
            scheduling.AvailabilityRequest(
                company_id=company.id,
                service_id="svc_standard_clean",
                local_date=day,
                zip_code="10001",
                parameters=parameters,
                extras=extras,
            ),
            uow=container.uow(),
            clock=container.clock,
            drive=container.drive,
        )
        start = max(s.start for s in slots) if latest else min(s.start for s in slots)
        made = scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=company.id,
                service_id="svc_standard_clean",
                frequency_slug=frequency,
                start=start,
                customer=scheduling.CustomerDetails(name=name, email=email),
                address=Address(
                    street[0], "New York", "NY", "10001", line2=street[1], access_notes=access_notes
                ),
                parameters=parameters,
                extras=extras,
            ),
            uow=container.uow(),
            clock=container.clock,
            drive=container.drive,
            phones=container.phones,
        )
        return made[0]

    def user(
        self,
        company: Company,
        role: Role,
        *,
        crew_member_id: str | None = None,
        password: str | None = PASSWORD,
        name: str = "Olivia Owner",
    ) -> User:
        """A user of ``company`` (with ``PASSWORD`` unless told otherwise)."""
        return user_cases.create_user(
            user_cases.CreateUser(
                company_id=company.id,
                email=f"{role.value}-{secrets.token_hex(4)}@example.com",
                role=role,
                name=name,
                crew_member_id=crew_member_id,
                password=password,
            ),
            uow=self.container.uow(),
            clock=self.container.clock,
            hasher=self.container.hasher,
        )

    def cancel(self, job: Job) -> datetime:
        """Cancel the job's visit as an admin would; the instant it was cancelled."""
        scheduling.cancel_booking(
            job.company.id,
            job.booking.id,
            CancelScope.THIS,
            uow=self.container.uow(),
            clock=self.container.clock,
        )
        cancelled_at = self.booking(job).cancelled_at
        assert cancelled_at is not None
        return cancelled_at

    def booking(self, job: Job) -> Booking:
        """The job's booking as stored now."""
        with self.container.uow() as uow:
            return uow.bookings.get(job.company.id, job.booking.id)


def sign_in(page: Any, email: str, password: str = PASSWORD) -> None:
    """Sign in through the form, and wait for the page it leads to (the admin or crew
    home, or the form again with its error) so that the session cookie is set."""
    page.goto("/sign-in")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()


def session_cookie(context: Any) -> dict[str, Any]:
    """The session cookie of a browser context."""
    found = [c for c in context.cookies() if c["name"] == "booking_session"]
    assert len(found) == 1, context.cookies()
    cookie: dict[str, Any] = found[0]
    return cookie


def session_payload(cookie_value: str) -> dict[str, Any]:
    """What a session cookie says (its signed JSON, unchecked)."""
    body = cookie_value.split(".", maxsplit=1)[0]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return decoded
