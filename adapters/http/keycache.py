"""Verified API keys, remembered per worker process until a key changes.

Every authenticated request starts by finding its key; remembering a verified key saves
that database round trip. Only keys that verified are kept (an unknown secret is looked
up every time), under a digest of the secret, never the secret itself.

How long an entry is trusted depends on what the wiring hands in:

- ``stamp`` (the storage's change feed, ``Database.key_stamp``): a value that stays equal
  while no API key changed anywhere. An entry is kept with the stamp taken before its
  lookup and trusted only while the stamp is still that value, so a key revoked or
  rotated from the CLI, another worker or this one stops working as soon as the feed
  hears of it (milliseconds; at once within one process). While the feed cannot tell
  (``stamp()`` gives None: its connection is lost and being remade) entries fall back to
  the rule below.
- Otherwise no entry outlives ``TTL_SECONDS``: a revoked key stops working on every
  worker within one second.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable

from booking_core.auth import ApiKey

TTL_SECONDS = 0.9
"""How long a verified key is trusted without a change feed (under one second)."""
MAX_ENTRIES = 10_000

_NONE = object()
"""The stamp of an entry looked up while the feed could not tell (equal to no stamp)."""


class CachedAuthenticator:
    """``authenticate`` with verified keys remembered while ``stamp`` says no key changed
    (or for ``ttl`` seconds when it cannot tell, or when there is no ``stamp``)."""

    def __init__(
        self,
        authenticate: Callable[[str], ApiKey | None],
        *,
        stamp: Callable[[], Hashable | None] | None = None,
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._authenticate = authenticate
        self._stamp = stamp
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[bytes, tuple[Hashable, float, ApiKey]] = {}
        self._lock = threading.Lock()

    def __call__(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is, or None."""
        digest = _digest(secret)
        stamp = self._current()
        now = self._clock()
        found = self._trusted(digest, stamp, now)
        if found is not None:
            return found
        key = self._authenticate(secret)
        with self._lock:
            if key is None:
                self._entries.pop(digest, None)
            else:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[digest] = (_NONE if stamp is None else stamp, now, key)
        return key

    def known(self, secret: str) -> ApiKey | None:
        """The key ``secret`` verified as, if remembered and still trusted; None when only
        storage can say (no lookup is made)."""
        return self._trusted(_digest(secret), self._current(), self._clock())

    def _current(self) -> Hashable | None:
        return self._stamp() if self._stamp is not None else None

    def _trusted(self, digest: bytes, stamp: Hashable | None, now: float) -> ApiKey | None:
        found = self._entries.get(digest)
        if found is None:
            return None
        kept_under, kept_at, key = found
        if stamp is not None:
            return key if kept_under == stamp else None
        return key if now - kept_at < self._ttl else None


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()
