"""Revoking a key is for good, also when an edit or a rotation of it races the
revocation, on both SQL backends: each reads the key locked before writing it back, so
none writes back the key as it was before it was revoked (a revoked key that came back
to life would let its holder in again)."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.sql import Database
from booking_core.auth import KeyStatus
from booking_core.clock import FixedClock
from booking_core.errors import InvalidTransition
from booking_core.services import companies
from tests.integration.test_booking_races import race

CLOCK = FixedClock(datetime(2026, 7, 1, 16, tzinfo=UTC))
ROUNDS = 10


def test_an_edit_or_rotation_racing_a_revocation_never_brings_the_key_back(database: Database):
    company = companies.create_company(
        companies.CreateCompany(slug="keys", name="Key Maids"), uow=database.uow(), clock=CLOCK
    )
    for round_ in range(ROUNDS):
        issued = companies.create_key(
            companies.CreateKey(company_id=company.id, name=f"site {round_}"),
            uow=database.uow(),
            clock=CLOCK,
        )
        key_id = issued.key.id

        def change(i: int, key_id: str = key_id) -> None:
            if i == 0:
                companies.revoke_key(company.id, key_id, uow=database.uow(), clock=CLOCK)
            elif i == 1:
                companies.rotate_key(company.id, key_id, uow=database.uow(), clock=CLOCK)
            else:
                companies.edit_key(
                    company.id, key_id, rate_limit=300, uow=database.uow(), clock=CLOCK
                )

        outcomes = race(3, change)
        assert outcomes[0] is None, outcomes
        # A change that came after the revocation is refused; one before it is kept.
        assert all(o is None or isinstance(o, InvalidTransition) for o in outcomes), outcomes
        with database.uow() as uow:
            stored = uow.api_keys.get(company.id, key_id)
        assert stored.status is KeyStatus.REVOKED, f"round {round_}: the key came back"
        assert stored.revoked_at is not None
