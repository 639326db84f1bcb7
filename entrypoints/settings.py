"""Configuration from environment variables (names documented in README and docs/cli.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from attrs import field, frozen

from adapters.notifications.smtp import SmtpUrlError, parse_smtp_url
from booking_core.webhooks import allowed_hosts

DEFAULT_DATABASE_FILE = "booking.sqlite3"


DEFAULT_MAIL_FROM = "bookings@localhost"
MAIL_FROM_PATTERN = re.compile(r"^[^@\s<>,;\"]{1,64}@[^@\s<>,;\"]{1,253}\Z")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_REQUEST_THREADS = 4
MAX_REQUEST_THREADS = 64
# A server bound to every interface is reached, from this machine, on loopback.
WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1"}


class ConfigError(ValueError):
    """An environment variable holds a value the service cannot use."""


def local_url(host: str, port: int) -> str:
    """The address a person on this machine opens to reach a server on ``host:port``."""
    host = WILDCARD_HOSTS.get(host, host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _port(text: str | None) -> int:
    return _bounded("BOOKING_PORT", text, DEFAULT_PORT, 65535, "a port number")


def _bounded(name: str, text: str | None, default: int, high: int, kind: str) -> int:
    """The whole number from 1 to ``high`` that ``name`` holds; ``default`` when unset."""
    if text is None or not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= high:
        raise ConfigError(f"{name} must be {kind} from 1 to {high}, not {text!r}")
    return value


@frozen
class Settings:
    """Everything the entrypoints read from the environment."""

    database_url: str
    redis_url: str | None
    base_url: str
    database_schema: str | None = None
    osrm_url: str | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    stripe_webhook_secret: str | None = field(default=None, repr=False)  # a secret: never shown
    webhook_allow_hosts: frozenset[str] = frozenset()
    """Hosts exempt from the webhook URL policy (https, public addresses): development
    and tests only."""
    session_secret: str | None = field(default=None, repr=False)  # a secret: never shown
    """Signs the pages' session cookies (``BOOKING_SESSION_SECRET``); None: the one kept
    in the database (``entrypoints.web.session_secret``)."""
    smtp_url: str | None = field(default=None, repr=False)  # may hold a password
    """Where email goes (``BOOKING_SMTP_URL``, docs/notifications.md); None: the log."""
    mail_from: str = DEFAULT_MAIL_FROM
    """The address emails are sent from (``BOOKING_MAIL_FROM``), under each company's name."""
    mail_templates: str | None = None
    """A folder of companies' own email templates (``BOOKING_MAIL_TEMPLATES``)."""
    request_threads: int = DEFAULT_REQUEST_THREADS
    """How many API requests of one server process do their database work at once
    (``BOOKING_REQUEST_THREADS``; ``adapters.http.deps.HttpDeps.request_threads``)."""
    log_level: str = "INFO"
    """How much is logged (``BOOKING_LOG_LEVEL``: DEBUG, INFO, WARNING, ERROR or
    CRITICAL; ``entrypoints.logs.configure_logging`` reads it)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """``BOOKING_DATABASE_URL`` (default: an SQLite file ``booking.sqlite3`` in the
        working directory), ``BOOKING_REDIS_URL`` (optional), ``BOOKING_HOST`` and
        ``BOOKING_PORT`` (where ``booking serve`` listens: 127.0.0.1 and 8000),
        ``BOOKING_BASE_URL`` (default: the local address of that host and port),
        ``BOOKING_STRIPE_WEBHOOK_SECRET`` (the signing secret of the Stripe Connect webhook
        endpoint; without it ``POST /api/processor/stripe`` answers 503), and
        ``BOOKING_WEBHOOK_ALLOW_HOSTS`` (comma-separated host names or addresses exempt
        from the webhook URL policy's https and public-address rules; empty by default,
        never set in production), and ``BOOKING_SESSION_SECRET`` (signs the session
        cookies of the pages; without it each run of ``booking serve`` makes one),
        ``BOOKING_SMTP_URL`` (where email goes; without it, the log),
        ``BOOKING_MAIL_FROM`` (the sender address; ``bookings@localhost`` by default) and
        ``BOOKING_MAIL_TEMPLATES`` (a folder of companies' own email templates)."""
        env = os.environ if env is None else env
        default_db = f"sqlite:///{Path.cwd() / DEFAULT_DATABASE_FILE}"
        host = env.get("BOOKING_HOST") or DEFAULT_HOST
        port = _port(env.get("BOOKING_PORT"))
        return cls(
            database_url=env.get("BOOKING_DATABASE_URL") or default_db,
            redis_url=_redis_url(env.get("BOOKING_REDIS_URL")),
            base_url=_base_url(env.get("BOOKING_BASE_URL")) or local_url(host, port),
            database_schema=env.get("BOOKING_DATABASE_SCHEMA") or None,
            osrm_url=env.get("BOOKING_OSRM_URL") or None,
            host=host,
            port=port,
            stripe_webhook_secret=env.get("BOOKING_STRIPE_WEBHOOK_SECRET") or None,
            webhook_allow_hosts=allowed_hosts(env.get("BOOKING_WEBHOOK_ALLOW_HOSTS") or ""),
            session_secret=_session_secret(env.get("BOOKING_SESSION_SECRET")),
            smtp_url=_smtp_url(env.get("BOOKING_SMTP_URL")),
            mail_from=_mail_from(env.get("BOOKING_MAIL_FROM")),
            mail_templates=_mail_templates(env.get("BOOKING_MAIL_TEMPLATES")),
            request_threads=_request_threads(env.get("BOOKING_REQUEST_THREADS")),
            log_level=_log_level(env.get("BOOKING_LOG_LEVEL")),
        )


MIN_SESSION_SECRET = 32
"""Characters a ``BOOKING_SESSION_SECRET`` has at least: it signs the session cookies."""
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


REDIS_SCHEMES = ("redis://", "rediss://", "redis+unix://", "redis+sentinel://", "redis+cluster://")
"""The Redis URL forms the rate limits' store (``limits``) reads."""


def _redis_url(text: str | None) -> str | None:
    """``BOOKING_REDIS_URL``, checked for a scheme Redis reads (a typo, ``foo://``, failed
    later as "unknown storage scheme" without naming the setting)."""
    if text is None or not text.strip():
        return None
    url = text.strip()
    if not url.lower().startswith(REDIS_SCHEMES):
        raise ConfigError(
            f"BOOKING_REDIS_URL must start with {', '.join(REDIS_SCHEMES)}, e.g."
            f" redis://127.0.0.1:6379/0, not {url[:60]!r}"
        )
    return url


def _base_url(text: str | None) -> str | None:
    """The public address every link is built on, checked: http or https, a host, no
    query or fragment (a link made on anything else would not open)."""
    if text is None or not text.strip():
        return None
    url = text.strip().rstrip("/")
    refused = ConfigError(
        "BOOKING_BASE_URL must be an http or https address such as"
        f" https://book.example.com (no query, fragment or user), not {text!r}"
    )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (read for its check: a port that is no port is refused)
    except ValueError:  # a bracket left open, a port out of range or not a number
        raise refused from None
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or "?" in url
        or "#" in url
        or "@" in parts.netloc
        or any(c.isspace() or ord(c) < 32 for c in url)
    ):
        raise refused
    return url


def _session_secret(text: str | None) -> str | None:
    if text is None or not text:
        return None
    if len(text.strip()) < MIN_SESSION_SECRET:
        raise ConfigError(
            f"BOOKING_SESSION_SECRET must be at least {MIN_SESSION_SECRET} random characters"
            f" (it signs the session cookies), not {len(text.strip())};"
            " make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return text


def _mail_templates(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    if not Path(text.strip()).is_dir():
        raise ConfigError(f"BOOKING_MAIL_TEMPLATES must name a folder; {text!r} is not one")
    return text.strip()


def _log_level(text: str | None) -> str:
    if text is None or not text.strip():
        return "INFO"
    if text.strip().upper() not in LOG_LEVELS:
        raise ConfigError(f"BOOKING_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {text!r}")
    return text.strip().upper()


def _request_threads(text: str | None) -> int:
    return _bounded(
        "BOOKING_REQUEST_THREADS",
        text,
        DEFAULT_REQUEST_THREADS,
        MAX_REQUEST_THREADS,
        "a whole number",
    )


def _smtp_url(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    try:
        parse_smtp_url(text)
    except SmtpUrlError as error:
        raise ConfigError(str(error)) from None
    return text.strip()


def _mail_from(text: str | None) -> str:
    if text is None or not text.strip():
        return DEFAULT_MAIL_FROM
    if not MAIL_FROM_PATTERN.match(text.strip()):
        raise ConfigError(
            f"BOOKING_MAIL_FROM must be one plain address such as bookings@example.com,"
            f" not {text!r}"
        )
    return text.strip()
