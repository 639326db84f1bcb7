"""The SQL adapter's read cache on SQLite and PostgreSQL: companies and catalogs served
from memory while nothing changed, and never a value some change has replaced
(``adapters.sql.readcache``, ``adapters.sql.changes``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import attrs
import pytest
from sqlalchemy import event

from adapters.sql import Database
from adapters.sql.changes import Kind
from booking_core.catalog import Catalog
from booking_core.demo import demo_catalog
from booking_core.ids import new_id
from booking_core.paging import MAX_LIMIT, PageRequest
from tests import factories
from tests.feed_trust import vouched

SETTLE_SECONDS = 30


class Miss(BaseException):
    """What the memory-only reader of these tests raises for anything not kept."""


@pytest.fixture
def shop(database: Database) -> tuple[Database, str]:
    """A company and its catalog, with the change feed listening."""
    company = factories.company()
    with database.uow() as uow:
        uow.companies.add(company)
        uow.catalogs.save(attrs.evolve(demo_catalog(), company_id=company.id))
        uow.commit()
    deadline = time.monotonic() + SETTLE_SECONDS
    while database.changes.stamp(Kind.CATALOG, company.id) is None:
        assert time.monotonic() < deadline, "the change feed never listened"
        time.sleep(0.01)
    return database, company.id


@contextmanager
def database_use(database: Database) -> Iterator[list[str]]:
    """The statements the block sends and the pooled connections it checks out."""
    used: list[str] = []

    def on_execute(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        used.append(statement)

    def on_checkout(*_: object) -> None:
        used.append("checkout")

    event.listen(database.engine, "before_cursor_execute", on_execute)
    event.listen(database.engine.pool, "checkout", on_checkout)
    try:
        yield used
    finally:
        event.remove(database.engine, "before_cursor_execute", on_execute)
        event.remove(database.engine.pool, "checkout", on_checkout)


def catalog_of(database: Database, company_id: str) -> Catalog:
    with database.reader() as reader:
        return reader.catalogs.get(company_id)


def save_tax(database: Database, company_id: str, tax: int) -> None:
    with database.uow() as uow:
        uow.catalogs.save(attrs.evolve(uow.catalogs.get(company_id), tax_rate_bps=tax))
        uow.commit()


def heard(database: Database, company_id: str, before: object) -> None:
    """Wait until ``database``'s feed has heard of a change to the catalog (at once on
    SQLite; PostgreSQL delivers a notification to another connection asynchronously)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while database.changes.stamp(Kind.CATALOG, company_id) == before:
        assert time.monotonic() < deadline, "the change was never heard"
        time.sleep(0.01)


def test_a_kept_company_and_catalog_cost_no_connection(shop):
    database, company_id = shop
    catalog = catalog_of(database, company_id)
    with database.reader() as reader:
        company = reader.companies.get(company_id)

    def window() -> list[str]:
        with database_use(database) as used:
            assert catalog_of(database, company_id) is catalog
            with database.memory_reader(Miss) as reader:
                assert reader.companies.get(company_id) is company
                assert reader.catalogs.get(company_id) is catalog
                with pytest.raises(Miss):
                    reader.customers.get(company_id, "cus_never")
        return used

    assert vouched(database, window) == []


def test_a_unit_reads_its_own_change_and_a_rolled_back_one_is_never_served(shop):
    database, company_id = shop
    kept = catalog_of(database, company_id)
    with database.uow() as uow:
        uow.catalogs.save(attrs.evolve(kept, tax_rate_bps=4_321))
        assert uow.catalogs.get(company_id).tax_rate_bps == 4_321
        assert catalog_of(database, company_id) == kept  # uncommitted: not for others
    assert catalog_of(database, company_id) == kept


def test_a_change_committed_here_is_read_at_once(shop):
    database, company_id = shop
    catalog_of(database, company_id)
    for tax in (100, 200, 100):
        save_tax(database, company_id, tax)
        assert catalog_of(database, company_id).tax_rate_bps == tax


def test_a_change_committed_through_another_database_is_read_once_heard(shop):
    database, company_id = shop
    catalog_of(database, company_id)
    before = database.changes.stamp(Kind.CATALOG, company_id)
    url = database.engine.url.render_as_string(hide_password=False)
    elsewhere = Database.from_url(url, schema=database.schema)
    try:
        save_tax(elsewhere, company_id, 777)
    finally:
        elsewhere.dispose()
    heard(database, company_id, before)
    assert catalog_of(database, company_id).tax_rate_bps == 777


def test_a_value_read_before_a_change_commits_is_not_kept_after_it(shop):
    """The race every cache fill has: read, then the change commits, then the stale
    value is kept. It is kept under the stamp taken before the read, which the change
    moved, so it is never served."""
    database, company_id = shop
    cache = database.cache
    _, stamp = cache.lookup(Kind.CATALOG, company_id)
    stale = catalog_of(database, company_id)
    save_tax(database, company_id, 999)
    cache.keep(Kind.CATALOG, company_id, stamp, stale)
    found, _ = cache.lookup(Kind.CATALOG, company_id)
    assert found is None
    assert catalog_of(database, company_id).tax_rate_bps == 999


# --- The active roster: read by every availability check and booking ------------------


def roster_of(database: Database, company_id: str) -> list[str]:
    with database.uow() as uow:
        page = uow.crew.list_active(company_id, PageRequest(limit=MAX_LIMIT))
    return sorted(member.name for member in page.items)


def hire(database: Database, company_id: str, name: str) -> str:
    at = datetime.now(UTC)
    member = attrs.evolve(
        factories.all_week_crew(company_id, at, member_id=new_id("crew")), name=name
    )
    with database.uow() as uow:
        uow.crew.add(member)
        uow.commit()
    return member.id


def test_a_kept_roster_costs_no_statement_and_a_change_here_is_read_at_once(shop):
    database, company_id = shop
    member_id = hire(database, company_id, "Ann")
    assert roster_of(database, company_id) == ["Ann"]
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    # The feed hears this process's own hire a moment after its commit (on PostgreSQL a
    # listening thread, slow on a loaded machine), and may drop the roster read before it
    # once; from then on the kept roster costs no statement.
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        statements.clear()
        assert roster_of(database, company_id) == ["Ann"]
        if not [s for s in statements if "crew_members" in s]:
            break
        assert time.monotonic() < deadline, "the roster was never kept"
        time.sleep(0.05)

    def window() -> list[str]:
        statements.clear()
        assert roster_of(database, company_id) == ["Ann"]
        return [s for s in statements if "crew_members" in s]

    assert vouched(database, window) == []
    hire(database, company_id, "Bo")
    assert roster_of(database, company_id) == ["Ann", "Bo"]
    with database.uow() as uow:
        uow.crew.save(attrs.evolve(uow.crew.get(company_id, member_id), active=False))
        uow.commit()
    assert roster_of(database, company_id) == ["Bo"]


def test_a_roster_longer_than_a_page_is_kept_whole_and_paged_as_storage_pages_it(shop):
    """Availability reads every page of the roster; past ``MAX_LIMIT`` members the later
    pages come from the kept roster too, each the page the keyset query gives."""
    database, company_id = shop
    at = datetime.now(UTC)
    with database.uow() as uow:
        for n in range(MAX_LIMIT + 5):
            member = factories.all_week_crew(company_id, at, member_id=new_id("crew"))
            uow.crew.add(attrs.evolve(member, name=f"m{n:03d}"))  # one created_at: ids tie-break
        uow.commit()

    def pages(read: str, limit: int) -> list[tuple[list[str], bool, object]]:
        found, after = [], None
        with database.uow() as uow:
            while True:
                request = PageRequest(limit=limit, after=after)
                crew = uow.crew
                page = (
                    crew.list_active(company_id, request)
                    if read == "kept"
                    else (
                        crew._page(company_id, request)  # type: ignore[attr-defined]
                    )
                )
                found.append(([m.id for m in page.items], page.has_more, page.next_after))
                if not page.has_more:
                    return found
                after = page.next_after

    for limit in (MAX_LIMIT, 7):
        assert pages("kept", limit) == pages("stored", limit)
    assert sum(len(ids) for ids, _, _ in pages("kept", MAX_LIMIT)) == MAX_LIMIT + 5
    deadline = time.monotonic() + SETTLE_SECONDS
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    while True:
        statements.clear()
        pages("kept", MAX_LIMIT)
        if not [s for s in statements if "crew_members" in s]:
            break
        assert time.monotonic() < deadline, "the roster was never kept"
        time.sleep(0.05)
    hire(database, company_id, "Late")
    assert len([ids for ids, _, _ in pages("kept", MAX_LIMIT)][-1]) == 6


def test_a_roster_changed_through_another_database_is_read_once_heard(shop):
    database, company_id = shop
    assert roster_of(database, company_id) == []
    before = database.changes.stamp(Kind.CREW, company_id)
    url = database.engine.url.render_as_string(hide_password=False)
    elsewhere = Database.from_url(url, schema=database.schema)
    try:
        hire(elsewhere, company_id, "Cy")
    finally:
        elsewhere.dispose()
    deadline = time.monotonic() + SETTLE_SECONDS
    while database.changes.stamp(Kind.CREW, company_id) == before:
        assert time.monotonic() < deadline, "the change was never heard"
        time.sleep(0.01)
    assert roster_of(database, company_id) == ["Cy"]
