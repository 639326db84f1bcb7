"""``booking plans extend`` on a real SQLite file: a plan that cannot be extended is named
and skipped while the others are extended, and the exit status is 1 only when nothing
could be done."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.coupons import Coupon
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.services import companies, scheduling
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.cli import Cli
from entrypoints.settings import Settings
from tests import factories

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday; New York is UTC-5
COUPONS = (
    Coupon("cpn_short", "SHORT", percent_bps=1_000, valid_until=NOW + timedelta(days=1)),
    Coupon("cpn_gone", "GONE", amount_cents=1_000),
)


@attrs.define
class Shop:
    settings: Settings
    clock: FixedClock
    company_id: str = ""

    def container(self) -> Container:
        return attrs.evolve(bootstrap(self.settings), clock=self.clock)

    def run(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        status = Cli(self.container, out=out, err=err).run(list(argv))
        return status, out.getvalue(), err.getvalue()

    def book(self, day: int, email: str, coupon: str) -> list[Booking]:
        container = self.container()
        try:
            return scheduling.create_booking(
                scheduling.CreateBooking(
                    company_id=self.company_id,
                    service_id="svc_standard_clean",
                    frequency_slug="weekly",
                    start=NOW + timedelta(days=day, hours=2),  # 09:00 in New York
                    customer=scheduling.CustomerDetails(name="Ada", email=email),
                    address=Address("1 Main St", "New York", "NY", "10001"),
                    coupon_code=coupon,
                ),
                uow=container.uow(),
                clock=self.clock,
                drive=container.drive,
                phones=container.phones,
            )
        finally:
            container.close()

    def drop_coupon(self, coupon_id: str) -> None:
        container = self.container()
        try:
            with container.uow() as uow:
                catalog = uow.catalogs.get(self.company_id)
                kept = tuple(c for c in catalog.coupons if c.id != coupon_id)
                uow.catalogs.save(attrs.evolve(catalog, coupons=kept))
                uow.commit()
        finally:
            container.close()


@pytest.fixture
def shop(tmp_path: Path) -> Shop:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'plans.sqlite3'}", redis_url=None, base_url="http://x"
    )
    made = Shop(settings, FixedClock(NOW))
    assert made.run("migrate")[0] == 0
    container = made.container()
    try:
        catalog = attrs.evolve(demo_catalog(), coupons=COUPONS)
        company = companies.create_company(
            companies.CreateCompany(slug="acme", name="Acme Maids", catalog=catalog),
            uow=container.uow(),
            clock=made.clock,
        )
        with container.uow() as uow:
            uow.crew.add(factories.all_week_crew(company.id, NOW))
            uow.commit()
    finally:
        container.close()
    made.company_id = company.id
    return made


def test_a_plan_that_cannot_be_priced_is_skipped_named_and_the_others_extended(shop: Shop):
    kept = shop.book(1, "ada@example.com", "SHORT")  # this coupon merely expires
    dropped = shop.book(2, "grace@example.com", "GONE")  # this one leaves the catalog
    shop.drop_coupon("cpn_gone")
    shop.clock.advance(timedelta(days=7))

    status, out, err = shop.run("plans", "extend", "--company", "acme")

    assert status == 0, err
    assert out.strip() == "booking: 2 plans checked, 1 visits added, 1 skipped"
    (line,) = err.strip().splitlines()
    assert line.startswith(f"booking: skipped plan {dropped[0].plan_id}: ")
    assert "GONE" in line
    assert kept[0].plan_id not in err


def test_json_reports_each_plan_and_the_counts(shop: Shop):
    kept = shop.book(1, "ada@example.com", "SHORT")
    dropped = shop.book(2, "grace@example.com", "GONE")
    shop.drop_coupon("cpn_gone")
    shop.clock.advance(timedelta(days=7))

    status, out, _ = shop.run("plans", "extend", "--json")

    assert status == 0
    report = json.loads(out)
    assert (report["added"], report["skipped"]) == (1, 1)
    rows = {row["planId"]: row for row in report["plans"]}
    assert (rows[kept[0].plan_id]["added"], rows[kept[0].plan_id]["problem"]) == (1, None)
    assert rows[dropped[0].plan_id]["added"] == 0
    assert "GONE" in rows[dropped[0].plan_id]["problem"]


def test_exit_status_is_1_only_when_every_plan_was_skipped(shop: Shop):
    shop.book(1, "ada@example.com", "GONE")
    shop.book(2, "grace@example.com", "GONE")
    assert shop.run("plans", "extend")[0] == 0  # nothing due yet: nothing to do is fine
    shop.drop_coupon("cpn_gone")
    shop.clock.advance(timedelta(days=7))

    status, out, err = shop.run("plans", "extend")

    assert status == 1
    assert "2 plans checked, 0 visits added, 2 skipped" in out
    assert err.count("booking: skipped plan ") == 2
    assert "none of the 2 plans could be extended" in err
    assert "Traceback" not in err
