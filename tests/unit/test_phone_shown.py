"""Stored numbers as the pages show them (``adapters.phone.shown``)."""

from __future__ import annotations

import pytest

from adapters.phone import shown


@pytest.mark.parametrize(
    ("stored", "seen"),
    [
        ("+12125550101", "(212) 555-0101"),  # home: as people write it there
        ("+442079460958", "+44 20 7946 0958"),  # another country: with its + code
        ("+16135550123", "+1 613-555-0123"),  # Canada shares +1 but is not home
        # Not a valid number (kept from before numbers were checked): as stored, with no
        # country made up for it.
        ("00442079460958", "00442079460958"),
        ("5550101", "5550101"),
        ("+1212555010199999", "+1212555010199999"),
        ("call me", "call me"),
    ],
)
def test_a_stored_number_is_shown_as_people_write_it_or_as_stored(stored: str, seen: str):
    assert shown(stored) == seen
