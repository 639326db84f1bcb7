"""The "Rescheduled" email states the new total when the move changed the price (the
visit's date fees followed it), and says nothing of the price when it did not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.notifications.composer import money
from booking_core.notifications import MessageKind
from tests.unit.test_notifications import World, tuesday_at

NEW_YEARS_EVE = datetime(2026, 12, 31, 15, tzinfo=UTC)  # 10:00 in New York: demo holiday


@pytest.fixture
def world() -> World:
    return World()


def _move(world: World, booking_id: str, start: datetime) -> None:
    world.move(booking_id, start)
    world.worker.run_once()


def test_a_move_onto_a_holiday_mails_the_new_total_and_the_old(world: World):
    (made,) = world.book(tuesday_at(10))
    world.worker.run_once()
    _move(world, made.id, NEW_YEARS_EVE)
    (notice,) = world.sent(MessageKind.BOOKING_RESCHEDULED)
    with world.uow() as unit:
        moved = unit.bookings.get(world.company.id, made.id)
    assert "Holiday surcharge" in [f.name for f in moved.price.fees]
    new, old = money(moved.price.total_cents), money(made.price.total_cents)
    assert f"Price:   {new} for the new date (was {old})" in notice.text
    assert f"<strong>{new}</strong> (was {old})" in notice.html


def test_a_move_that_keeps_the_price_mails_no_price(world: World):
    (made,) = world.book(tuesday_at(10))
    world.worker.run_once()
    _move(world, made.id, made.start + timedelta(days=1))
    (notice,) = world.sent(MessageKind.BOOKING_RESCHEDULED)
    assert "Price:" not in notice.text
    assert "price for the new date" not in notice.html
