"""What the SQL adapter promises beyond the repository contracts: the migrations build
exactly ``tables.py``, a late commit is stamped after an earlier one, and a conflict
leaves the unit of work usable."""

from __future__ import annotations

import attrs
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select

from adapters.sql.tables import customers, metadata
from booking_core.errors import ConflictError
from booking_core.paging import PageRequest, Position
from tests import factories as f


def test_migrations_build_exactly_the_tables_module(database):
    database.migrate()  # a second run has nothing to do
    with database.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = [
            d
            for d in compare_metadata(context, metadata)
            if not (d[0] == "remove_table" and d[1].name == "alembic_version")
        ]
    assert differences == []


def test_a_conflict_leaves_the_unit_of_work_usable(database):
    first = f.customer("cmp_a", email="ada@example.com")
    with database.uow() as uow:
        uow.customers.add(first)
        uow.commit()
    other = f.customer("cmp_a", email="x@example.com")
    with database.uow() as uow:
        uow.customers.add(other)
        with pytest.raises(ConflictError) as caught:
            uow.customers.add(f.customer("cmp_a", email="ADA@example.com"))
        with pytest.raises(ConflictError):
            uow.customers.save(attrs.evolve(other, email="ada@example.com"))
        assert uow.customers.by_email("cmp_a", "ada@example.com") == first
        uow.commit()
    assert caught.value.message == "A customer with this email already exists."
    with database.uow() as uow:
        assert uow.customers.get("cmp_a", other.id) == other


def test_a_row_committed_late_is_listed_after_what_a_poller_already_saw(postgres):
    """The early writer touches its row first but commits last: its change stamp is taken
    at commit, so a poller resuming after the other row still finds it."""
    early, late = f.customer("cmp_a", minutes=0), f.customer("cmp_a", minutes=1)
    since = f.at(-60)
    slow = postgres.uow()
    with slow:
        slow.customers.add(early)
        with postgres.uow() as quick:
            quick.customers.add(late)
            quick.commit()
        with postgres.uow() as poller:
            seen = poller.customers.list("cmp_a", PageRequest(updated_since=since))
        assert [c.id for c in seen.items] == [late.id]
        slow.commit()
    # The position of the last row the poller saw (what its cursor would carry).
    with postgres.engine.connect() as connection:
        stamp = connection.execute(
            select(customers.c.changed_at).where(customers.c.id == late.id)
        ).scalar_one()
    with postgres.uow() as poller:
        resumed = poller.customers.list(
            "cmp_a", PageRequest(after=Position(stamp, late.id), updated_since=since)
        )
    assert [c.id for c in resumed.items] == [early.id]
