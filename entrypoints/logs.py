"""structlog configured for compact JSON lines on stderr (one per request, with its request
id)."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import structlog

from adapters.jsontext import compact


def json_processors() -> list[structlog.typing.Processor]:
    """How a line is rendered: one compact JSON object with the context, level, ISO time
    (UTC) and a plain traceback when there is one."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        structlog.processors.JSONRenderer(serializer=_line),
    ]


def _line(event: object, **options: Any) -> str:
    """The event as compact JSON, written by orjson (``adapters.jsontext.compact``): the
    standard library's renderer cost a request about a third of its log line.

    A line stays ASCII, as the standard library wrote it, whatever the locale's encoding
    of stderr: one that holds other characters (a customer's name in a logged email) is
    written again with them escaped."""
    default = options.get("default")
    line = compact(event, default=default).decode()
    if line.isascii():
        return line
    return json.dumps(event, separators=(",", ":"), default=default)


def configure_logging(level: str | None = None) -> None:
    """JSON logs at ``BOOKING_LOG_LEVEL`` (default INFO)."""
    name = (level or os.environ.get("BOOKING_LOG_LEVEL") or "INFO").strip().upper()
    numeric = logging.getLevelNamesMapping().get(name, logging.INFO)
    structlog.configure(
        processors=json_processors(),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
