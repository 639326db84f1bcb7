"""What the HTTP layer needs from the wiring, as one typed value every handler gets."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread
import attrs
from attrs import define

from adapters.http.cursors import CursorCodec
from adapters.http.ratelimit import RateLimiter
from adapters.http.views import RenderContext
from booking_core.auth import ApiKey
from booking_core.ports import Clock, DriveTime, PhoneNormalizer, Resolver, UnitOfWork

T = TypeVar("T")

MAX_RENDER_CONTEXTS = 4096


class NotInMemory(BaseException):
    """Raised by a memory-only reader (``HttpDeps.memory_reader``) when a request needs
    storage after all: the request then starts again in a worker thread.

    A ``BaseException``, as ``GeneratorExit`` is, so that the request pipeline's ``except
    Exception`` never takes it for a failure and answers 500.
    """


def _needs_storage() -> UnitOfWork:
    raise NotInMemory()


@define
class HttpDeps:
    """What the HTTP layer needs from the wiring."""

    uow: Callable[[], UnitOfWork]
    clock: Clock
    phones: PhoneNormalizer
    rate_limiter: RateLimiter
    cursors: CursorCodec
    authenticate: Callable[[str], ApiKey | None]
    base_url: str
    drive: DriveTime
    resolver: Resolver
    """What webhook URLs resolve to, for the URL policy (``SystemResolver`` in production)."""
    webhook_allow_hosts: frozenset[str]
    """Hosts exempt from the webhook URL policy's https and public-address rules
    (``BOOKING_WEBHOOK_ALLOW_HOSTS``; empty in production)."""
    reader: Callable[[], UnitOfWork] | None = None
    memory_reader: Callable[[], UnitOfWork] | None = None
    """A reader answering only from memory, raising ``NotInMemory`` for anything it would
    have to ask storage; None: every request runs in a worker thread."""
    known_key: Callable[[str], ApiKey | None] | None = None
    """The key a secret verified as, when known in memory and current; None otherwise
    (also when not given)."""
    request_threads: int = 4
    """How many ``/api/v1`` requests of this process run their database work in worker
    threads at once (``BOOKING_REQUEST_THREADS``); the rest wait their turn on the event
    loop. A few threads keep the database busy while they take turns holding Python's
    GIL; dozens (Starlette's default pool has 40) spend the CPU handing the GIL and the
    connection sockets between themselves: `make bench-http` booked 40 to 60% more per
    second with 4 than with 40 (docs/api.md)."""
    _render_contexts: dict[str, tuple[object, RenderContext]] = attrs.field(factory=dict)
    _in_memory: HttpDeps | None = attrs.field(default=None, init=False)
    _threads: anyio.CapacityLimiter | None = attrs.field(default=None, init=False)

    async def in_thread(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a worker thread, at most ``request_threads`` at a time."""
        if self._threads is None:  # made on the event loop, on first use
            self._threads = anyio.CapacityLimiter(self.request_threads)
        return await anyio.to_thread.run_sync(partial(work, *args), limiter=self._threads)

    def read(self) -> UnitOfWork:
        """A unit of work for reading only (no write lock on SQLite); ``uow`` if none."""
        return self.reader() if self.reader is not None else self.uow()

    def render_context_for(self, company_id: str) -> RenderContext:
        """How a company's answers are written: its timezone, slug and domain, as stored
        now (the reader serves the company from memory while nothing changed; the context
        is remade only when the company read is another value)."""
        with self.read() as uow:
            company = uow.companies.get(company_id)
        cached = self._render_contexts.get(company_id)
        if cached is not None and cached[0] is company:
            return cached[1]
        context = RenderContext(
            zone=ZoneInfo(company.timezone),
            base_url=self.base_url,
            slug=company.slug,
            custom_domain=company.custom_domain,
        )
        if len(self._render_contexts) >= MAX_RENDER_CONTEXTS:
            self._render_contexts.clear()
        self._render_contexts[company_id] = (company, context)
        return context

    def in_memory(self) -> HttpDeps | None:
        """These dependencies as a request on the event loop may use them: reads from
        memory only, no unit of work for writing (both raise ``NotInMemory``). None when
        there is no memory reader, or when the rate limits count in a shared store (Redis:
        network I/O, which belongs in a worker thread)."""
        if self.memory_reader is None or self.rate_limiter.shared:
            return None
        if self._in_memory is None:
            self._in_memory = attrs.evolve(
                self, uow=_needs_storage, reader=self.memory_reader, authenticate=_unknown
            )
        return self._in_memory


def _unknown(secret: str) -> ApiKey | None:
    """A request on the event loop knows its key already; finding one needs storage."""
    del secret
    raise NotInMemory()
