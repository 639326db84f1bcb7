"""Authenticated reads answered from memory (issue 9), and never a stale answer.

The server remembers verified keys, companies and catalogs, and answers ``GET /services``
and ``POST /quote`` on the event loop without a database round trip while nothing
changed. These tests change keys and catalogs from the side (the ``booking`` command or
another process on the same database, and this process) and look at the very next
request; on PostgreSQL they also cut the change feed's connection, and count round trips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import httpx
import pytest
from sqlalchemy import event

from adapters.sql import Database
from adapters.sql.changes import PostgresFeed
from booking_core.services import companies as company_cases
from tests.bench.test_bench_http import QUOTE_BODY
from tests.e2e.support import Stack
from tests.feed_trust import vouched
from tests.services import postgres_url, terminate_backend

BIN = Path(sys.executable).parent
SETTLE_SECONDS = 30
"""How long a test waits for PostgreSQL to finish a backend it was asked to end."""

CHANGE_TAX = """
import sys
from adapters.sql import Database
url, schema, company_id, tax = sys.argv[1], sys.argv[2] or None, sys.argv[3], int(sys.argv[4])
import attrs
db = Database.from_url(url, schema=schema)
with db.uow() as uow:
    uow.catalogs.save(attrs.evolve(uow.catalogs.get(company_id), tax_rate_bps=tax))
    uow.commit()
db.dispose()
"""


def _database_env(stack: Stack) -> dict[str, str]:
    settings = stack.container.settings
    env = {**os.environ, "BOOKING_DATABASE_URL": settings.database_url}
    env.pop("BOOKING_DATABASE_SCHEMA", None)
    if settings.database_schema:
        env["BOOKING_DATABASE_SCHEMA"] = settings.database_schema
    return env


def _booking(stack: Stack, *argv: str) -> dict[str, object]:
    """Run the ``booking`` command in a process of its own on the stack's database."""
    done = subprocess.run(
        [str(BIN / "booking"), *argv, "--json"],
        env=_database_env(stack),
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def _tax_from_another_process(stack: Stack, company_id: str, tax: int) -> None:
    settings = stack.container.settings
    subprocess.run(
        [
            sys.executable,
            "-c",
            CHANGE_TAX,
            settings.database_url,
            settings.database_schema or "",
            company_id,
            str(tax),
        ],
        env=_database_env(stack),
        check=True,
    )


def _warm(stack: Stack, client: httpx.Client) -> None:
    """Answer reads until the key, the company and the catalog are remembered: the next
    ones cost the database nothing (so a later change is seen by memory, not by a read)."""
    database = stack.container.database
    if stack.backend == "postgres":
        _listening(database)
    for _ in range(3):
        assert client.get("/api/v1/services").status_code == 200
        assert client.post("/api/v1/quote", json=QUOTE_BODY).status_code == 200

    def window() -> Trips:
        with counted(database) as trips:
            assert client.get("/api/v1/services").status_code == 200
            assert client.post("/api/v1/quote", json=QUOTE_BODY).status_code == 200
        return trips

    trips = vouched(database, window)
    assert trips == Trips(), trips


def _tax(client: httpx.Client) -> tuple[int, int]:
    services = client.get("/api/v1/services")
    quote = client.post("/api/v1/quote", json=QUOTE_BODY)
    assert services.status_code == quote.status_code == 200, (services.text, quote.text)
    return services.json()["taxRateBps"], quote.json()["firstVisit"]["taxRateBps"]


def _slug(stack: Stack, company_id: str) -> str:
    with stack.container.uow() as uow:
        return uow.companies.get(company_id).slug


def test_a_key_revoked_by_the_cli_stops_working_on_the_next_request(stack: Stack):
    company, _ = stack.new_company()
    issued = stack.issue_key(company_id=company.id)
    with stack.client(issued.secret) as client:
        _warm(stack, client)
        _booking(stack, "key", "revoke", "--company", company.slug, "--id", issued.key.id, "--yes")
        assert client.get("/api/v1/services").status_code == 401
        assert client.post("/api/v1/quote", json=QUOTE_BODY).status_code == 401


def test_a_key_rotated_by_the_cli_works_only_with_its_new_secret_on_the_next_request(
    stack: Stack,
):
    company, _ = stack.new_company()
    issued = stack.issue_key(company_id=company.id)
    with stack.client(issued.secret) as old:
        _warm(stack, old)
        rotated = _booking(
            stack, "key", "rotate", "--company", company.slug, "--id", issued.key.id, "--yes"
        )
        assert old.get("/api/v1/services").status_code == 401
    with stack.client(str(rotated["key"])) as new:
        assert new.get("/api/v1/services").status_code == 200


def test_a_key_revoked_in_this_process_stops_working_at_once(stack: Stack):
    company, _ = stack.new_company()
    issued = stack.issue_key(company_id=company.id)
    with stack.client(issued.secret) as client:
        _warm(stack, client)
        company_cases.revoke_key(
            company.id, issued.key.id, uow=stack.container.uow(), clock=stack.container.clock
        )
        assert client.get("/api/v1/services").status_code == 401
        assert client.post("/api/v1/quote", json=QUOTE_BODY).status_code == 401


def test_a_catalog_changed_by_another_process_is_served_by_the_next_request(stack: Stack):
    company, key = stack.new_company()
    with stack.client(key) as client:
        _warm(stack, client)
        _tax_from_another_process(stack, company.id, 1_234)
        assert _tax(client) == (1_234, 1_234)


def test_a_catalog_changed_in_this_process_is_served_at_once(stack: Stack):
    company, key = stack.new_company()
    with stack.client(key) as client:
        _warm(stack, client)
        for tax in (500, 600, 500):  # back to an earlier catalog too
            with stack.container.uow() as uow:
                catalog = uow.catalogs.get(company.id)
                uow.catalogs.save(attrs.evolve(catalog, tax_rate_bps=tax))
                uow.commit()
            assert _tax(client) == (tax, tax)


def test_a_catalog_change_rolled_back_is_never_served(stack: Stack):
    company, key = stack.new_company()
    with stack.client(key) as client:
        _warm(stack, client)
        before = _tax(client)
        with stack.container.uow() as uow:
            catalog = uow.catalogs.get(company.id)
            uow.catalogs.save(attrs.evolve(catalog, tax_rate_bps=4_321))
            assert uow.catalogs.get(company.id).tax_rate_bps == 4_321  # its own write
            assert _tax(client) == before  # not committed: others see the old one
        assert _tax(client) == before


def test_a_quote_with_a_limited_coupon_counts_its_redemptions_every_time(stack: Stack):
    """Redemptions move with every booking, not with the catalog: a quote naming a coupon
    with a limit is priced afresh each time, never answered from a kept copy."""
    company, key = stack.new_company()
    with stack.container.uow() as uow:
        catalog = uow.catalogs.get(company.id)
        first = next(c for c in catalog.coupons if c.code == "FIRSTCLEAN")
        limited = attrs.evolve(first, max_redemptions=1, per_customer_limit=None)
        coupons = tuple(limited if c is first else c for c in catalog.coupons)
        uow.catalogs.save(attrs.evolve(catalog, coupons=coupons))
        uow.commit()
    body = {**QUOTE_BODY, "frequencySlug": "one_time", "couponCode": "FIRSTCLEAN"}
    with stack.client(key) as client:
        for _ in range(2):  # kept, were it ever to be kept
            assert client.post("/api/v1/quote", json=body).status_code == 200
        with stack.container.uow() as uow:
            uow.coupon_redemptions.add(company.id, first.id, "cus_somebody", "bkg_somebody")
            uow.commit()
        used_up = client.post("/api/v1/quote", json=body)
    assert used_up.status_code == 422, used_up.text
    assert "redeemed the maximum number of times" in used_up.json()["error"]["message"]


# PostgreSQL: the change feed's connection, and round trips.


@pytest.fixture
def postgres(stack: Stack) -> Database:
    if stack.backend != "postgres":
        pytest.skip("the change feed listens on PostgreSQL only")
    return stack.container.database


def _listening(database: Database) -> int:
    """The backend pid of the feed's listening connection, once it listens."""
    feed = database.changes
    assert isinstance(feed, PostgresFeed)
    deadline = time.monotonic() + SETTLE_SECONDS
    while (pid := feed.backend_pid) is None or database.key_stamp() is None:
        assert time.monotonic() < deadline, "the change feed never listened"
        time.sleep(0.01)
    return pid


def test_a_lost_change_feed_connection_never_serves_a_stale_catalog(
    stack: Stack, postgres: Database
):
    company, key = stack.new_company()
    other = Database.from_url(
        stack.container.settings.database_url, schema=stack.container.settings.database_schema
    )
    try:
        with stack.client(key) as client:
            _warm(stack, client)
            cut = _listening(postgres)
            terminate_backend(postgres_url(), cut)
            # Written through a database of its own, as another process would: this
            # process has no mark of it, and its feed heard nothing while cut off.
            with other.uow() as uow:
                catalog = uow.catalogs.get(company.id)
                uow.catalogs.save(attrs.evolve(catalog, tax_rate_bps=2_222))
                uow.commit()
            assert _tax(client) == (2_222, 2_222)
            assert _listening(postgres) != cut  # listening again, on a new connection
            assert _tax(client) == (2_222, 2_222)
    finally:
        other.dispose()


@attrs.define
class Trips:
    statements: list[str] = attrs.field(factory=list)
    checkouts: int = 0


@contextmanager
def counted(database: Database) -> Iterator[Trips]:
    """Statements sent and pooled connections checked out (each check-out of a
    pre-pinged pool is a round trip of its own) on ``database`` meanwhile."""
    trips = Trips()

    def on_execute(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        trips.statements.append(statement)

    def on_checkout(*_: object) -> None:
        trips.checkouts += 1

    event.listen(database.engine, "before_cursor_execute", on_execute)
    event.listen(database.engine.pool, "checkout", on_checkout)
    try:
        yield trips
    finally:
        event.remove(database.engine, "before_cursor_execute", on_execute)
        event.remove(database.engine.pool, "checkout", on_checkout)


def test_cached_reads_cost_no_round_trip_while_nothing_changes(stack: Stack):
    """No statement and no connection check-out at all (on SQLite the feed reads one
    number from the file on a connection of its own, outside the pool)."""
    database = stack.container.database
    _, key = stack.new_company()
    with stack.client(key) as client:
        _warm(stack, client)

        def window() -> Trips:
            with counted(database) as trips:
                for _ in range(5):
                    assert client.get("/api/v1/services").status_code == 200
                    assert client.post("/api/v1/quote", json=QUOTE_BODY).status_code == 200
            return trips

        trips = vouched(database, window)
    assert trips == Trips(), trips


def test_an_unchanged_quote_is_answered_as_kept_without_pricing_it_again(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
):
    """The same body while nothing it is made of changed (the catalog, the instant's
    place against coupon windows, the company's referral discount): the kept answer,
    priced once. A company never read into memory made every quote priced anew."""
    from booking_core.services import pricing

    _, key = stack.new_company()
    # As in a server started afresh: nothing read into memory yet (making the company
    # here read it in).
    stack.container.database.cache.clear()
    priced: list[object] = []
    real = pricing.price_plan

    def counting(*args: object, **kwargs: object) -> object:
        priced.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with stack.client(key) as client:
        _warm(stack, client)
        monkeypatch.setattr(pricing, "price_plan", counting)
        answers = [client.post("/api/v1/quote", json=QUOTE_BODY) for _ in range(5)]
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert priced == []
