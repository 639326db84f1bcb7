"""What the HTTP layer needs from the wiring, as one typed value every handler gets."""

from __future__ import annotations

import time
from collections.abc import Callable
from zoneinfo import ZoneInfo

import attrs
from attrs import define

from adapters.http.cursors import CursorCodec
from adapters.http.ratelimit import RateLimiter
from adapters.http.views import RenderContext
from booking_core.auth import ApiKey
from booking_core.ports import Clock, DriveTime, PhoneNormalizer, UnitOfWork

RENDER_CONTEXT_TTL_SECONDS = 10.0


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
    reader: Callable[[], UnitOfWork] | None = None
    _render_contexts: dict[str, tuple[float, RenderContext]] = attrs.field(factory=dict, init=False)

    def read(self) -> UnitOfWork:
        """A unit of work for reading only (no write lock on SQLite); ``uow`` if none."""
        return self.reader() if self.reader is not None else self.uow()

    def render_context_for(self, company_id: str) -> RenderContext:
        """How a company's answers are written: its timezone, slug and domain, kept for a
        few seconds (they only shape how answers are written, never what is stored)."""
        now = time.monotonic()
        cached = self._render_contexts.get(company_id)
        if cached is not None and now - cached[0] < RENDER_CONTEXT_TTL_SECONDS:
            return cached[1]
        with self.read() as uow:
            company = uow.companies.get(company_id)
        context = RenderContext(
            zone=ZoneInfo(company.timezone),
            base_url=self.base_url,
            slug=company.slug,
            custom_domain=company.custom_domain,
        )
        self._render_contexts[company_id] = (now, context)
        return context
