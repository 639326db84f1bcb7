"""``make bench``: customer storage on SQLite and PostgreSQL.

* insert one customer through the repository and commit, then fetch it in a second
  unit of work;
* a page of 50 customers from a company of 100,000: the first page, and a page at a
  deep cursor (position 90,000). Keyset pagination seeks the ``(company_id,
  created_at, id)`` index to the cursor, so the deep page should cost no more than
  1.5 times the first; the ratio and the raw figures are printed, never asserted
  (the machine is shared and noisy).

Under ``make test`` (benchmarks disabled) each case runs once as a smoke test over a
few hundred rows, so the suite stays fast. PostgreSQL cases need
``BOOKING_TEST_POSTGRES_URL`` (skipped without it) and use a schema of their own,
dropped afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from adapters.sql import Database
from adapters.sql.tables import customers
from booking_core.paging import PageRequest, Position
from tests import factories as f
from tests.services import postgres_url

FULL_ROWS = 100_000
SMOKE_ROWS = 1_000
DEEP_FRACTION = 0.9
PAGE = 50
LOAD_CHUNK = 5_000
TARGET_RATIO = 1.5
BIG = "cmp_bench_big"
"""The company whose customers are paged through."""
SMALL = "cmp_bench_io"
"""The company the insert-and-fetch case writes to."""

_medians: dict[tuple[str, str], float] = {}


def _enabled(config: pytest.Config) -> bool:
    """Whether benchmarks really run (the rule pytest-benchmark itself applies)."""
    return not (config.getoption("benchmark_disable") and not config.getoption("benchmark_enable"))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Database]:
    """A migrated database of each backend, holding the bulk-loaded company."""
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("bench") / "bench.sqlite3"
        db = Database.from_url(f"sqlite:///{path}")
    else:
        db = Database.from_url(postgres_url(), schema=f"bench_{os.getpid()}")
        db.drop_schema()  # left over from a run that was killed
    try:
        db.migrate()
        _bulk_load(db, FULL_ROWS if _enabled(request.config) else SMOKE_ROWS)
        yield db
    finally:
        db.drop_schema()
        db.dispose()


def _bulk_load(db: Database, rows: int) -> None:
    """One Core executemany per chunk; every customer a second apart, newest last."""
    addresses = '[{"id":"adr_1","address":{"line1":"1 Main St","city":"New York",'
    addresses += '"state":"NY","zip":"10001","line2":"","access_notes":""}}]'
    with db.engine.begin() as connection:
        for start in range(0, rows, LOAD_CHUNK):
            batch = []
            for n in range(start, min(rows, start + LOAD_CHUNK)):
                at = f.T0 + timedelta(seconds=n)
                batch.append(
                    {
                        "company_id": BIG,
                        "id": f"cus_{n:024x}",
                        "name": f"Customer {n}",
                        "name_key": f"customer {n}",
                        "email": f"c{n}@example.com",
                        "email_key": f"c{n}@example.com",
                        "phone": "+12125550100",
                        "addresses": addresses,
                        "default_address_id": "adr_1",
                        "merged_into": None,
                        "referral_code": f"{n:08X}",  # unique per company, as drawn codes are
                        "notes": "",
                        "created_at": at,
                        "updated_at": at,
                        "changed_at": at,
                    }
                )
            connection.execute(customers.insert(), batch)
        connection.exec_driver_sql("ANALYZE")


def _position_at(db: Database, index: int) -> Position:
    """The position of the ``index``-th customer of BIG, newest first (0-based)."""
    statement = (
        customers.select()
        .with_only_columns(customers.c.created_at, customers.c.id)
        .where(customers.c.company_id == BIG)
        .order_by(customers.c.created_at.desc(), customers.c.id.desc())
        .offset(index)
        .limit(1)
    )
    with db.engine.connect() as connection:
        row = connection.execute(statement).one()
    return Position(row.created_at, row.id)


def _record(benchmark, db: Database, case: str) -> None:
    if benchmark.enabled and benchmark.stats is not None:
        _medians[(db.dialect, case)] = benchmark.stats.stats.median


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    """Print the figures and the deep/first ratio once the module's cases have run."""
    yield
    for dialect in ("sqlite", "postgresql"):
        figures = {case: m for (d, case), m in _medians.items() if d == dialect}
        if not figures:
            continue
        print(f"\n{dialect}: " + ", ".join(f"{c} p50 {m * 1e3:.3f} ms" for c, m in figures.items()))
        if "first page" in figures and "deep page" in figures:
            ratio = figures["deep page"] / figures["first page"]
            verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
            print(f"{dialect}: deep/first page ratio {ratio:.2f} ({verdict} target {TARGET_RATIO})")


def test_bench_customer_insert_and_fetch(benchmark, database: Database):
    def insert_and_fetch() -> None:
        customer = f.customer(SMALL)
        with database.uow() as uow:
            uow.customers.add(customer)
            uow.commit()
        with database.uow() as uow:
            assert uow.customers.get(SMALL, customer.id) == customer

    benchmark(insert_and_fetch)
    _record(benchmark, database, "insert+fetch")


def test_bench_first_page_of_customers(benchmark, database: Database):
    with database.uow() as uow:
        page = benchmark(uow.customers.list, BIG, PageRequest(limit=PAGE))
    assert len(page.items) == PAGE
    assert page.has_more
    _record(benchmark, database, "first page")


def test_bench_deep_page_of_customers(benchmark, database: Database):
    with database.engine.connect() as connection:
        total = connection.execute(
            select(func.count()).select_from(customers).where(customers.c.company_id == BIG)
        ).scalar_one()
    deep = _position_at(database, int(total * DEEP_FRACTION))
    with database.uow() as uow:
        page = benchmark(uow.customers.list, BIG, PageRequest(limit=PAGE, after=deep))
    assert len(page.items) == PAGE
    assert page.items[0].created_at < deep.at
    _record(benchmark, database, "deep page")
