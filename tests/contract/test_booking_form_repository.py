"""The booking form repository's contract, on memory, SQLite and PostgreSQL: forms by
company, read back exactly, replaced, deleted, listed newest first."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from booking_core.booking_forms import BookingForm, Question, QuestionKind
from booking_core.errors import ConflictError, NotFoundError
from booking_core.ids import new_id
from booking_core.paging import PageRequest
from booking_core.ports import UnitOfWork
from tests import factories as f
from tests.contract.paging import assert_paginates

UowFactory = Callable[[], UnitOfWork]


def form(company_id: str = "cmp_a", minutes: int = 0, **changes: object) -> BookingForm:
    made = BookingForm(
        id=new_id("bf"),
        company_id=company_id,
        name="Spring clean, Brooklyn (café district)",
        service_ids=("svc_standard", "svc_deep"),
        frequency_slugs=("one_time", "weekly"),
        extra_ids=("ext_fridge",),
        questions=(
            Question(id="gate-code", label="Gate code?", required=True),
            Question(
                id="q_0a1b2c",
                label="Pets at home?",
                kind=QuestionKind.CHOICE,
                choices=("None", "Cat 🐈", "Dog"),
            ),
        ),
        created_at=f.at(minutes),
        updated_at=f.at(minutes),
    )
    return attrs.evolve(made, **changes)


def add(uow_factory: UowFactory, *forms: BookingForm) -> None:
    with uow_factory() as uow:
        for one in forms:
            uow.booking_forms.add(one)
        uow.commit()


def test_a_form_round_trips_exactly(uow_factory):
    full = form()
    bare = form(minutes=1, frequency_slugs=(), extra_ids=(), questions=(), active=False)
    add(uow_factory, full, bare)
    with uow_factory() as uow:
        assert uow.booking_forms.get("cmp_a", full.id) == full
        assert uow.booking_forms.get("cmp_a", bare.id) == bare
        assert uow.booking_forms.get_for_update("cmp_a", full.id) == full


def test_another_companys_form_is_not_found_like_an_unknown_one(uow_factory):
    mine = form()
    add(uow_factory, mine)
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.booking_forms.get("cmp_b", mine.id)
        with pytest.raises(NotFoundError):
            uow.booking_forms.get_for_update("cmp_b", mine.id)
        with pytest.raises(NotFoundError):
            uow.booking_forms.get("cmp_a", "bf_missing")
        with pytest.raises(NotFoundError):
            uow.booking_forms.delete("cmp_b", mine.id)
        with pytest.raises(NotFoundError):
            uow.booking_forms.save(attrs.evolve(mine, company_id="cmp_b"))
        assert uow.booking_forms.list("cmp_b", PageRequest()).items == ()


def test_a_taken_id_conflicts(uow_factory):
    one = form()
    add(uow_factory, one)
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.booking_forms.add(attrs.evolve(one, name="Other"))


def test_save_replaces_and_is_kept_only_when_committed(uow_factory):
    one = form()
    add(uow_factory, one)
    changed = attrs.evolve(
        one, name="Renamed", active=False, questions=one.questions[:1], updated_at=f.at(5)
    )
    with uow_factory() as uow:
        uow.booking_forms.save(changed)  # not committed
    with uow_factory() as uow:
        assert uow.booking_forms.get("cmp_a", one.id) == one
        uow.booking_forms.save(changed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.booking_forms.get("cmp_a", one.id) == changed
        with pytest.raises(NotFoundError):
            uow.booking_forms.save(form())


def test_delete_removes_the_form(uow_factory):
    gone, kept = form(), form(minutes=1)
    add(uow_factory, gone, kept)
    with uow_factory() as uow:
        uow.booking_forms.delete("cmp_a", gone.id)
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.booking_forms.get("cmp_a", gone.id)
        assert [f.id for f in uow.booking_forms.list("cmp_a", PageRequest()).items] == [kept.id]


def test_list_is_newest_first_and_paginates(uow_factory):
    forms = [form(minutes=m) for m in (3, 1, 2)]
    add(uow_factory, *forms, form("cmp_b", minutes=9))
    newest_first = [one.id for one in sorted(forms, key=lambda o: o.created_at, reverse=True)]

    def list_page(request: PageRequest):
        with uow_factory() as uow:
            return uow.booking_forms.list("cmp_a", request)

    assert_paginates(list_page, newest_first)
