"""Two companies connecting one custom domain at the same instant, on both SQL backends:
one wins, the other is told the domain is taken (a domain serves one company's pages
and quote links). The first is held at its commit while the second runs; the settings
check alone let both through on PostgreSQL, where neither sees the other's uncommitted
row."""

from __future__ import annotations

from adapters.sql import Database
from adapters.sql.tables import companies as companies_table
from adapters.sql.tenancy import _company_values
from booking_core.clock import FixedClock
from booking_core.companies import DOMAIN_TAKEN
from booking_core.errors import ValidationFailed
from booking_core.services import companies, setup
from tests import factories as f
from tests.integration.test_booking_races import NOW
from tests.integration.test_merge_races import _held_at_commit, race_held
from tests.integration.test_referral_migration import downgrade_to

DOMAIN = "book.shared.example"


def _connect(db: Database, company_id: str, uow=None):
    return lambda: setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=company_id, custom_domain=DOMAIN),
        uow=uow or db.uow(),
    )


def test_one_domain_connected_by_two_companies_at_once_goes_to_one(database: Database):
    first, second = (
        companies.create_company(
            companies.CreateCompany(slug=slug, name=slug.title()),
            uow=database.uow(),
            clock=FixedClock(NOW),
        )
        for slug in ("sparkle", "handy")
    )
    uow, reached, release = _held_at_commit(database)
    held_errors, other_errors = race_held(
        _connect(database, first.id, uow), reached, release, _connect(database, second.id)
    )
    assert held_errors == []
    assert len(other_errors) == 1
    refused = other_errors[0]
    assert isinstance(refused, ValidationFailed)
    assert refused.field_errors == {"custom_domain": DOMAIN_TAKEN}
    with database.uow() as check:
        domains = {c.slug: c.custom_domain for c in check.companies.list_all()}
    assert domains == {"sparkle": DOMAIN, "handy": None}


def test_the_upgrade_leaves_a_doubly_connected_domain_with_the_older_company(database):
    downgrade_to(database, "0016_referrals")
    older = f.company(slug="older", custom_domain=DOMAIN)
    newer = f.company(slug="newer", custom_domain=DOMAIN, created_at=f.at(5))
    other = f.company(slug="other", custom_domain="book.other.example", created_at=f.at(9))
    with database.engine.begin() as connection:
        for company in (newer, other, older):
            connection.execute(companies_table.insert().values(**_company_values(company)))
    database.migrate()
    with database.uow() as uow:
        domains = {c.slug: c.custom_domain for c in uow.companies.list_all()}
    assert domains == {"older": DOMAIN, "newer": None, "other": "book.other.example"}
