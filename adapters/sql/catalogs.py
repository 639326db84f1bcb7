"""Each company's catalog (one JSON document) and the coupon redemptions counted against it.

A catalog is read on every price and every booking: it comes from the read cache
(``adapters.sql.readcache``) while the change feed vouches for it, and saving one
announces the change (``adapters.sql.changes``) in the same transaction.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import ColumnElement, func, literal, select, update

from adapters.sql import codecs
from adapters.sql.changes import Kind
from adapters.sql.context import UnitContext
from adapters.sql.readcache import announce, through
from adapters.sql.tables import catalogs, coupon_redemptions
from booking_core.catalog import Catalog
from booking_core.coupons import CouponUsage
from booking_core.errors import NotFoundError


@lru_cache(maxsize=256)
def _decoded(company_id: str, document: str) -> Catalog:
    """A stored catalog document, decoded once per version: a catalog is read on every
    price, and keyed by its exact content the cache can never serve a stale one (the
    same mechanism as the crew roster's rows)."""
    del company_id  # part of the key only: two companies never share a decoded catalog
    return codecs.loads(document, Catalog)


class SqlCatalogRepository:
    """The one catalog of each company, read and written whole.

    A catalog is only ever priced from as a whole, so it is one document: the JSON
    keeps the nesting (industries, services, parameters, extras) without a table per
    level, and replacing it is a single upsert.
    """

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str) -> Catalog:
        return through(self._cx, Kind.CATALOG, company_id, lambda: self._read(company_id))

    def get_for_update(self, company_id: str) -> Catalog:
        # Never from the read cache: the stored row, locked on PostgreSQL until the unit
        # ends (SQLite: the unit's write lock).
        return self._read(company_id, locked=self._cx.dialect == "postgresql")

    def _read(self, company_id: str, *, locked: bool = False) -> Catalog:
        statement = select(catalogs.c.document).where(catalogs.c.company_id == company_id)
        if locked:
            statement = statement.with_for_update()
        document = self._cx.execute(statement).scalar()
        if document is None:
            raise NotFoundError("catalog", company_id)
        return _decoded(company_id, document)

    def save(self, catalog: Catalog) -> None:
        document = codecs.dumps(catalog)
        statement = (
            self._cx.insert(catalogs)
            .values(company_id=catalog.company_id, document=document)
            .on_conflict_do_update(index_elements=["company_id"], set_={"document": document})
        )
        self._cx.execute(statement)
        announce(self._cx, Kind.CATALOG, catalog.company_id)


class SqlCouponRedemptionRepository:
    """One row per coupon redeemed on a booking."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def usage(self, company_id: str, coupon_id: str, customer_id: str | None) -> CouponUsage:
        redeemed = coupon_redemptions.c
        by_customer: ColumnElement[int] = (
            func.count().filter(redeemed.customer_id == customer_id)
            if customer_id is not None
            else literal(0)
        )
        statement = select(func.count(), by_customer).where(
            redeemed.company_id == company_id, redeemed.coupon_id == coupon_id
        )
        counts = self._cx.execute(statement).one()
        return CouponUsage(total=int(counts[0]), by_customer=int(counts[1]))

    def add(self, company_id: str, coupon_id: str, customer_id: str, booking_id: str) -> None:
        self._cx.insert_new(
            coupon_redemptions,
            {
                "company_id": company_id,
                "coupon_id": coupon_id,
                "customer_id": customer_id,
                "booking_id": booking_id,
            },
            f"Coupon {coupon_id} is already redeemed on booking {booking_id}.",
        )

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        statement = (
            update(coupon_redemptions)
            .where(
                coupon_redemptions.c.company_id == company_id,
                coupon_redemptions.c.customer_id == from_customer_id,
            )
            .values(customer_id=to_customer_id)
        )
        return int(self._cx.execute(statement).rowcount)
