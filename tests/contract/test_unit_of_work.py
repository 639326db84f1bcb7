"""The unit of work's contract: atomic, rolled back unless committed, no lost update."""

from __future__ import annotations

import threading
import time

import attrs
import pytest

from booking_core.errors import ConflictError
from booking_core.idempotency import IdempotencyRecord, RecordState
from tests import factories as f


def test_changes_are_rolled_back_unless_committed(uow_factory):
    with uow_factory() as uow:
        uow.companies.add(f.company(slug="kept"))
        uow.commit()
    with uow_factory() as uow:
        uow.companies.add(f.company(slug="dropped"))
    with uow_factory() as uow:
        assert uow.companies.by_slug("kept") is not None
        assert uow.companies.by_slug("dropped") is None


def test_an_exception_rolls_back_every_write_of_the_unit(uow_factory):
    customer = f.customer("cmp_a")

    def failing_unit() -> None:
        with uow_factory() as uow:
            uow.customers.add(customer)
            uow.payments.add(f.payment("cmp_a"))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        failing_unit()
    with uow_factory() as uow:
        assert uow.customers.by_email("cmp_a", customer.email) is None
        assert uow.payments.for_booking("cmp_a", "bkg_1") == []


def test_concurrent_writers_never_lose_an_update(uow_factory):
    """Eight threads each bump one quote five times, retrying when they lose a race."""
    quote = f.quote("cmp_a")
    with uow_factory() as uow:
        uow.quotes.add(quote)
        uow.commit()
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(5):
                while True:
                    try:
                        with uow_factory() as uow:
                            current = uow.quotes.get("cmp_a", quote.id)
                            bumped = attrs.evolve(
                                current,
                                version=current.version + 1,
                                note=current.note + "x",
                            )
                            uow.quotes.save(bumped, expected_version=current.version)
                            uow.commit()
                        break
                    except ConflictError:
                        continue
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with uow_factory() as uow:
        final = uow.quotes.get("cmp_a", quote.id)
    assert final.version == quote.version + 40
    assert final.note == "x" * 40


def test_concurrent_creates_with_one_email_keep_exactly_one_customer(uow_factory):
    outcomes: list[str] = []
    lock = threading.Lock()

    def create() -> None:
        try:
            with uow_factory() as uow:
                uow.customers.add(f.customer("cmp_a", email="race@example.com"))
                uow.commit()
            result = "created"
        except ConflictError:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 5 + ["created"]


def _claim_of(key: str) -> IdempotencyRecord:
    return IdempotencyRecord("cmp_a", key, "f" * 64, RecordState.IN_PROGRESS, f.at())


def test_an_undo_keeps_the_units_claims_and_drops_its_other_writes(uow_factory):
    customer = f.customer("cmp_a")
    with uow_factory() as uow:
        assert uow.idempotency.claim(_claim_of("k1")) is None
        uow.customers.add(customer)
        uow.undo_since_claims()
        uow.idempotency.complete("cmp_a", "k1", 422, b"refused")
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.by_email("cmp_a", customer.email) is None
        kept = uow.idempotency.get("cmp_a", "k1")
    assert kept is not None
    assert (kept.state, kept.response_status, kept.response_body) == (
        RecordState.COMPLETED,
        422,
        b"refused",
    )


def test_no_other_unit_claims_a_key_between_an_undo_and_the_commit(uow_factory):
    """The key stays held across the undo. Another unit's claim is tried in the middle of
    it (right after the rollback, where a unit that undoes by rolling back has let go of
    its transaction) or, where the undo does not roll back, right after it: it finds the
    key busy (PostgreSQL) or waits and then finds the stored answer (SQLite, memory: one
    writer at a time); it never claims the key itself."""
    seen: list[IdempotencyRecord | None] = []

    def other() -> None:
        with uow_factory() as uow:
            seen.append(uow.idempotency.claim(_claim_of("k1")))
            uow.commit()

    thread = threading.Thread(target=other)
    with uow_factory() as uow:
        uow.idempotency.claim(_claim_of("k1"))
        uow.payments.add(f.payment("cmp_a"))
        plain_rollback = uow.rollback

        def rollback_and_let_another_claim() -> None:
            uow.rollback = plain_rollback  # type: ignore[method-assign]
            plain_rollback()
            thread.start()
            thread.join(1.0)  # on memory it waits for this unit to end

        uow.rollback = rollback_and_let_another_claim  # type: ignore[method-assign]
        uow.undo_since_claims()
        uow.rollback = plain_rollback  # type: ignore[method-assign]
        if thread.ident is None:
            thread.start()
            time.sleep(0.3)  # the other unit's claim, if it could, would run now
        uow.idempotency.complete("cmp_a", "k1", 422, b"refused")
        uow.commit()
    thread.join(20)
    assert len(seen) == 1
    assert seen[0] is not None, "another unit claimed a key this unit held"
    assert seen[0].state in (RecordState.IN_PROGRESS, RecordState.COMPLETED)
    with uow_factory() as uow:
        assert uow.payments.for_booking("cmp_a", "bkg_1") == []
        kept = uow.idempotency.get("cmp_a", "k1")
    assert kept is not None
    assert kept.response_status == 422
