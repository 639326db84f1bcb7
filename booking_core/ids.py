"""Opaque ids: a type prefix and 96 random bits, never sequential; short random codes in
Crockford's base32."""

from __future__ import annotations

import random
import secrets

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32 alphabet: digits and capitals without I, L, O and U."""
_SYSTEM_RANDOM = random.SystemRandom()


def new_id(prefix: str) -> str:
    """A fresh random id such as ``quo_3kTq...``; ``prefix`` names the record type."""
    return f"{prefix}_{secrets.token_hex(12)}"


def new_token() -> str:
    """A 256-bit random URL-safe token for public links (treat it as a secret)."""
    return secrets.token_urlsafe(32)


def crockford_code(length: int, rng: random.Random | None = None) -> str:
    """``length`` random Crockford characters; ``rng`` defaults to the operating system's
    randomness (a booking's human code, a customer's referral code)."""
    chooser = rng or _SYSTEM_RANDOM
    return "".join(chooser.choice(CROCKFORD) for _ in range(length))
