from __future__ import annotations

import attrs
import pytest

from booking_core.errors import ConflictError, DomainTaken, NotFoundError
from tests import factories as f


def test_company_round_trips(uow_factory):
    company = f.company(custom_domain="book.sparkle.example")
    with uow_factory() as uow:
        uow.companies.add(company)
        uow.commit()
    with uow_factory() as uow:
        assert uow.companies.get(company.id) == company
        assert uow.companies.get_for_update(company.id) == company
        assert uow.companies.by_slug(company.slug) == company


def test_unknown_company_is_not_found(uow_factory):
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.companies.get("cmp_nope")
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.companies.get_for_update("cmp_nope")
    with uow_factory() as uow:
        assert uow.companies.by_slug("nope") is None


def test_slug_is_unique(uow_factory):
    with uow_factory() as uow:
        uow.companies.add(f.company(slug="sparkle"))
        uow.commit()
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.companies.add(f.company(slug="sparkle"))


def test_saved_company_changes_are_kept_and_listed_oldest_first(uow_factory):
    first, second = f.company(), f.company(created_at=f.at(5))
    with uow_factory() as uow:
        uow.companies.add(second)
        uow.companies.add(first)
        uow.commit()
    renamed = attrs.evolve(first, name="Sparkle & Shine", min_notice_minutes=60)
    with uow_factory() as uow:
        uow.companies.save(renamed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.companies.get(first.id) == renamed
        assert [c.id for c in uow.companies.list_all()] == [first.id, second.id]


def test_a_custom_domain_is_one_companys(uow_factory):
    first = f.company(slug="sparkle", custom_domain="book.example.com")
    second = f.company(slug="handy")
    with uow_factory() as uow:
        uow.companies.add(first)
        uow.companies.add(second)
        uow.commit()
    with uow_factory() as uow, pytest.raises(DomainTaken):
        uow.companies.save(attrs.evolve(second, custom_domain="book.example.com"))
    with uow_factory() as uow, pytest.raises(DomainTaken):
        uow.companies.add(f.company(slug="third", custom_domain="book.example.com"))
    with uow_factory() as uow:
        # the company holding it saves it again; several companies have none
        uow.companies.save(attrs.evolve(first, name="Sparkle Two"))
        uow.companies.add(f.company(slug="fourth"))
        uow.commit()
    with uow_factory() as uow:
        assert uow.companies.get(second.id).custom_domain is None
        assert [c.custom_domain for c in uow.companies.list_all()].count(None) == 2
