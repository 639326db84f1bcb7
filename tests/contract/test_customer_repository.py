from __future__ import annotations

import threading
import time
from collections.abc import Callable

import attrs
import pytest

from booking_core.customers import Address, SavedAddress, add_address, merge
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
        assert uow.customers.get_for_update("cmp_a", customer.id) == customer
        assert uow.customers.by_email("cmp_a", "  ada@EXAMPLE.com ") == customer
        assert uow.customers.by_email("cmp_b", "ada@example.com") is None


def test_by_phone_finds_the_oldest_record_with_that_phone_in_the_company_merged_or_not(
    uow_factory,
):
    older = f.customer("cmp_a", phone="+12125550177", minutes=1)
    newer = f.customer("cmp_a", phone="+12125550177", minutes=2)
    theirs = f.customer("cmp_b", phone="+12125550177")
    survivor, merged = merge(newer, older, at=f.at(3))
    with uow_factory() as uow:
        for person in (newer, older, theirs):
            uow.customers.add(person)
        uow.commit()
    with uow_factory() as uow:
        uow.customers.save(survivor)
        uow.customers.save(merged)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.by_phone("cmp_a", "+12125550177") == merged
        assert uow.customers.by_phone("cmp_b", "+12125550177") == theirs
        assert uow.customers.by_phone("cmp_a", "+12125550178") is None
        assert uow.customers.by_phone("cmp_c", "+12125550177") is None


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
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.customers.get_for_update("cmp_b", customer.id)


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


def test_a_search_finds_an_email_by_its_own_letters_beyond_ascii(uow_factory):
    """The email is compared lower-cased as it is stored, not casefolded ("ß" stays "ß")."""
    hans = f.customer("cmp_a", email="straße@example.de", name="Hans")
    other = f.customer("cmp_a", email="STRASSE@example.de", name="Other", minutes=1)
    with uow_factory() as uow:
        uow.customers.add(hans)
        uow.customers.add(other)
        uow.commit()
    with uow_factory() as uow:
        page = uow.customers.list("cmp_a", PageRequest(), search="Straße@example.de")
        assert [c.id for c in page.items] == [hans.id]
        page = uow.customers.list("cmp_a", PageRequest(), search="strasse@")
        assert [c.id for c in page.items] == [other.id]


def test_updated_since_lists_by_change_ascending(uow_factory, settle):
    a, b, c = (f.customer("cmp_a", minutes=i) for i in range(3))
    for person in (a, b, c):
        with uow_factory() as uow:
            uow.customers.add(person)
            uow.commit()
    with uow_factory() as uow:
        uow.customers.save(attrs.evolve(a, name="Ada Byron", updated_at=f.at(9)))
        uow.commit()
    settle()
    with uow_factory() as uow:
        pages = walk(lambda p: uow.customers.list("cmp_a", p), 2, updated_since=f.at(-10_000))
        assert [i for page in pages for i in page] == [b.id, c.id, a.id]


# --- add_unless_email_taken: the race for a new email ----------------------------------


def test_add_unless_email_taken_adds_a_new_email_and_returns_the_holder_of_a_taken_one(
    uow_factory,
):
    ada = f.customer("cmp_a", email="ada@example.com")
    with uow_factory() as uow:
        assert uow.customers.add_unless_email_taken(ada) == (ada, True)
        uow.commit()
    again = f.customer("cmp_a", email=" ADA@example.com", minutes=1)
    elsewhere = f.customer("cmp_b", email="ada@example.com", minutes=2)
    with uow_factory() as uow:
        assert uow.customers.add_unless_email_taken(again) == (ada, False)
        assert uow.customers.add_unless_email_taken(elsewhere) == (elsewhere, True)
        # The transaction is still usable after the taken email (PostgreSQL aborts it
        # on an error otherwise).
        uow.customers.add(f.customer("cmp_a", email="grace@example.com", minutes=3))
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.get("cmp_a", ada.id) == ada
        with pytest.raises(NotFoundError):
            uow.customers.get("cmp_a", again.id)
        assert uow.customers.by_email("cmp_b", "ada@example.com") == elsewhere
        assert uow.customers.by_email("cmp_a", "grace@example.com") is not None


def test_add_unless_email_taken_returns_a_merged_holder_as_it_is(uow_factory):
    survivor, merged = merge(
        f.customer("cmp_a", email="kept@example.com"),
        f.customer("cmp_a", email="gone@example.com", minutes=1),
        at=f.at(5),
    )
    with uow_factory() as uow:
        uow.customers.add(survivor)
        uow.customers.add(merged)
        uow.commit()
    with uow_factory() as uow:
        held, created = uow.customers.add_unless_email_taken(
            f.customer("cmp_a", email="gone@example.com", minutes=2)
        )
    assert (held, created) == (merged, False)


RACERS = 8


def test_racing_adds_of_one_new_email_make_one_customer_and_every_racer_gets_it(uow_factory):
    """Each racer holds its unit open a moment after adding, so that the others reach the
    insert while the winner has not committed; each loser then adds an address of its own
    to the record it got, and none of those addresses is lost."""
    barrier = threading.Barrier(RACERS)
    outcomes: list[tuple[str, bool] | BaseException] = [ValueError("did not run")] * RACERS

    def racer(index: int) -> None:
        mine = f.customer("cmp_a", email="race@example.com", minutes=index)
        try:
            barrier.wait(timeout=30)
            with uow_factory() as uow:
                held, created = uow.customers.add_unless_email_taken(mine)
                time.sleep(0.05)
                if not created:
                    address = SavedAddress(
                        f"adr_racer_{index}", Address(f"{index} Race St", "Albany", "NY", "12207")
                    )
                    uow.customers.save(add_address(held, address, at=f.at(10), default=False))
                uow.commit()
            outcomes[index] = (held.id, created)
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racer hung"

    results = [o for o in outcomes if isinstance(o, tuple)]
    assert len(results) == RACERS, outcomes
    assert len({held_id for held_id, _ in results}) == 1
    assert [created for _, created in results].count(True) == 1
    with uow_factory() as uow:
        (customer,) = uow.customers.list("cmp_a", PageRequest()).items
    assert customer.id == results[0][0]
    losers = {f"adr_racer_{i}" for i, (_, created) in enumerate(results) if not created}
    assert losers <= {a.id for a in customer.addresses}


def test_a_customer_keeps_its_referral_code_and_is_found_by_it_in_its_company_only(uow_factory):
    mine = attrs.evolve(f.customer("cmp_a"), referral_code="K7Q3XM2P")
    theirs = attrs.evolve(f.customer("cmp_b"), referral_code="K7Q3XM2P")
    survivor = f.customer("cmp_a")
    with uow_factory() as uow:
        for person in (mine, theirs, survivor):
            uow.customers.add(person)
        uow.commit()
    kept, merged = merge(survivor, mine, at=f.at(3))
    with uow_factory() as uow:
        uow.customers.save(kept)
        uow.customers.save(merged)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.get("cmp_a", mine.id).referral_code == "K7Q3XM2P"
        assert uow.customers.by_referral_code("cmp_a", "K7Q3XM2P") == merged  # merged or not
        assert uow.customers.by_referral_code("cmp_b", "K7Q3XM2P") == theirs
        assert uow.customers.by_referral_code("cmp_a", survivor.referral_code) == kept
        assert uow.customers.by_referral_code("cmp_a", "K7Q3XM2Q") is None
        assert uow.customers.by_referral_code("cmp_c", "K7Q3XM2P") is None


def test_a_referral_code_is_unique_per_company_and_a_taken_one_leaves_the_unit_usable(
    uow_factory,
):
    first = attrs.evolve(f.customer("cmp_a"), referral_code="ABCD2345")
    with uow_factory() as uow:
        uow.customers.add(first)
        uow.commit()
    clash = attrs.evolve(f.customer("cmp_a"), referral_code="ABCD2345")
    with uow_factory() as uow:
        with pytest.raises(ConflictError):
            uow.customers.add(clash)
        with pytest.raises(ConflictError):
            uow.customers.add_unless_email_taken(clash)
        redrawn = attrs.evolve(clash, referral_code="ABCD2346")
        assert uow.customers.add_unless_email_taken(redrawn) == (redrawn, True)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.by_referral_code("cmp_a", "ABCD2345") == first
        assert uow.customers.get("cmp_a", clash.id) == redrawn


def together(*targets: Callable[[], None]) -> None:
    """Each target on a thread of its own, all started, all waited for."""
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"


@pytest.mark.parametrize("other", ["for update", "held"])
@pytest.mark.parametrize("read", ["by_email", "get"])
def test_a_held_read_keeps_the_record_from_changing_until_its_unit_ends(uow_factory, read, other):
    """A booking holds its customer (``held=True``): a merge of it, which reads it for
    update, waits for the booking's unit to end, so it re-files the booking too; so does
    another booking's held read (it may then read the record for update itself)."""
    customer = f.customer("cmp_a", email="held@example.com")
    with uow_factory() as uow:
        uow.customers.add(customer)
        uow.commit()
    holding, order = threading.Event(), []

    def held_read(uow):  # type: ignore[no-untyped-def]
        if read == "by_email":
            return uow.customers.by_email("cmp_a", "HELD@example.com", held=True)
        return uow.customers.get("cmp_a", customer.id, held=True)

    def holder() -> None:
        with uow_factory() as uow:
            assert held_read(uow) == customer
            holding.set()
            time.sleep(0.3)
            order.append("the holder ends")
            uow.commit()

    def changer() -> None:
        assert holding.wait(30)
        with uow_factory() as uow:
            if other == "held":
                uow.customers.get("cmp_a", customer.id, held=True)
                order.append("the changer holds")
            locked = uow.customers.get_for_update("cmp_a", customer.id)
            order.append("the changer reads")
            uow.customers.save(attrs.evolve(locked, name="Changed"))
            uow.commit()

    together(holder, changer)
    holds = ["the changer holds"] if other == "held" else []
    assert order == ["the holder ends", *holds, "the changer reads"]


@pytest.mark.parametrize("read", ["by_email", "get"])
def test_a_held_read_waits_for_a_change_under_way_and_reads_what_it_left(uow_factory, read):
    """A merge that got there first is waited for, and the booking reads the record as
    the merge left it (merged: it then follows it to the survivor)."""
    customer = f.customer("cmp_a", email="held@example.com")
    with uow_factory() as uow:
        uow.customers.add(customer)
        uow.commit()
    locked, seen = threading.Event(), []

    def changer() -> None:
        with uow_factory() as uow:
            held = uow.customers.get_for_update("cmp_a", customer.id)
            locked.set()
            time.sleep(0.3)
            uow.customers.save(attrs.evolve(held, name="Changed"))
            uow.commit()

    def reader() -> None:
        assert locked.wait(30)
        with uow_factory() as uow:
            if read == "by_email":
                found = uow.customers.by_email("cmp_a", "held@example.com", held=True)
            else:
                found = uow.customers.get("cmp_a", customer.id, held=True)
            assert found is not None
            seen.append(found.name)
            uow.commit()

    together(changer, reader)
    assert seen == ["Changed"]


def test_merges_held_for_a_shared_record_take_turns(uow_factory):
    """Two units holding the merges of records they share: the second's next read waits
    until the first has ended (on every backend, its units never overlap there)."""
    holding, order = threading.Event(), []
    customer = f.customer("cmp_a", email="merge@example.com")
    with uow_factory() as uow:
        uow.customers.add(customer)
        uow.commit()

    def first() -> None:
        with uow_factory() as uow:
            uow.customers.hold_merges("cmp_a", ("cus_x", customer.id))
            uow.customers.get("cmp_a", customer.id)
            holding.set()
            time.sleep(0.3)
            order.append("the first ends")
            uow.commit()

    def second() -> None:
        assert holding.wait(30)
        with uow_factory() as uow:
            uow.customers.hold_merges("cmp_a", (customer.id, "cus_y"))
            uow.customers.get("cmp_a", customer.id)
            order.append("the second reads")
            uow.commit()

    together(first, second)
    assert order == ["the first ends", "the second reads"]
