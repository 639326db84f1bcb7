"""The webhook endpoint use cases over the memory unit of work: what is checked on
register and change, the per-company cap, turning endpoints off and on, secret rotation
and the queued ``webhook.test`` event."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.webhooks.resolver import StaticResolver
from booking_core.clock import FixedClock
from booking_core.errors import InvalidTransition, NotFoundError, ValidationFailed
from booking_core.paging import PageRequest
from booking_core.services import companies
from booking_core.services import webhooks as cases
from booking_core.webhook_endpoints import (
    MAX_ENDPOINTS_PER_COMPANY,
    ROTATION_OVERLAP,
    Secret,
)

NOW = datetime(2026, 7, 1, 16, tzinfo=UTC)
URL = "https://hooks.example.com/in"
URLS = cases.UrlPolicy(
    resolver=StaticResolver(
        {
            "hooks.example.com": "93.184.215.14",
            "intranet.example.com": "10.1.2.3",
            "dev.test": "192.168.5.5",
        }
    ),
    allow_hosts=frozenset({"dev.test"}),
)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def company_id(store: MemoryStore, clock: FixedClock) -> str:
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", timezone="America/Chicago"),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    return company.id


def create(store: MemoryStore, clock: FixedClock, company_id: str, **fields: object):
    cmd = cases.CreateEndpoint(**{"company_id": company_id, "url": URL, "events": ("*",), **fields})
    return cases.create_endpoint(cmd, uow=MemoryUnitOfWork(store), clock=clock, urls=URLS)


def pending(store: MemoryStore) -> list[object]:
    with MemoryUnitOfWork(store) as uow:
        return list(uow.webhooks.claim_due(NOW + timedelta(days=1), NOW + timedelta(days=2), 100))


def test_a_new_endpoint_signs_with_the_secret_it_answered(store, clock, company_id):
    endpoint, secret = create(store, clock, company_id, description="Books")
    assert secret.startswith("whsec_")
    assert endpoint.id.startswith("whk_")
    assert endpoint.secrets == (Secret(value=secret),)
    with MemoryUnitOfWork(store) as uow:
        assert uow.webhooks.get(company_id, endpoint.id) == endpoint
    assert create(store, clock, company_id)[1] != secret


def test_every_field_problem_is_raised_at_once_and_nothing_is_stored(store, clock, company_id):
    with pytest.raises(ValidationFailed) as refused:
        create(
            store,
            clock,
            company_id,
            url="https://intranet.example.com/",
            events=("booking.created", "*"),
            description="x" * 501,
        )
    assert set(refused.value.field_errors) == {"url", "events", "description"}
    assert refused.value.message == "Some fields are missing or invalid."
    with pytest.raises(ValidationFailed) as alone:
        create(store, clock, company_id, url="https://intranet.example.com/")
    assert alone.value.message.startswith("intranet.example.com resolves to 10.1.2.3")
    with pytest.raises(ValidationFailed) as long_url:
        create(store, clock, company_id, url=URL + "x" * 2_000)
    assert long_url.value.field_errors == {"url": "Must be at most 2000 characters."}
    with MemoryUnitOfWork(store) as uow:
        assert uow.webhooks.count(company_id) == 0


def test_the_cap_counts_per_company(store, clock, company_id):
    for _ in range(MAX_ENDPOINTS_PER_COMPANY):
        create(store, clock, company_id)
    with pytest.raises(cases.TooManyEndpoints, match="at most 50 webhook endpoints"):
        create(store, clock, company_id)
    other = companies.create_company(
        companies.CreateCompany(slug="other", name="Other Co"),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    create(store, clock, other.id)


def test_an_update_changes_only_what_it_names(store, clock, company_id):
    endpoint, _ = create(store, clock, company_id, events=("quote.sent",), description="CRM")
    changed = cases.update_endpoint(
        cases.UpdateEndpoint(
            company_id=company_id, endpoint_id=endpoint.id, url="http://dev.test:9000/x"
        ),
        uow=MemoryUnitOfWork(store),
        urls=URLS,
        clock=clock,
    )
    assert changed == attrs.evolve(endpoint, url="http://dev.test:9000/x")
    with pytest.raises(ValidationFailed) as refused:
        cases.update_endpoint(
            cases.UpdateEndpoint(
                company_id=company_id, endpoint_id=endpoint.id, url="http://hooks.example.com/"
            ),
            uow=MemoryUnitOfWork(store),
            urls=URLS,
            clock=clock,
        )
    assert refused.value.field_errors == {"url": "Webhook URLs must use https."}
    with MemoryUnitOfWork(store) as uow:
        assert uow.webhooks.get(company_id, endpoint.id) == changed


def test_turning_off_drops_what_is_queued_and_turning_on_forgives_the_service_stop(
    store, clock, company_id
):
    endpoint, _ = create(store, clock, company_id)
    cases.send_test(company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock)
    assert len(pending(store)) == 1
    stopped = attrs.evolve(
        endpoint, active=False, disabled_reason="HTTP 410 Gone", failing_since=NOW
    )
    with MemoryUnitOfWork(store) as uow:
        uow.webhooks.save(attrs.evolve(endpoint, active=True, failing_since=NOW))
        uow.commit()

    def set_active(active: bool):
        return cases.update_endpoint(
            cases.UpdateEndpoint(company_id=company_id, endpoint_id=endpoint.id, active=active),
            uow=MemoryUnitOfWork(store),
            urls=URLS,
            clock=clock,
        )

    assert set_active(True).failing_since == NOW  # still on: its streak stands
    off = set_active(False)
    assert off.disabled_reason is None
    assert pending(store) == []  # marked failed: never sent, not even once it is back on
    with MemoryUnitOfWork(store) as uow:
        uow.webhooks.save(stopped)
        uow.commit()
    on = set_active(True)
    assert on.active is True
    assert on.disabled_reason is None
    assert on.failing_since is None


def test_a_test_event_is_an_envelope_in_the_company_timezone_due_now(store, clock, company_id):
    endpoint, _ = create(store, clock, company_id, events=("booking.created",))
    delivery = cases.send_test(company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock)
    assert delivery.id.startswith("dlv_")
    assert delivery.event_id.startswith("evt_")
    assert delivery.next_attempt_at == NOW
    assert json.loads(delivery.body) == {
        "id": delivery.event_id,
        "type": "webhook.test",
        "createdAt": "2026-07-01T11:00:00-05:00",  # Chicago, daylight time
        "data": {"webhookId": endpoint.id},
    }
    assert pending(store) == [attrs.evolve(delivery, next_attempt_at=NOW + timedelta(days=2))]


def test_an_endpoint_that_is_off_refuses_a_test(store, clock, company_id):
    endpoint, _ = create(store, clock, company_id, active=False)
    with pytest.raises(InvalidTransition, match="turn it on"):
        cases.send_test(company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock)
    assert pending(store) == []


def test_rotation_keeps_the_old_secret_for_a_day_and_drops_expired_ones(store, clock, company_id):
    endpoint, first = create(store, clock, company_id)
    _, second = cases.rotate_secret(
        company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock
    )
    clock.advance(timedelta(hours=1))
    rotated, third = cases.rotate_secret(
        company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock
    )
    now = clock.now()
    assert rotated.signing_secrets(now) == (third, second, first)
    assert cases.previous_secret_expiry(rotated, now) == now + ROTATION_OVERLAP
    assert rotated.signing_secrets(NOW + ROTATION_OVERLAP) == (third, second)
    clock.advance(ROTATION_OVERLAP)
    latest, fourth = cases.rotate_secret(
        company_id, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock
    )
    assert [s.value for s in latest.secrets] == [fourth, third]  # first and second expired
    assert cases.previous_secret_expiry(latest, clock.now()) == clock.now() + ROTATION_OVERLAP
    assert cases.previous_secret_expiry(endpoint, clock.now()) is None


def test_another_company_reads_nothing_of_an_endpoint(store, clock, company_id):
    endpoint, _ = create(store, clock, company_id)
    other = "cmp_other"
    page = PageRequest()
    with pytest.raises(NotFoundError):
        cases.get_endpoint(other, endpoint.id, uow=MemoryUnitOfWork(store))
    with pytest.raises(NotFoundError):
        cases.list_deliveries(other, endpoint.id, page, uow=MemoryUnitOfWork(store))
    with pytest.raises(NotFoundError):
        cases.rotate_secret(other, endpoint.id, uow=MemoryUnitOfWork(store), clock=clock)
    with pytest.raises(NotFoundError):
        cases.delete_endpoint(other, endpoint.id, uow=MemoryUnitOfWork(store))
    assert cases.list_endpoints(other, page, uow=MemoryUnitOfWork(store)).items == ()
    assert cases.list_endpoints(company_id, page, uow=MemoryUnitOfWork(store)).items == (endpoint,)
