"""Wiring: one place that builds the adapters the entrypoints hand to use cases."""

from __future__ import annotations

from pathlib import Path

from attrs import define, field

from adapters.drivetime import OsrmDriveTime, ZipCentroidDriveTime
from adapters.notifications import JinjaComposer, LogMailer, SmtpMailer, parse_smtp_url
from adapters.passwords import Argon2Hasher
from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.system import SystemClock
from adapters.webhooks.resolver import SystemResolver
from booking_core.ports import (
    Clock,
    Composer,
    DriveTime,
    Mailer,
    PasswordHasher,
    PhoneNormalizer,
    Resolver,
    UnitOfWork,
)
from entrypoints.settings import ConfigError, Settings


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
    composer: Composer = field(factory=JinjaComposer)
    """Renders emails from their templates (``BOOKING_MAIL_TEMPLATES`` overrides)."""
    mailer: Mailer = field(factory=LogMailer)
    """Sends emails: SMTP with ``BOOKING_SMTP_URL``, else the log."""

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


def mailer(settings: Settings) -> Mailer:
    """SMTP when ``BOOKING_SMTP_URL`` is set, else the log mailer (development)."""
    if settings.smtp_url:
        return SmtpMailer(parse_smtp_url(settings.smtp_url))
    return LogMailer()


def composer(settings: Settings) -> Composer:
    """The default templates, under the companies' own ones when a folder is set."""
    folder = settings.mail_templates
    return JinjaComposer(Path(folder) if folder else None)


def bootstrap(settings: Settings | None = None, *, resolver: Resolver | None = None) -> Container:
    """Build the container from ``settings`` (default: the environment); ``resolver``
    (default: the system's) decides what webhook URLs resolve to."""
    settings = settings or Settings.from_env()
    try:
        database = Database.from_url(settings.database_url, schema=settings.database_schema)
    except ValueError as refused:  # a URL scheme or a schema name the service cannot use
        name = "BOOKING_DATABASE_SCHEMA" if "schema" in str(refused) else "BOOKING_DATABASE_URL"
        raise ConfigError(f"{name}: {refused}") from None
    return Container(
        settings=settings,
        database=database,
        clock=SystemClock(),
        phones=PhonenumbersNormalizer(),
        drive=drive_time(settings),
        resolver=resolver or SystemResolver(),
        composer=composer(settings),
        mailer=mailer(settings),
    )
