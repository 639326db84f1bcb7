"""JSON Schemas (2020-12, as OpenAPI 3.1 uses) derived from the attrs classes the edge
reads and writes: request bodies and query strings (``adapters.http.structuring``) and
answers (``adapters.http.views``). One function walks every type, so a request and an
answer that share a type describe it alike.

Property keywords come from ``Annotated`` types (the request constraints ``MaxLength``,
``MaxItems``, ``Between``, ``Matches``, ``EmailAddress``, and ``Keywords`` for answers) and from
``attrs.field`` metadata (``schema(...)``, ``description``, ``deprecated``).

A view is a closed object (``additionalProperties: false``) listing every property as
required, since the converter always writes every field (None as null), and carries a
``title`` (its class name without ``View``, or its ``TITLE``) which the OpenAPI
generator hoists into ``components/schemas``. A request body is closed too (unknown
fields are refused), and requires the fields without a default.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from types import MappingProxyType

import attrs

from adapters.http.structuring import (
    INT64,
    MAX_ITEMS,
    MAX_YEAR,
    MIN_YEAR,
    Between,
    EmailAddress,
    Matches,
    MaxItems,
    MaxLength,
    NotEmpty,
    camel,
    constraints,
)

Schema = dict[str, object]

SCHEMA_METADATA = "json_schema"
"""The ``attrs.field`` metadata key holding a property's extra ``Keywords``."""

YEARS = f"In the years {MIN_YEAR} to {MAX_YEAR}."
ANSWER_INSTANT = "ISO 8601 in the company's timezone, with offset."
REQUEST_INSTANT = f"ISO 8601 with offset. {YEARS}"

SIMPLE: dict[object, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}


class Keywords:
    """JSON Schema keywords a field adds to what its type says (``minimum``, ``format``,
    ``description``, ...): in ``Annotated`` types, or in ``attrs.field`` metadata."""

    __slots__ = ("values",)

    def __init__(self, **values: object) -> None:
        self.values: Mapping[str, object] = MappingProxyType(values)

    def __repr__(self) -> str:
        return f"Keywords({dict(self.values)!r})"


def schema(**values: object) -> dict[str, Keywords]:
    """``attrs.field`` metadata adding JSON Schema keywords to one property."""
    return {SCHEMA_METADATA: Keywords(**values)}


def _keywords(extra: object) -> Mapping[str, object]:
    """The schema keywords one ``Annotated`` entry stands for."""
    if isinstance(extra, Keywords):
        return extra.values
    if isinstance(extra, NotEmpty):
        return {"minLength": 1}
    if isinstance(extra, MaxLength):
        return {"maxLength": extra.limit}
    if isinstance(extra, MaxItems):
        return {"maxItems": extra.limit}
    if isinstance(extra, Between):
        return {"minimum": extra.low, "maximum": extra.high}
    if isinstance(extra, Matches):
        return {"pattern": extra.pattern.pattern.replace("\\Z", "$")}
    if isinstance(extra, EmailAddress):
        return {"format": "email"}
    return {}


def title_of(cls: type) -> str:
    """The name of a view's schema in ``components/schemas``."""
    title = vars(cls).get("TITLE")
    return title if isinstance(title, str) else cls.__name__.removesuffix("View")


def nullable(schema: Schema) -> Schema:
    """``schema`` or null: a type list for a plain type (null among an enum's values too,
    or the enum would refuse it), ``anyOf`` for an object."""
    if (
        "title" in schema
        or schema.get("type") == "object"
        or not isinstance(schema.get("type"), str)
    ):
        return {"anyOf": [schema, {"type": "null"}]}
    widened = {**schema, "type": [schema["type"], "null"]}
    values = schema.get("enum")
    if isinstance(values, list):
        widened["enum"] = [*values, None]
    return widened


def _properties(cls: type, *, answer: bool) -> tuple[dict[str, object], list[str]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, object] = {}
    required: list[str] = []
    for field in attrs.fields(cls):
        name = camel(field.name)
        prop = type_schema(hints[field.name], answer=answer)
        extra = field.metadata.get(SCHEMA_METADATA)
        if isinstance(extra, Keywords):
            prop = {**prop, **extra.values}
        if field.metadata.get("description"):
            prop = {**prop, "description": field.metadata["description"]}
        if field.metadata.get("deprecated"):
            prop = {**prop, "deprecated": True}
        properties[name] = prop
        if answer or field.default is attrs.NOTHING:
            required.append(name)
    return properties, required


def _first_paragraph(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n")[0].split())


def view_schema(cls: type) -> Schema:
    """The closed, titled object schema of a view class: every property required."""
    properties, required = _properties(cls, answer=True)
    return {
        "title": title_of(cls),
        "type": "object",
        "description": _first_paragraph(cls),
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def request_schema(cls: type) -> Schema:
    """The closed object schema of a request body class: fields without a default are
    required, unknown fields are refused."""
    properties, required = _properties(cls, answer=False)
    out: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    out.update(getattr(cls, "SCHEMA", {}))  # rules across fields (``anyOf`` of requireds)
    if cls.__doc__:
        out["description"] = _first_paragraph(cls)
    return out


def type_schema(tp: object, *, answer: bool) -> Schema:
    """The schema of a field's type, in an answer or in a request. A type the edge cannot
    describe is a bug, refused here rather than documented as anything."""
    base, extras = constraints(tp)
    if extras:
        out = type_schema(base, answer=answer)
        for extra in extras:
            out = {**out, **_keywords(extra)}
        return out
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is int and not answer:  # no request integer outside 64 bits is ever read
        return {"type": "integer", "minimum": -INT64, "maximum": INT64}
    if tp in SIMPLE:
        return {"type": SIMPLE[tp]}
    if tp is datetime and answer:
        return {"type": "string", "format": "date-time", "description": ANSWER_INSTANT}
    if tp is datetime:
        return {"type": "string", "format": "date-time", "description": REQUEST_INSTANT}
    if tp is date and answer:
        return {"type": "string", "format": "date"}
    if tp is date:
        return {"type": "string", "format": "date", "description": YEARS}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [member.value for member in tp]}
    if isinstance(tp, type) and attrs.has(tp):
        return view_schema(tp) if answer else request_schema(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(args, answer=answer)
    if origin in (tuple, list, Sequence) and args:
        items: Schema = {"type": "array", "items": type_schema(args[0], answer=answer)}
        return items if answer else {**items, "maxItems": MAX_ITEMS}
    if origin is dict and len(args) == 2 and args[0] is str:
        return {"type": "object", "additionalProperties": type_schema(args[1], answer=answer)}
    if origin is typing.Literal and len(args) == 1 and type(args[0]) in SIMPLE:
        return {"type": SIMPLE[type(args[0])], "const": args[0]}
    raise TypeError(f"no JSON Schema for the field type {tp!r}")


def _union(args: tuple[object, ...], *, answer: bool) -> Schema:
    options = [a for a in args if a is not type(None)]
    if len(options) == 1:
        out = type_schema(options[0], answer=answer)
    elif all(option in SIMPLE for option in options):
        # str | int | bool: one type list, as plain as the values it allows.
        out = {"type": [SIMPLE[option] for option in options]}
    else:
        out = {"anyOf": [type_schema(option, answer=answer) for option in options]}
    return nullable(out) if len(options) < len(args) else out
