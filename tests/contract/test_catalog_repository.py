from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from booking_core.coupons import Coupon
from booking_core.demo import demo_catalog
from booking_core.errors import NotFoundError


def test_catalog_round_trips_exactly(uow_factory):
    catalog = demo_catalog("cmp_a")
    with uow_factory() as uow:
        uow.catalogs.save(catalog)
        uow.commit()
    with uow_factory() as uow:
        assert uow.catalogs.get("cmp_a") == catalog
        assert uow.catalogs.get_for_update("cmp_a") == catalog


def test_saving_a_catalog_replaces_the_company_catalog_only(uow_factory):
    with uow_factory() as uow:
        uow.catalogs.save(demo_catalog("cmp_a"))
        uow.catalogs.save(demo_catalog("cmp_b"))
        uow.commit()
    changed = attrs.evolve(
        demo_catalog("cmp_a"),
        tax_rate_bps=500,
        coupons=(Coupon("cpn_x", "NEW", amount_cents=100,
                        valid_until=datetime(2027, 1, 1, tzinfo=UTC)),),
    )  # fmt: skip
    with uow_factory() as uow:
        uow.catalogs.save(changed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.catalogs.get("cmp_a") == changed
        assert uow.catalogs.get("cmp_b") == demo_catalog("cmp_b")


def test_company_without_catalog_is_not_found(uow_factory):
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.catalogs.get("cmp_none")
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.catalogs.get_for_update("cmp_none")
