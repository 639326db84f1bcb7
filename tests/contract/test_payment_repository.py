from __future__ import annotations

import attrs
import pytest

from booking_core.card_money import card_payment, card_refund
from booking_core.errors import NotFoundError
from booking_core.ledger import BookingLedger, PaymentEntry, reverse_entry
from booking_core.paging import PageRequest
from tests import factories as f
from tests.contract.paging import assert_paginates


def test_entry_round_trips(uow_factory):
    entry = f.payment("cmp_a")
    with uow_factory() as uow:
        uow.payments.add(entry)
        uow.commit()
    with uow_factory() as uow:
        assert uow.payments.get("cmp_a", entry.id) == entry
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.payments.get("cmp_b", entry.id)


def test_booking_entries_come_oldest_first_and_reversal_is_found(uow_factory):
    first = f.payment("cmp_a", minutes=0)
    second = f.payment("cmp_a", amount=2_000, minutes=1)
    ledger = BookingLedger("cmp_a", "bkg_1", (first, second))
    reversal = reverse_entry(ledger, second, entry_id="pay_rev", note="typo", at=f.at(2))
    with uow_factory() as uow:
        for entry in (first, second, reversal, f.payment("cmp_a", booking_id="bkg_2")):
            uow.payments.add(entry)
        uow.commit()
    with uow_factory() as uow:
        entries = uow.payments.for_booking("cmp_a", "bkg_1")
        assert [e.id for e in entries] == [first.id, second.id, reversal.id]
        assert uow.payments.reversal_of("cmp_a", second.id) == reversal
        assert uow.payments.reversal_of("cmp_a", first.id) is None


def test_ledger_list_filters_by_customer_booking_and_half_open_date_window(uow_factory):
    entries = [
        f.payment("cmp_a", booking_id="bkg_1", customer_id="cus_1", minutes=0),
        f.payment("cmp_a", booking_id="bkg_2", customer_id="cus_1", minutes=10),
        f.payment("cmp_a", booking_id="bkg_3", customer_id="cus_2", minutes=20),
    ]
    with uow_factory() as uow:
        for entry in entries:
            uow.payments.add(entry)
        uow.commit()
    with uow_factory() as uow:

        def ids(**filters):
            return [e.id for e in uow.payments.list("cmp_a", PageRequest(), **filters).items]

        assert ids(customer_id="cus_1") == [entries[1].id, entries[0].id]
        assert ids(booking_id="bkg_3") == [entries[2].id]
        assert ids(created_from=f.at(10), created_until=f.at(20)) == [entries[1].id]
        assert_paginates(lambda p: uow.payments.list("cmp_a", p), [e.id for e in reversed(entries)])


def test_entries_are_found_by_processor_reference_within_the_company(uow_factory):
    def charge(company_id: str, ref: str, minutes: int) -> PaymentEntry:
        return card_payment(
            entry_id=f"pay_{company_id}_{ref}_{minutes}",
            company_id=company_id,
            booking_id="bkg_1",
            customer_id=None,
            amount_cents=5_000,
            payment_ref=ref,
            at=f.at(minutes),
        )

    paid = charge("cmp_a", "pi_1", 0)
    refund = card_refund(paid, entry_id="pay_refund", amount_cents=1_000, at=f.at(1))
    with uow_factory() as uow:
        for entry in (refund, paid, charge("cmp_a", "pi_2", 2), charge("cmp_b", "pi_1", 3)):
            uow.payments.add(entry)
        uow.payments.add(f.payment("cmp_a"))  # a hand entry carries no reference
        uow.commit()
    with uow_factory() as uow:
        assert [e.id for e in uow.payments.with_external_ref("cmp_a", "pi_1")] == [
            paid.id,
            refund.id,
        ]
        assert uow.payments.with_external_ref("cmp_c", "pi_1") == []


@pytest.mark.parametrize("ledger_key", ["bkg_1", "pay_lone"])
def test_writers_of_one_ledger_take_turns(uow_factory, ledger_key):
    """Eight reversals of one entry racing: with the ledger held while each reads it and
    writes, exactly one finds the entry unreversed, whatever the store."""
    import threading

    from booking_core.errors import ReversalRefused

    booking_id = "bkg_1" if ledger_key == "bkg_1" else None
    original = f.payment("cmp_a", booking_id=booking_id)
    if booking_id is None:
        original = attrs.evolve(original, id="pay_lone")
    with uow_factory() as uow:
        uow.payments.add(original)
        uow.commit()
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def reverse(index: int) -> None:
        try:
            barrier.wait()
            with uow_factory() as uow:
                uow.payments.lock_ledger("cmp_a", ledger_key)
                if booking_id is not None:
                    entries = list(uow.payments.for_booking("cmp_a", booking_id))
                else:
                    found = uow.payments.reversal_of("cmp_a", original.id)
                    entries = [original] + ([found] if found is not None else [])
                ledger = BookingLedger("cmp_a", booking_id, entries)
                entry = reverse_entry(
                    ledger, original, entry_id=f"pay_r{index}", note="x", at=f.at(index + 1)
                )
                uow.payments.add(entry)
                uow.commit()
            outcomes.append("reversed")
        except ReversalRefused:
            outcomes.append("refused")
        except BaseException as error:
            outcomes.append(repr(error))

    threads = [threading.Thread(target=reverse, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 7 + ["reversed"]


def test_lock_ledgers_holds_each_of_them_until_the_unit_ends(uow_factory):
    """A writer of any one of the held ledgers waits for the holder (whatever the store:
    one that runs one writer at a time makes it wait for the whole unit once begun)."""
    import threading

    locked = threading.Event()
    with uow_factory() as holder:
        holder.payments.lock_ledgers("cmp_a", ["bkg_2", "bkg_1", "bkg_2"])
        holder.payments.lock_ledgers("cmp_a", [])
        assert holder.payments.for_booking("cmp_a", "bkg_1") == []  # a unit has begun

        def write() -> None:
            with uow_factory() as uow:
                uow.payments.lock_ledger("cmp_a", "bkg_2")
                uow.payments.for_booking("cmp_a", "bkg_2")  # read under the lock
                locked.set()
                uow.payments.add(f.payment("cmp_a", booking_id="bkg_2"))
                uow.commit()

        writer = threading.Thread(target=write)
        writer.start()
        assert not locked.wait(0.5)
        holder.payments.add(f.payment("cmp_a", booking_id="bkg_1"))
        holder.commit()
    writer.join(60)
    assert locked.is_set()
    with uow_factory() as uow:
        assert len(uow.payments.for_booking("cmp_a", "bkg_2")) == 1


def test_refile_files_entries_under_another_customer_and_moves_only_that(uow_factory, settle):
    """A merge re-files the merged record's entries: ``customer_id`` and the change stamp
    move (a poller by change sees them again); money, kind, booking and instant do not."""
    mine = f.payment("cmp_a", booking_id="bkg_1", customer_id="cus_merged", minutes=0)
    theirs = f.payment("cmp_a", booking_id="bkg_2", customer_id="cus_survivor", minutes=1)
    elsewhere = f.payment("cmp_b", booking_id="bkg_3", customer_id="cus_merged", minutes=2)
    with uow_factory() as uow:
        for entry in (mine, theirs, elsewhere):
            uow.payments.add(entry)
        uow.commit()
    with uow_factory() as uow:
        assert uow.payments.refile("cmp_a", "cus_merged", "cus_survivor") == 1
        uow.commit()
    settle()
    with uow_factory() as uow:
        assert uow.payments.get("cmp_a", mine.id) == attrs.evolve(mine, customer_id="cus_survivor")
        assert uow.payments.get("cmp_b", elsewhere.id) == elsewhere
        listed = uow.payments.list("cmp_a", PageRequest(), customer_id="cus_survivor").items
        assert [e.id for e in listed] == [theirs.id, mine.id]
        assert not uow.payments.list("cmp_a", PageRequest(), customer_id="cus_merged").items
        by_change = uow.payments.list("cmp_a", PageRequest(updated_since=f.at(-10_000))).items
        assert [e.id for e in by_change] == [theirs.id, mine.id]
        assert uow.payments.refile("cmp_a", "cus_nobody", "cus_survivor") == 0
