"""The webhook repository's contract, on memory, SQLite and PostgreSQL: endpoints by
company, deliveries claimed when due and leased, the delivery log newest first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import attrs
import pytest

from booking_core.errors import NotFoundError
from booking_core.ids import new_id
from booking_core.paging import PageRequest
from booking_core.ports import UnitOfWork
from booking_core.webhook_endpoints import (
    Attempt,
    Delivery,
    DeliveryState,
    Secret,
    WebhookEndpoint,
)
from tests import factories as f
from tests.contract.paging import assert_paginates

UowFactory = Callable[[], UnitOfWork]


def endpoint(company_id: str = "cmp_a", minutes: int = 0, **changes: object) -> WebhookEndpoint:
    made = WebhookEndpoint(
        id=new_id("whk"),
        company_id=company_id,
        url="https://hooks.example.com/booking",
        events=("booking.created", "quote.sent"),
        description="Our CRM",
        secrets=(Secret(value=f"whsec_{new_id('s')}"),),
        created_at=f.at(minutes),
    )
    return attrs.evolve(made, **changes)


def delivery(
    to: WebhookEndpoint,
    minutes: int = 0,
    due: int | None = None,
    state: DeliveryState = DeliveryState.PENDING,
    attempts: int = 0,
) -> Delivery:
    """A delivery of an event recorded ``minutes`` after ``T0``, due then or at ``due``,
    tried ``attempts`` times."""
    event_id = new_id("evt")
    next_attempt = f.at(minutes if due is None else due)
    return Delivery(
        id=new_id("dlv"),
        company_id=to.company_id,
        endpoint_id=to.id,
        event_id=event_id,
        event_type="booking.created",
        body=b'{"id":"' + event_id.encode() + b'","data":{"note":"caf\xc3\xa9"}}',
        state=state,
        attempts=attempts,
        next_attempt_at=next_attempt if state is DeliveryState.PENDING else None,
        created_at=f.at(minutes),
    )


def attempt(of: Delivery, number: int, minutes: int, status: int | None = 500) -> Attempt:
    return Attempt(
        id=new_id("att"),
        company_id=of.company_id,
        endpoint_id=of.endpoint_id,
        delivery_id=of.id,
        event_id=of.event_id,
        event_type=of.event_type,
        attempt=number,
        status_code=status,
        duration_ms=120 + number,
        error=None if status == 200 else "HTTP 500 from the receiver",
        next_retry_at=None if status == 200 else f.at(minutes + 5),
        at=f.at(minutes),
    )


def store(uow_factory: UowFactory, *endpoints: WebhookEndpoint, deliveries=()) -> None:
    with uow_factory() as uow:
        for one in endpoints:
            uow.webhooks.add(one)
        uow.webhooks.add_deliveries(list(deliveries))
        uow.commit()


def claim(uow_factory: UowFactory, now: int, lease: int = 60, limit: int = 100) -> list[Delivery]:
    """Claim what is due ``now`` minutes after ``T0``, leased ``lease`` minutes, and commit."""
    with uow_factory() as uow:
        claimed = list(uow.webhooks.claim_due(f.at(now), f.at(now + lease), limit))
        uow.commit()
    return claimed


def leased(deliveries: Sequence[Delivery], until: int) -> list[Delivery]:
    return [attrs.evolve(d, next_attempt_at=f.at(until)) for d in deliveries]


# --- Endpoints ---------------------------------------------------------------------------


def test_an_endpoint_round_trips_and_is_not_found_by_another_company(uow_factory):
    rotated = endpoint(
        events=("*",),
        secrets=(Secret(value="whsec_new"), Secret(value="whsec_old", expires_at=f.at(1440))),
        active=False,
        disabled_reason="The receiver answered 410 Gone.",
        failing_since=f.at(30),
    )
    plain = endpoint(minutes=1)
    store(uow_factory, rotated, plain)
    with uow_factory() as uow:
        assert uow.webhooks.get("cmp_a", rotated.id) == rotated
        assert uow.webhooks.get("cmp_a", plain.id) == plain
        assert uow.webhooks.get_for_update("cmp_a", rotated.id) == rotated
        with pytest.raises(NotFoundError):
            uow.webhooks.get("cmp_b", rotated.id)
        with pytest.raises(NotFoundError):
            uow.webhooks.get_for_update("cmp_b", rotated.id)
        with pytest.raises(NotFoundError):
            uow.webhooks.save(attrs.evolve(rotated, company_id="cmp_b", url="https://x.test"))
        with pytest.raises(NotFoundError):
            uow.webhooks.delete("cmp_b", rotated.id)
        assert uow.webhooks.list("cmp_b", PageRequest()).items == ()
        assert uow.webhooks.count("cmp_b") == 0
        assert uow.webhooks.active("cmp_b") == []
    with uow_factory() as uow:
        assert uow.webhooks.get("cmp_a", rotated.id) == rotated


def test_save_stores_the_changed_endpoint_and_refuses_an_unknown_one(uow_factory):
    stored = endpoint()
    store(uow_factory, stored)
    changed = attrs.evolve(
        stored,
        url="https://other.example.com/in",
        events=("quote.sent",),
        description="",
        failing_since=f.at(5),
        active_since=f.at(7),
        secrets=(
            Secret(value="whsec_2"),
            Secret(value=stored.secrets[0].value, expires_at=f.at(9)),
        ),
    )
    with uow_factory() as uow:
        uow.webhooks.save(changed)
        with pytest.raises(NotFoundError):
            uow.webhooks.save(endpoint())
        uow.commit()
    with uow_factory() as uow:
        assert uow.webhooks.get("cmp_a", stored.id) == changed


def test_save_health_stores_only_the_workers_fields(uow_factory):
    """The worker's write keeps a URL and secrets changed by their owner meanwhile."""
    stored = endpoint()
    store(uow_factory, stored)
    owners = attrs.evolve(
        stored, url="https://new.example.com/in", secrets=(Secret(value="whsec_2"),)
    )
    with uow_factory() as uow:
        uow.webhooks.save(owners)
        uow.commit()
    workers = attrs.evolve(stored, active=False, disabled_reason="410", failing_since=f.at(3))
    with uow_factory() as uow:
        uow.webhooks.save_health(workers)
        with pytest.raises(NotFoundError):
            uow.webhooks.save_health(endpoint())
        uow.commit()
    with uow_factory() as uow:
        assert uow.webhooks.get("cmp_a", stored.id) == attrs.evolve(
            owners, active=False, disabled_reason="410", failing_since=f.at(3)
        )


def test_endpoints_list_newest_first_count_and_active_ones_oldest_first(uow_factory):
    first, second, third = endpoint(minutes=0), endpoint(minutes=1), endpoint(minutes=2)
    off = endpoint(minutes=3, active=False, disabled_reason="Failing for 5 days.")
    store(uow_factory, second, off, first, third, endpoint("cmp_b", minutes=9))
    with uow_factory() as uow:
        listed = uow.webhooks.list("cmp_a", PageRequest()).items
        assert listed == (off, third, second, first)
        assert_paginates(lambda p: uow.webhooks.list("cmp_a", p), [e.id for e in listed])
        assert uow.webhooks.count("cmp_a") == 4
        assert uow.webhooks.active("cmp_a") == [first, second, third]
        with pytest.raises(ValueError, match="newest first"):
            uow.webhooks.list("cmp_a", PageRequest(updated_since=f.at(0)))


def test_delete_removes_the_endpoint_with_its_pending_deliveries(uow_factory):
    gone, kept = endpoint(), endpoint(minutes=1)
    store(
        uow_factory,
        gone,
        kept,
        deliveries=[delivery(gone, 0), delivery(gone, 1), delivery(kept, 2)],
    )
    with uow_factory() as uow:
        uow.webhooks.delete("cmp_a", gone.id)
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.webhooks.get("cmp_a", gone.id)
        with pytest.raises(NotFoundError):
            uow.webhooks.delete("cmp_a", gone.id)
        assert uow.webhooks.list("cmp_a", PageRequest()).items == (kept,)
        assert uow.webhooks.count("cmp_a") == 1
    assert [d.endpoint_id for d in claim(uow_factory, now=10)] == [kept.id]


# --- Deliveries ----------------------------------------------------------------------------


def test_claim_due_takes_due_pending_deliveries_first_attempts_by_event_retries_by_due_time(
    uow_factory,
):
    """Oldest due first: a first attempt counts from its event's instant (even when a
    lease that ran out moved its ``next_attempt_at``), a retry from when it came due."""
    ends = [endpoint(), endpoint(), endpoint("cmp_b"), endpoint(), endpoint()]
    released = delivery(ends[0], minutes=2, due=9)  # its lease ran out at 9
    retry = delivery(ends[1], minutes=0, due=3, attempts=1)
    other_company = delivery(ends[2], minutes=4)
    tied = sorted([delivery(ends[3], minutes=5), delivery(ends[3], minutes=5)], key=id_of)
    not_yet = delivery(ends[4], minutes=0, due=11, attempts=1)
    done = [
        delivery(ends[4], 0, state=DeliveryState.DELIVERED),
        delivery(ends[4], 0, state=DeliveryState.FAILED),
    ]
    store(uow_factory, *ends, deliveries=[not_yet, *tied, *done, other_company, retry, released])
    first = claim(uow_factory, now=10, lease=5, limit=3)
    assert first == leased([released, retry, other_company], until=15)
    assert claim(uow_factory, now=10, lease=5) == leased(tied, until=15)
    assert claim(uow_factory, now=10) == []


def test_a_delivery_waits_while_an_earlier_one_of_its_endpoint_awaits_its_first_attempt(
    uow_factory,
):
    to, elsewhere = endpoint(), endpoint()
    first, second, third = (delivery(to, minutes=m) for m in range(3))
    beside = delivery(elsewhere, minutes=1)
    store(uow_factory, to, elsewhere, deliveries=[third, beside, second, first])
    assert claim(uow_factory, now=10, limit=1) == leased([first], until=70)
    # A second worker: the endpoint's later deliveries wait for the first one's attempt.
    assert claim(uow_factory, now=10) == leased([beside], until=70)
    with uow_factory() as uow:
        uow.webhooks.save_delivery(attrs.evolve(first, attempts=1, next_attempt_at=f.at(20)))
        uow.commit()
    # Tried and failed: its retry holds nothing back.
    assert claim(uow_factory, now=11) == leased([second, third], until=71)
    assert claim(uow_factory, now=20) == leased([attrs.evolve(first, attempts=1)], until=80)


def test_a_first_attempt_recorded_late_holds_back_the_later_events_retries(uow_factory):
    """An event whose change committed late is delivered after later events already
    went out; until its first attempt, their retries wait behind it."""
    to = endpoint()
    later = delivery(to, minutes=5, due=8, attempts=1)
    store(uow_factory, to, deliveries=[later])
    late = delivery(to, minutes=3, due=9)
    with uow_factory() as uow:
        # Another worker holds the late one: claimed in a unit that has committed.
        uow.webhooks.add_deliveries([attrs.evolve(late, next_attempt_at=f.at(60))])
        uow.commit()
    assert claim(uow_factory, now=10) == []
    assert claim(uow_factory, now=60) == leased([late, later], until=120)


def id_of(one: Delivery) -> str:
    return one.id


def test_a_claim_leases_its_deliveries_until_the_lease_ends(uow_factory):
    to = endpoint()
    deliveries = [delivery(to, minutes=m) for m in range(3)]
    store(uow_factory, to, deliveries=deliveries)
    assert claim(uow_factory, now=10, lease=5) == leased(deliveries, until=15)
    assert claim(uow_factory, now=14) == []  # a second worker before the lease ends
    # The first worker died mid-send: at the lease's end they are due again.
    assert claim(uow_factory, now=15, lease=5) == leased(deliveries, until=20)


def test_a_claim_that_rolls_back_leaves_the_deliveries_due(uow_factory):
    to = endpoint()
    deliveries = [delivery(to, minutes=m) for m in range(2)]
    store(uow_factory, to, deliveries=deliveries)
    with uow_factory() as uow:
        assert len(uow.webhooks.claim_due(f.at(10), f.at(70), 10)) == 2
    assert claim(uow_factory, now=10) == leased(deliveries, until=70)


def test_save_delivery_stores_its_new_state_and_refuses_an_unknown_one(uow_factory):
    to = endpoint()
    retried, delivered = delivery(to, 0), delivery(to, 1)
    store(uow_factory, to, deliveries=[retried, delivered])
    with uow_factory() as uow:
        uow.webhooks.claim_due(f.at(10), f.at(20), 10)
        uow.webhooks.save_delivery(attrs.evolve(retried, attempts=1, next_attempt_at=f.at(30)))
        uow.webhooks.save_delivery(
            attrs.evolve(delivered, attempts=1, state=DeliveryState.DELIVERED, next_attempt_at=None)
        )
        with pytest.raises(NotFoundError):
            uow.webhooks.save_delivery(delivery(to, 2))
        with pytest.raises(NotFoundError):
            uow.webhooks.save_delivery(attrs.evolve(retried, company_id="cmp_b"))
        uow.commit()
    assert claim(uow_factory, now=29) == []
    assert claim(uow_factory, now=30, lease=1) == [
        attrs.evolve(retried, attempts=1, next_attempt_at=f.at(31))
    ]


def test_drop_pending_fails_the_endpoints_pending_deliveries_only(uow_factory):
    disabled, other = endpoint(active=False), endpoint(minutes=1)
    pending = [delivery(disabled, 0), delivery(disabled, 1, due=50)]
    finished = delivery(disabled, 2, state=DeliveryState.DELIVERED)
    others = [delivery(other, 3)]
    store(uow_factory, disabled, other, deliveries=[*pending, finished, *others])
    with uow_factory() as uow:
        assert uow.webhooks.drop_pending("cmp_b", disabled.id) == 0
        assert uow.webhooks.drop_pending("cmp_a", disabled.id) == 2
        uow.commit()
    with uow_factory() as uow:
        assert uow.webhooks.drop_pending("cmp_a", disabled.id) == 0
    assert claim(uow_factory, now=100, lease=1) == leased(others, until=101)


def test_drop_pending_leaves_no_retry_promised_by_the_last_attempt_of_what_it_drops(uow_factory):
    """A given-up delivery's log reads no next retry: its last attempt's ``next_retry_at``
    is cleared; its earlier attempts, finished deliveries and other endpoints keep theirs."""
    disabled, other = endpoint(active=False), endpoint(minutes=1)
    retried = attrs.evolve(delivery(disabled, 0, due=30), attempts=2)
    waiting = attrs.evolve(delivery(disabled, 1, due=40), attempts=1)
    failed = attrs.evolve(delivery(disabled, 2, state=DeliveryState.FAILED), attempts=1)
    elsewhere = attrs.evolve(delivery(other, 3, due=50), attempts=1)
    log = [
        attempt(retried, 1, minutes=10),
        attempt(retried, 2, minutes=20),
        attempt(waiting, 1, minutes=21),
        attempt(failed, 1, minutes=22),  # as stored, whatever the worker wrote
        attempt(elsewhere, 1, minutes=23),
    ]
    store(uow_factory, disabled, other, deliveries=[retried, waiting, failed, elsewhere])
    with uow_factory() as uow:
        for one in log:
            uow.webhooks.log_attempt(one)
        uow.commit()
    with uow_factory() as uow:
        assert uow.webhooks.drop_pending("cmp_a", disabled.id) == 2
        uow.commit()
    with uow_factory() as uow:
        page = uow.webhooks.attempts("cmp_a", disabled.id, PageRequest(limit=10)).items
        theirs = uow.webhooks.attempts("cmp_a", other.id, PageRequest(limit=10)).items
    cleared = {log[1].id, log[2].id}
    assert {a.id: a.next_retry_at for a in page} == {
        a.id: None if a.id in cleared else a.next_retry_at for a in log[:4]
    }
    assert [a.next_retry_at for a in theirs] == [log[4].next_retry_at] != [None]


# --- The delivery log ------------------------------------------------------------------------


def test_attempts_read_back_newest_first_per_endpoint(uow_factory):
    to, other = endpoint(), endpoint(minutes=1)
    one, two = delivery(to, 0), delivery(to, 1)
    log = [
        attempt(one, 1, minutes=0),
        attempt(two, 1, minutes=1, status=None),
        attempt(one, 2, minutes=5, status=200),
        attempt(two, 2, minutes=6),
    ]
    with uow_factory() as uow:
        for entry in [log[2], log[0], log[3], log[1], attempt(delivery(other), 1, minutes=3)]:
            uow.webhooks.log_attempt(entry)
        uow.commit()
    with uow_factory() as uow:
        newest_first = list(reversed(log))
        assert uow.webhooks.attempts("cmp_a", to.id, PageRequest()).items == tuple(newest_first)
        assert_paginates(
            lambda p: uow.webhooks.attempts("cmp_a", to.id, p), [a.id for a in newest_first]
        )
        assert uow.webhooks.attempts("cmp_b", to.id, PageRequest()).items == ()
        with pytest.raises(ValueError, match="newest first"):
            uow.webhooks.attempts("cmp_a", to.id, PageRequest(updated_since=f.at(0)))


# --- Two workers on PostgreSQL ---------------------------------------------------------------


@pytest.fixture
def pg_uow_factory(postgres_database) -> UowFactory:
    """Units of work over the (emptied) PostgreSQL database of this run."""
    postgres_database.truncate_all()
    return postgres_database.uow


def test_two_workers_on_postgres_never_claim_the_same_delivery(pg_uow_factory):
    """The first worker holds its claim open; a second one, on another connection, takes
    at once the due deliveries of other endpoints, without waiting for it, and none of
    the endpoint whose earlier deliveries the first one holds."""
    to, *others = (endpoint() for _ in range(4))
    held_back = [delivery(to, minutes=m) for m in range(3)]
    elsewhere = [delivery(one, minutes=3 + m) for m, one in enumerate(others)]
    store(pg_uow_factory, to, *others, deliveries=[*held_back, *elsewhere])
    with ThreadPoolExecutor(1) as other, pg_uow_factory() as first:
        held = first.webhooks.claim_due(f.at(10), f.at(20), 2)
        assert held == leased(held_back[:2], until=20)
        second = other.submit(claim, pg_uow_factory, 10, 10).result(timeout=10)
        assert second == leased(elsewhere, until=20)
        first.commit()
    assert claim(pg_uow_factory, now=19) == []
    everything = [*held_back, *elsewhere]
    assert claim(pg_uow_factory, now=20, lease=1) == leased(everything, until=21)
