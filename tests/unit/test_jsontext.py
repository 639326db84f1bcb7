"""``adapters.jsontext.compact`` writes what ``json.dumps`` (compact, UTF-8) writes, and
the standard library takes over exactly where orjson refuses; a booking's stored
document is the same whether or not its plain data was kept from a moment before."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.jsontext import compact
from adapters.sql import codecs
from tests.unit.bookings_support import single

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)))
JSON = st.recursive(
    st.none() | st.booleans() | INT64 | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def standard(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@given(JSON)
def test_compact_is_the_standard_librarys_compact_utf8_byte_for_byte(value: object) -> None:
    assert compact(value) == standard(value)


def test_tuples_are_arrays_and_key_order_is_kept() -> None:
    assert compact({"b": (1, 2), "a": "é"}) == '{"b":[1,2],"a":"é"}'.encode()


def test_an_integer_beyond_64_bits_is_written_exactly() -> None:
    assert compact({"cents": 2**64 + 1}) == b'{"cents":18446744073709551617}'


def test_a_lone_surrogate_comes_escaped_and_the_rest_as_utf8() -> None:
    written = compact({"field": "items[0].\ud800", "name": "Zoë"})
    assert written == b'{"field":"items[0].\\ud800","name":"Zo\\u00eb"}'
    assert json.loads(written) == {"field": "items[0].\ud800", "name": "Zoë"}


def test_a_key_that_is_not_a_string_is_written_as_the_standard_library_writes_it() -> None:
    assert compact({1: True}) == b'{"1":true}'


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def test_default_writes_what_json_has_no_type_for_on_either_path() -> None:
    assert compact({"o": Opaque()}, default=repr) == b'{"o":"<opaque>"}'
    # An integer beyond 64 bits sends the whole value to the standard library.
    assert compact({"o": Opaque(), "n": 2**64}, default=repr) == (
        b'{"o":"<opaque>","n":18446744073709551616}'
    )


def test_without_default_a_value_json_has_no_type_for_is_refused() -> None:
    with pytest.raises(TypeError):
        compact({"o": Opaque()})


def test_a_bookings_documents_do_not_depend_on_what_was_unstructured_before() -> None:
    first = single()
    second = attrs.evolve(first, id="bk_other", notes="changed")
    expected = {booking.id: codecs.converter.unstructure(booking) for booking in (first, second)}
    for booking in (first, second, second, first, first, second):
        assert codecs.to_plain(booking) == expected[booking.id]
        assert json.loads(codecs.dumps(booking)) == expected[booking.id]
