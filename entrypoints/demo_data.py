"""Demo data: two companies with realistic catalogs, customers, leads, a full-scope key,
and two people who sign in: an owner and a crew user (the crew member of the demo job).

Loading is idempotent for companies and users (an existing slug or email is reused);
every run issues a fresh key per company and a fresh one-time sign-in link per user,
since a key's secret and a link's token are only ever shown when they are made.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core import auth
from booking_core.bookings import Booking
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.ids import new_id
from booking_core.services import companies as company_cases
from booking_core.services import scheduling
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.leads import CaptureLead, capture_lead
from booking_core.services.scheduling import active_crew
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from booking_core.services.users import CreateUser, create_user, issue_sign_in_link, list_users
from booking_core.users import Role, User
from entrypoints.bootstrap import Container

DEMO_REFERRAL_DISCOUNT_CENTS = 2_500
"""The demo companies' referral discount ($25), so a customer's code works out of the box."""


@frozen
class DemoUser:
    """A demo user and the token of a fresh one-time sign-in link."""

    user: User
    link_token: str


@frozen
class DemoCompany:
    """One company as the demo made it, with its fresh key and its users' fresh links."""

    company: Company
    api_key: str
    users: tuple[DemoUser, ...] = ()


def _handy_catalog() -> Catalog:
    full = demo_catalog()
    handyman = tuple(i for i in full.industries if i.id == "ind_handyman")
    fees = tuple(f for f in full.fees if f.id in {"fee_weekend", "fee_rush"})
    return attrs.evolve(full, industries=handyman, fees=fees, coupons=full.coupons[:1])


DEMO = (
    ("sparkle-cleaning", "Sparkle Cleaning Co.", "America/New_York", 887, "SC", demo_catalog()),
    ("handy-helpers", "Handy Helpers", "America/Chicago", 1_025, "HH", _handy_catalog()),
)

NYC_AREAS = ("10001", "10003", "10025", "11201", "11215")
CHICAGO_AREAS = ("60601", "60614", "60657")
CREW = {
    "sparkle-cleaning": (
        ("Rosa Diaz", "10003", NYC_AREAS, (), range(1, 7)),
        ("Sam Lee", "11201", NYC_AREAS, ("svc_deep_clean",), range(1, 6)),
        ("Ana Kim", "10025", NYC_AREAS, (), range(2, 7)),
        # The island of the catalog's "Island travel" fee is served from the island: from
        # New York the drive alone (about 650 minutes) fills a working day.
        ("Mia Coffin", "02554", ("02554",), (), range(1, 7)),
    ),
    "handy-helpers": (
        ("Bo Novak", "60614", CHICAGO_AREAS, (), range(1, 6)),
        ("Cy Ortiz", "60657", CHICAGO_AREAS, (), range(1, 6)),
    ),
}
"""Name, home zip, service areas, excluded services, working weekdays (08:00-18:00)."""

DEMO_JOBS = {
    "sparkle-cleaning": (
        "svc_standard_clean",
        ("Ada Lovelace", "ada@example.com"),
        Address("12 Analytical Way", "New York", "NY", "10001"),
        2,
    ),
    "handy-helpers": (
        "svc_handyman_hour",
        ("Jane Addams", "jane@example.com"),
        Address("2100 N Lincoln Ave", "Chicago", "IL", "60614"),
        3,
    ),
}
"""A job booked for a demo customer some weekdays ahead, at the first open start from 10:00."""

CUSTOMERS = (
    (
        "Ada Lovelace",
        "ada@example.com",
        "(212) 555-0101",
        Address("12 Analytical Way", "New York", "NY", "10001"),
    ),
    (
        "Grace Hopper",
        "grace@example.com",
        "(212) 555-0102",
        Address("9 Compiler Ct", "Brooklyn", "NY", "11201"),
    ),
    (
        "Alan Turing",
        "alan@example.com",
        "(617) 555-0103",
        Address("1 Enigma Rd", "Nantucket", "MA", "02554"),
    ),
)

LEADS: tuple[tuple[str, str | None, str | None, str], ...] = (
    ("Katherine Johnson", "katherine@example.com", None, "Deep clean before we move in?"),
    ("Dorothy Vaughan", None, "(312) 555-0104", "Weekly cleaning for a 3-bed house"),
)


def _add_crew(container: Container, company: Company, crew: tuple[Any, ...]) -> None:
    at = container.clock.now()
    with container.uow() as uow:
        for name, home, areas, excluded, weekdays in crew:
            hours = tuple(WorkingHours(day, time(8), time(18)) for day in weekdays)
            uow.crew.add(
                new_crew_member(
                    member_id=new_id("crew"),
                    company_id=company.id,
                    name=name,
                    home_zip=home,
                    at=at,
                    service_areas=areas,
                    excluded_service_ids=excluded,
                    working_hours=hours,
                )
            )
        uow.commit()


def _book_demo_job(
    container: Container,
    company: Company,
    service_id: str,
    who: tuple[str, str],
    address: Address,
    days_ahead: int,
) -> Booking | None:
    """Book the first open start from 10:00 some weekdays ahead for a demo customer."""
    zone = ZoneInfo(company.timezone)
    day = container.clock.now().astimezone(zone).date() + timedelta(days=days_ahead)
    while day.isoweekday() > 5:
        day += timedelta(days=1)
    slots = scheduling.list_availability(
        scheduling.AvailabilityRequest(
            company_id=company.id, service_id=service_id, local_date=day, zip_code=address.zip
        ),
        uow=container.reader(),
        clock=container.clock,
        drive=container.drive,
    )
    later = [s for s in slots if s.start.astimezone(zone).hour >= 10]
    if not later:
        return None
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id=service_id,
            frequency_slug="one_time",
            start=min(later, key=lambda s: s.start).start,
            address=address,
            customer=scheduling.CustomerDetails(name=who[0], email=who[1]),
            notes="Booked by the demo loader.",
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
        phones=container.phones,
    )
    return made[0]


def _demo_users(container: Container, company: Company, crew_member_id: str | None) -> list[User]:
    """The company's owner and crew user, made on first load (the crew user is the crew
    member of the demo job, else the first crew member); after that the ones stored."""
    stored = list_users(company.id, uow=container.uow())
    owner = next((u for u in stored if u.role is Role.OWNER), None)
    crew = next((u for u in stored if u.role is Role.CREW), None)
    if owner is None:
        owner = create_user(
            CreateUser(
                company_id=company.id,
                email=f"owner@{company.slug}.example",
                role=Role.OWNER,
                name="Olivia Owner",
            ),
            uow=container.uow(),
            clock=container.clock,
        )
    if crew is None:
        with container.uow() as uow:
            members = {m.id: m for m in active_crew(uow, company.id)}
        member = members.get(crew_member_id or "") or next(iter(members.values()), None)
        if member is not None:
            crew = create_user(
                CreateUser(
                    company_id=company.id,
                    email=f"{member.name.split()[0].lower()}@{company.slug}.example",
                    role=Role.CREW,
                    name=member.name,
                    crew_member_id=member.id,
                ),
                uow=container.uow(),
                clock=container.clock,
            )
    return [u for u in (owner, crew) if u is not None]


def load_demo(
    container: Container, progress: Callable[[str], None] = lambda _: None
) -> list[DemoCompany]:
    """Create (or reuse) the demo companies and issue each a full-scope key."""
    made: list[DemoCompany] = []
    for index, (slug, name, zone, tax, prefix, catalog) in enumerate(DEMO, start=1):
        progress(f"demo company {index}/{len(DEMO)}: {slug}")
        with container.uow() as uow:
            company = uow.companies.by_slug(slug)
        if company is None:
            company = company_cases.create_company(
                company_cases.CreateCompany(
                    slug=slug,
                    name=name,
                    timezone=zone,
                    tax_rate_bps=tax,
                    code_prefix=prefix,
                    catalog=catalog,
                ),
                uow=container.uow(),
                clock=container.clock,
            )
            company = update_company_settings(
                UpdateCompanySettings(
                    company_id=company.id, referral_discount_cents=DEMO_REFERRAL_DISCOUNT_CENTS
                ),
                uow=container.uow(),
            )
            for person, email, phone, address in CUSTOMERS:
                create_customer(
                    CreateCustomer(
                        company_id=company.id,
                        name=person,
                        email=email,
                        phone=phone,
                        address=address,
                    ),
                    uow=container.uow(),
                    clock=container.clock,
                    phones=container.phones,
                )
            _add_crew(container, company, CREW[slug])
            for person, lead_email, lead_phone, message in LEADS:
                capture_lead(
                    CaptureLead(
                        company_id=company.id,
                        name=person,
                        email=lead_email,
                        phone=lead_phone,
                        message=message,
                        source="demo",
                    ),
                    uow=container.uow(),
                    clock=container.clock,
                    phones=container.phones,
                )
            job = _book_demo_job(container, company, *DEMO_JOBS[slug])
            crew_member_id = job.crew_ids[0] if job is not None else None
        else:
            crew_member_id = None
        people = []
        for user in _demo_users(container, company, crew_member_id):
            _, link = issue_sign_in_link(user.email, uow=container.uow(), clock=container.clock)
            people.append(DemoUser(user, link.token))
        issued = company_cases.create_key(
            company_cases.CreateKey(
                company_id=company.id,
                name="Demo (full access)",
                scopes=frozenset(auth.SCOPES),
                rate_limit=6_000,
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        made.append(DemoCompany(company, issued.secret, tuple(people)))
    return made
