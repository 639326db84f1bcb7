"""``booking customer merge`` on a real SQLite file: the merged record's booking and its
payment are re-filed under the survivor; refusals are one line and exit status 2."""

from __future__ import annotations

import json

import pytest

from booking_core.demo import demo_catalog
from booking_core.ledger import Kind, Method, Origin, PaymentEntry
from entrypoints.bootstrap import bootstrap
from tests import factories as f
from tests.e2e.support import add_booking
from tests.integration.test_cli import Run, one_line


@pytest.fixture
def run(tmp_path) -> Run:
    runner = Run(f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    assert runner("migrate")[0] == 0
    for slug in ("acme", "other"):
        assert runner("company", "create", "--slug", slug, "--name", slug.title())[0] == 0
    return runner


def seeded(run: Run) -> dict[str, str]:
    """Ids: two acme customers (the merged one with a booking it paid $42 on) and one
    customer of the other company."""
    container = bootstrap(run.settings)
    try:
        with container.uow() as uow:
            acme = uow.companies.by_slug("acme")
            other = uow.companies.by_slug("other")
            assert acme is not None
            assert other is not None
            uow.catalogs.save(demo_catalog(acme.id))
            people = [f.customer(acme.id), f.customer(acme.id), f.customer(other.id)]
            for person in people:
                uow.customers.add(person)
            uow.commit()
        merged, survivor, theirs = (p.id for p in people)
        booking = add_booking(container, acme.id, merged)
        with container.uow() as uow:
            uow.payments.add(
                PaymentEntry(
                    id="pay_cli",
                    company_id=acme.id,
                    booking_id=booking,
                    customer_id=merged,
                    kind=Kind.PAYMENT,
                    method=Method.CASH,
                    amount_cents=4200,
                    offline=True,
                    origin=Origin.HAND,
                    created_at=container.clock.now(),
                )
            )
            uow.commit()
        return {
            "company": acme.id,
            "merged": merged,
            "survivor": survivor,
            "theirs": theirs,
            "booking": booking,
        }
    finally:
        container.close()


def test_merge_re_files_the_booking_and_payment_and_prints_the_survivor(run):
    ids = seeded(run)
    argv = ("customer", "merge", "--company", "acme", "--into", ids["survivor"], ids["merged"])

    status, out, err = run(*argv, "--json")

    assert (status, err) == (0, "")
    shown = json.loads(out)
    assert (shown["survivorId"], shown["mergedId"]) == (ids["survivor"], ids["merged"])
    assert (shown["bookings"], shown["paidCents"]) == (1, 4200)
    container = bootstrap(run.settings)
    try:
        with container.uow() as uow:
            booking = uow.bookings.get(ids["company"], ids["booking"])
            entry = uow.payments.get(ids["company"], "pay_cli")
    finally:
        container.close()
    assert booking.customer_id == entry.customer_id == ids["survivor"]


def test_merge_says_what_it_did_in_a_line(run):
    ids = seeded(run)
    status, out, _ = run(
        "customer", "merge", "--company", "acme", "--into", ids["survivor"], ids["merged"]
    )
    assert status == 0
    assert one_line(out).startswith(f"merged {ids['merged']} into {ids['survivor']}")
    assert "1 bookings and 4200 cents paid" in out


@pytest.mark.parametrize(
    ("into", "merged", "says"),
    [
        ("survivor", "survivor", "cannot be merged into itself"),
        ("survivor", "theirs", "No such customer"),
        ("theirs", "merged", "No such customer"),
        ("survivor", "cus_nothing", "No such customer"),
    ],
)
def test_refusals_are_one_line_and_exit_status_2(run, into, merged, says):
    ids = seeded(run)
    status, out, err = run(
        "customer",
        "merge",
        "--company",
        "acme",
        "--into",
        ids.get(into, into),
        ids.get(merged, merged),
    )
    assert (status, out) == (2, "")
    assert says in one_line(err)


def test_a_merged_record_is_merged_once(run):
    ids = seeded(run)
    argv = ("customer", "merge", "--company", "acme", "--into", ids["survivor"], ids["merged"])
    assert run(*argv)[0] == 0
    status, _, err = run(*argv)
    assert status == 2
    assert "already merged" in one_line(err)
    status, _, err = run("customer", "merge", "--company", "nope", "--into", "cus_a", "cus_b")
    assert status == 2
    assert "no company with slug 'nope'" in one_line(err)
