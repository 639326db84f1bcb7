"""``WebDeps``: what the pages need from the wiring, one typed value every page gets."""

from __future__ import annotations

from collections.abc import Callable

from attrs import Factory, frozen

from adapters.http.deps import HttpDeps
from adapters.phone import PhonenumbersNormalizer
from adapters.web.sessions import SessionCodec
from adapters.web.throttle import (
    PORTAL_NAMESPACE,
    PORTAL_PER_ADDRESS,
    PORTAL_PER_EMAIL,
    SignInThrottle,
)
from booking_core.ports import (
    Clock,
    Composer,
    DriveTime,
    PasswordHasher,
    PhoneNormalizer,
    Resolver,
    UnitOfWork,
)


def new_portal_throttle(storage_uri: str = "memory://") -> SignInThrottle:
    """The throttle of the customer portal's sign-in link requests (every request counts)."""
    return SignInThrottle(
        storage_uri,
        namespace=PORTAL_NAMESPACE,
        per_email=PORTAL_PER_EMAIL,
        per_address=PORTAL_PER_ADDRESS,
    )


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
    portal_throttle: SignInThrottle = Factory(new_portal_throttle)
    """Counts the customer portal's sign-in link requests per email and client address."""
    composer: Composer | None = None
    """Writes the customer portal's sign-in email (None: the portal mails no links)."""
    phones: PhoneNormalizer = Factory(PhonenumbersNormalizer)
    """Reads the phone a customer types in the portal, as the API does."""

    @property
    def secure_cookies(self) -> bool:
        """True when the service is reached over https: cookies then say ``Secure``."""
        return self.base_url.lower().startswith("https://")
