"""Request bodies and query strings into command values, with every field problem at once.

A strict cattrs converter: a string is never taken for a number or the other way round,
unknown fields are refused (as Stripe does), times must carry an offset, and bounded
strings carry their SPEC.md ceiling. Any failure becomes ``ValidationFailed`` whose
``field_errors`` map dotted paths (``address.zip``, ``extras.0.id``) to texts.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any, NewType, TypeVar

import attrs
import cattrs
from cattrs.errors import ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, override

from booking_core.errors import ValidationFailed

T = TypeVar("T")

MAX_LENGTHS: dict[object, int] = {}
"""Ceiling of every bounded string type, for validation and the OpenAPI description."""

AWARE_TEXT = "Must be an ISO 8601 time with a UTC offset, e.g. 2026-05-01T09:00:00-04:00."


class FieldProblem(ValueError):
    """What is wrong with one field, in words a person can act on."""


def bounded(name: str, max_length: int) -> Any:
    """A string type of at most ``max_length`` characters."""
    kind = NewType(name, str)
    MAX_LENGTHS[kind] = max_length
    return kind


Name = bounded("Name", 200)
City = bounded("City", 120)
Street = bounded("Street", 200)
Email = bounded("Email", 254)
Phone = bounded("Phone", 40)
AccessNotes = bounded("AccessNotes", 2_000)
Code = bounded("Code", 100)
Note = bounded("Note", 2_000)
Id = bounded("Id", 100)
ShortText = bounded("ShortText", 200)


Zip = NewType("Zip", str)
"""A 5-digit US zip code."""


def _zip(value: object, _: object) -> str:
    text = _str(value, None)
    if len(text) != 5 or not text.isdigit():
        raise FieldProblem("A 5-digit US zip code.")
    return text


def _str(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise FieldProblem("Expected a string.")
    return value


def _bounded_hook(limit: int) -> Any:
    def hook(value: object, _: object) -> str:
        text = _str(value, None)
        if len(text) > limit:
            raise FieldProblem(f"At most {limit} characters.")
        return text

    return hook


def _int(value: object, _: object) -> int:
    if type(value) is not int:
        raise FieldProblem("Expected a whole number.")
    return value


def _bool(value: object, _: object) -> bool:
    if type(value) is not bool:
        raise FieldProblem("Expected true or false.")
    return value


def _datetime(value: object, _: object) -> datetime:
    text = _str(value, None)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise FieldProblem(AWARE_TEXT) from None
    if parsed.utcoffset() is None:
        raise FieldProblem(AWARE_TEXT)
    return parsed


def _enum(value: object, kind: type[enum.Enum]) -> enum.Enum:
    text = _str(value, None)
    try:
        return kind(text)
    except ValueError:
        options = ", ".join(str(member.value) for member in kind)
        raise FieldProblem(f"One of {options}.") from None


def _date(value: object, _: object) -> date:
    text = _str(value, None)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise FieldProblem("Must be a date such as 2026-05-01.") from None


def camel(name: str) -> str:
    """``service_id`` -> ``serviceId``: Python fields, JSON names."""
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def make_converter() -> cattrs.Converter:
    """The strict converter every request goes through; JSON keys are camelCase."""
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)

    def camel_case_class(cls: type) -> Any:
        renames = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        return make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **renames)

    converter.register_structure_hook_factory(attrs.has, camel_case_class)
    converter.register_structure_hook(str, _str)
    converter.register_structure_hook(int, _int)
    converter.register_structure_hook(bool, _bool)
    converter.register_structure_hook(datetime, _datetime)
    converter.register_structure_hook(date, _date)
    # Hooks registered for a class also serve its subclasses, and a StrEnum is a str:
    # without these, "kind": "BOGUS" would pass as a plain string instead of an enum member.
    converter.register_structure_hook(enum.Enum, _enum)
    converter.register_structure_hook(enum.StrEnum, _enum)
    converter.register_structure_hook(Zip, _zip)
    for kind, limit in MAX_LENGTHS.items():
        converter.register_structure_hook(kind, _bounded_hook(limit))
    return converter


CONVERTER = make_converter()


def _problems(exc: BaseException, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(exc, cattrs.ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from _problems(sub, (*path, camel(str(note.name))))
        for sub in without:
            yield from _problems(sub, path)
    elif isinstance(exc, cattrs.IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from _problems(sub, (*path, str(note.index)))
        for sub in without:
            yield from _problems(sub, path)
    elif isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield ".".join((*path, key)), "Unknown field."
    elif isinstance(exc, KeyError):
        yield ".".join(path), "Required."
    elif isinstance(exc, FieldProblem):
        yield ".".join(path), str(exc)
    elif isinstance(exc, cattrs.BaseValidationError):
        for sub in exc.exceptions:
            yield from _problems(sub, path)
    elif isinstance(exc, (ValueError, TypeError)) and path:
        yield ".".join(path), "Invalid value."
    else:
        raise exc


def structure(data: object, cls: type[T], *, root: str = "body") -> T:
    """``data`` as a ``cls``, or ``ValidationFailed`` naming every wrong field."""
    if not isinstance(data, dict):
        raise ValidationFailed({root: "Expected a JSON object."})
    try:
        return CONVERTER.structure(data, cls)
    except (cattrs.BaseValidationError, ForbiddenExtraKeysError) as exc:
        errors: dict[str, str] = {}
        for field, text in _problems(exc, ()):
            errors.setdefault(field or root, text)
        raise ValidationFailed(errors) from None
