"""``Idempotency-Key`` on writes that change money or the calendar (SPEC.md section 4).

A request with a key runs in **one transaction**: the key is claimed, the effect is
made, and the answer is stored, and the three commit together or not at all. So:

* the same key and body again replays the stored answer (``idempotent-replayed: true``);
* the same key with another body is ``409 idempotency_key_reused``;
* the same key while the first request still runs is ``409 idempotency_key_in_use`` on
  PostgreSQL (the claim takes a transaction-scoped advisory lock without waiting); on
  SQLite, which runs one writer at a time, the copy waits and then gets the replay;
* a refusal (4xx) made by the write itself is stored too, and replayed like a success:
  the effect is undone, the claim kept and held (``UnitOfWork.undo_since_claims``), and
  the refusal stored in the same transaction, so no copy of the request with another
  body runs between the refusal and its storing (only when that transaction broke is
  the refusal stored in one of its own, once it rolled back);
* an answer of 5xx, or a lost race (409 ``conflict``: the slot taken, the record
  changed by another request, met before or while committing), is not stored: the key
  may be retried;
* a request that dies leaves nothing behind: its claim rolls back with its effect.

Keys are scoped to the company, at most 255 characters, and kept 24 hours: a record
older than that is forgotten when its key comes again, and expired records are purged
(at most every few minutes per process, from the claim path).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Self

import structlog
from attrs import field, frozen

from adapters.http.errors import ApiError
from adapters.http.reading import sent_twice
from adapters.http.redaction import error_fields
from booking_core.errors import ConflictError, DomainError
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
REPLAYED = {"idempotent-replayed": "true"}
PURGE_EVERY = timedelta(minutes=10)
log = structlog.get_logger("booking.http")
CLAIM_ROUNDS = 3
"""Tries at claiming: a record past its 24 hours or left by a dead request is dropped
first (in a transaction of its own), then the key is claimed afresh."""


def key_from(headers: Mapping[str, str]) -> str:
    """The request's key, or ``invalid_request`` naming the header."""
    if (text := sent_twice(headers, "Idempotency-Key")) is not None:
        raise ApiError(400, "invalid_request", text, field_errors={"Idempotency-Key": text})
    key = headers.get(HEADER)
    if key is not None and not key.strip():  # sent, but blank: a client's bug, named so
        raise ApiError(
            400,
            "invalid_request",
            "The Idempotency-Key header is empty.",
            field_errors={"Idempotency-Key": "May not be blank: a unique string per write."},
        )
    if key is None:
        raise ApiError(
            400,
            "invalid_request",
            "This request changes money or the calendar: send an Idempotency-Key header.",
            field_errors={"Idempotency-Key": "Required: a unique string per intended write."},
        )
    if _characters(key) > KEY_MAX:
        raise ApiError(
            400,
            "invalid_request",
            "The Idempotency-Key header is too long.",
            field_errors={"Idempotency-Key": f"At most {KEY_MAX} characters."},
        )
    return key


def _characters(key: str) -> int:
    """The key's length in characters. HTTP headers arrive as bytes, which the ASGI server
    hands on read as Latin-1, one character per byte; a key written in UTF-8 ("é" is two
    bytes) is counted by its characters, as the documented limit says."""
    try:
        return len(key.encode("latin-1").decode("utf-8"))
    except UnicodeError:  # not UTF-8: one character per byte, as it came
        return len(key)


@frozen
class Answer:
    """What a write answered: status, the encoded body, and headers of its own."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(factory=dict)


@frozen
class Gate:
    """One request's key: who sent it, and the fingerprint of what it asks."""

    company_id: str
    key: str
    fingerprint: str
    at: datetime

    @classmethod
    def of(
        cls, company_id: str, key: str, method: str, path: str, body: object, at: datetime
    ) -> Gate:
        """The gate of a request with this key, method, path and decoded body."""
        return cls(company_id, key, fingerprint(method, path, body), at)

    def claim_record(self) -> IdempotencyRecord:
        """The in-progress record this request claims its key with."""
        return IdempotencyRecord(
            self.company_id, self.key, self.fingerprint, RecordState.IN_PROGRESS, self.at
        )


class SharedUnit:
    """The request's one transaction, lent to the handler's use cases.

    Entering and leaving it, and ``commit``, do not end the transaction: ``run_once``
    commits it once, with the stored answer. An exception leaving a use case's ``with``
    block propagates to ``run_once``, which rolls back everything, the claim included.
    """

    def __init__(self, inner: UnitOfWork) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def commit(self) -> None:
        """Nothing yet: the effect commits with the stored answer (``run_once``)."""

    def rollback(self) -> None:
        """Not supported: a use case refuses by raising, which rolls back everything."""
        raise RuntimeError("a use case refuses by raising; the request's unit rolls back")


def run_once(
    uow_factory: Callable[[], UnitOfWork],
    gate: Gate,
    work: Callable[[UnitOfWork], Answer],
    refusal: Callable[[Exception], Answer],
) -> Answer:
    """Claim the key, run ``work`` on the same transaction, store its answer, commit.

    ``work`` answers a success or raises; ``refusal`` turns what it raised into the
    answer to give. A replay is answered from the stored record, with the
    ``idempotent-replayed`` header. The key's own refusals (reused, in use) raise
    ``ApiError`` and store nothing.
    """
    _purge_expired(uow_factory, gate.at)
    for _ in range(CLAIM_ROUNDS):
        claimed = committing = False
        unkept: Answer | None = None
        try:
            with uow_factory() as uow:
                existing = uow.idempotency.claim(gate.claim_record())
                if existing is not None:
                    replay = _replay_or_refuse(existing, gate)
                    if replay is not None:
                        return replay
                    uow.idempotency.release(gate.company_id, gate.key)
                    uow.commit()
                    continue
                claimed = True
                try:
                    answer = work(SharedUnit(uow))
                except (DomainError, ApiError) as error:
                    failed = refusal(error)
                    if not _kept_refusal(error, failed):
                        return failed  # leaving the unit rolls everything back
                    if _keep_in_unit(uow, gate, failed):
                        return failed
                    unkept = failed
                else:
                    uow.idempotency.complete(gate.company_id, gate.key, answer.status, answer.body)
                    committing = True
                    uow.commit()
                    return answer
        except Exception as error:
            if not claimed:
                raise
            failed = refusal(error)
            if _kept_refusal(error, failed) and not committing:
                _store_refusal(uow_factory, gate, failed)
            return failed
        if unkept is not None:  # the unit could not keep it (its transaction broke)
            _store_refusal(uow_factory, gate, unkept)
            return unkept
    raise ApiError(409, "idempotency_key_in_use", "This Idempotency-Key is busy; retry shortly.")


def _replay_or_refuse(existing: IdempotencyRecord, gate: Gate) -> Answer | None:
    """The stored answer to replay; None when the record is to be dropped and the key
    claimed afresh; else the key's refusal (``ApiError``)."""
    age = gate.at - existing.created_at
    if age >= RETENTION:
        return None  # kept 24 hours: an older record is not purged yet but forgotten
    if existing.fingerprint != gate.fingerprint:
        raise ApiError(
            409,
            "idempotency_key_reused",
            "This Idempotency-Key was used with another request (a different body or endpoint).",
        )
    if existing.state is RecordState.COMPLETED and existing.response_status:
        return Answer(existing.response_status, existing.response_body or b"", REPLAYED)
    if existing.state is RecordState.IN_PROGRESS and age > STALE_CLAIM:
        # A claim stored outside a request's transaction (an older release, or by hand)
        # whose request is long gone: nothing happened under it; retake it.
        return None
    raise ApiError(
        409,
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
    )


def _kept_refusal(error: Exception, answer: Answer) -> bool:
    """Whether a write's refusal is stored for replays: a 4xx of its own, not a lost race
    (409 conflict: the slot taken, the record changed meanwhile), which like a 5xx is not
    the request's own outcome, so the key may be retried."""
    return answer.status < 500 and not isinstance(error, ConflictError)


def _keep_in_unit(uow: UnitOfWork, gate: Gate, answer: Answer) -> bool:
    """Store a refusal in the request's own unit: what the write did is undone, the claim
    stays held (``UnitOfWork.undo_since_claims``), so no other request with the key runs
    before the refusal is stored. False when the unit could not (a statement had broken
    its transaction): then ``_store_refusal`` stores it in a unit of its own."""
    try:
        uow.undo_since_claims()
        uow.idempotency.complete(gate.company_id, gate.key, answer.status, answer.body)
        uow.commit()
    except Exception as error:
        log.warning("idempotency_refusal_kept_apart", **error_fields(error))
        return False
    return True


def _store_refusal(uow_factory: Callable[[], UnitOfWork], gate: Gate, answer: Answer) -> None:
    """Keep a refusal for replays, in a transaction of its own (the effect's rolled
    back); if another copy of the request claimed the key meanwhile, keep its record."""
    try:
        with uow_factory() as uow:
            if uow.idempotency.claim(gate.claim_record()) is None:
                uow.idempotency.complete(gate.company_id, gate.key, answer.status, answer.body)
                uow.commit()
    except Exception as error:
        # Nothing happened under the key, so a retry merely runs the refusal again.
        log.error("idempotency_store_failed", **error_fields(error))


class _Purger:
    """Deletes records past their 24 hours, at most once per ``PURGE_EVERY`` per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: datetime | None = None

    def __call__(self, uow_factory: Callable[[], UnitOfWork], at: datetime) -> None:
        with self._lock:
            if self._next is not None and at < self._next:
                return
            self._next = at + PURGE_EVERY
        with uow_factory() as uow:
            uow.idempotency.purge(at - RETENTION)
            uow.commit()


_purge_expired = _Purger()
