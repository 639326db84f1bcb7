"""``updatedSince`` order in SQL storage: a poller that resumes from the last position it
saw never misses a change that committed late, and on PostgreSQL no commit waits for
another to get there (docs/storage.md, "updatedSince: why a poller never misses a late
commit")."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from alembic import command
from alembic.config import Config
from sqlalchemy import event, select, text

from adapters.sql import Database
from adapters.sql.customers import _values as stored_values
from adapters.sql.engine import MIGRATIONS
from adapters.sql.tables import customers
from adapters.sql.uow import SqlUnitOfWork
from booking_core.customers import Customer
from booking_core.paging import PageRequest, Position
from tests import factories as f
from tests.polling import settle

SINCE = datetime(2000, 1, 1, tzinfo=UTC)
CO = "cmp_a"


def _poll(db: Database, after: Position | None = None) -> tuple[list[str], Position | None]:
    """One by-change page of ``CO``'s customers: its ids and where it ended."""
    with db.reader() as reader:
        page = reader.customers.list(CO, PageRequest(after=after, updated_since=SINCE))
    return [c.id for c in page.items], page.next_after


def _stamps(db: Database, customer: Customer) -> tuple[datetime, int | None]:
    """The row's ``changed_at`` and ``changed_xid``."""
    with db.engine.connect() as connection:
        row = connection.execute(
            select(customers.c.changed_at, customers.c.changed_xid).where(
                customers.c.id == customer.id
            )
        ).one()
    return row.changed_at, row.changed_xid


def _xid(db: Database, customer: Customer) -> int:
    """The id of the transaction that last wrote the row (PostgreSQL)."""
    xid = _stamps(db, customer)[1]
    assert xid is not None
    return xid


def test_a_change_made_early_and_committed_late_lands_after_what_a_poller_saw(
    postgres: Database,
):
    """``quick`` began writing first; ``slow`` then changes a row and stays open while
    ``quick`` changes another and commits. The poller sees ``quick``'s rows, not ``slow``'s;
    when ``slow`` commits, its row comes after the poller's cursor, although its change
    was made before the last row the poller saw."""
    first, early, last = (f.customer(CO, minutes=i) for i in range(3))
    quick, slow = postgres.uow(), postgres.uow()
    with quick, slow:
        quick.customers.add(first)
        slow.customers.add(early)
        quick.customers.add(last)
        quick.commit()
        settle(postgres, _xid(postgres, last))
        seen, cursor = _poll(postgres)
        assert sorted(seen) == sorted([first.id, last.id])  # one transaction: by id
        assert cursor is not None
        assert cursor.seq is not None
        slow.commit()
    assert _stamps(postgres, early)[0] < _stamps(postgres, last)[0]
    assert _poll(postgres, after=cursor)[0] == [early.id]


def test_a_commit_after_an_older_transaction_began_writing_waits_for_it_to_end(
    postgres: Database,
):
    """What ``slow`` (the older transaction) may still commit must sort before ``quick``'s
    row, so a poller is shown ``quick``'s row only once ``slow`` has ended."""
    early, late = f.customer(CO, minutes=0), f.customer(CO, minutes=1)
    slow = postgres.uow()
    with slow:
        slow.customers.add(early)
        with postgres.uow() as quick:
            quick.customers.add(late)
            quick.commit()
        assert _poll(postgres) == ([], None)
        slow.commit()
    settle(postgres, _xid(postgres, late))
    seen, cursor = _poll(postgres)
    assert seen == [early.id, late.id]
    assert _poll(postgres, after=cursor) == ([], None)


def test_no_commit_waits_for_another_of_its_company_or_of_another(postgres: Database):
    """A unit stopped at the very brink of its COMMIT has run every statement of its own;
    meanwhile units of the same company and of another write and commit, none waiting
    on it (a lock wait would run out after two seconds and fail them). The commit itself
    sends no statement but COMMIT."""
    held = postgres.uow()
    committed: list[str] = []
    failed: list[BaseException] = []

    def commit_others() -> None:
        try:
            for company in (CO, "cmp_b"):
                with postgres.uow() as other:
                    other._cx.connection.execute(text("SET LOCAL lock_timeout = '2s'"))
                    other.customers.add(f.customer(company))
                    other.leads.add(f.lead(company))
                    other.commit()
                committed.append(company)
        except BaseException as error:
            failed.append(error)

    def at_commit(_connection: object) -> None:
        others = threading.Thread(target=commit_others)
        others.start()
        others.join(60)

    sent: list[str] = []
    with held:
        held.customers.add(f.customer(CO))
        held.leads.add(f.lead(CO))
        connection = held._cx.connection
        event.listen(connection, "before_cursor_execute", lambda *a: sent.append(a[2]))
        event.listen(connection, "commit", at_commit)
        held.commit()
    assert failed == []
    assert committed == [CO, "cmp_b"]
    assert sent == []


def test_a_cursor_made_before_the_upgrade_continues_where_it_was(postgres: Database):
    """Rows stamped by the change clock before revision 0004 keep their order, and a
    cursor without a sequence continues after its own row, then on to new changes."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with postgres.engine.begin() as connection:
        config.attributes.update(connection=connection, schema=postgres.schema)
        command.downgrade(config, "0003_bookings")
    old = [f.customer(CO, minutes=i) for i in range(4)]
    stamped = [f.at(100 - i) for i in range(4)]  # the change clock's order: old[3] first
    with postgres.engine.begin() as connection:
        for customer, stamp in zip(old, stamped, strict=True):
            # The columns revision 0003 has: later ones (a referral code) came after it.
            before = {k: v for k, v in stored_values(customer).items() if k != "referral_code"}
            connection.execute(customers.insert().values(**before, changed_at=stamp))
    postgres.migrate()
    fresh = f.customer(CO, minutes=10)
    with postgres.uow() as uow:
        uow.customers.add(fresh)
        uow.commit()
    settle(postgres, _xid(postgres, fresh))
    cursor = Position(stamped[2], old[2].id)  # a poller had seen old[3], old[2]
    assert _poll(postgres, after=cursor)[0] == [old[1].id, old[0].id, fresh.id]
    assert _poll(postgres)[0] == [old[3].id, old[2].id, old[1].id, old[0].id, fresh.id]


def test_sqlite_stamps_in_commit_order_even_when_the_clock_steps_back(tmp_path):
    """SQLite runs one writer at a time; a commit stamps under the write lock, one tick
    past the company's last stamp when the clock reads earlier."""
    db = Database.from_url(f"sqlite:///{tmp_path / 'order.sqlite3'}")
    db.migrate()
    try:
        ahead, behind = f.customer(CO, minutes=0), f.customer(CO, minutes=1)
        readings = iter([datetime.now(UTC) + timedelta(hours=1), datetime.now(UTC)])
        for customer in (ahead, behind):
            with SqlUnitOfWork(db.engine, now=lambda: next(readings)) as uow:
                uow.customers.add(customer)
                uow.commit()
        first, cursor = _poll(db)
        assert first == [ahead.id, behind.id]
        assert cursor is not None
        assert cursor.seq is None
        assert _stamps(db, behind)[0] > _stamps(db, ahead)[0]
    finally:
        db.dispose()
