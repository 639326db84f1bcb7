"""The waitlist repository's contract, on memory, SQLite and PostgreSQL: entries round
trip whole, belong to one company, list newest first, and go when deleted."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import attrs
import pytest

from booking_core.errors import ConflictError, NotFoundError
from booking_core.ids import new_id
from booking_core.paging import PageRequest
from booking_core.ports import UnitOfWork
from booking_core.waitlist import WaitlistEntry
from tests import factories as f
from tests.contract.paging import assert_paginates

UowFactory = Callable[[], UnitOfWork]


def entry(company_id: str = "cmp_a", minutes: int = 0, **changes: object) -> WaitlistEntry:
    made = WaitlistEntry(
        id=new_id("wl"),
        company_id=company_id,
        service_id="svc_standard_clean",
        zip="60601",
        date_from=date(2030, 5, 6),
        date_to=date(2030, 5, 20),
        frequency_slug="one_time",
        name="Ana Pérez",
        email="ana@example.com",
        created_at=f.at(minutes),
        phone="+13125550100",
        note="Any morning; the dog is friendly. Café crème.",
    )
    return attrs.evolve(made, **changes)


def store(uow_factory: UowFactory, *entries: WaitlistEntry) -> None:
    with uow_factory() as uow:
        for one in entries:
            uow.waitlist.add(one)
        uow.commit()


def test_an_entry_round_trips_whole_and_is_not_found_by_another_company(uow_factory):
    full = entry()
    bare = entry(minutes=1, phone=None, note="", date_to=date(2030, 5, 6))
    store(uow_factory, full, bare)
    with uow_factory() as uow:
        assert uow.waitlist.get("cmp_a", full.id) == full
        assert uow.waitlist.get("cmp_a", bare.id) == bare
        with pytest.raises(NotFoundError):
            uow.waitlist.get("cmp_b", full.id)
        with pytest.raises(NotFoundError):
            uow.waitlist.get("cmp_a", "wl_nothing")


def test_an_id_is_stored_once(uow_factory):
    first = entry()
    store(uow_factory, first)
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.waitlist.add(attrs.evolve(first, name="Someone else"))


def test_entries_list_newest_first_per_company(uow_factory):
    mine = [entry(minutes=m) for m in (3, 1, 2, 5, 4)]
    tied = [entry(minutes=6), entry(minutes=6)]
    store(uow_factory, *mine, *tied, entry("cmp_b", minutes=10))
    newest_first = sorted([*mine, *tied], key=lambda e: (e.created_at, e.id), reverse=True)
    with uow_factory() as uow:
        assert_paginates(lambda p: uow.waitlist.list("cmp_a", p), [e.id for e in newest_first])
        assert [e.id for e in uow.waitlist.list("cmp_c", PageRequest()).items] == []
        with pytest.raises(ValueError, match="newest first"):
            uow.waitlist.list("cmp_a", PageRequest(updated_since=f.at(0)))


def test_a_deleted_entry_is_gone_and_another_companys_is_not_deleted(uow_factory):
    kept, gone, theirs = entry(), entry(minutes=1), entry("cmp_b", minutes=2)
    store(uow_factory, kept, gone, theirs)
    with uow_factory() as uow:
        uow.waitlist.delete("cmp_a", gone.id)
        with pytest.raises(NotFoundError):
            uow.waitlist.delete("cmp_a", theirs.id)
        with pytest.raises(NotFoundError):
            uow.waitlist.delete("cmp_a", gone.id)
        uow.commit()
    with uow_factory() as uow:
        assert [e.id for e in uow.waitlist.list("cmp_a", PageRequest()).items] == [kept.id]
        assert uow.waitlist.get("cmp_b", theirs.id) == theirs


def test_an_add_that_is_not_committed_leaves_nothing(uow_factory):
    with uow_factory() as uow:
        uow.waitlist.add(entry())
    with uow_factory() as uow:
        assert uow.waitlist.list("cmp_a", PageRequest()).items == ()
