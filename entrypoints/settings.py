"""Configuration from environment variables (names documented in README and docs/cli.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from attrs import frozen

DEFAULT_DATABASE_FILE = "booking.sqlite3"


@frozen
class Settings:
    """Everything the entrypoints read from the environment."""

    database_url: str
    redis_url: str | None
    base_url: str
    database_schema: str | None = None
    osrm_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """``BOOKING_DATABASE_URL`` (default: an SQLite file ``booking.sqlite3`` in the
        working directory), ``BOOKING_REDIS_URL`` (optional), ``BOOKING_BASE_URL``."""
        env = os.environ if env is None else env
        default_db = f"sqlite:///{Path.cwd() / DEFAULT_DATABASE_FILE}"
        return cls(
            database_url=env.get("BOOKING_DATABASE_URL") or default_db,
            redis_url=env.get("BOOKING_REDIS_URL") or None,
            base_url=(env.get("BOOKING_BASE_URL") or "http://127.0.0.1:8000").rstrip("/"),
            database_schema=env.get("BOOKING_DATABASE_SCHEMA") or None,
            osrm_url=env.get("BOOKING_OSRM_URL") or None,
        )
