"""``GET /services`` and ``POST /quote``: the catalog and server-authoritative prices."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from attrs import field, frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.structuring import Code, Id, Quantity, Zip, blank_as_none
from adapters.http.views.catalog import CatalogView, catalog_view
from adapters.http.views.prices import PlanPriceView, plan_price_view
from booking_core.catalog import Catalog
from booking_core.pricing import SelectedItem, Selection, price_period
from booking_core.services.pricing import price_selection


@frozen
class Item:
    """A chosen parameter or extra and how many."""

    id: Id
    quantity: Quantity = 1


@frozen(kw_only=True)
class PriceRequest:
    """A selection to price."""

    service_id: Id
    frequency_slug: Id = "one_time"
    parameters: tuple[Item, ...] = ()
    extras: tuple[Item, ...] = ()
    coupon_code: Code | None = field(default=None, converter=blank_as_none)
    referral_code: Code | None = field(
        default=None,
        converter=blank_as_none,
        metadata={
            "description": "a customer's referralCode: its discount off the first visit "
            "(a booking checks it again against its own customer)"
        },
    )
    zip: Zip | None = field(default=None, metadata={"description": "decides zip fees"})
    start_iso: datetime | None = field(default=None, metadata={"description": "decides date fees"})
    manual_fee_ids: tuple[Id, ...] = ()
    customer_id: Id | None = field(
        default=None, metadata={"description": "whose per-customer coupon limit applies"}
    )

    def selection(self) -> Selection:
        """The domain selection."""
        return selection_of(self.service_id, self)


def selected(items: Sequence[Item]) -> tuple[SelectedItem, ...]:
    """Request items as the domain's selected items."""
    return tuple(SelectedItem(i.id, i.quantity) for i in items)


def selection_of(service_id: str, body: Any) -> Selection:
    """The selection a body describes (``frequencySlug``, ``parameters``, ``extras``,
    ``couponCode``, ``zip``, ``startIso``, ``manualFeeIds``) for ``service_id``."""
    return Selection(
        service_id=service_id,
        frequency_slug=body.frequency_slug,
        parameters=selected(body.parameters),
        extras=selected(body.extras),
        coupon_code=body.coupon_code,
        zip_code=body.zip,
        start=body.start_iso,
        manual_fee_ids=body.manual_fee_ids,
    )


def current_catalog(ctx: Context) -> Catalog:
    """The company's catalog as stored now (from memory while it has not changed)."""
    with ctx.deps.read() as uow:
        return uow.catalogs.get(ctx.company_id)


def get_services(ctx: Context) -> Reply:
    """The company's catalog."""
    return Reply(catalog_view(current_catalog(ctx)))


def quote_made_of(ctx: Context) -> object:
    """What a quote's answer is made of besides its body: the catalog, where this instant
    falls against its coupons' validity windows (the only way time enters), and the
    company's referral discount."""
    catalog = current_catalog(ctx)
    with ctx.deps.read() as uow:
        referral = uow.companies.get(ctx.company_id).referral_discount_cents
    return catalog, price_period(catalog, ctx.now()), referral


def post_quote(ctx: Context) -> Reply:
    """Price a selection now, first visit and (for a plan) later visits."""
    body: PriceRequest = ctx.body
    # The company is read whether or not the body names a referral code: the answer is
    # made of its referral discount (``quote_made_of``), and an answer is kept for the
    # next same body only while all it is made of is in memory. Read here, a company
    # not yet in memory is read once from storage and kept.
    with ctx.deps.read() as uow:
        uow.companies.get(ctx.company_id)
    plan = price_selection(
        ctx.company_id,
        body.selection(),
        customer_id=body.customer_id,
        referral_code=body.referral_code,
        uow=ctx.deps.read(),
        clock=ctx.deps.clock,
    )
    return Reply(plan_price_view(plan))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/services",
        scope="catalog:read",
        handler=get_services,
        in_memory=True,
        answer_of=current_catalog,
        response=CatalogView,
        tag="catalog",
        summary="The catalog: industries, services, parameters, extras, frequencies, fees",
    ),
    Endpoint(
        method="POST",
        path="/quote",
        scope="catalog:read",
        handler=post_quote,
        in_memory=True,
        answer_of=quote_made_of,
        response=PlanPriceView,
        body=PriceRequest,
        tag="catalog",
        summary="Price a selection: server-authoritative, with coupons and fee rules",
    ),
]
