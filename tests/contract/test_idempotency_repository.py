from __future__ import annotations

from datetime import timedelta

from booking_core.idempotency import IdempotencyRecord, RecordState
from tests import factories as f


def record(company_id: str = "cmp_a", key: str = "k1", minutes: int = 0) -> IdempotencyRecord:
    return IdempotencyRecord(company_id, key, "f" * 64, RecordState.IN_PROGRESS, f.at(minutes))


def test_first_claim_wins_and_later_claims_see_it(uow_factory):
    with uow_factory() as uow:
        assert uow.idempotency.claim(record()) is None
        uow.commit()
    with uow_factory() as uow:
        assert uow.idempotency.claim(record(minutes=1)) == record()
        # The same key in another company is another key.
        assert uow.idempotency.claim(record("cmp_b")) is None
        uow.commit()


def test_completed_answer_is_stored(uow_factory):
    with uow_factory() as uow:
        uow.idempotency.claim(record())
        uow.idempotency.complete("cmp_a", "k1", 201, b'{"id":"quo_1"}')
        uow.commit()
    with uow_factory() as uow:
        stored = uow.idempotency.get("cmp_a", "k1")
    assert stored is not None
    assert stored.state is RecordState.COMPLETED
    assert (stored.response_status, stored.response_body) == (201, b'{"id":"quo_1"}')


def test_released_claim_can_be_claimed_again(uow_factory):
    with uow_factory() as uow:
        uow.idempotency.claim(record())
        uow.commit()
    with uow_factory() as uow:
        uow.idempotency.release("cmp_a", "k1")
        uow.commit()
    with uow_factory() as uow:
        assert uow.idempotency.get("cmp_a", "k1") is None
        assert uow.idempotency.claim(record()) is None


def test_purge_deletes_only_records_older_than_the_cutoff(uow_factory):
    with uow_factory() as uow:
        uow.idempotency.claim(record(key="old", minutes=0))
        uow.idempotency.claim(record(key="new", minutes=60))
        uow.commit()
    with uow_factory() as uow:
        assert uow.idempotency.purge(f.T0 + timedelta(minutes=30)) == 1
        uow.commit()
    with uow_factory() as uow:
        assert uow.idempotency.get("cmp_a", "old") is None
        assert uow.idempotency.get("cmp_a", "new") is not None
