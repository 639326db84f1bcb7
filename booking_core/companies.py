"""Companies: the tenants. Each is reached only through its own API keys."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attrs import frozen

from booking_core.errors import ValidationFailed

# ``\Z``, not ``$``: ``$`` also matches before a trailing newline.
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
CODE_PREFIX_PATTERN = re.compile(r"^[A-Z]{2}\Z")
DOMAIN_PATTERN = re.compile(
    r"^(?=.{1,253}\Z)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\Z"
)


@frozen
class Company:
    """A company using the service (DECISIONS.md, Tenancy and ids)."""

    id: str
    slug: str
    name: str
    timezone: str
    code_prefix: str
    created_at: datetime
    tax_rate_bps: int = 0
    custom_domain: str | None = None
    self_service_cutoff_hours: int = 24
    min_notice_minutes: int = 120


def validate_company(company: Company) -> Company:
    """Return ``company`` if every field is valid, else ``ValidationFailed`` naming them all."""
    errors: dict[str, str] = {}
    if not 1 <= len(company.slug) <= 63 or not SLUG_PATTERN.match(company.slug):
        errors["slug"] = "Use 1 to 63 lowercase letters, digits and single hyphens."
    if not company.name.strip() or len(company.name) > 200:
        errors["name"] = "A name of 1 to 200 characters is required."
    try:
        ZoneInfo(company.timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: e.g. "America", a folder
        errors["timezone"] = f"Unknown IANA timezone {company.timezone!r}."
    if not CODE_PREFIX_PATTERN.match(company.code_prefix):
        errors["code_prefix"] = "Two capital letters, e.g. SC."
    if not 0 <= company.tax_rate_bps <= 10_000:
        errors["tax_rate_bps"] = "Between 0 and 10000 basis points."
    if company.custom_domain is not None and not DOMAIN_PATTERN.match(company.custom_domain):
        errors["custom_domain"] = "A lowercase host name such as book.example.com."
    if not 0 <= company.self_service_cutoff_hours <= 24 * 14:
        errors["self_service_cutoff_hours"] = "Between 0 and 336 hours."
    if not 0 <= company.min_notice_minutes <= 60 * 24 * 14:
        errors["min_notice_minutes"] = "Between 0 and 20160 minutes."
    if errors:
        raise ValidationFailed(errors)
    return company


def default_code_prefix(name: str) -> str:
    """Two capital letters from a company name: initials, else its first letters."""
    words = [w for w in re.split(r"[^A-Za-z]+", name) if w]
    letters = "".join(w[0] for w in words[:2]) if len(words) >= 2 else "".join(words)[:2]
    return (letters.upper() + "XX")[:2]
