"""Companies: the tenants. Each is reached only through its own API keys."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attrs import frozen

from booking_core.customers import is_email_address
from booking_core.errors import ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters

# ``\Z``, not ``$``: ``$`` also matches before a trailing newline.
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
RESERVED_SLUGS = frozenset(
    {
        "account",
        "admin",
        "api",
        "assets",
        "crew",
        "docs",
        "healthz",
        "q",
        "readyz",
        "sign-in",
        "sign-out",
        "sign-out-everywhere",
    }
)
"""The first segments of the service's own addresses (``/admin``, ``/api``, ``/q/{token}``
on a company's own domain, ...): a company under one of them would have its pages
(``/{slug}/book``) shadowed, so no slug may be one."""
CODE_PREFIX_PATTERN = re.compile(r"^[A-Z]{2}\Z")
DOMAIN_PATTERN = re.compile(
    r"^(?=.{1,253}\Z)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\Z"
)
BRAND_COLOR_PATTERN = re.compile(r"^#[0-9a-f]{6}\Z")
MIN_CONTRAST = 4.5
"""WCAG 2 AA for normal text: the least contrast white text on the brand colour needs."""
TOO_LIGHT = "Too light for white text; pick a darker colour."
DOMAIN_TAKEN = "Another company has connected this domain."
MAX_CUTOFF_HOURS = 24 * 14
"""The longest self-service cutoff: two weeks."""
MAX_NOTICE_MINUTES = 60 * 24 * 14
"""The longest minimum notice: two weeks."""
MAX_REMINDER_HOURS = 24 * 14
"""The earliest a reminder goes before a visit: two weeks."""
MAX_REFERRAL_DISCOUNT_CENTS = 100_000_000
"""One million dollars: the ceiling of the referral discount, as of every catalog amount
(``catalog_rules.MAX_CENTS``)."""


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
    brand_color: str | None = None
    """The customer pages' main colour, ``#rrggbb`` lower-case; None: the default."""
    notify_email: str | None = None
    """The company's own address: the reply-to of its emails to customers, and where
    staff notices go; None: emails carry no reply-to."""
    reminder_hours: int = 24
    """How many hours before each visit its customer is reminded; 0: no reminders."""
    referral_discount_cents: int = 0
    """What a referral code takes off a new customer's first visit; 0: the referral
    programme is off (a code is refused)."""


NOT_PLACES = frozenset({"localtime", "Factory", "posixrules"})
"""Files of a zoneinfo folder that load as zones but name no place: ``localtime`` is the
host's own clock (a link to ``/etc/localtime``, absent on other hosts), ``Factory`` a
placeholder of no offset, ``posixrules`` a default rule. A company names a place."""


def validate_company(company: Company) -> Company:
    """Return ``company`` if every field is valid, else ``ValidationFailed`` naming them all."""
    errors: dict[str, str] = {}
    if not 1 <= len(company.slug) <= 63 or not SLUG_PATTERN.match(company.slug):
        errors["slug"] = "Use 1 to 63 lowercase letters, digits and single hyphens."
    elif company.slug in RESERVED_SLUGS:
        errors["slug"] = f"{company.slug!r} is one of the service's own addresses; choose another."
    if not company.name.strip() or len(company.name) > 200:
        errors["name"] = "A name of 1 to 200 characters is required."
    elif has_hidden_characters(company.name):  # shown on every page and in every email
        errors["name"] = NOT_ONE_LINE
    try:
        ZoneInfo(company.timezone)
        if company.timezone in NOT_PLACES or company.timezone.startswith(("posix/", "right/")):
            raise ValueError(company.timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: e.g. "America", a folder
        errors["timezone"] = f"Unknown IANA timezone {company.timezone!r}."
    if not CODE_PREFIX_PATTERN.match(company.code_prefix):
        errors["code_prefix"] = "Two capital letters, e.g. SC."
    if not 0 <= company.tax_rate_bps <= 10_000:
        errors["tax_rate_bps"] = "Between 0 and 10000 basis points."
    if company.custom_domain is not None and not DOMAIN_PATTERN.match(company.custom_domain):
        errors["custom_domain"] = "A lowercase host name such as book.example.com."
    if not 0 <= company.self_service_cutoff_hours <= MAX_CUTOFF_HOURS:
        errors["self_service_cutoff_hours"] = f"Between 0 and {MAX_CUTOFF_HOURS} hours."
    if not 0 <= company.min_notice_minutes <= MAX_NOTICE_MINUTES:
        errors["min_notice_minutes"] = f"Between 0 and {MAX_NOTICE_MINUTES} minutes."
    # One plain address, no display name, no line break: it goes into a header.
    if company.notify_email is not None and not is_email_address(company.notify_email):
        errors["notify_email"] = "An email address such as office@example.com."
    if not 0 <= company.reminder_hours <= MAX_REMINDER_HOURS:
        errors["reminder_hours"] = f"Between 0 and {MAX_REMINDER_HOURS} hours."
    if not 0 <= company.referral_discount_cents <= MAX_REFERRAL_DISCOUNT_CENTS:
        errors["referral_discount_cents"] = (
            f"A whole number of cents from 0 to {MAX_REFERRAL_DISCOUNT_CENTS}."
        )
    if company.brand_color is not None:
        problem = brand_color_problem(company.brand_color)
        if problem:
            errors["brand_color"] = problem
    if errors:
        raise ValidationFailed(errors)
    return company


def _linear(channel: int) -> float:
    """An sRGB channel (0 to 255) as linear light (WCAG 2's formula)."""
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of ``#rrggbb``: 0 for black, 1 for white."""
    r, g, b = (_linear(int(color[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_with_white(color: str) -> float:
    """The WCAG 2 contrast ratio of white text on ``#rrggbb``, from 1 to 21."""
    return 1.05 / (relative_luminance(color) + 0.05)


def brand_color_problem(color: str) -> str | None:
    """Why ``color`` cannot be a brand colour, or None: a ``#rrggbb`` lower-case hex on
    which white text has a contrast of at least ``MIN_CONTRAST``."""
    if not BRAND_COLOR_PATTERN.match(color):
        return "A colour as #rrggbb, e.g. #1d4ed8."
    if contrast_with_white(color) < MIN_CONTRAST:
        return TOO_LIGHT
    return None


def normalize_brand_color(raw: str | None) -> str | None:
    """A typed colour as stored: stripped, lower-case, ``#`` added; blank is None."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip().lower()
    return text if text.startswith("#") else f"#{text}"


def darker(color: str, factor: float = 0.85) -> str:
    """``#rrggbb`` with each channel scaled by ``factor`` (a hover shade)."""
    channels = (round(int(color[i : i + 2], 16) * factor) for i in (1, 3, 5))
    return "#" + "".join(f"{c:02x}" for c in channels)


def mixed(color: str, other: str, weight: float) -> str:
    """``#rrggbb``: ``weight`` of ``color`` and the rest of ``other`` (a soft tint of a
    brand colour over a page's background)."""
    channels = (
        round(int(color[i : i + 2], 16) * weight + int(other[i : i + 2], 16) * (1 - weight))
        for i in (1, 3, 5)
    )
    return "#" + "".join(f"{c:02x}" for c in channels)


def default_code_prefix(name: str) -> str:
    """Two capital letters from a company name: initials, else its first letters; a
    letter with an accent counts as the letter (``Ébène Ménage`` is ``EM``)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    words = [w for w in re.split(r"[^A-Za-z]+", plain) if w]
    letters = "".join(w[0] for w in words[:2]) if len(words) >= 2 else "".join(words)[:2]
    return (letters.upper() + "XX")[:2]
