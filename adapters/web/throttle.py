"""Sign-in throttling: refused password attempts counted per email and per client address
in fixed 15-minute windows, with the ``limits`` library on Redis when configured (every
worker process shares the counts), in this process's memory otherwise.

Only refusals count, so that people who sign in often are never held up; once an email
or an address has used up its refusals, further attempts are turned away unchecked until
its window ends. Counter keys are SHA-256 digests: Redis never holds an email address.
As with the API's rate limits (``adapters.http.ratelimit``), a failing Redis does not take
sign-in down: counting moves to memory for a few seconds, with one warning a minute.

The customer portal's sign-in link requests are counted by a second throttle of their own
``namespace`` (``PORTAL_NAMESPACE``), where every request counts (``hit``), not only
refusals: each one may send an email.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable

import structlog
from limits import RateLimitItemPerMinute
from limits.errors import StorageError
from limits.storage import Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

MEMORY = "memory://"
WINDOW_MINUTES = 15
PER_EMAIL = 10
"""Refused attempts per email in a window."""
PER_ADDRESS = 30
"""Refused attempts per client address in a window (offices share an address)."""
REDIS_TIMEOUT_SECONDS = 0.5
RETRY_REDIS_AFTER_SECONDS = 5.0
WARN_EVERY_SECONDS = 60.0

PORTAL_NAMESPACE = "portal"
PORTAL_PER_EMAIL = 5
"""Portal sign-in link requests per email in a window."""
PORTAL_PER_ADDRESS = 20
"""Portal sign-in link requests per client address in a window."""

log = structlog.get_logger("booking.web")


def _digest(kind: str, value: str) -> str:
    return hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()[:32]


class SignInThrottle:
    """Counts refused passwords (sign-ins, and wrong current passwords on ``/account``) per
    email and per address; says how long one must wait."""

    def __init__(
        self,
        storage_uri: str = MEMORY,
        *,
        per_email: int = PER_EMAIL,
        per_address: int = PER_ADDRESS,
        window_minutes: int = WINDOW_MINUTES,
        clock: Callable[[], float] = time.time,
        namespace: str = "signin",
    ) -> None:
        self.per_email = per_email
        self._namespace = namespace
        self.per_address = per_address
        self._window = window_minutes
        self._clock = clock
        self._storage: Storage | None = None
        self._limiter: FixedWindowRateLimiter | None = None
        if not storage_uri.startswith(MEMORY):
            storage = storage_from_string(
                storage_uri,
                wrap_exceptions=True,
                socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
                socket_timeout=REDIS_TIMEOUT_SECONDS,
            )
            if not isinstance(storage, Storage):
                raise ValueError(f"not a synchronous store: {storage_uri.split(':', 1)[0]}")
            self._storage = storage
            self._limiter = FixedWindowRateLimiter(storage)
        self._memory: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._shared_down_until = 0.0
        self._warned_at: float | None = None

    def _keys(self, email: str, address: str) -> tuple[tuple[str, int], ...]:
        return (
            (_digest("email", email.strip().lower()), self.per_email),
            (_digest("address", address), self.per_address),
        )

    def wait_seconds(self, email: str, address: str) -> int:
        """Seconds until this email and address may try again (0: they may now)."""
        return max(self._wait(key, limit) for key, limit in self._keys(email, address))

    def refused(self, email: str, address: str) -> None:
        """Count one refused attempt against the email and the address."""
        for key, limit in self._keys(email, address):
            self._hit(key, limit)

    def hit(self, email: str, address: str) -> None:
        """Count one request against the email and the address (the portal's link
        requests, where every request counts)."""
        self.refused(email, address)

    def reset(self) -> None:
        """Forget every count (tests)."""
        with self._lock:
            self._memory.clear()
        if self._storage is not None:
            self._storage.reset()

    def _item(self, limit: int) -> RateLimitItemPerMinute:
        return RateLimitItemPerMinute(limit, self._window)

    def _wait(self, key: str, limit: int) -> int:
        if self._limiter is not None and self._shared_usable():
            try:
                if self._limiter.test(self._item(limit), self._namespace, key):
                    return 0
                stats = self._limiter.get_window_stats(self._item(limit), self._namespace, key)
                return max(1, math.ceil(stats.reset_time - time.time()))
            except StorageError as error:
                self._shared_failed(error)
        now = self._clock()
        with self._lock:
            window = self._memory.get(key)
            if window is None or window[0] <= now or window[1] < limit:
                return 0
            return max(1, math.ceil(window[0] - now))

    def _hit(self, key: str, limit: int) -> None:
        if self._limiter is not None and self._shared_usable():
            try:
                self._limiter.hit(self._item(limit), self._namespace, key)
                return
            except StorageError as error:
                self._shared_failed(error)
        now = self._clock()
        with self._lock:
            window = self._memory.get(key)
            if window is None or window[0] <= now:
                if len(self._memory) >= 10_000:
                    for gone in [k for k, (ends, _) in self._memory.items() if ends <= now]:
                        del self._memory[gone]
                window = self._memory[key] = [now + self._window * 60, 0]
            window[1] += 1

    def _shared_usable(self) -> bool:
        with self._lock:
            return time.monotonic() >= self._shared_down_until

    def _shared_failed(self, error: StorageError) -> None:
        now = time.monotonic()
        with self._lock:
            self._shared_down_until = now + RETRY_REDIS_AFTER_SECONDS
            warn = self._warned_at is None or now - self._warned_at >= WARN_EVERY_SECONDS
            if warn:
                self._warned_at = now
        if warn:
            log.warning(
                "sign_in_throttle_store_unavailable",
                error_type=type(error.storage_error).__name__,
                fallback="memory",
            )
