"""The customers pages of the workspace over HTTP (docs/web.md, "Customers"): the company's
customers with churn risk and what they paid, found by name or email; one customer's
contact, visits (each linked to its admin booking page), quotes and payments; a merged
record leads to the one it was merged into; only the company's own, only for admins."""

from __future__ import annotations

import re

from booking_core.ledger import Kind, Method
from booking_core.services.customers import (
    CreateCustomer,
    MergeCustomers,
    create_customer,
    merge_customers,
)
from booking_core.services.payments import RecordPayment, record_payment
from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_admin_leads_http import signed_in_as
from tests.browser.test_admin_setup_pages_http import text_of
from tests.browser.test_admin_stale_forms_http import signed_in


def test_a_customer_is_listed_found_and_shown_with_visits_and_payments(site: Site):
    job = site.crew_job()
    company, container = job.company, site.container
    record_payment(
        RecordPayment(
            company_id=company.id,
            booking_id=job.booking.id,
            kind=Kind.PAYMENT,
            amount_cents=5_025,
            method=Method.CASH,
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    other = site.crew_job()  # another company's customer, of the same name
    browser = signed_in(site, company, Role.DISPATCHER)
    try:
        listed = browser.get("/admin/customers")
        found = browser.get("/admin/customers", params={"q": job.customer_email.upper()})
        missed = browser.get("/admin/customers", params={"q": "nobody-like-this"})
        nul = browser.get("/admin/customers", params={"q": "\x00"})
        page = browser.get(f"/admin/customers/{job.booking.customer_id}")
        theirs = browser.get(f"/admin/customers/{other.booking.customer_id}")
        booking_page = browser.get(f"/admin/bookings/{job.booking.id}")
    finally:
        browser.close()

    assert listed.status_code == found.status_code == page.status_code == 200
    ids = re.findall(r'<a href="/admin/customers/(cus_[^"]+)">', listed.text)
    assert ids == [job.booking.customer_id]  # never the other company's
    assert "$50.25" in text_of(listed)
    assert re.findall(r'<a href="/admin/customers/(cus_[^"]+)">', found.text) == ids
    assert "No customer's name or email holds" in text_of(missed)
    assert nul.status_code == 200  # a NUL alone searches nothing: the whole list
    assert re.findall(r'<a href="/admin/customers/(cus_[^"]+)">', nul.text) == ids
    shown = text_of(page)
    assert job.customer_email in shown
    assert f'href="/admin/bookings/{job.booking.id}"' in page.text
    assert "Coming visits" in shown
    assert "$50.25" in shown
    assert "Cash" in shown
    assert theirs.status_code == 404
    # The booking page leads to its customer.
    assert f'href="/admin/customers/{job.booking.customer_id}"' in booking_page.text


def test_a_merged_record_leads_to_its_survivor_and_crew_cannot_look(site: Site):
    company, _ = site.new_company()
    container = site.container
    made = [
        create_customer(
            CreateCustomer(company_id=company.id, name=name, email=email),
            uow=container.uow(),
            clock=container.clock,
            phones=container.phones,
        )[0]
        for name, email in (("Ada Lovelace", "ada@example.com"), ("Ada L.", "ada.l@example.com"))
    ]
    merge_customers(
        MergeCustomers(company_id=company.id, survivor_id=made[0].id, merged_id=made[1].id),
        uow=container.uow(),
        clock=container.clock,
    )
    admin = signed_in(site, company, Role.OWNER)
    member = site.add_member(company, "Ana Kim")
    crew = signed_in_as(site, site.user(company, Role.CREW, crew_member_id=member).email)
    try:
        merged = admin.get(f"/admin/customers/{made[1].id}")
        listed = admin.get("/admin/customers")
        refused = [
            crew.get(path) for path in ("/admin/customers", f"/admin/customers/{made[0].id}")
        ]
    finally:
        admin.close()
        crew.close()
    assert merged.status_code == 303
    assert merged.headers["location"].endswith(f"/admin/customers/{made[0].id}")
    assert re.findall(r'<a href="/admin/customers/(cus_[^"]+)">', listed.text) == [made[0].id]
    assert [answer.status_code for answer in refused] == [403, 403]
