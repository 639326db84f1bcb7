"""``WebDeps``: what the pages need from the wiring, one typed value every page gets."""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from adapters.http.deps import HttpDeps
from adapters.web.sessions import SessionCodec
from adapters.web.throttle import SignInThrottle
from booking_core.ports import Clock, DriveTime, PasswordHasher, Resolver, UnitOfWork


@frozen(kw_only=True)
class WebDeps:
    """The stores, clock, password hasher, session signer and sign-in throttle of the
    pages; ``base_url`` decides whether cookies are ``Secure`` (an https base);
    ``resolver`` and ``webhook_allow_hosts`` check webhook URLs as the API does; ``drive``
    gives the drive times a reschedule is checked with, as the API's."""

    uow: Callable[[], UnitOfWork]
    reader: Callable[[], UnitOfWork]
    clock: Clock
    hasher: PasswordHasher
    sessions: SessionCodec
    throttle: SignInThrottle
    base_url: str
    drive: DriveTime
    resolver: Resolver
    webhook_allow_hosts: frozenset[str] = frozenset()
    api: HttpDeps | None = None
    """The API's dependencies: the booking page prices, lists and books through the
    public endpoints' own pipeline (``adapters.http.public.call_public``)."""

    @property
    def secure_cookies(self) -> bool:
        """True when the service is reached over https: cookies then say ``Secure``."""
        return self.base_url.lower().startswith("https://")
