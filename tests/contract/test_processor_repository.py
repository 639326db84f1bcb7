"""The processor repository's contract: accounts kept when disconnected, at most one
connected per company, and each processor event id remembered once, races included."""

from __future__ import annotations

import threading

import attrs
import pytest

from booking_core.errors import ConflictError, NotFoundError
from booking_core.processor_accounts import ProcessorAccount
from tests import factories as f


def account(
    account_id: str = "acct_1", company_id: str = "cmp_a", minutes: int = 0
) -> ProcessorAccount:
    return ProcessorAccount(
        account_id=account_id, company_id=company_id, connected_at=f.at(minutes)
    )


def test_an_account_is_found_by_id_and_as_its_company_s_connection(uow_factory):
    with uow_factory() as uow:
        uow.processor.add(account())
        uow.commit()
    with uow_factory() as uow:
        assert uow.processor.account("acct_1") == account()
        assert uow.processor.current("cmp_a") == account()
        assert uow.processor.account("acct_2") is None
        assert uow.processor.current("cmp_b") is None


def test_a_disconnected_account_is_kept_with_its_time_but_no_longer_current(uow_factory):
    with uow_factory() as uow:
        uow.processor.add(account())
        uow.commit()
    gone = attrs.evolve(account(), disconnected_at=f.at(30))
    with uow_factory() as uow:
        uow.processor.save(gone)
        uow.commit()
    with uow_factory() as uow:
        assert uow.processor.account("acct_1") == gone
        assert uow.processor.current("cmp_a") is None
        # Another account may be connected now, and the old one stays the company's.
        uow.processor.add(account("acct_2", minutes=40))
        uow.commit()
    with uow_factory() as uow:
        assert uow.processor.current("cmp_a") == account("acct_2", minutes=40)
        assert uow.processor.account("acct_1") == gone


def test_one_account_belongs_to_one_company(uow_factory):
    with uow_factory() as uow:
        uow.processor.add(account())
        uow.commit()
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.processor.add(account(company_id="cmp_b"))
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.processor.save(account(company_id="cmp_b"))
    with uow_factory() as uow:
        assert uow.processor.account("acct_1") == account()


def test_a_company_never_has_two_connected_accounts(uow_factory):
    with uow_factory() as uow:
        uow.processor.add(account("acct_1"))
        uow.processor.add(attrs.evolve(account("acct_2"), disconnected_at=f.at(1)))
        uow.commit()
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.processor.add(account("acct_3"))
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.processor.save(account("acct_2"))  # reconnecting while acct_1 is connected
    with uow_factory() as uow:
        assert uow.processor.current("cmp_a") == account("acct_1")
        assert uow.processor.account("acct_3") is None


def test_an_event_id_is_new_once_and_only_if_committed(uow_factory):
    with uow_factory() as uow:
        assert uow.processor.remember_event("evt_1", "acct_1", f.at()) is True
        assert uow.processor.remember_event("evt_1", "acct_1", f.at()) is False
    with uow_factory() as uow:  # the unit above rolled back: evt_1 was not kept
        assert uow.processor.remember_event("evt_1", "acct_1", f.at()) is True
        uow.commit()
    with uow_factory() as uow:
        assert uow.processor.remember_event("evt_1", "acct_1", f.at(5)) is False
        assert uow.processor.remember_event("evt_2", "acct_1", f.at(5)) is True


@pytest.mark.parametrize("first_commits", [True, False])
def test_a_unit_remembering_an_event_at_once_with_another_waits_for_it(uow_factory, first_commits):
    """Two deliveries of one event: the second is told the id is new only if the first,
    which it waits for, rolled back."""
    told: list[bool] = []
    errors: list[BaseException] = []

    def second() -> None:
        try:
            with uow_factory() as uow:
                told.append(uow.processor.remember_event("evt_race", "acct_1", f.at(1)))
                uow.commit()
        except BaseException as error:
            errors.append(error)

    with uow_factory() as uow:
        assert uow.processor.remember_event("evt_race", "acct_1", f.at())
        thread = threading.Thread(target=second)
        thread.start()
        thread.join(timeout=0.5)
        assert thread.is_alive(), "the second unit did not wait for the first"
        if first_commits:
            uow.commit()
    thread.join(timeout=30)
    assert errors == []
    assert told == [not first_commits]
