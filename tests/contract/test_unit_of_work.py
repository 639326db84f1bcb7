"""The unit of work's contract: atomic, rolled back unless committed, no lost update."""

from __future__ import annotations

import threading

import attrs
import pytest

from booking_core.errors import ConflictError
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
