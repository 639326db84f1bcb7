"""Views into JSON values: the twin of the request converter of
``adapters.http.structuring``, with the same camelCase names.

A view already holds its times in the company's timezone (``RenderContext.time``), so
writing one needs no company: datetimes become ISO 8601 with their offset, dates ISO
dates, enums their values, tuples arrays and None null.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import date, datetime

import attrs
import cattrs
from attrs import AttrsInstance
from cattrs.gen import make_dict_unstructure_fn, override

from adapters.http.structuring import camel


def _value(member: enum.Enum) -> object:
    return member.value


def make_view_converter() -> cattrs.Converter:
    """The converter every answer goes through; JSON keys are camelCase."""
    converter = cattrs.Converter(unstruct_collection_overrides={tuple: list})

    def camel_case_class(cls: type) -> Callable[[AttrsInstance], dict[str, object]]:
        renames = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        # mypy cannot tell that ``renames`` holds only field overrides, never the
        # function's own ``_cattrs_*`` flags.
        return make_dict_unstructure_fn(cls, converter, **renames)  # type: ignore[arg-type]

    converter.register_unstructure_hook_factory(attrs.has, camel_case_class)
    converter.register_unstructure_hook(datetime, datetime.isoformat)
    converter.register_unstructure_hook(date, date.isoformat)
    # A StrEnum is a str: without its own hook it would pass through as the member.
    converter.register_unstructure_hook(enum.Enum, _value)
    converter.register_unstructure_hook(enum.StrEnum, _value)
    return converter


VIEW_CONVERTER = make_view_converter()


def to_json(view: AttrsInstance) -> dict[str, object]:
    """``view`` as a JSON object, ready for ``json.dumps``."""
    out: dict[str, object] = VIEW_CONVERTER.unstructure(view)
    return out
