"""Clocks that need no I/O: a fixed one for tests and embedding, and the helpers the
core uses to refuse naive instants."""

from __future__ import annotations

from datetime import datetime, timedelta

import attrs


def require_aware(value: datetime, name: str = "time") -> datetime:
    """Return ``value`` unchanged if it carries an offset, else raise ``ValueError``."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must carry a UTC offset")
    return value


@attrs.define
class FixedClock:
    """A clock that says what it is told; ``advance`` moves it forward."""

    current: datetime = attrs.field(validator=lambda _, __, v: require_aware(v))

    def now(self) -> datetime:
        """The instant this clock is set to."""
        return self.current

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward by ``delta``."""
        self.current = self.current + delta


def zone_abbreviation(local: datetime) -> str:
    """What people read beside a clock time of ``local``'s zone at that instant: its
    abbreviation (``EST``, ``CEST``), or, for a zone the tz database writes by its offset
    alone (``-03``, ``+0545``), that offset after ``UTC`` (``UTC-03``), so that it never
    reads as a minus sign. Pages and emails write zones through this one function."""
    name = local.tzname() or ""
    return f"UTC{name}" if name[:1] in "+-" else name
