"""Pagination cursors: a position's sequence number goes into the signed cursor and comes
back, and a cursor made before positions had one still reads as it did."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import string
from datetime import UTC, datetime

import pytest

from adapters.http.cursors import CursorCodec
from booking_core.errors import ValidationFailed
from booking_core.paging import Position

SECRET = b"a cursor secret of this test only"
AT = datetime(2026, 11, 23, 9, 30, 0, 123456, tzinfo=UTC)


def _signed(fields: dict[str, object]) -> str:
    """A cursor signed as the codec signs, around any payload."""
    payload = json.dumps(fields, separators=(",", ":")).encode()
    signature = hmac.new(SECRET, payload, hashlib.sha256).digest()[:16]
    return ".".join(
        base64.urlsafe_b64encode(part).rstrip(b"=").decode() for part in (payload, signature)
    )


def test_a_position_comes_back_from_its_cursor_with_its_sequence_or_without():
    codec = CursorCodec(SECRET)
    for position in (Position(AT, "cus_1", 7411), Position(AT, "cus_1"), Position(AT, "c", 0)):
        assert codec.decode(codec.encode(position, "scope"), "scope") == position


def test_a_cursor_made_before_positions_had_a_sequence_still_reads():
    old = _signed({"t": AT.isoformat(), "i": "cus_1", "s": "scope"})
    assert CursorCodec(SECRET).decode(old, "scope") == Position(AT, "cus_1")


@pytest.mark.parametrize("seq", ["7411", 1.5, True, [1]])
def test_a_sequence_that_is_not_a_whole_number_is_not_a_cursor(seq: object):
    bad = _signed({"t": AT.isoformat(), "i": "cus_1", "q": seq, "s": "scope"})
    with pytest.raises(ValidationFailed):
        CursorCodec(SECRET).decode(bad, "scope")


URLSAFE = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def _lenient(part: str) -> bytes:
    """How the codec once read a part: padding added, ``+/`` and spare bits passed over."""
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _spare_bit_spellings(part: str) -> list[str]:
    """``part`` with its last character changed only in bits that carry no data."""
    spare = {2: 4, 3: 2}.get(len(part) % 4, 0)
    last = URLSAFE.index(part[-1])
    return [part[:-1] + URLSAFE[i] for i in range(64) if i >> spare == last >> spare and i != last]


def test_the_same_signed_bytes_spelled_another_way_are_not_a_cursor():
    """Padding, ``+/`` for ``-_``, or spare bits set: an altered cursor is refused, not
    read as the page it came from."""
    codec = CursorCodec(SECRET)
    # A position whose cursor holds both - and _, so that swapping them changes it.
    cursor = next(
        text
        for n in range(10_000)
        if {"-", "_"} <= set(text := codec.encode(Position(AT, f"cus_{n}"), "scope"))
    )
    body, signature = cursor.split(".")
    spellings = [
        cursor + "==",
        f"{body}.{signature}====",
        cursor.translate(str.maketrans("-_", "+/")),
        *(f"{body}.{other}" for other in _spare_bit_spellings(signature)),
        *(f"{other}.{signature}" for other in _spare_bit_spellings(body)),
    ]
    assert len(set(spellings)) == len(spellings) > 16
    for other in spellings:
        assert other != cursor
        assert [_lenient(part) for part in other.split(".")] == [
            _lenient(body),
            _lenient(signature),
        ]
        with pytest.raises(ValidationFailed):
            codec.decode(other, "scope")
    assert codec.decode(cursor, "scope").at == AT


@pytest.mark.parametrize("cursor", ["é.e30", "e30.e3\u0660", "e30 .e30", "e30.e30\n", "e.e30"])
def test_text_outside_unpadded_urlsafe_base64_is_not_a_cursor(cursor: str):
    with pytest.raises(ValidationFailed):
        CursorCodec(SECRET).decode(cursor, "scope")
