"""Request bodies and query strings into command values, with every field problem at once.

A strict cattrs converter: a string is never taken for a number or the other way round,
unknown fields are refused (as Stripe does), times must carry an offset, and bounded
strings carry their SPEC.md ceiling. Any failure becomes ``ValidationFailed`` whose
``field_errors`` map dotted paths (``address.zip``, ``extras.0.id``) to texts.
"""

from __future__ import annotations

import enum
import re
import typing
from collections import abc
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from typing import Annotated, Any, TypeVar

import attrs
import cattrs
from attrs import frozen
from cattrs.errors import ForbiddenExtraKeysError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, override

from adapters.http.fieldpaths import shown_key
from booking_core.booking_orders import LAST_JOB_DATE
from booking_core.bookings import CANCEL_REASON_MAX, MAX_DAYS
from booking_core.customers import email_errors
from booking_core.errors import ValidationFailed
from booking_core.paging import MAX_LIMIT
from booking_core.plain_text import one_line_problem, person_name_problem

T = TypeVar("T")

INT64 = 2**63 - 1
"""No integer outside a signed 64-bit word is ever read, whatever the field."""

MIN_YEAR, MAX_YEAR = 1970, LAST_JOB_DATE.year
"""Dates and instants outside these years are refused: far enough for any booking or
poll, and clear of the calendar's edges (year 1, 9999) where date arithmetic overflows.
The last year is the core's (``plans.LAST_JOB_DATE``): no job falls after it."""

AWARE_TEXT = "Must be an ISO 8601 time with a UTC offset, e.g. 2026-05-01T09:00:00-04:00."
INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})"
)
"""How an instant is written (the whole text): ISO 8601's extended form, seconds and a
fraction optional, and ``Z`` or an offset of hours and minutes. ``fromisoformat`` alone
takes much more: ``+05`` (hours only), ``+0500``, week dates, basic form, any separator."""
YEARS_TEXT = f"Must fall in the years {MIN_YEAR} to {MAX_YEAR}."


class FieldProblem(ValueError):
    """What is wrong with one field, in words a person can act on."""


class RequestInvalid(ValidationFailed):
    """Field problems found at the edge, their paths already spelt as on the wire."""


def wire_path(path: str) -> str:
    """A snake_case field path of the core (``address.access_notes``, ``extras.0.id``)
    as the wire spells it (``address.accessNotes``)."""
    return ".".join(camel(part) for part in path.split("."))


@frozen
class MaxLength:
    """At most ``limit`` characters."""

    limit: int


@frozen
class MaxItems:
    """An array of at most ``limit`` items, below the ``MAX_ITEMS`` every array has;
    checked before any item is read."""

    limit: int


@frozen
class NotEmpty:
    """At least one character: an empty name or id is a mistake, not a value."""


@frozen
class Between:
    """A whole number from ``low`` to ``high`` inclusive."""

    low: int
    high: int


@frozen
class Matches:
    """Text matching ``pattern`` (anchored with ``\\Z``); ``text`` says what is expected."""

    pattern: re.Pattern[str]
    text: str


@frozen
class EmailAddress:
    """An email address by the core's one rule (``booking_core.customers.email_errors``)."""


@frozen
class PersonNameRule:
    """A person's name by the core's rule (``booking_core.plain_text.person_name_problem``):
    checked with the body's other problems, under the field's own path (``customer.name``)."""


@frozen
class OneLineRule:
    """One line of text by the core's rule (``booking_core.plain_text.one_line_problem``):
    an address's street lines and city."""


Name = Annotated[str, NotEmpty(), MaxLength(200)]
PersonName = Annotated[str, NotEmpty(), MaxLength(200), PersonNameRule()]
City = Annotated[str, MaxLength(120), OneLineRule()]
Street = Annotated[str, MaxLength(200), OneLineRule()]
Email = Annotated[str, MaxLength(254), EmailAddress()]
Phone = Annotated[str, MaxLength(40)]
AccessNotes = Annotated[str, MaxLength(2_000)]
Code = Annotated[str, MaxLength(100)]


def blank_as_none(code: str | None) -> str | None:
    """A coupon or referral code sent empty or blank is no code (a form's empty field),
    not a code that matches nothing."""
    return code if code is not None and code.strip() else None


Note = Annotated[str, MaxLength(2_000)]
Id = Annotated[str, NotEmpty(), MaxLength(100)]
ShortText = Annotated[str, MaxLength(200)]
Cursor = Annotated[str, MaxLength(1_000)]
IntakeAnswer = Annotated[str, MaxLength(500)]
CancelReason = Annotated[str, MaxLength(CANCEL_REASON_MAX)]
"""String types with their SPEC.md section 8 ceilings, for validation and the OpenAPI
description alike."""

MAX_CENTS = 100_000_000
"""The ceiling of every cents field: one million dollars, far above any home-service job."""

HandCents = Annotated[int, Between(1, MAX_CENTS)]
"""An amount recorded by hand: positive (a refund too: given positive, stored negative)."""
PriceCents = Annotated[int, Between(0, MAX_CENTS)]
"""A price in cents: never negative (a hand-priced quote line)."""
Quantity = Annotated[int, Between(0, 10_000)]
Days = Annotated[int, Between(1, MAX_DAYS)]
Limit = Annotated[int, Between(1, MAX_LIMIT)]

ZIP = re.compile(r"^[0-9]{5}\Z")
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
"""A date as the API writes one: ``YYYY-MM-DD`` and nothing else."""
ITEM_SPEC = re.compile(r"^[A-Za-z0-9_-]{1,100}(:[0-9]{1,5})?\Z")

Zip = Annotated[str, Matches(ZIP, "A 5-digit US zip code.")]
ItemSpec = Annotated[str, Matches(ITEM_SPEC, "Use id or id:quantity.")]
"""A selection in a query string: ``id`` or ``id:quantity``."""


def constraints(tp: Any) -> tuple[Any, tuple[object, ...]]:
    """``tp``'s base type and the constraints annotated on it (none for a plain type)."""
    metadata = getattr(tp, "__metadata__", None)  # only ``Annotated`` types carry it
    if metadata is None:
        return tp, ()
    return tp.__origin__, tuple(metadata)


def _check(constraint: object, value: Any) -> None:
    """Raise ``FieldProblem`` unless ``value`` meets ``constraint``."""
    if isinstance(constraint, NotEmpty) and not value:
        raise FieldProblem("Required: may not be empty.")
    if isinstance(constraint, MaxLength) and len(value) > constraint.limit:
        raise FieldProblem(f"At most {constraint.limit} characters.")
    if isinstance(constraint, MaxItems) and len(value) > constraint.limit:
        raise FieldProblem(f"At most {constraint.limit} items.")
    if isinstance(constraint, Between) and not constraint.low <= value <= constraint.high:
        raise FieldProblem(f"A whole number from {constraint.low} to {constraint.high}.")
    if isinstance(constraint, Matches) and not constraint.pattern.match(value):
        raise FieldProblem(constraint.text)
    if isinstance(constraint, EmailAddress):
        problems = email_errors(value)
        if problems:
            raise FieldProblem(problems["email"])
    if isinstance(constraint, OneLineRule) and (problem := one_line_problem(value)):
        raise FieldProblem(problem)
    if isinstance(constraint, PersonNameRule) and value.strip():
        problem = person_name_problem(value.strip())
        if problem:
            raise FieldProblem(problem)


def _annotated_hook(converter: cattrs.Converter) -> Any:
    """The base type's hook, then every constraint annotated on the type."""

    def factory(tp: Any) -> Any:
        base, checks = constraints(tp)
        read = converter.get_structure_hook(base)
        ceilings = [check for check in checks if isinstance(check, MaxItems)]

        def structure_constrained(value: object, _: object) -> Any:
            if ceilings and isinstance(value, list):
                for ceiling in ceilings:  # the length alone: no item is read past it
                    _check(ceiling, value)
            parsed = read(value, base)
            for check in checks:
                _check(check, parsed)
            return parsed

        return structure_constrained

    return factory


def _str(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise FieldProblem("Expected a string.")
    return value


def _int(value: object, _: object) -> int:
    if type(value) is not int:
        raise FieldProblem("Expected a whole number.")
    if not -INT64 <= value <= INT64:
        raise FieldProblem("Outside the 64-bit range.")
    return value


def _query_int(value: object, _: object) -> int:
    """A whole number written in ASCII digits (no sign, no other script's digits)."""
    text = _str(value, None)
    if not (text.isascii() and text.isdigit()):
        raise FieldProblem("Expected a whole number written in the digits 0-9.")
    significant = text.lstrip("0") or "0"  # zeros in front do not count
    if len(significant) > 19:  # past 64 bits, however long: not read as a number
        raise FieldProblem("Outside the 64-bit range.")
    return _int(int(significant), None)


def _bool(value: object, _: object) -> bool:
    if type(value) is not bool:
        raise FieldProblem("Expected true or false.")
    return value


def _query_bool(value: object, _: object) -> bool:
    text = _str(value, None)
    if text not in ("true", "false"):
        raise FieldProblem("Expected true or false.")
    return text == "true"


def _in_years(year: int) -> None:
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise FieldProblem(YEARS_TEXT)


UNENCODED_PLUS = re.compile(INSTANT.pattern.replace("(?:Z|[+-]", "(?:Z|[ +-]"))
"""An instant whose offset's ``+`` a query string turned into a space."""

PLUS_TEXT = (
    "The offset's + is a space here: in a query string a + reads as a space, so write "
    "it as %2B, e.g. 2026-05-01T09:00:00%2B10:30."
)
NO_SUCH_TIME = (
    "Not a real date and time (no such day, hour, minute, second or UTC offset), "
    "e.g. 2026-05-01T09:00:00-04:00."
)


def _datetime(value: object, _: object) -> datetime:
    text = _str(value, None)
    if not INSTANT.fullmatch(text):
        raise FieldProblem(PLUS_TEXT if UNENCODED_PLUS.fullmatch(text) else AWARE_TEXT)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise FieldProblem(NO_SUCH_TIME) from None
    offset = parsed.utcoffset()
    if offset is None:
        raise FieldProblem(AWARE_TEXT)
    _in_years(parsed.year)  # first: year 1 or 9999 may not convert
    _in_years(parsed.astimezone(UTC).year)  # the instant, not only the year as written
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
    if not DATE.fullmatch(text):  # ``20261124`` and ``2026-W48-2`` are ISO dates too
        raise FieldProblem("Must be a date such as 2026-05-01.")
    try:
        parsed = date.fromisoformat(text)
    except ValueError:
        raise FieldProblem("Must be a date such as 2026-05-01.") from None
    _in_years(parsed.year)
    return parsed


def _is_sequence(tp: Any) -> bool:
    return typing.get_origin(tp) in (tuple, list, Sequence, abc.Sequence)


def camel(name: str) -> str:
    """``service_id`` -> ``serviceId``: Python fields, JSON names (``from_`` -> ``from``)."""
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


MAX_ITEMS = 200
"""The longest array a request may carry (SPEC.md: at most 200 selections)."""


def _sequence_hook(converter: cattrs.Converter, *, query: bool, max_items: int) -> Any:
    """Arrays: a JSON array in a body, comma-separated in a query string; never a string
    split into characters, never an object taken for a list."""

    def factory(tp: Any) -> Any:
        args = typing.get_args(tp)
        element = args[0] if args else Any

        def structure_sequence(value: object, _: object) -> tuple[Any, ...]:
            if query:
                text = _str(value, None)
                items: list[object] = list(text.split(",")) if text else []
                if "" in items:
                    raise FieldProblem("Comma-separated values, none of them empty.")
            elif isinstance(value, list):
                items = value
            else:
                raise FieldProblem("Expected a JSON array.")
            if len(items) > max_items:
                raise FieldProblem(f"At most {max_items} items.")
            out: list[Any] = []
            failures: list[Exception] = []
            for index, item in enumerate(items):
                try:
                    out.append(converter.structure(item, element))
                except Exception as exc:  # each is reported with its index
                    note = IterableValidationNote(f"@ index {index}", index, element)
                    exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                    failures.append(exc)
            if failures:
                raise cattrs.IterableValidationError("invalid items", failures, tp)
            return tuple(out)

        return structure_sequence

    return factory


def make_converter(*, query: bool = False, max_items: int = MAX_ITEMS) -> cattrs.Converter:
    """The strict converter every request body goes through (JSON keys are camelCase);
    with ``query`` its twin for query strings, where every value arrives as text.
    ``max_items``: the longest array read (setup documents allow longer ones)."""
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)

    def camel_case_class(cls: type) -> Any:
        renames = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        make: Any = make_dict_structure_fn  # its overrides are keyword arguments by name
        generated = make(cls, converter, _cattrs_forbid_extra_keys=True, **renames)

        def structure_object(value: object, _: object) -> Any:
            if not isinstance(value, dict):
                raise FieldProblem("Expected a JSON object.")
            return generated(value, cls)

        return structure_object

    read_int = _query_int if query else _int
    converter.register_structure_hook_factory(attrs.has, camel_case_class)
    converter.register_structure_hook_factory(
        _is_sequence, _sequence_hook(converter, query=query, max_items=max_items)
    )
    converter.register_structure_hook(str, _str)
    converter.register_structure_hook(int, read_int)
    converter.register_structure_hook(bool, _query_bool if query else _bool)
    converter.register_structure_hook(datetime, _datetime)
    converter.register_structure_hook(date, _date)
    # Hooks registered for a class also serve its subclasses, and a StrEnum is a str:
    # without these, "kind": "BOGUS" would pass as a plain string instead of an enum member.
    converter.register_structure_hook(enum.Enum, _enum)
    converter.register_structure_hook(enum.StrEnum, _enum)
    converter.register_structure_hook_factory(
        lambda tp: bool(constraints(tp)[1]), _annotated_hook(converter)
    )
    return converter


CONVERTER = make_converter()
QUERY_CONVERTER = make_converter(query=True)


def _problems(exc: BaseException, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(exc, cattrs.ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from _problems(sub, (*path, camel(str(note.name))))
        for sub in without:
            yield from _problems(sub, path)
    elif isinstance(exc, cattrs.IterableValidationError):
        with_index, without = exc.group_exceptions()
        for sub, item in with_index:
            yield from _problems(sub, (*path, str(item.index)))
        for sub in without:
            yield from _problems(sub, path)
    elif isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield ".".join((*path, shown_key(key))), "Unknown field."
    elif isinstance(exc, KeyError):
        yield ".".join(path), "Required."
    elif isinstance(exc, FieldProblem):
        yield ".".join(path), str(exc)
    elif isinstance(exc, cattrs.BaseValidationError):
        for sub in exc.exceptions:
            yield from _problems(sub, path)
    elif isinstance(exc, (ValueError, TypeError, AttributeError)) and path:
        yield ".".join(path), "Invalid value."
    else:
        raise exc


def _structure(converter: cattrs.Converter, data: object, cls: type[T], root: str) -> T:
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ForbiddenExtraKeysError, FieldProblem) as exc:
        errors: dict[str, str] = {}
        for field, text in _problems(exc, ()):
            errors.setdefault(field or root, text)
        raise RequestInvalid(errors) from None


def structure(
    data: object, cls: type[T], *, root: str = "body", converter: cattrs.Converter = CONVERTER
) -> T:
    """``data`` as a ``cls``, or ``ValidationFailed`` naming every wrong field (``converter``:
    one ``make_converter`` made, by default the request bodies' own)."""
    if not isinstance(data, dict):
        raise RequestInvalid({root: "Expected a JSON object."})
    return _structure(converter, data, cls, root)


def query_names(cls: type | None) -> frozenset[str]:
    """The query parameters ``cls`` reads, as they are spelt on the wire."""
    return frozenset(camel(a.name) for a in attrs.fields(cls)) if cls is not None else frozenset()


def structure_query(pairs: Iterable[tuple[str, str]], cls: type[T] | None) -> T | None:
    """A query string as a ``cls``. Unknown and repeated parameters are refused (a misspelt
    filter must never silently widen a list), as is text no database can store."""
    known = query_names(cls)
    errors: dict[str, str] = {}
    values: dict[str, str] = {}
    for name, value in pairs:
        shown = shown_key(name[:100])
        if name not in known:
            errors[shown] = "Unknown query parameter."
        elif name in values:
            errors[shown] = "Given more than once."
        elif "\x00" in value:
            errors[shown] = "May not contain NUL characters."
        else:
            values[name] = value
    parsed: T | None = None
    if cls is not None:
        try:
            parsed = _structure(QUERY_CONVERTER, values, cls, "query")
        except ValidationFailed as failed:
            errors = {**failed.field_errors, **errors}
    if errors:
        raise RequestInvalid(errors)
    return parsed
