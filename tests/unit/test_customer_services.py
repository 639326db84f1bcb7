"""Who a customer is, as ``POST /customers`` and ``POST /bookings`` both decide it: the email's
record or the survivor its merges lead to (one walk, ``customers.merge_survivor``, bounded
the same way on both paths)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.clock import FixedClock
from booking_core.customers import MAX_MERGE_HOPS, Address, Customer, merge
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import RuleViolation
from booking_core.paging import PageRequest
from booking_core.services import companies, scheduling
from booking_core.services.customers import CreateCustomer, create_customer
from tests import factories

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
ELSEWHERE = Address("9 Elm St", "New York", "NY", "10001")


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def company_id(store: MemoryStore) -> str:
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
        uow=MemoryUnitOfWork(store),
        clock=FixedClock(NOW),
    )
    with MemoryUnitOfWork(store) as uow:
        uow.crew.add(factories.all_week_crew(company.id, NOW))
        uow.commit()
    return company.id


def merged_chain(store: MemoryStore, company_id: str, hops: int) -> list[Customer]:
    """``hops + 1`` customers, the first merged into the second, that one into the third,
    and so on: the last survives."""
    people = [factories.customer(company_id, email=f"p{i}@example.com") for i in range(hops + 1)]
    with MemoryUnitOfWork(store) as uow:
        for person in people:
            uow.customers.add(person)
        uow.commit()
    for i in range(hops):
        with MemoryUnitOfWork(store) as uow:
            survivor, gone = merge(
                uow.customers.get(company_id, people[i + 1].id),
                uow.customers.get(company_id, people[i].id),
                at=NOW,
            )
            uow.customers.save(survivor)
            uow.customers.save(gone)
            uow.commit()
    with MemoryUnitOfWork(store) as uow:
        return [uow.customers.get(company_id, p.id) for p in people]


def create(store: MemoryStore, company_id: str, email: str) -> tuple[Customer, bool]:
    return create_customer(
        CreateCustomer(company_id=company_id, name="Ada", email=email),
        uow=MemoryUnitOfWork(store),
        clock=FixedClock(NOW),
        phones=PhonenumbersNormalizer(),
    )


def book(store: MemoryStore, company_id: str, email: str) -> str:
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=NOW + timedelta(days=1, hours=3),
            customer=scheduling.CustomerDetails(name="Ada", email=email),
            address=ELSEWHERE,
        ),
        uow=MemoryUnitOfWork(store),
        clock=FixedClock(NOW),
        drive=TableDriveTime(default=10),
        phones=PhonenumbersNormalizer(),
    )
    return made[0].customer_id


def test_creating_with_the_email_of_a_record_merged_twice_returns_the_survivor(store, company_id):
    people = merged_chain(store, company_id, 2)
    customer, created = create(store, company_id, "P0@example.com")
    assert (customer.id, created) == (people[-1].id, False)


def test_booking_with_the_email_of_a_record_merged_twice_books_the_survivor(store, company_id):
    people = merged_chain(store, company_id, 2)
    assert book(store, company_id, "p0@example.com") == people[-1].id
    with MemoryUnitOfWork(store) as uow:
        survivor = uow.customers.get(company_id, people[-1].id)
        first = uow.customers.get(company_id, people[0].id)
    assert ELSEWHERE in [saved.address for saved in survivor.addresses]
    assert ELSEWHERE not in [saved.address for saved in first.addresses]


def test_both_paths_refuse_a_merge_chain_too_long_to_follow(store, company_id):
    merged_chain(store, company_id, MAX_MERGE_HOPS + 1)
    with pytest.raises(RuleViolation, match="merges"):
        create(store, company_id, "p0@example.com")
    with pytest.raises(RuleViolation, match="merges"):
        book(store, company_id, "p0@example.com")
    with MemoryUnitOfWork(store) as uow:
        assert list(uow.bookings.list(company_id, PageRequest()).items) == []
