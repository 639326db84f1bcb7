"""The cap of webhook endpoints per company holds when creations race, on both SQL
backends: with room for a few more, a crowd of simultaneous creations leaves the
company at exactly the cap, every other creation refused with ``TooManyEndpoints``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.sql import Database
from adapters.webhooks.resolver import StaticResolver
from booking_core.clock import FixedClock
from booking_core.paging import PageRequest
from booking_core.services import companies
from booking_core.services import webhooks as cases
from booking_core.webhook_endpoints import MAX_ENDPOINTS_PER_COMPANY
from tests.integration.test_booking_races import race

CLOCK = FixedClock(datetime(2026, 7, 1, 16, tzinfo=UTC))
URLS = cases.UrlPolicy(resolver=StaticResolver({"hooks.example.com": "93.184.215.14"}))
RACERS = 12
ROOM = 3


def create(db: Database, company_id: str, n: int) -> None:
    cases.create_endpoint(
        cases.CreateEndpoint(
            company_id=company_id, url=f"https://hooks.example.com/in/{n}", events=("*",)
        ),
        uow=db.uow(),
        clock=CLOCK,
        urls=URLS,
    )


def endpoints_of(db: Database, company_id: str) -> int:
    with db.uow() as uow:
        return len(uow.webhooks.list(company_id, PageRequest(limit=200)).items)


def test_racing_creations_stop_at_the_cap_of_endpoints(database: Database):
    company = companies.create_company(
        companies.CreateCompany(slug="hooks", name="Hook Maids"), uow=database.uow(), clock=CLOCK
    )
    for n in range(MAX_ENDPOINTS_PER_COMPANY - ROOM):
        create(database, company.id, n)

    outcomes = race(RACERS, lambda i: create(database, company.id, 1_000 + i))

    made = [o for o in outcomes if o is None]
    refused = [o for o in outcomes if isinstance(o, cases.TooManyEndpoints)]
    assert len(made) == ROOM, outcomes
    assert len(refused) == RACERS - ROOM, outcomes
    assert endpoints_of(database, company.id) == MAX_ENDPOINTS_PER_COMPANY


def test_a_change_racing_a_secret_rotation_keeps_both(database: Database):
    """``PATCH`` and ``rotate-secret`` each read the endpoint and write it back: neither
    may write back what it read before the other's change committed."""
    company = companies.create_company(
        companies.CreateCompany(slug="rotor", name="Rotor Maids"), uow=database.uow(), clock=CLOCK
    )
    create(database, company.id, 0)
    with database.uow() as uow:
        (endpoint,) = uow.webhooks.list(company.id, PageRequest(limit=1)).items
    for round_ in range(10):
        rotated: list[str] = []

        def change(i: int, round_: int = round_, rotated: list[str] = rotated) -> None:
            if i == 0:
                cases.update_endpoint(
                    cases.UpdateEndpoint(
                        company_id=company.id, endpoint_id=endpoint.id, description=f"r{round_}"
                    ),
                    uow=database.uow(),
                    urls=URLS,
                    clock=CLOCK,
                )
            else:
                _, secret = cases.rotate_secret(
                    company.id, endpoint.id, uow=database.uow(), clock=CLOCK
                )
                rotated.append(secret)

        assert race(2, change) == [None, None]
        with database.uow() as uow:
            stored = uow.webhooks.get(company.id, endpoint.id)
        assert stored.description == f"r{round_}"
        assert stored.secrets[0].value == rotated[0], f"round {round_}: the rotation was lost"
