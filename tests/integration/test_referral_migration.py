"""Migration 0016: customers stored before it get referral codes of their own, and
companies have the programme off."""

from __future__ import annotations

import re

from alembic import command
from alembic.config import Config
from sqlalchemy import select

from adapters.sql.customers import _values as stored_values
from adapters.sql.engine import MIGRATIONS
from adapters.sql.tables import companies, customers
from adapters.sql.tenancy import _company_values
from tests import factories as f


def downgrade_to(database, revision: str) -> None:
    """Take ``database`` back to ``revision`` (to store rows as an older release did)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with database.engine.begin() as connection:
        config.attributes.update(connection=connection, schema=database.schema)
        command.downgrade(config, revision)


def test_customers_stored_before_referrals_get_distinct_codes_and_companies_are_off(database):
    downgrade_to(database, "0015_webhook_active_since")
    company = f.company()
    old = [f.customer(company.id, minutes=i) for i in range(30)] + [f.customer("cmp_other")]
    before = set(customers.c.keys()) - {"referral_code"}
    with database.engine.begin() as connection:
        row = _company_values(company)
        del row["referral_discount_cents"]
        connection.execute(companies.insert().values(**row))
        for customer in old:
            values = {k: v for k, v in stored_values(customer).items() if k in before}
            connection.execute(customers.insert().values(**values))
    database.migrate()
    with database.engine.connect() as connection:
        codes = dict(connection.execute(select(customers.c.id, customers.c.referral_code)).all())
        off = connection.execute(select(companies.c.referral_discount_cents)).scalar_one()
    assert off == 0
    assert set(codes) == {c.id for c in old}
    assert all(re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{8}", code) for code in codes.values())
    assert len(set(codes.values())) == len(old)
    with database.uow() as uow:  # the stored code is the record's
        first = uow.customers.get(company.id, old[0].id)
        assert uow.customers.by_referral_code(company.id, codes[old[0].id]) == first
