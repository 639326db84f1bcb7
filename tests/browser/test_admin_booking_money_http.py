"""The admin booking page shows what the booking was paid: its ledger's paid total and
tips, in dollars (docs/ledger.md, "A booking's totals")."""

from __future__ import annotations

import re
from datetime import timedelta

from adapters.web.time_text import moment
from booking_core.ledger import Kind, Method
from booking_core.services.payments import (
    RecordPayment,
    ReversePayment,
    record_payment,
    reverse_payment,
)
from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_customer_pages_http import fetch, signing_in


def shown(page: str, label: str) -> str:
    """The amount beside ``label`` in the page's facts."""
    found = re.search(rf"<dt>{label}</dt><dd>([^<]*)</dd>", page)
    assert found is not None, f"no {label} on the page"
    return found.group(1)


def test_the_booking_page_shows_paid_and_tips_in_dollars(site: Site):
    job = site.crew_job()
    booking = job.booking
    owner = site.user(job.company, Role.OWNER)

    def record(kind: Kind, cents: int, method: Method | None = Method.CASH) -> str:
        entry = record_payment(
            RecordPayment(
                company_id=job.company.id,
                booking_id=booking.id,
                kind=kind,
                amount_cents=cents,
                method=method,
            ),
            uow=site.container.uow(),
            clock=site.container.clock,
        )
        return entry.id

    def page() -> str:
        answers = fetch(
            site,
            booking.start - timedelta(days=1),
            *signing_in(owner.email),
            ("GET", f"/admin/bookings/{booking.id}", {}),
        )
        assert answers[-1].status_code == 200, answers[-1].text
        return answers[-1].text

    first = page()
    assert (shown(first, "Paid"), shown(first, "Tips")) == ("$0.00", "$0.00")

    record(Kind.PAYMENT, 123_450)
    record(Kind.REFUND, 450, None)
    tip = record(Kind.TIP, 2_000)
    record(Kind.TIP, 500)
    reverse_payment(
        ReversePayment(company_id=job.company.id, entry_id=tip, note="Wrong booking."),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    later = page()
    assert (shown(later, "Paid"), shown(later, "Tips")) == ("$1,230.00", "$5.00")
    with site.container.uow() as uow:
        tipped_at = uow.payments.get(job.company.id, tip).created_at
    when_tipped = moment(tipped_at, booking.zone)
    # Each entry is listed, oldest first: what, how, its note and its amount.
    assert "Payments and refunds" not in first
    rows = re.findall(
        r"<tr>\s*<td>[^<]*</td>\s*<td>([^<]*)<br><span class=\"muted\">([^<·]*)(?: · ([^<]*))?"
        r"</span></td>\s*<td class=\"num[^\"]*\">([^<]*)</td>",
        later,
    )
    assert rows == [
        ("Payment", "Cash", "", "$1,234.50"),
        ("Refund", "Offline", "", "-$4.50"),
        ("Tip", "Cash", "", "$20.00"),
        ("Tip", "Cash", "", "$5.00"),
        ("Correction of the $20.00 tip of " + when_tipped, "Cash", "Wrong booking.", "-$20.00"),
    ]


def test_what_is_still_to_pay_after_a_refund_says_the_refund(site: Site):
    """Paid in full, then $10.00 given back: "Still to pay: $10.00" alone read as a
    customer who had not paid."""
    job = site.crew_job()
    booking = job.booking
    owner = site.user(job.company, Role.OWNER)
    total = booking.price.total_cents
    for kind, cents, method in ((Kind.PAYMENT, total, Method.CHECK), (Kind.REFUND, 1_000, None)):
        record_payment(
            RecordPayment(company_id=job.company.id, booking_id=booking.id, kind=kind,
                          amount_cents=cents, method=method),
            uow=site.container.uow(), clock=site.container.clock,
        )  # fmt: skip
    answers = fetch(
        site,
        booking.start - timedelta(days=1),
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.id}", {}),
    )
    paid = f"${total // 100:,}.{total % 100:02d}"
    assert f"Still to pay: $10.00 (paid {paid}, refunded $10.00)" in answers[-1].text


def test_the_office_records_a_payment_by_hand_once_however_often_the_form_is_sent(site: Site):
    job = site.crew_job()
    booking = job.booking
    owner = site.user(job.company, Role.OWNER)
    path = f"/admin/bookings/{booking.id}"
    cash = {"pay_kind": "PAYMENT", "pay_amount": "$123.45", "pay_method": "CASH",
            "pay_note": "Paid at the door", "pay_token": "form-1"}  # fmt: skip
    tip = {**cash, "pay_kind": "TIP", "pay_amount": "5", "pay_method": "OTHER", "pay_token": "t2"}
    answers = fetch(
        site,
        booking.start + timedelta(hours=3),
        *signing_in(owner.email),
        ("GET", path, {}),
        ("POST", f"{path}/payment", cash),
        ("POST", f"{path}/payment", cash),  # a double click: the same form again
        ("POST", f"{path}/payment", {**cash, "pay_amount": "12,50", "pay_token": "t3"}),
        ("POST", f"{path}/payment", tip),
        ("POST", f"{path}/payment", {**cash, "pay_amount": "99"}),  # a used form, edited
        ("GET", path, {}),
    )
    before, first, again, wrong, tipped, reused, after = answers[2:]
    total = booking.price.total_cents
    assert f"Still to pay: ${total // 100:,}.{total % 100:02d}" in before.text
    assert first.status_code == 303
    assert again.status_code == 303
    assert wrong.status_code == 422
    assert "Write the amount without commas, as digits with at most two decimals" in wrong.text
    assert 'value="12,50"' in wrong.text  # what was typed is kept
    assert tipped.status_code == 303
    assert reused.status_code == 409
    assert "This form already recorded another payment" in reused.text
    assert 'value="99"' in reused.text
    assert 'name="pay_token" value="form-1"' not in reused.text  # a fresh form to send
    assert (shown(after.text, "Paid"), shown(after.text, "Tips")) == ("$123.45", "$5.00")
    with site.container.uow() as uow:
        entries = uow.payments.for_booking(job.company.id, booking.id)
    assert sorted((e.kind, e.method, e.amount_cents, e.note) for e in entries) == [
        (Kind.PAYMENT, Method.CASH, 12_345, "Paid at the door"),
        (Kind.TIP, Method.OTHER, 500, "Paid at the door"),
    ]
