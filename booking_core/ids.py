"""Opaque ids: a type prefix and 96 random bits, never sequential."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """A fresh random id such as ``quo_3kTq...``; ``prefix`` names the record type."""
    return f"{prefix}_{secrets.token_hex(12)}"


def new_token() -> str:
    """A 256-bit random URL-safe token for public links (treat it as a secret)."""
    return secrets.token_urlsafe(32)
