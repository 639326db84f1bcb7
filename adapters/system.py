"""Adapters to the running system: the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """``Clock`` reading the system's UTC time."""

    def now(self) -> datetime:
        """The current instant, in UTC."""
        return datetime.now(UTC)
