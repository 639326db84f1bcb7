"""Races for crew time on both SQL backends: however many writers race for one member's
slot, exactly one wins and the others get ``SlotTaken`` (or ``ConflictError``), never a
double booking and never another error; concurrent saves of one booking lose no update.
Each race is checked afterwards by a self-join over ``booking_assignments``.

Races for a customer: first bookings of one new email at different free slots all
succeed and all name the one customer the first of them created."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from datetime import time as wall_time

import attrs
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.sql.bookings import SqlBookingRepository
from booking_core.bookings import ActivityKind, Booking, record
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import ConflictError, SlotTaken
from booking_core.services import companies, scheduling
from tests.unit.bookings_support import AT, booked, local, order

CO = "cmp_acme"
RACERS = 50

OVERLAPPING_OPEN_PAIRS = """
SELECT count(*) FROM booking_assignments a
JOIN booking_assignments b
  ON a.company_id = b.company_id AND a.crew_id = b.crew_id AND a.booking_id < b.booking_id
WHERE a.open AND b.open AND a.starts_at < b.ends_at AND b.starts_at < a.ends_at
"""


def job(start_minutes: int, crew: tuple[str, ...] = ("crew_a",)) -> Booking:
    """A 150-minute clean on 3 March 2026, ``start_minutes`` after 09:00 New York time."""
    start = local(2026, 3, 3, 9) + timedelta(minutes=start_minutes)
    return booked(order(crew_ids=crew), start=start)[0]


def overlapping_open_pairs(db: Database) -> int:
    with db.engine.connect() as connection:
        return int(connection.execute(text(OVERLAPPING_OPEN_PAIRS)).scalar_one())


def race(count: int, attempt: Callable[[int], None]) -> list[BaseException | None]:
    """Run ``attempt(i)`` on ``count`` threads released together; each one's outcome."""
    outcomes: list[BaseException | None] = [None] * count
    barrier = threading.Barrier(count)

    def run(index: int) -> None:
        barrier.wait()
        try:
            attempt(index)
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racer hung"
    return outcomes


def test_fifty_writers_racing_for_one_members_slot_make_exactly_one_booking(database):
    # Starts 09:00..11:15: any two of these 150-minute jobs overlap; every third one is a
    # team job in which the contested member is listed second.
    contenders = [
        job(15 * (i % 10), (f"crew_t{i}", "crew_a") if i % 3 == 0 else ("crew_a",))
        for i in range(RACERS)
    ]

    def attempt(index: int) -> None:
        with database.uow() as uow:
            uow.bookings.add_all([contenders[index]])
            uow.commit()

    outcomes = race(RACERS, attempt)
    unexpected = [o for o in outcomes if o is not None and not isinstance(o, ConflictError)]
    assert unexpected == []
    assert outcomes.count(None) == 1
    refusals = [o for o in outcomes if isinstance(o, SlotTaken)]
    assert all(o.crew_id in ("crew_a", None) for o in refusals)
    winner = contenders[outcomes.index(None)]
    with database.uow() as uow:
        held = uow.bookings.busy(CO, AT, AT + timedelta(days=9), ["crew_a"])
    assert [block.booking_id for block in held["crew_a"]] == [winner.id]
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM bookings")).scalar_one() == 1
    assert overlapping_open_pairs(database) == 0


def test_racing_writers_for_different_members_all_win(database):
    contenders = [job(0, (f"crew_{i}",)) for i in range(20)]

    def attempt(index: int) -> None:
        for _ in range(20):  # a PostgreSQL deadlock or serialisation failure may be retried
            try:
                with database.uow() as uow:
                    uow.bookings.add_all([contenders[index]])
                    uow.commit()
                return
            except SlotTaken:
                raise
            except ConflictError:
                continue

    assert race(len(contenders), attempt) == [None] * len(contenders)
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM bookings")).scalar_one() == 20
    assert overlapping_open_pairs(database) == 0


def test_a_writer_waiting_on_an_uncommitted_overlap_loses_once_it_commits(database):
    """The second writer cannot see the first one's row when it starts (PostgreSQL) or
    cannot start at all (SQLite); either way it waits, then loses cleanly."""
    first, second = job(0), job(60, ("crew_b", "crew_a"))
    outcome: list[BaseException | None] = []

    def late_writer() -> None:
        try:
            with database.uow() as uow:
                uow.bookings.add_all([second])
                uow.commit()
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    with database.uow() as uow:
        uow.bookings.add_all([first])
        thread = threading.Thread(target=late_writer)
        thread.start()
        time.sleep(0.5)
        assert thread.is_alive(), "the second writer should be waiting for the first"
        uow.commit()
    thread.join(timeout=30)
    assert len(outcome) == 1
    assert isinstance(outcome[0], SlotTaken)
    assert outcome[0].crew_id == "crew_a"
    assert overlapping_open_pairs(database) == 0


def test_concurrent_saves_of_one_booking_never_lose_an_update(database):
    """Eight threads each note five changes on one booking, retrying when they lose."""
    booking = job(0)
    with database.uow() as uow:
        uow.bookings.add_all([booking])
        uow.commit()

    def attempt(index: int) -> None:
        for _ in range(5):
            while True:
                try:
                    with database.uow() as uow:
                        current = uow.bookings.get(CO, booking.id)
                        changed = record(
                            current,
                            AT,
                            ActivityKind.RESCHEDULED,
                            {"writer": index},
                            notes=current.notes + "x",
                        )
                        uow.bookings.save_all([changed])
                        uow.commit()
                    break
                except ConflictError:
                    continue

    assert race(8, attempt) == [None] * 8
    with database.uow() as uow:
        final = uow.bookings.get(CO, booking.id)
    assert final.version == booking.version + 40
    assert final.notes == "x" * 40
    assert len(final.activity) == 41
    assert overlapping_open_pairs(database) == 0


def test_postgres_itself_refuses_overlapping_open_assignments(postgres):
    """The exclusion constraint holds even for rows written without the repository."""
    row = (
        "INSERT INTO booking_assignments "
        "(company_id, booking_id, crew_id, starts_at, ends_at, zip_code, open) "
        "VALUES ('c', :booking, 'm', :start, :end, '10001', :open)"
    )
    nine = local(2026, 3, 3, 9)
    with postgres.engine.begin() as connection:
        connection.execute(
            text(row),
            {"booking": "b1", "start": nine, "end": nine + timedelta(hours=2), "open": True},
        )
        after = {"start": nine + timedelta(hours=2), "end": nine + timedelta(hours=3)}
        connection.execute(text(row), {"booking": "b2", "open": True, **after})  # adjacent
        closed = {"start": nine, "end": nine + timedelta(hours=1), "open": False}
        connection.execute(text(row), {"booking": "b3", **closed})  # closed: not held
    overlap = {"start": nine + timedelta(hours=1), "end": nine + timedelta(hours=2)}
    with pytest.raises(IntegrityError) as caught, postgres.engine.begin() as connection:
        connection.execute(text(row), {"booking": "b4", "open": True, **overlap})
    assert getattr(caught.value.orig, "sqlstate", None) == "23P01"


FIRST_BOOKERS = 8
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday; New York is UTC-5


def solo_company(database: Database, slug: str, name: str) -> Company:
    """A company of the demo catalog whose one crew member, ``crew_solo``, lives in and
    serves 10001 from 8:00 to 18:00 every day."""
    company = companies.create_company(
        companies.CreateCompany(slug=slug, name=name, catalog=demo_catalog()),
        uow=database.uow(),
        clock=FixedClock(NOW),
    )
    with database.uow() as uow:
        uow.crew.add(
            new_crew_member(
                member_id="crew_solo",
                company_id=company.id,
                name="Solo",
                home_zip="10001",
                at=NOW,
                service_areas=("10001",),
                working_hours=tuple(
                    WorkingHours(day, wall_time(8), wall_time(18)) for day in range(1, 8)
                ),
            )
        )
        uow.commit()
    return company


def test_first_bookings_racing_with_one_new_email_share_one_customer(database):
    """Eight first bookings of one email, each at a free slot of its own (10:00 on eight
    different days), released together: every one is booked, for one customer, who keeps
    both addresses the bookings gave."""
    clock = FixedClock(NOW)
    company = solo_company(database, "race", "Race Maids")
    homes = (
        Address("1 Main St", "New York", "NY", "10001"),
        Address("9 Side St", "New York", "NY", "10001"),
    )
    made: list[list[Booking]] = [[] for _ in range(FIRST_BOOKERS)]

    def attempt(index: int) -> None:
        made[index] = scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=company.id,
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                start=NOW + timedelta(days=index + 1, hours=3),  # 10:00 in New York
                customer=scheduling.CustomerDetails(name="Racing Ada", email="Race@Example.com"),
                address=homes[index % 2],
            ),
            uow=database.uow(),
            clock=clock,
            drive=TableDriveTime(default=20),
            phones=PhonenumbersNormalizer(),
        )

    assert race(FIRST_BOOKERS, attempt) == [None] * FIRST_BOOKERS
    customer_ids = {bookings[0].customer_id for bookings in made}
    assert len(customer_ids) == 1
    with database.uow() as uow:
        customer = uow.customers.by_email(company.id, "race@example.com")
        assert customer is not None
        assert customer.id in customer_ids
        assert sorted(s.address.line1 for s in customer.addresses) == sorted(h.line1 for h in homes)
        assert len(uow.bookings.for_customer(company.id, customer.id)) == FIRST_BOOKERS
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM customers")).scalar_one() == 1
    assert overlapping_open_pairs(database) == 0


@pytest.mark.parametrize(
    "read", [("crew_a",), ("crew_a", "crew_b"), None], ids=["one", "some", "everyone"]
)
def test_a_read_after_a_hold_sees_a_job_committed_while_it_waited(database, read):
    """A unit holds crew_a's calendar and books them, and stops at its commit; another
    holds crew_a and reads their jobs (as a booking does before deciding). The reader
    waits for the hold, and its read, taken once it holds, shows the job. On PostgreSQL
    a read of a few named members takes the hold itself (``booking_busy_held``, one
    statement); a read of everyone is a statement after the hold's own."""
    from tests.integration.test_merge_races import _held_at_commit, race_held

    first = job(0)
    window = (first.start - timedelta(hours=4), first.end + timedelta(hours=4))
    held, reached, release = _held_at_commit(database)
    seen: list[dict[str, list]] = []

    def book() -> None:
        with held:
            held.bookings.hold_crew(CO, ["crew_a"])
            assert held.bookings.busy(CO, *window, ["crew_a"]) == {"crew_a": []}
            held.bookings.add_all([first])
            held.commit()

    def read_held() -> None:
        with database.uow() as uow:
            uow.bookings.hold_crew(CO, ["crew_b", "crew_a"])
            seen.append(uow.bookings.busy(CO, *window, read))

    assert race_held(book, reached, release, read_held) == ([], [])
    assert [block.booking_id for block in seen[0]["crew_a"]] == [first.id]
    assert seen[0].get("crew_b", []) == []


@pytest.mark.parametrize("other", ["crew_zed", "crew_abe"])
def test_a_booking_naming_no_crew_that_loses_its_member_to_a_racer_takes_the_next_free(
    postgres, monkeypatch, other
):
    """The best-ranked member is chosen from jobs read before their calendar is held; a
    racer that books them in between used to make the booking answer ``SlotTaken``
    although another member was free at that start (and availability listed it). Here
    the racer commits exactly then: the booking goes to the other member."""
    clock = FixedClock(NOW)
    company = solo_company(postgres, f"lost-{time.monotonic_ns()}", "Lost Race Maids")
    with postgres.uow() as uow:
        solo = uow.crew.get(company.id, "crew_solo")
        uow.crew.add(
            # Farther (ranked second). A booking that lost a member takes only one held
            # after it (ids in order), so two such bookings never wait on each other in a
            # circle: crew_zed comes after crew_solo, crew_abe before.
            attrs.evolve(solo, id=other, name="Other", home_zip="10003")
        )
        uow.commit()
    start = NOW + timedelta(days=2, hours=3)  # 10:00 in New York

    def book(email: str, crew_ids: tuple[str, ...] | None) -> list[Booking]:
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=company.id,
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email=email),
                address=Address("1 Main St", "New York", "NY", "10001"),
                crew_ids=crew_ids,
            ),
            uow=postgres.uow(),
            clock=clock,
            drive=TableDriveTime(default=20),
            phones=PhonenumbersNormalizer(),
        )

    real_hold = SqlBookingRepository.hold_crew
    raced: list[list[Booking]] = []
    started: list[bool] = []

    def hold_after_a_racer(self, company_id, crew_ids):  # type: ignore[no-untyped-def]
        if not started:  # the racer, on its own connection, books the chosen member first
            started.append(True)
            raced.append(book("racer@example.com", tuple(crew_ids)))
        return real_hold(self, company_id, crew_ids)

    monkeypatch.setattr(SqlBookingRepository, "hold_crew", hold_after_a_racer)
    if other < "crew_solo":
        with pytest.raises(SlotTaken):
            book("ada@example.com", None)
        assert overlapping_open_pairs(postgres) == 0
        return
    (made,) = book("ada@example.com", None)
    (racer,) = raced[0]
    assert racer.crew_ids == ("crew_solo",)  # the best-ranked member: lives in 10001
    assert made.crew_ids == ("crew_zed",)
    assert made.start == racer.start == start
    assert overlapping_open_pairs(postgres) == 0
