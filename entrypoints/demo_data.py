"""Demo data: two companies with realistic catalogs, customers, leads and a full-scope key.

Loading is idempotent for companies (an existing slug is reused); every run issues a
fresh key per company, since a key's secret is only ever shown when it is made.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from attrs import frozen

from booking_core import auth
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.services import companies as company_cases
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.leads import CaptureLead, capture_lead
from entrypoints.bootstrap import Container


@frozen
class DemoCompany:
    """One company as the demo made it, with its fresh key."""

    company: Company
    api_key: str


def _handy_catalog() -> Catalog:
    full = demo_catalog()
    handyman = tuple(i for i in full.industries if i.id == "ind_handyman")
    fees = tuple(f for f in full.fees if f.id in {"fee_weekend", "fee_rush"})
    return attrs.evolve(full, industries=handyman, fees=fees, coupons=full.coupons[:1])


DEMO = (
    ("sparkle-cleaning", "Sparkle Cleaning Co.", "America/New_York", 887, "SC", demo_catalog()),
    ("handy-helpers", "Handy Helpers", "America/Chicago", 1_025, "HH", _handy_catalog()),
)

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

LEADS = (
    ("Katherine Johnson", "katherine@example.com", None, "Deep clean before we move in?"),
    ("Dorothy Vaughan", None, "(312) 555-0104", "Weekly cleaning for a 3-bed house"),
)


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
            for person, email, phone, message in LEADS:
                capture_lead(
                    CaptureLead(
                        company_id=company.id,
                        name=person,
                        email=email,
                        phone=phone,
                        message=message,
                        source="demo",
                    ),
                    uow=container.uow(),
                    clock=container.clock,
                    phones=container.phones,
                )
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
        made.append(DemoCompany(company, issued.secret))
    return made
