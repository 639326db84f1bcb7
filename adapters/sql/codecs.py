"""JSON documents for the value trees stored whole: one cattrs converter, used only here.

Instants are ISO-8601 strings with their offset, dates and wall times ISO dates and
times, enums their values, tuples lists, and frozensets sorted lists (so one value
always makes one document). A ``str | int | bool`` (a booking activity's detail) is
JSON's own string, number or boolean, read back as exactly that type.
``loads(dumps(value, T), T) == value`` for every stored type; the contract tests hold
the round trips to that.
"""

from __future__ import annotations

import json
import threading
import typing
from datetime import date, datetime, time
from typing import Any, TypeVar

from cattrs import Converter
from cattrs.cols import is_frozenset

from adapters.jsontext import compact
from booking_core.bookings import Booking
from booking_core.pricing import PriceLine

T = TypeVar("T")


def _unstructure_frozenset(value: frozenset[Any]) -> list[Any]:
    return [converter.unstructure(item) for item in sorted(value)]


def _make_converter() -> Converter:
    made = Converter()
    made.register_unstructure_hook(datetime, lambda value: value.isoformat())
    made.register_structure_hook(datetime, lambda value, _: _instant(value))
    # datetime is a subclass of date: register date after, for plain dates only.
    made.register_unstructure_hook_func(lambda cls: cls is date, lambda value: value.isoformat())
    made.register_structure_hook_func(
        lambda cls: cls is date, lambda value, _: date.fromisoformat(value)
    )
    made.register_unstructure_hook(time, lambda value: value.isoformat())
    made.register_structure_hook(time, lambda value, _: time.fromisoformat(value))
    made.register_unstructure_hook_factory(is_frozenset, lambda _: _unstructure_frozenset)
    made.register_structure_hook_func(lambda cls: cls == _SCALAR, _scalar)
    # Price lines are named tuples (a hot path); keep them as objects with named fields.
    line_types = typing.get_type_hints(PriceLine)
    made.register_unstructure_hook(
        PriceLine, lambda line: {name: made.unstructure(v) for name, v in line._asdict().items()}
    )
    made.register_structure_hook(
        PriceLine,
        lambda data, _: PriceLine(
            **{name: made.structure(data[name], line_types[name]) for name in PriceLine._fields}
        ),
    )
    return made


_SCALAR = str | int | bool


def _scalar(value: Any, _: Any) -> str | int | bool:
    # JSON already tells a string, a number and a boolean apart: keep the type it gives.
    if type(value) not in (str, int, bool):
        raise ValueError(f"expected a string, integer or boolean, got {type(value).__name__}")
    return value  # type: ignore[no-any-return]


def _instant(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    if parsed.utcoffset() is None:
        raise ValueError("a stored instant lacks its UTC offset")
    return parsed


converter = _make_converter()


def to_plain(value: Any, as_type: Any = None) -> Any:
    """``value`` as plain JSON-able data (dicts, lists, strings, numbers).

    A new booking is written twice in one unit of work, as its row and as its event's
    subject: the plain data of the last booking each thread unstructured is kept and given
    again for that same booking (a ``Booking`` is frozen, and no caller changes what it is
    given)."""
    if type(value) is not Booking or as_type is not None:
        return converter.unstructure(value, unstructure_as=as_type)
    last = getattr(_last_booking, "pair", None)
    if last is not None and last[0] is value:
        return last[1]
    plain = converter.unstructure(value)
    _last_booking.pair = (value, plain)
    return plain


_last_booking = threading.local()


def from_plain(plain: Any, as_type: type[T]) -> T:
    """The value of type ``as_type`` that plain data of ``to_plain`` describes."""
    return converter.structure(plain, as_type)


def dumps(value: Any, as_type: Any = None) -> str:
    """The JSON document of ``value`` (compact, keys in field order)."""
    return compact(to_plain(value, as_type)).decode()


def loads(document: str, as_type: type[T]) -> T:
    """The value of type ``as_type`` a document of ``dumps`` describes."""
    return converter.structure(json.loads(document), as_type)


def loads_any(document: str, as_type: Any) -> Any:
    """``loads`` for types mypy cannot name as ``type[T]`` (unions, tuples of classes)."""
    return converter.structure(json.loads(document), as_type)
