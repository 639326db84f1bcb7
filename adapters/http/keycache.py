"""Verified API keys, remembered for under a second per worker process.

Every authenticated request starts by finding its key; remembering a verified key for a
moment saves that database round trip on a busy key. The promise kept: a key revoked or
rotated (from the CLI, another worker, or this one) stops working on every worker within
one second, because no entry outlives ``TTL_SECONDS``. Only keys that verified are kept
(an unknown secret is looked up every time), under a digest of the secret, never the
secret itself.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable

from booking_core.auth import ApiKey

TTL_SECONDS = 0.9
"""How long a verified key is trusted without asking storage again (under one second)."""
MAX_ENTRIES = 10_000


class CachedAuthenticator:
    """``authenticate`` with verified keys remembered for ``ttl`` seconds."""

    def __init__(
        self,
        authenticate: Callable[[str], ApiKey | None],
        *,
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._authenticate = authenticate
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[bytes, tuple[float, ApiKey]] = {}
        self._lock = threading.Lock()

    def __call__(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is, or None."""
        digest = hashlib.sha256(secret.encode()).digest()
        now = self._clock()
        with self._lock:
            found = self._entries.get(digest)
        if found is not None and now - found[0] < self._ttl:
            return found[1]
        key = self._authenticate(secret)
        with self._lock:
            if key is None:
                self._entries.pop(digest, None)
            else:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[digest] = (now, key)
        return key
