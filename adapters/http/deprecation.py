"""Deprecations a caller can see: ``Deprecation`` (RFC 9745) and ``Sunset`` (RFC 8594)
headers on every reply that uses a deprecated form, success or refusal alike.

The dates are those of SPEC.md's change log (docs/changelog.md mirrors it)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from attrs import frozen


@frozen
class Deprecation:
    """A form deprecated at ``since`` that stops working at ``sunset``."""

    since: datetime
    sunset: datetime
    what: str

    def headers(self) -> dict[str, str]:
        """``Deprecation: @<unix seconds>`` and ``Sunset: <HTTP date>``."""
        return {
            "deprecation": f"@{int(self.since.timestamp())}",
            "sunset": format_datetime(self.sunset, usegmt=True),
        }


def names(body: Any, key: str) -> bool:
    """Whether a decoded JSON body is an object giving ``key`` a value (not null): how a
    form is told from a body whatever else is wrong with it, so that a refusal of its
    shape is announced too."""
    return isinstance(body, dict) and body.get(key) is not None


SERVICE_IDS = Deprecation(
    since=datetime(2026, 10, 13, tzinfo=UTC),
    sunset=datetime(2027, 1, 14, tzinfo=UTC),
    what="Crew records' serviceIds (use excludedServiceIds); removed after 2027-01-13.",
)

CONVERT_BY_BOOKING_ID = Deprecation(
    since=datetime(2026, 10, 13, tzinfo=UTC),
    sunset=datetime(2027, 1, 14, tzinfo=UTC),
    what="Convert with bookingId (send startIso instead); removed after 2027-01-13.",
)
