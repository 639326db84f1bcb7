"""``Idempotency-Key`` on writes that change money or the calendar (SPEC.md section 4).

The first request with a key claims it (an in-progress record, committed at once). Its
effect then commits together with a mark that the effect happened, in the same
transaction, and its answer is stored right after. So:

* the same key and body again replays the stored answer (``idempotent-replayed: true``);
* the same key with another body is ``409 idempotency_key_reused``;
* the same key while the first request still runs is ``409 idempotency_key_in_use``;
* an answer of 5xx is not stored: the claim is released and the key may be retried;
* a claim left by a request that died before its effect committed is retaken after a
  few minutes; one whose effect committed is never run twice.

Keys are scoped to the company, at most 255 characters, and kept 24 hours: a record
older than that is forgotten when its key comes again, and expired records are purged
(at most every few minutes per process, from the claim path).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Self

from adapters.http.errors import ApiError
from booking_core.idempotency import (
    KEY_MAX,
    RETENTION,
    STALE_CLAIM,
    IdempotencyRecord,
    RecordState,
    fingerprint,
)
from booking_core.ports import UnitOfWork

HEADER = "idempotency-key"
EFFECT_COMMITTED = 0
"""``response_status`` of a record whose effect committed but whose answer is not stored yet."""
PURGE_EVERY = timedelta(minutes=10)


def key_from(headers: Mapping[str, str]) -> str:
    """The request's key, or ``invalid_request`` naming the header."""
    key = headers.get(HEADER)
    if key is None or not key.strip():
        raise ApiError(
            400,
            "invalid_request",
            "This request changes money or the calendar: send an Idempotency-Key header.",
            field_errors={"Idempotency-Key": "Required: a unique string per intended write."},
        )
    if len(key) > KEY_MAX:
        raise ApiError(
            400,
            "invalid_request",
            "The Idempotency-Key header is too long.",
            field_errors={"Idempotency-Key": f"At most {KEY_MAX} characters."},
        )
    return key


class Claim:
    """The outcome of claiming a key: either run the request, or answer ``replay``."""

    def __init__(self, company_id: str, key: str, replay: IdempotencyRecord | None) -> None:
        self.company_id = company_id
        self.key = key
        self.replay = replay


def claim(
    uow_factory: Any, company_id: str, key: str, method: str, path: str, body: object, at: datetime
) -> Claim:
    """Claim ``key`` for this request, or say which stored answer to replay."""
    _purge_expired(uow_factory, at)
    record = IdempotencyRecord(
        company_id, key, fingerprint(method, path, body), RecordState.IN_PROGRESS, at
    )
    for _ in range(2):
        uow: UnitOfWork
        with uow_factory() as uow:
            existing = uow.idempotency.claim(record)
            if existing is None:
                uow.commit()
                return Claim(company_id, key, None)
            if at - existing.created_at >= RETENTION:
                # Kept 24 hours: an older record is not purged yet but already forgotten.
                uow.idempotency.release(company_id, key)
                uow.commit()
                continue
            if existing.fingerprint != record.fingerprint:
                raise ApiError(
                    409,
                    "idempotency_key_reused",
                    "This Idempotency-Key was used with a different request body.",
                )
            if existing.state is RecordState.COMPLETED and existing.response_status:
                return Claim(company_id, key, existing)
            stale = at - existing.created_at > STALE_CLAIM
            if stale and existing.state is RecordState.IN_PROGRESS:
                # Its request died before the effect committed: nothing happened; retake.
                uow.idempotency.release(company_id, key)
                uow.commit()
                continue
            raise ApiError(
                409,
                "idempotency_key_in_use",
                "A request with this Idempotency-Key is still being processed; retry shortly.",
            )
    raise ApiError(409, "idempotency_key_in_use", "This Idempotency-Key is busy; retry shortly.")


class _Purger:
    """Deletes records past their 24 hours, at most once per ``PURGE_EVERY`` per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: datetime | None = None

    def __call__(self, uow_factory: Any, at: datetime) -> None:
        with self._lock:
            if self._next is not None and at < self._next:
                return
            self._next = at + PURGE_EVERY
        uow: UnitOfWork
        with uow_factory() as uow:
            uow.idempotency.purge(at - RETENTION)
            uow.commit()


_purge_expired = _Purger()


class MarkingUnitOfWork:
    """A unit of work that, on commit, marks the claimed key's effect as committed in the
    same transaction: a committed effect is never run twice."""

    def __init__(self, inner: UnitOfWork, company_id: str, key: str) -> None:
        self._inner = inner
        self._company_id = company_id
        self._key = key

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        self._inner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._inner.__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        self._inner.idempotency.complete(self._company_id, self._key, EFFECT_COMMITTED, b"")
        self._inner.commit()

    def rollback(self) -> None:
        self._inner.rollback()


def store_answer(uow_factory: Any, claimed: Claim, status: int, body: bytes) -> None:
    """Keep the answer for replays, or release the claim after a 5xx."""
    uow: UnitOfWork
    with uow_factory() as uow:
        if status >= 500:
            uow.idempotency.release(claimed.company_id, claimed.key)
        else:
            uow.idempotency.complete(claimed.company_id, claimed.key, status, body)
        uow.commit()
