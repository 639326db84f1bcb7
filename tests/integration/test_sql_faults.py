"""What the database refuses for a moment is retried or answered as a lost race, never a
fault: a deadlocked write runs again in its savepoint, a lock wait that ran out and a
retryable failure outside a savepoint leave the unit of work as ``ConflictError``; and a
driver error's text never carries the values bound to its statement."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from adapters.sql import Database, retry
from adapters.sql.tables import change_clock
from adapters.sql.uow import CLOCK_START
from booking_core.errors import ConflictError
from tests.services import free_port


class DriverError(Exception):
    """A driver exception carrying a SQLSTATE, as psycopg's do."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"driver says {sqlstate}")
        self.sqlstate = sqlstate


def refused(sqlstate: str) -> DBAPIError:
    return DBAPIError("UPDATE things SET x = 1", {}, DriverError(sqlstate))


def test_a_deadlocked_write_runs_again_and_passes(database: Database):
    runs: list[int] = []
    pauses: list[float] = []

    def write() -> str:
        runs.append(len(runs))
        if len(runs) < 3:
            raise refused("40P01")
        return "written"

    with database.uow() as uow:
        connection = uow._cx.connection
        assert retry.in_savepoint(connection, write, sleep=pauses.append) == "written"
    assert len(runs) == 3
    assert len(pauses) == 2
    assert all(0 <= p <= retry.MAX_DELAY_SECONDS for p in pauses)


def test_retries_are_bounded_and_then_the_unit_of_work_answers_conflict(database: Database):
    runs: list[int] = []

    def write() -> None:
        runs.append(1)
        raise refused("40001")

    with pytest.raises(ConflictError) as caught, database.uow() as uow:
        retry.in_savepoint(uow._cx.connection, write, sleep=lambda _: None)
    assert len(runs) == retry.ATTEMPTS
    assert caught.value.message == retry.RETRY_MESSAGE


def test_other_errors_are_not_retried(database: Database):
    runs: list[int] = []

    def write() -> None:
        runs.append(1)
        raise refused("42P01")

    with pytest.raises(DBAPIError), database.uow() as uow:
        retry.in_savepoint(uow._cx.connection, write, sleep=lambda _: None)
    assert runs == [1]


def test_backoff_grows_with_jitter_up_to_its_cap():
    for attempt in range(12):
        bound = min(retry.MAX_DELAY_SECONDS, retry.FIRST_DELAY_SECONDS * 2**attempt)
        waits = [retry.backoff(attempt) for _ in range(200)]
        assert all(0 <= w <= bound for w in waits)
        assert len(set(waits)) > 100  # random, so two racers do not meet again in step


def test_a_real_deadlock_is_retried_in_the_savepoint_and_both_writers_commit(
    postgres: Database,
):
    """Writer 1 locks A; writer 2 locks B and waits for A; then writer 1 asks for B.
    PostgreSQL ends writer 1's statement; it rolls back to its savepoint (freeing A),
    writer 2 finishes, and writer 1's second run passes.

    The order is made, not hoped for: writer 1 asks for B only once PostgreSQL shows
    writer 2 waiting, and only writer 1 looks for the deadlock soon (its
    ``deadlock_timeout`` 50 ms, writer 2's a minute; the setting needs a superuser, as
    the test server's ``postgres`` is), so writer 1 is the one ended, however loaded the
    machine. Its pause between runs lasts until writer 2 has committed: a quick retry
    could take A again before the woken writer 2 does, and the two would meet once more
    (still bounded by the attempts, but not the two runs asserted here)."""
    with postgres.engine.begin() as connection:
        for company in ("cmp_a", "cmp_b"):
            connection.execute(
                change_clock.insert().values(company_id=company, last_change=CLOCK_START)
            )
    lock = text("SELECT 1 FROM change_clock WHERE company_id = :c FOR UPDATE")
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE pid = :pid AND wait_event_type = 'Lock'"
    )
    writer_2: list[int] = []
    runs: list[int] = []
    other_error: list[BaseException] = []

    def other_writer() -> None:
        try:
            with postgres.engine.begin() as connection:
                writer_2.append(connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
                connection.exec_driver_sql("SET LOCAL deadlock_timeout = '60s'")
                connection.execute(lock, {"c": "cmp_b"})
                connection.execute(lock, {"c": "cmp_a"})  # waits for writer 1
        except BaseException as error:
            other_error.append(error)

    def until_writer_2_waits() -> None:
        with postgres.engine.connect() as watcher:
            deadline = time.monotonic() + 30
            while not (writer_2 and watcher.execute(waiting, {"pid": writer_2[0]}).scalar()):
                assert not other_error, other_error
                assert time.monotonic() < deadline, "writer 2 never waited for A"
                time.sleep(0.01)

    thread = threading.Thread(target=other_writer)
    with postgres.uow() as uow:
        connection = uow._cx.connection
        connection.exec_driver_sql("SET LOCAL deadlock_timeout = '50ms'")

        def write() -> None:
            runs.append(1)
            connection.execute(lock, {"c": "cmp_a"})
            if len(runs) == 1:
                thread.start()
                until_writer_2_waits()
            connection.execute(lock, {"c": "cmp_b"})

        retry.in_savepoint(connection, write, sleep=lambda _: thread.join(30))
        uow.commit()
    thread.join(30)
    assert other_error == []
    assert len(runs) == 2


def test_a_lock_wait_that_runs_out_is_a_conflict(postgres: Database):
    with postgres.engine.begin() as connection:
        connection.execute(
            change_clock.insert().values(company_id="cmp_a", last_change=CLOCK_START)
        )
    lock = text("SELECT 1 FROM change_clock WHERE company_id = 'cmp_a' FOR UPDATE")

    def wait_for_the_lock() -> None:
        with postgres.uow() as uow:
            uow._cx.connection.execute(text("SET LOCAL lock_timeout = '50ms'"))
            uow._cx.connection.execute(lock)

    with postgres.engine.begin() as holder:
        holder.execute(lock)
        with pytest.raises(ConflictError) as caught:
            wait_for_the_lock()
    assert caught.value.message == retry.BUSY_MESSAGE


def test_a_driver_error_never_shows_the_values_bound_to_its_statement(database: Database):
    email = "ada.private@example.com"
    with pytest.raises(DBAPIError) as caught, database.engine.connect() as connection:
        connection.execute(
            text("SELECT * FROM no_such_table WHERE email = :email"), {"email": email}
        )
    assert email not in str(caught.value)
    assert "no_such_table" in str(caught.value)  # the statement is there, its values not


def test_the_database_answers_a_ping(database: Database):
    database.ping()


def test_an_unreachable_database_fails_its_ping():
    unreachable = Database.from_url(f"postgresql://postgres@127.0.0.1:{free_port()}/none")
    try:
        with pytest.raises(DBAPIError):
            unreachable.ping()
    finally:
        unreachable.dispose()
