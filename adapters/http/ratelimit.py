"""Per-key rate limits with the ``limits`` library: Redis when configured (shared by every
worker process), in-process memory otherwise. Fixed one-minute windows per key.
"""

from __future__ import annotations

import math
import time

from attrs import frozen
from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter


@frozen
class Verdict:
    """The outcome of one request against its key's limit, and the headers it earns."""

    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int

    def headers(self) -> dict[str, str]:
        """``x-ratelimit-*`` (and ``retry-after`` when refused); reset is whole seconds."""
        out = {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": str(self.reset_seconds),
        }
        if not self.allowed:
            out["retry-after"] = str(max(1, self.reset_seconds))
        return out


class RateLimiter:
    """Counts requests per key id in one-minute windows."""

    def __init__(self, storage_uri: str = "memory://") -> None:
        self.storage_uri = storage_uri
        self._storage = storage_from_string(storage_uri)
        self._limiter = FixedWindowRateLimiter(self._storage)

    def hit(self, key_id: str, per_minute: int) -> Verdict:
        """Count one request for ``key_id``; refuse it when the window is full."""
        item = RateLimitItemPerMinute(per_minute)
        allowed = self._limiter.hit(item, "apikey", key_id)
        stats = self._limiter.get_window_stats(item, "apikey", key_id)
        reset = max(0, math.ceil(stats.reset_time - time.time()))
        return Verdict(allowed, per_minute, max(0, stats.remaining), reset)

    def reset(self) -> None:
        """Forget every count (tests)."""
        self._storage.reset()
