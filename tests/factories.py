"""Small builders of valid domain values for tests; each call makes fresh ids."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import attrs

from booking_core import auth
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.crew import CrewMember, WorkingHours, new_crew_member
from booking_core.customers import Address, Customer, SavedAddress, new_customer
from booking_core.errors import NotFoundError
from booking_core.ids import new_id
from booking_core.leads import Enquiry, Lead, capture
from booking_core.ledger import Kind, Method, Origin, PaymentEntry
from booking_core.notifications import Message, MessageKind
from booking_core.ports import UnitOfWork
from booking_core.quotes import ManualLine, Quote, create_quote

T0 = datetime(2026, 11, 2, 15, 0, tzinfo=UTC)


def at(minutes: int = 0) -> datetime:
    """``T0`` plus some minutes."""
    return T0 + timedelta(minutes=minutes)


def email_of_length(length: int) -> str:
    """An address of ``length`` characters (7 or more) that only its length can make bad:
    at most 64 characters before the @, host labels of at most 63 (the email rule's own
    limits, ``booking_core.customers.email_problem``)."""
    local = "a" * min(64, length - len("@b.com"))
    labels: list[str] = []
    left = length - len(local) - len("@.com")
    while left > 0:
        size = min(63, left) - (left == 64)  # never leave room for a dot alone
        labels.append("b" * size)
        left -= size + 1
    return f"{local}@{'.'.join(labels)}.com"


def company(slug: str | None = None, **changes: object) -> Company:
    cid = new_id("cmp")
    values: dict[str, object] = {
        "id": cid,
        "slug": slug or f"co-{cid[-8:]}",
        "name": "Sparkle Cleaning",
        "timezone": "America/New_York",
        "code_prefix": "SC",
        "created_at": T0,
        "tax_rate_bps": 887,
    }
    values.update(changes)
    return Company(**values)  # type: ignore[arg-type]


def api_key(company_id: str, **kwargs: object) -> auth.IssuedKey:
    return auth.issue_key(
        key_id=new_id("key"),
        company_id=company_id,
        name="Website",
        at=T0,
        **kwargs,  # type: ignore[arg-type]
    )


def address(zip_code: str = "10001") -> SavedAddress:
    return SavedAddress(new_id("adr"), Address("1 Main St", "New York", "NY", zip_code))


def customer(company_id: str, email: str | None = None, minutes: int = 0, **kw: object) -> Customer:
    cid = new_id("cus")
    return new_customer(
        customer_id=cid,
        company_id=company_id,
        name=str(kw.get("name", "Ada Lovelace")),
        email=email or f"{cid}@example.com",
        phone=kw.get("phone", "+12125550100"),  # type: ignore[arg-type]
        at=at(minutes),
        address=address(),
    )


def ensure_customer(uow: UnitOfWork, company_id: str, customer_id: str | None) -> None:
    """Store a customer ``customer_id`` of the company unless there is one (a quote's or a
    booking's customer always exists: a convert holds it)."""
    if customer_id is None:
        return
    try:
        uow.customers.get(company_id, customer_id)
    except NotFoundError:
        uow.customers.add(attrs.evolve(customer(company_id), id=customer_id))


def lead(
    company_id: str, email: str | None = None, phone: str | None = None, minutes: int = 0
) -> Lead:
    made, _ = capture(
        Enquiry(name="Grace Hopper", email=email or f"{new_id('x')}@example.com", phone_e164=phone),
        company_id=company_id,
        candidates=(),
        new_lead_id=new_id("lead"),
        at=at(minutes),
    )
    return made


def quote(company_id: str, customer_id: str = "cus_1", minutes: int = 0) -> Quote:
    return create_quote(
        company_id=company_id,
        at=at(minutes),
        customer_id=customer_id,
        manual_lines=(ManualLine("Window washing", 12_000),),
    )


def payment(
    company_id: str,
    booking_id: str = "bkg_1",
    customer_id: str | None = "cus_1",
    amount: int = 10_000,
    minutes: int = 0,
    kind: Kind = Kind.PAYMENT,
) -> PaymentEntry:
    return PaymentEntry(
        id=new_id("pay"),
        company_id=company_id,
        booking_id=booking_id,
        customer_id=customer_id,
        kind=kind,
        method=Method.CASH,
        amount_cents=amount,
        offline=True,
        note="cash at the door",
        origin=Origin.HAND,
        created_at=at(minutes),
    )


def all_week_crew(company_id: str, at: datetime, member_id: str = "crew_rosa") -> CrewMember:
    """Rosa: home and service area 10001, working 08:00-18:00 every day of the week."""
    return new_crew_member(
        member_id=member_id,
        company_id=company_id,
        name="Rosa",
        home_zip="10001",
        at=at,
        service_areas=("10001",),
        working_hours=tuple(WorkingHours(d, time(8), time(18)) for d in range(1, 8)),
    )


def with_service_retired(catalog: Catalog, service_id: str) -> Catalog:
    """``catalog`` with the service ``service_id`` retired (``active`` false)."""
    return attrs.evolve(
        catalog,
        industries=tuple(
            attrs.evolve(
                industry,
                services=tuple(
                    attrs.evolve(s, active=False) if s.id == service_id else s
                    for s in industry.services
                ),
            )
            for industry in catalog.industries
        ),
    )


def message(**changes: object) -> Message:
    """A pending confirmation to ada@example.com, queued at ``T0``, with ``changes``."""
    made = Message(
        id=new_id("msg"),
        company_id="cmp_a",
        kind=MessageKind.BOOKING_CONFIRMED,
        to="ada@example.com",
        subject="Booked",
        text="Hello",
        html="<p>Hello</p>",
        dedupe_key="k",
        next_attempt_at=T0,
        created_at=T0,
    )
    return attrs.evolve(made, **changes)
