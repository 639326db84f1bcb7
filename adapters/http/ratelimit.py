"""Per-key rate limits over the ``limits`` library's stores: Redis when configured
(shared by every worker process), in-process memory otherwise.

Windows are fixed and one minute long: a key's window opens with its first request (the
store's counter is created with a one-minute expiry), and ``x-ratelimit-reset`` is the
whole seconds to its end, rounded up (never 0 while the window is closed). A key's count
is kept under its id alone, not its limit, so changing a key's limit keeps what it has
used. Each request is one atomic increment whose result is the request's own place in
the window, so ``remaining`` is exact under concurrent requests.

Redis going away must not take the API with it: when the store fails (refused, timed
out, any Redis error) the request is counted in this process's memory instead, a warning
is logged at most once a minute, and Redis is asked again a few seconds later; once it
answers, counting moves back to it. While it is away each process counts on its own, so a
key may get up to its limit once per process.

In memory the counts are a dict of windows (``MemoryWindows``). The library's own memory
storage starts a timer thread every 10 ms while requests flow, and a thread start blocks
the event loop that counts requests answered from memory.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog
from attrs import frozen
from limits.errors import StorageError
from limits.storage import RedisStorage, Storage, storage_from_string

MEMORY = "memory://"
REDIS_TIMEOUT_SECONDS = 0.5
"""How long connecting to Redis, or one command, may take before the request falls back."""
RETRY_REDIS_AFTER_SECONDS = 5.0
"""How long requests count in memory after a Redis failure before Redis is asked again."""
WARN_EVERY_SECONDS = 60.0
"""At most one warning per this interval while Redis keeps failing."""

WINDOW_SECONDS = 60
KEY_PREFIX = "booking-ratelimit"
"""Store keys are ``booking-ratelimit/<key id>``."""

log = structlog.get_logger("booking.ratelimit")


def verdict(count: int, per_minute: int, ends: float, now: float) -> Verdict:
    """The verdict on a request that is number ``count`` of its window."""
    reset = min(WINDOW_SECONDS, max(1, math.ceil(ends - now)))  # the store's TTL is whole
    return Verdict(count <= per_minute, per_minute, max(0, per_minute - count), reset)


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
    """Counts requests per key id in one-minute windows; falls back to memory while a
    shared store fails."""

    def __init__(
        self,
        storage_uri: str = MEMORY,
        *,
        retry_after: float = RETRY_REDIS_AFTER_SECONDS,
        warn_every: float = WARN_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.storage_uri = storage_uri
        self._storage = _storage(storage_uri) if not storage_uri.startswith(MEMORY) else None
        self._wall = wall
        self._memory = MemoryWindows(clock=wall)
        self._retry_after = retry_after
        self._warn_every = warn_every
        self._clock = clock
        self._lock = threading.Lock()
        self._shared_down_until: float | None = None
        self._warned_at: float | None = None

    @property
    def shared(self) -> bool:
        """True when counts live in a store other processes share (Redis)."""
        return not self.storage_uri.startswith(MEMORY)

    def hit(self, key_id: str, per_minute: int) -> Verdict:
        """Count one request for ``key_id``; refuse it when the window is full."""
        if self._storage is not None and self._shared_usable():
            now = self._wall()
            key = f"{KEY_PREFIX}/{key_id}"
            try:
                count = self._storage.incr(key, WINDOW_SECONDS)  # expiry set by the first
                # The request that opened the window knows its end; others ask the store.
                ends = now + WINDOW_SECONDS if count == 1 else self._ends(key, now)
            except StorageError as error:
                self._shared_failed(error)
            else:
                self._shared_answered()
                return verdict(count, per_minute, ends, now)
        return self._memory.hit(key_id, per_minute)

    def _ends(self, key: str, now: float) -> float:
        """When the window of ``key`` ends. On Redis from its expiry in milliseconds
        (``PTTL``): the library's ``get_expiry`` reads ``TTL``, whole seconds rounded to the
        nearest, which rounded up again said one second too many."""
        storage = self._storage
        assert storage is not None
        if isinstance(storage, RedisStorage):
            client: Any = storage.get_connection(True)
            try:
                left_ms = client.pttl(storage.prefixed_key(key))
            except storage.base_exceptions as error:  # as the library wraps its own calls
                raise StorageError(error) from error
            return now + max(int(left_ms), 0) / 1000
        return storage.get_expiry(key)

    def ping(self) -> bool:
        """True when the store answers (always, in memory): for the readiness probe."""
        return bool(self._storage.check()) if self._storage is not None else True

    def reset(self) -> None:
        """Forget every count (tests)."""
        self._memory.reset()
        if self._storage is not None:
            self._storage.reset()

    def _shared_usable(self) -> bool:
        with self._lock:
            until = self._shared_down_until
            return until is None or self._clock() >= until

    def _shared_failed(self, error: StorageError) -> None:
        now = self._clock()
        with self._lock:
            self._shared_down_until = now + self._retry_after
            warn = self._warned_at is None or now - self._warned_at >= self._warn_every
            if warn:
                self._warned_at = now
        if warn:
            # The error's class only: its text may name hosts and credentials of the URL.
            log.warning(
                "rate_limit_store_unavailable",
                error_type=type(error.storage_error).__name__,
                fallback="memory",
                retry_after_seconds=self._retry_after,
            )

    def _shared_answered(self) -> None:
        with self._lock:
            recovered = self._shared_down_until is not None
            self._shared_down_until = None
        if recovered:
            log.info("rate_limit_store_recovered")


class MemoryWindows:
    """Fixed one-minute windows per key in this process's memory: a window opens with a
    key's first request; every request is counted, and those past the limit refused."""

    SWEEP_AT = 10_000
    """Keys held before the windows that have ended are swept out."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._windows: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key_id: str, per_minute: int) -> Verdict:
        """Count one request for ``key_id``; refuse it when its window is full."""
        now = self._clock()
        with self._lock:
            window = self._windows.get(key_id)
            if window is None or window[0] <= now:
                if len(self._windows) >= self.SWEEP_AT:
                    self._sweep(now)
                window = self._windows[key_id] = [now + WINDOW_SECONDS, 0]
            window[1] += 1
            ends, count = window
        return verdict(int(count), per_minute, ends, now)

    def reset(self) -> None:
        """Forget every count."""
        with self._lock:
            self._windows.clear()

    def _sweep(self, now: float) -> None:
        for key_id in [k for k, (ends, _) in self._windows.items() if ends <= now]:
            del self._windows[key_id]


def _storage(uri: str) -> Storage:
    options: dict[str, float | bool] = {}
    if not uri.startswith(MEMORY):
        # Short timeouts: a hung Redis costs a request half a second, not the client's
        # patience; errors come wrapped in StorageError, whatever the client library.
        options = {
            "wrap_exceptions": True,
            "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
            "socket_timeout": REDIS_TIMEOUT_SECONDS,
        }
    storage = storage_from_string(uri, **options)
    if not isinstance(storage, Storage):
        raise ValueError(f"not a synchronous rate-limit store: {uri.split(':', 1)[0]}")
    return storage
