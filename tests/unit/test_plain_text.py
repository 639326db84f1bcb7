"""How a message quotes what was typed (``plain_text.quoted``)."""

from __future__ import annotations

from booking_core.plain_text import quoted


def test_a_quote_of_what_was_typed_shows_hidden_characters_and_stays_short():
    assert quoted("1002x") == "\u20181002x\u2019"
    assert quoted("10'01") == "\u201810'01\u2019"  # no quote changes with the content
    assert quoted("10\\01") == "\u201810\\01\u2019"  # nor is a backslash doubled
    assert quoted("\u202e10001") == "\u2018U+202E10001\u2019"  # reads one way
    assert quoted("9" * 500) == "\u2018" + "9" * 20 + "...\u2019"
