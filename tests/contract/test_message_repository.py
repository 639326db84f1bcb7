"""The message repository's contract, on memory, SQLite and PostgreSQL: messages read back
equal, one per cause (a duplicate ``dedupe_key`` stores nothing and leaves the unit usable),
due ones claimed oldest first and leased, lists newest first by company and subject."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import attrs
import pytest

from booking_core.errors import NotFoundError
from booking_core.ids import new_id
from booking_core.notifications import Message, MessageKind, MessageStatus
from booking_core.paging import PageRequest
from booking_core.ports import UnitOfWork
from tests import factories as f
from tests.contract.paging import assert_paginates

UowFactory = Callable[[], UnitOfWork]


def message(
    company_id: str = "cmp_a", minutes: int = 0, due: int | None = None, **changes: object
) -> Message:
    """A pending message created ``minutes`` after ``T0`` and due then, or at ``due``."""
    made = Message(
        id=new_id("msg"),
        company_id=company_id,
        kind=MessageKind.BOOKING_CONFIRMED,
        to="pat@example.com",
        subject="Your booking is confirmed",
        text="See you on Tuesday.\nCafé crew",
        html="<p>See you on <b>Tuesday</b>.</p><p>Café crew</p>",
        dedupe_key=f"booking.created:{new_id('evt')}",
        reply_to="office@sparkle.example",
        subject_id="bkg_1",
        next_attempt_at=f.at(minutes if due is None else due),
        created_at=f.at(minutes),
    )
    return attrs.evolve(made, **changes)


def store(uow_factory: UowFactory, *messages: Message) -> None:
    with uow_factory() as uow:
        for one in messages:
            assert uow.messages.add(one)
        uow.commit()


def claim(uow_factory: UowFactory, now: int, lease: int = 5, limit: int = 100) -> list[Message]:
    """Claim what is due ``now`` minutes after ``T0``, leased ``lease`` minutes, and commit."""
    with uow_factory() as uow:
        claimed = list(uow.messages.claim_due(f.at(now), f.at(now + lease), limit))
        uow.commit()
    return claimed


def leased(messages: list[Message], until: int) -> list[Message]:
    return [attrs.evolve(m, next_attempt_at=f.at(until)) for m in messages]


def test_a_message_round_trips_and_is_not_found_by_another_company(uow_factory):
    full = message()
    bare = message(minutes=1, reply_to=None, subject_id=None, kind=MessageKind.PORTAL_SIGN_IN)
    store(uow_factory, full, bare)
    with uow_factory() as uow:
        assert uow.messages.get("cmp_a", full.id) == full
        assert uow.messages.get("cmp_a", bare.id) == bare
        with pytest.raises(NotFoundError):
            uow.messages.get("cmp_b", full.id)
        with pytest.raises(NotFoundError):
            uow.messages.save(attrs.evolve(full, company_id="cmp_b"))
        assert uow.messages.list("cmp_b", PageRequest()).items == ()


def test_the_same_cause_queues_once_per_company_and_the_unit_stays_usable(uow_factory):
    first = message()
    again = message(minutes=1, dedupe_key=first.dedupe_key, subject="Second copy")
    elsewhere = message("cmp_b", dedupe_key=first.dedupe_key)
    with uow_factory() as uow:
        assert uow.messages.add(first) is True
        assert uow.messages.add(again) is False
        assert uow.messages.add(elsewhere) is True
        later = message(minutes=2)
        assert uow.messages.add(later) is True  # the unit still works after the duplicate
        uow.commit()
    with uow_factory() as uow:
        assert uow.messages.add(attrs.evolve(again, id=new_id("msg"))) is False
        uow.commit()
    with uow_factory() as uow:
        assert uow.messages.list("cmp_a", PageRequest()).items == (later, first)
        with pytest.raises(NotFoundError):
            uow.messages.get("cmp_a", again.id)


def test_a_rolled_back_unit_queues_nothing(uow_factory):
    with uow_factory() as uow:
        uow.messages.add(message())
    with uow_factory() as uow:
        assert uow.messages.list("cmp_a", PageRequest()).items == ()


def test_save_stores_the_new_state(uow_factory):
    stored = message()
    store(uow_factory, stored)
    sent = attrs.evolve(
        stored,
        status=MessageStatus.SENT,
        attempts=2,
        last_error=None,
        sent_at=f.at(7),
        next_attempt_at=f.at(7),
    )
    failed = attrs.evolve(stored, attempts=1, last_error="421 try later", next_attempt_at=f.at(1))
    with uow_factory() as uow:
        uow.messages.save(failed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.messages.get("cmp_a", stored.id) == failed
        uow.messages.save(sent)
        with pytest.raises(NotFoundError):
            uow.messages.save(message())
        uow.commit()
    with uow_factory() as uow:
        assert uow.messages.get("cmp_a", stored.id) == sent


def test_due_pending_messages_are_claimed_oldest_first_and_leased(uow_factory):
    early, later = message(minutes=0), message("cmp_b", minutes=1)
    not_yet = message(minutes=2, due=30)
    done = message(minutes=3, status=MessageStatus.SENT, sent_at=f.at(3))
    gave_up = message(minutes=4, status=MessageStatus.FAILED, attempts=6)
    store(uow_factory, later, not_yet, done, early, gave_up)
    assert claim(uow_factory, now=10, limit=1) == leased([early], until=15)
    assert claim(uow_factory, now=10) == leased([later], until=15)
    assert claim(uow_factory, now=14) == []
    # A worker that died mid-send left them leased: due again when the lease ends.
    assert claim(uow_factory, now=15, lease=60) == leased([early, later], until=75)
    assert claim(uow_factory, now=30, lease=60) == leased([not_yet], until=90)


def test_a_rolled_back_claim_leaves_the_message_due(uow_factory):
    stored = message()
    store(uow_factory, stored)
    with uow_factory() as uow:
        assert len(uow.messages.claim_due(f.at(1), f.at(6), 10)) == 1
    assert claim(uow_factory, now=1) == leased([stored], until=6)


def test_lists_are_newest_first_and_by_subject(uow_factory):
    about_one = [message(minutes=m, subject_id="bkg_1") for m in range(3)]
    about_other = message(minutes=5, subject_id="quo_9", kind=MessageKind.QUOTE_SENT)
    store(uow_factory, *about_one, about_other, message("cmp_b", subject_id="bkg_1"))
    with uow_factory() as uow:
        everything = uow.messages.list("cmp_a", PageRequest()).items
        assert everything == (about_other, *reversed(about_one))
        assert_paginates(lambda p: uow.messages.list("cmp_a", p), [m.id for m in everything])
        assert uow.messages.list("cmp_a", PageRequest(), subject_id="bkg_1").items == tuple(
            reversed(about_one)
        )
        assert list(uow.messages.for_subject("cmp_a", "bkg_1")) == about_one
        assert list(uow.messages.for_subject("cmp_a", "nothing")) == []
        with pytest.raises(ValueError, match="newest first"):
            uow.messages.list("cmp_a", PageRequest(updated_since=f.at(0)))


@pytest.fixture
def pg_uow_factory(postgres_database) -> UowFactory:
    """Units of work over the (emptied) PostgreSQL database of this run."""
    postgres_database.truncate_all()
    return postgres_database.uow


def test_two_workers_on_postgres_never_claim_the_same_message(pg_uow_factory):
    """The first worker holds its claim open; a second one takes at once the due messages
    the first does not hold, without waiting for it."""
    messages = [message(minutes=m) for m in range(5)]
    store(pg_uow_factory, *messages)
    with ThreadPoolExecutor(1) as other, pg_uow_factory() as first:
        held = first.messages.claim_due(f.at(10), f.at(20), 2)
        assert list(held) == leased(messages[:2], until=20)
        second = other.submit(claim, pg_uow_factory, 10, 10).result(timeout=10)
        assert second == leased(messages[2:], until=20)
        first.commit()
    assert claim(pg_uow_factory, now=19) == []
    assert claim(pg_uow_factory, now=20, lease=1) == leased(messages, until=21)
