"""Wiring: one place that builds the adapters the entrypoints hand to use cases."""

from __future__ import annotations

from attrs import define, field

from adapters.drivetime import OsrmDriveTime, ZipCentroidDriveTime
from adapters.passwords import Argon2Hasher
from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.system import SystemClock
from adapters.webhooks.resolver import SystemResolver
from booking_core.ports import (
    Clock,
    DriveTime,
    PasswordHasher,
    PhoneNormalizer,
    Resolver,
    UnitOfWork,
)
from entrypoints.settings import Settings


@define
class Container:
    """The wired adapters of one process."""

    settings: Settings
    database: Database
    clock: Clock
    phones: PhoneNormalizer
    drive: DriveTime
    resolver: Resolver = field(factory=SystemResolver)
    """What webhook URLs resolve to (the URL policy, on register, update and delivery)."""
    hasher: PasswordHasher = field(factory=Argon2Hasher)
    """Makes and checks users' password hashes (argon2id)."""

    @property
    def webhook_allow_hosts(self) -> frozenset[str]:
        """Hosts exempt from the webhook URL policy (``BOOKING_WEBHOOK_ALLOW_HOSTS``)."""
        return self.settings.webhook_allow_hosts

    def uow(self) -> UnitOfWork:
        """A fresh unit of work on the configured database."""
        return self.database.uow()

    def reader(self) -> UnitOfWork:
        """A read-only unit of work (no write lock on SQLite)."""
        return self.database.reader()

    def close(self) -> None:
        """Release pooled connections."""
        self.database.dispose()


def drive_time(settings: Settings) -> DriveTime:
    """OSRM's table service when ``BOOKING_OSRM_URL`` is set, else zip-centroid estimates."""
    if settings.osrm_url:
        return OsrmDriveTime(settings.osrm_url)
    return ZipCentroidDriveTime()


def bootstrap(settings: Settings | None = None, *, resolver: Resolver | None = None) -> Container:
    """Build the container from ``settings`` (default: the environment); ``resolver``
    (default: the system's) decides what webhook URLs resolve to."""
    settings = settings or Settings.from_env()
    return Container(
        settings=settings,
        database=Database.from_url(settings.database_url, schema=settings.database_schema),
        clock=SystemClock(),
        phones=PhonenumbersNormalizer(),
        drive=drive_time(settings),
        resolver=resolver or SystemResolver(),
    )
