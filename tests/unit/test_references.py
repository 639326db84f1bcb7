"""Ids named in a request body must be the company's own: another company's customer,
lead or service behaves exactly like one that never existed."""

from __future__ import annotations

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.clock import FixedClock
from booking_core.demo import demo_catalog
from booking_core.errors import NotFoundError, UnknownCatalogItem, ValidationFailed
from booking_core.ledger import Kind, Method
from booking_core.paging import PageRequest
from booking_core.quotes import ManualLine
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.leads import CaptureLead, capture_lead
from booking_core.services.payments import RecordPayment, record_payment
from booking_core.services.quotes import CreateQuote, create_quote
from tests import factories as f
from tests.unit.bookings_support import booked, order

PHONES = PhonenumbersNormalizer()


@pytest.fixture
def world():
    store = MemoryStore()
    clock = FixedClock(f.T0)
    with MemoryUnitOfWork(store) as uow:
        uow.catalogs.save(demo_catalog("cmp_a"))
        uow.customers.add(f.customer("cmp_b", email="theirs@example.com"))
        uow.leads.add(f.lead("cmp_b"))
        uow.commit()
    with MemoryUnitOfWork(store) as uow:
        theirs = uow.customers.by_email("cmp_b", "theirs@example.com")
        their_lead = uow.leads.list("cmp_b", PageRequest()).items[0]
    return store, clock, theirs, their_lead


def test_quote_for_another_companys_customer_or_lead_is_not_found(world):
    store, clock, theirs, their_lead = world
    lines = (ManualLine("Windows", 5_000),)
    for refs in ({"customer_id": theirs.id}, {"lead_id": their_lead.id}, {"customer_id": "cus_x"}):
        with pytest.raises(NotFoundError):
            create_quote(
                CreateQuote(company_id="cmp_a", manual_lines=lines, **refs),
                uow=MemoryUnitOfWork(store),
                clock=clock,
            )
    assert store.values("quotes") == {}


def test_lead_naming_an_unknown_service_is_an_invalid_field(world):
    store, clock, _, _ = world
    with pytest.raises(UnknownCatalogItem) as caught:
        capture_lead(
            CaptureLead(
                company_id="cmp_a", name="Pat", email="pat@example.com", service_id="svc_nope"
            ),
            uow=MemoryUnitOfWork(store),
            clock=clock,
            phones=PHONES,
        )
    assert list(caught.value.field_errors) == ["service_id"]


def test_lead_naming_a_retired_service_is_refused_and_an_active_one_is_kept(world):
    store, clock, _, _ = world
    catalog = demo_catalog("cmp_a")
    retired = catalog.industries[0].services[0]
    industry = attrs.evolve(
        catalog.industries[0],
        services=(attrs.evolve(retired, active=False), *catalog.industries[0].services[1:]),
    )
    with MemoryUnitOfWork(store) as uow:
        uow.catalogs.save(attrs.evolve(catalog, industries=(industry, *catalog.industries[1:])))
        uow.commit()

    def enquire(service_id: str):
        return capture_lead(
            CaptureLead(
                company_id="cmp_a", name="Pat", email="pat@example.com", service_id=service_id
            ),
            uow=MemoryUnitOfWork(store),
            clock=clock,
            phones=PHONES,
        )

    with pytest.raises(UnknownCatalogItem) as caught:
        enquire(retired.id)
    assert list(caught.value.field_errors) == ["service_id"]
    assert [
        lead for (company, _), lead in store.values("leads").items() if company == "cmp_a"
    ] == []
    active = industry.services[1]
    lead, folded = enquire(active.id)
    assert (lead.service_id, folded) == (active.id, False)


def test_payment_for_another_companys_customer_is_not_found(world):
    store, clock, theirs, _ = world
    ours = f.customer("cmp_a")
    (booking,) = booked(order(company_id="cmp_a", customer_id=ours.id))
    with MemoryUnitOfWork(store) as uow:
        uow.customers.add(ours)
        uow.bookings.add_all([booking])
        uow.commit()
    with pytest.raises(NotFoundError) as caught:
        record_payment(
            RecordPayment(
                company_id="cmp_a",
                booking_id=booking.id,
                kind=Kind.PAYMENT,
                amount_cents=1_000,
                method=Method.CASH,
                customer_id=theirs.id,
            ),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )
    assert (caught.value.kind, caught.value.id) == ("customer", theirs.id)
    assert store.values("payments") == {}


def test_customer_with_a_bad_phone_and_a_bad_email_hears_about_both(world):
    store, clock, _, _ = world
    with pytest.raises(ValidationFailed) as caught:
        create_customer(
            CreateCustomer(company_id="cmp_a", name="Pat", email="not-an-email", phone="12"),
            uow=MemoryUnitOfWork(store),
            clock=clock,
            phones=PHONES,
        )
    assert set(caught.value.field_errors) == {"email", "phone"}
