"""API keys: scopes, rate limits, and secrets that are shown once and stored hashed.

A key reads ``bsk_`` + 40 random base62 characters + a 6-character base62 CRC32
checksum of them, so secret scanners can recognise a key and reject typos without a
database. Storage keeps the SHA-256 hash of the whole key and a non-secret prefix
(``bsk_`` and the first 8 random characters) by which it is looked up.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
import string
import zlib
from collections.abc import Iterable
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters

SCOPES: tuple[str, ...] = (
    "catalog:read",
    "bookings:read",
    "bookings:write",
    "customers:read",
    "customers:write",
    "leads:read",
    "leads:write",
    "quotes:read",
    "quotes:write",
    "payments:read",
    "payments:write",
    "crews:read",
    "webhooks:manage",
)
"""Every permission a key can carry (SPEC.md section 2, API key)."""

DEFAULT_SCOPES = frozenset({"catalog:read", "bookings:read", "customers:read"})
DEFAULT_RATE_LIMIT = 120
MIN_RATE_LIMIT = 10
MAX_RATE_LIMIT = 6_000
NO_SCOPES_MESSAGE = (
    "Tick at least one permission — a key with none is refused on every request. "
    "To disable a key, revoke it."
)
"""SPEC.md section 5, item 6, verbatim."""

KEY_PREFIX = "bsk_"
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_RANDOM_LENGTH = 40
_CHECKSUM_LENGTH = 6
_LOOKUP_LENGTH = len(KEY_PREFIX) + 8


class KeyStatus(enum.StrEnum):
    """Whether a key is accepted."""

    ACTIVE = "active"
    REVOKED = "revoked"


@frozen
class ApiKey:
    """A stored key: never the secret itself, only its hash and lookup prefix."""

    id: str
    company_id: str
    name: str
    scopes: frozenset[str]
    rate_limit_per_minute: int
    lookup_prefix: str
    secret_hash: str
    status: KeyStatus
    created_at: datetime
    updated_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        """True unless revoked."""
        return self.status is KeyStatus.ACTIVE

    def allows(self, scope: str) -> bool:
        """True when the key carries ``scope``."""
        return scope in self.scopes


@frozen
class IssuedKey:
    """A key as created or rotated: the only moment the full secret exists."""

    key: ApiKey
    secret: str


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), _CHECKSUM_LENGTH)


def generate_secret() -> str:
    """A fresh key secret with prefix and checksum."""
    body = "".join(secrets.choice(_BASE62) for _ in range(_RANDOM_LENGTH))
    return f"{KEY_PREFIX}{body}{_checksum(body)}"


def well_formed(secret: str) -> bool:
    """True when ``secret`` has the key shape and a matching checksum (no storage needed)."""
    expected_length = len(KEY_PREFIX) + _RANDOM_LENGTH + _CHECKSUM_LENGTH
    if len(secret) != expected_length or not secret.startswith(KEY_PREFIX):
        return False
    body = secret[len(KEY_PREFIX) : len(KEY_PREFIX) + _RANDOM_LENGTH]
    # The checksum part too: compare_digest raises on non-ASCII text, and callers pass
    # whatever a request header carried.
    if any(c not in _BASE62 for c in secret[len(KEY_PREFIX) :]):
        return False
    return hmac.compare_digest(secret[-_CHECKSUM_LENGTH:], _checksum(body))


def hash_secret(secret: str) -> str:
    """The SHA-256 hex digest stored for a key."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def lookup_prefix(secret: str) -> str:
    """The non-secret part of a key by which storage finds it."""
    return secret[:_LOOKUP_LENGTH]


def matches(key: ApiKey, secret: str) -> bool:
    """Constant-time check that ``secret`` is this key's secret."""
    return hmac.compare_digest(key.secret_hash, hash_secret(secret))


MAX_KEY_NAME = 200
"""A key's name: one line naming the tool that will use it."""


def validate_key_settings(
    name: str | None, scopes: Iterable[str] | None, rate_limit: int | None
) -> dict[str, str]:
    """Field errors for a key's name, scopes and rate limit (None means not being set)."""
    errors: dict[str, str] = {}
    if name is not None and not name.strip():
        errors["name"] = "A name is required: the tool that will use this key (at most 200)."
    elif name is not None and len(name) > MAX_KEY_NAME:
        errors["name"] = f"At most {MAX_KEY_NAME} characters ({len(name)} given)."
    elif name is not None and has_hidden_characters(name):
        errors["name"] = NOT_ONE_LINE
    if scopes is not None:
        chosen = set(scopes)
        unknown = sorted(chosen - set(SCOPES))
        if unknown:
            errors["scopes"] = f"Unknown scope(s): {', '.join(unknown)}."
        elif not chosen:
            errors["scopes"] = NO_SCOPES_MESSAGE
    if rate_limit is not None and not MIN_RATE_LIMIT <= rate_limit <= MAX_RATE_LIMIT:
        errors["rate_limit"] = f"{MIN_RATE_LIMIT} to {MAX_RATE_LIMIT:,} requests per minute."
    return errors


def _refuse(errors: dict[str, str]) -> None:
    if errors:
        message = errors["scopes"] if list(errors) == ["scopes"] else None
        raise ValidationFailed(errors, message)


def issue_key(
    *,
    key_id: str,
    company_id: str,
    name: str,
    at: datetime,
    scopes: Iterable[str] | None = None,
    rate_limit: int | None = None,
) -> IssuedKey:
    """Create a key (defaults: SPEC.md's three read scopes, 120 per minute)."""
    chosen = frozenset(DEFAULT_SCOPES if scopes is None else scopes)
    limit = DEFAULT_RATE_LIMIT if rate_limit is None else rate_limit
    _refuse(validate_key_settings(name, chosen, limit))
    secret = generate_secret()
    key = ApiKey(
        id=key_id,
        company_id=company_id,
        name=name.strip(),
        scopes=chosen,
        rate_limit_per_minute=limit,
        lookup_prefix=lookup_prefix(secret),
        secret_hash=hash_secret(secret),
        status=KeyStatus.ACTIVE,
        created_at=at,
        updated_at=at,
    )
    return IssuedKey(key, secret)


def _require_active(key: ApiKey, action: str) -> None:
    if not key.active:
        raise InvalidTransition("API key", key.id, key.status, action, "the key is revoked.")


def edit_key(
    key: ApiKey,
    *,
    at: datetime,
    scopes: Iterable[str] | None = None,
    rate_limit: int | None = None,
) -> ApiKey:
    """Change an active key's scopes and/or rate limit; a revoked key cannot be edited."""
    _require_active(key, "edit")
    chosen = None if scopes is None else frozenset(scopes)
    _refuse(validate_key_settings(None, chosen, rate_limit))
    return attrs.evolve(
        key,
        scopes=key.scopes if chosen is None else chosen,
        rate_limit_per_minute=key.rate_limit_per_minute if rate_limit is None else rate_limit,
        updated_at=at,
    )


def rotate_key(key: ApiKey, *, at: datetime) -> IssuedKey:
    """Replace an active key's secret; the old secret stops working at once."""
    _require_active(key, "rotate")
    secret = generate_secret()
    rotated = attrs.evolve(
        key, lookup_prefix=lookup_prefix(secret), secret_hash=hash_secret(secret), updated_at=at
    )
    return IssuedKey(rotated, secret)


def revoke_key(key: ApiKey, *, at: datetime) -> ApiKey:
    """Revoke a key for good; revoking a revoked key changes nothing."""
    if not key.active:
        return key
    return attrs.evolve(key, status=KeyStatus.REVOKED, revoked_at=at, updated_at=at)
