from __future__ import annotations

import attrs
import pytest

from booking_core.customers import merge
from booking_core.errors import ConflictError, NotFoundError
from booking_core.paging import PageRequest
from tests import factories as f
from tests.contract.paging import assert_paginates, walk


def test_customer_round_trips_with_addresses(uow_factory):
    customer = f.customer("cmp_a", email="Ada@Example.com")
    with uow_factory() as uow:
        uow.customers.add(customer)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.get("cmp_a", customer.id) == customer
        assert uow.customers.by_email("cmp_a", "  ada@EXAMPLE.com ") == customer
        assert uow.customers.by_email("cmp_b", "ada@example.com") is None


def test_email_is_unique_per_company_case_insensitively(uow_factory):
    with uow_factory() as uow:
        uow.customers.add(f.customer("cmp_a", email="ada@example.com"))
        uow.customers.add(f.customer("cmp_b", email="ada@example.com"))
        uow.commit()
    # A store may refuse at once or at commit; either way it refuses.
    with uow_factory() as uow, pytest.raises(ConflictError):  # noqa: PT012
        uow.customers.add(f.customer("cmp_a", email="ADA@example.com"))
        uow.commit()


def test_other_company_customer_is_not_found(uow_factory):
    customer = f.customer("cmp_a")
    with uow_factory() as uow:
        uow.customers.add(customer)
        uow.commit()
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.customers.get("cmp_b", customer.id)


def test_list_is_newest_first_omits_merged_records_and_paginates(uow_factory):
    people = [f.customer("cmp_a", minutes=i) for i in range(5)]
    survivor, merged = merge(people[0], people[3], at=f.at(10))
    with uow_factory() as uow:
        for person in people:
            uow.customers.add(person)
        uow.customers.add(f.customer("cmp_b"))
        uow.commit()
    with uow_factory() as uow:
        uow.customers.save(survivor)
        uow.customers.save(merged)
        uow.commit()
    expected = [people[i].id for i in (4, 2, 1, 0)]
    with uow_factory() as uow:
        assert_paginates(lambda page: uow.customers.list("cmp_a", page), expected)
        assert uow.customers.get("cmp_a", people[3].id).merged_into == people[0].id


def test_search_matches_name_or_email_case_insensitively(uow_factory):
    ada = f.customer("cmp_a", email="ada@analytical.example", name="Ada Lovelace")
    grace = f.customer("cmp_a", email="grace@navy.example", name="Grace Hopper", minutes=1)
    with uow_factory() as uow:
        uow.customers.add(ada)
        uow.customers.add(grace)
        uow.commit()
    with uow_factory() as uow:
        page = uow.customers.list("cmp_a", PageRequest(), search="HOPPER")
        assert [c.id for c in page.items] == [grace.id]
        page = uow.customers.list("cmp_a", PageRequest(), search="analytical")
        assert [c.id for c in page.items] == [ada.id]


def test_updated_since_lists_by_change_ascending(uow_factory):
    a, b, c = (f.customer("cmp_a", minutes=i) for i in range(3))
    for person in (a, b, c):
        with uow_factory() as uow:
            uow.customers.add(person)
            uow.commit()
    with uow_factory() as uow:
        uow.customers.save(attrs.evolve(a, name="Ada Byron", updated_at=f.at(9)))
        uow.commit()
    with uow_factory() as uow:
        pages = walk(lambda p: uow.customers.list("cmp_a", p), 2, updated_since=f.at(-10_000))
        assert [i for page in pages for i in page] == [b.id, c.id, a.id]
