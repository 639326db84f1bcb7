"""Idempotency records: what a write sent with an ``Idempotency-Key`` answered.

Keys are scoped to the company, at most 255 characters, and kept 24 hours. The body
fingerprint is the SHA-256 of the method, the path and the canonical JSON of the body
(key order and whitespace do not matter), so the same key with another body is told
apart from a replay.
"""

from __future__ import annotations

import enum
import hashlib
import json
from datetime import datetime, timedelta

from attrs import frozen

KEY_MAX = 255
RETENTION = timedelta(hours=24)
STALE_CLAIM = timedelta(minutes=5)
"""An in-progress claim older than this belongs to a request that died; it may be retaken."""


class RecordState(enum.StrEnum):
    """Whether the first request with the key has answered yet."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@frozen
class IdempotencyRecord:
    """One key's claim and, once completed, its stored answer."""

    company_id: str
    key: str
    fingerprint: str
    state: RecordState
    created_at: datetime
    response_status: int | None = None
    response_body: bytes | None = None


def canonical_json(value: object) -> bytes:
    """JSON with sorted keys and no insignificant whitespace."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # A body may carry a lone surrogate (the JSON escape "\ud800" parses to one); keep it
    # rather than fail, without changing the bytes of any other body.
    return text.encode("utf-8", "surrogatepass")


def fingerprint(method: str, path: str, body: object) -> str:
    """The SHA-256 over method, path and the canonical JSON of ``body``."""
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), canonical_json(body)):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
