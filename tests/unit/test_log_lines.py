"""What a log line looks like (``entrypoints.logs``): one compact JSON object a line,
whatever the event carries."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
import structlog

from entrypoints.logs import json_processors


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    saved = structlog.get_config()
    sink = io.StringIO()
    structlog.configure(
        processors=json_processors(),
        logger_factory=structlog.PrintLoggerFactory(sink),
        cache_logger_on_first_use=False,
    )
    try:
        yield sink
    finally:
        structlog.configure(**saved)


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def test_a_line_is_compact_json_with_level_and_utc_time(lines: io.StringIO) -> None:
    structlog.get_logger("booking.http").info("request", request_id="req_1", status=200)
    (line,) = lines.getvalue().splitlines()
    assert line.startswith('{"request_id":"req_1","status":200,"event":"request"')
    parsed = json.loads(line)
    assert parsed["level"] == "info"
    assert parsed["timestamp"].endswith("Z")


def test_any_value_an_event_carries_is_written(lines: io.StringIO) -> None:
    log = structlog.get_logger("booking")
    log.warning("odd", name="Zoë", cents=2**70, thing=Opaque(), path="items[0].\ud800")
    log.error("boom", exc_info=ValueError("no"))
    written = lines.getvalue()
    assert written.isascii()  # whatever encoding the locale gives stderr
    odd, boom = (json.loads(line) for line in written.splitlines())
    assert odd["name"] == "Zoë"
    assert odd["cents"] == 2**70
    assert odd["thing"] == "<opaque>"
    assert odd["path"] == "items[0].\ud800"
    assert boom["exception"].strip() == "ValueError: no"
