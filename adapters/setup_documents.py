"""Setup documents: a company's catalog, crew or booking forms as one JSON or YAML
document, read strictly and written back in exactly the form it is read.

Fields are the API's camelCase names (``basePriceCents``, ``frequencySlugs``,
``homeZip``). Reading goes through the strict converter of the HTTP adapter
(``adapters.http.structuring``): unknown fields, wrong types, a key given twice, YAML
aliases and anything but text, whole numbers, true/false and null as plain scalars are
refused, each problem named at its path (``industries.0.services.2.extras.0.priceCents``),
never a traceback. YAML is read by the YAML 1.2 core rules, narrowed: ``02554`` and
``08:00`` stay text, ``yes`` and ``no`` are text, and so are dates (``2026-12-24``), which
are read where a date belongs. Writing sorts nothing the reader does not: export, import
and export again gives the same text.
"""

from __future__ import annotations

import enum
import json
import re
from datetime import date, datetime, time
from typing import Any, Literal, TypeVar

import attrs
import cattrs
import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode

from adapters.http.structuring import (
    FieldProblem,
    RequestInvalid,
    camel,
    make_converter,
    structure,
    wire_path,
)
from booking_core.booking_forms import FormsDraft
from booking_core.catalog_drafts import CatalogDraft
from booking_core.catalog_rules import MAX_ENTRIES
from booking_core.crew_drafts import CrewDraft
from booking_core.errors import ValidationFailed

Format = Literal["json", "yaml"]
FORMATS: tuple[Format, ...] = ("json", "yaml")
MAX_DOCUMENT_CHARACTERS = 5_000_000
"""A setup document longer than this is refused before it is parsed."""
ROOT = "document"
"""The path a problem of the document as a whole is named by."""

D = TypeVar("D")

_CLOCK = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?\Z")


def _time(value: object, _: object) -> time:
    if not isinstance(value, str):
        raise FieldProblem("Expected a string.")
    if not _CLOCK.match(value):
        raise FieldProblem("A wall-clock time such as 08:00 or 17:30.")
    return time.fromisoformat(value)


def _text(value: object, _: object) -> str:
    if isinstance(value, bool | int):
        shown = json.dumps(value)
        raise FieldProblem(f"Expected text: put it in quotes, e.g. '{shown}'.")
    if not isinstance(value, str):
        raise FieldProblem("Expected a string.")
    if "\x00" in value:
        raise FieldProblem("May not contain NUL characters.")
    return value


def _converter() -> cattrs.Converter:
    converter = make_converter(max_items=MAX_ENTRIES)
    converter.register_structure_hook(time, _time)
    converter.register_structure_hook(str, _text)
    return converter


CONVERTER = _converter()


class _Loader(yaml.SafeLoader):
    """YAML 1.2 core scalars, narrowed (see the module's docstring), no aliases, no key
    given twice, keys that are text only."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise ConstructorError(None, None, "aliases (*name) are not allowed", mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: set[str] = set()
            for key, _ in node.value:
                if not (isinstance(key, ScalarNode) and key.tag == "tag:yaml.org,2002:str"):
                    raise ConstructorError(None, None, "keys must be text", key.start_mark)
                if key.value in seen:
                    raise ConstructorError(
                        None, None, f"the key {key.value!r} is given twice", key.start_mark
                    )
                seen.add(key.value)
        return super().construct_mapping(node, deep=deep)


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^-?(?:0|[1-9][0-9]*)$", "-0123456789"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))


class _Unreadable(ValueError):
    pass


PAST_64_BITS = 10**19
"""What a whole number of more than 19 digits is read as: out of the 64-bit range as it
is, and named so at its path, without ``int`` reading the digits (it refuses over
4,300, with a message about Python)."""


def _whole(text: str) -> int:
    """A document's whole number: as written, or ``PAST_64_BITS`` (signed) past 19 digits."""
    if len(text.lstrip("-").lstrip("0")) > 19:
        return -PAST_64_BITS if text.startswith("-") else PAST_64_BITS
    return int(text)


DECIMAL = re.compile(r"-?[0-9]+")


def _construct_whole(loader: yaml.SafeLoader, node: ScalarNode) -> int:
    """A whole number as ``_whole`` reads it; another form an explicit ``!!int`` tag
    allows (``0x1F``) as YAML reads it."""
    text = str(loader.construct_scalar(node))
    if DECIMAL.fullmatch(text):
        return _whole(text)
    try:
        return int(yaml.SafeLoader.construct_yaml_int(loader, node))
    except ValueError:
        mark = node.start_mark
        raise ConstructorError(None, None, f"{text!r} is not a whole number", mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_whole)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Unreadable(f"the key {key!r} is given twice in one object")
        found[key] = value
    return found


def _no_constant(name: str) -> object:
    raise _Unreadable(f"{name} is not a number JSON allows")


def format_of(name: str | None, text: str = "") -> Format:
    """The format a file name says (``.json``, ``.yaml``, ``.yml``); otherwise JSON when
    the text starts with ``{``, else YAML."""
    lowered = (name or "").lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".yaml", ".yml")):
        return "yaml"
    return "json" if text.lstrip().startswith("{") else "yaml"


def parse(text: str, fmt: Format) -> object:
    """The plain data of a document, or ``ValidationFailed`` on ``document`` saying where
    and why it cannot be read."""
    if len(text) > MAX_DOCUMENT_CHARACTERS:
        raise RequestInvalid({ROOT: f"At most {MAX_DOCUMENT_CHARACTERS} characters."})
    try:
        if fmt == "json":
            return json.loads(
                text, object_pairs_hook=_object, parse_constant=_no_constant, parse_int=_whole
            )
        return yaml.load(text, Loader=_Loader)  # a SafeLoader, narrowed further
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise RequestInvalid({ROOT: f"Not valid JSON at {where}: {error.msg}."}) from None
    except _Unreadable as error:
        raise RequestInvalid({ROOT: f"Not valid JSON: {error}."}) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        why = error.problem or error.context or "unreadable"
        raise RequestInvalid({ROOT: f"Not valid YAML{where}: {why}."}) from None
    except yaml.YAMLError as error:
        raise RequestInvalid({ROOT: f"Not valid YAML: {error}."}) from None
    except RecursionError:
        raise RequestInvalid({ROOT: "Nested too deeply."}) from None


def read(text: str, fmt: Format, kind: type[D]) -> D:
    """A document as a draft (``CatalogDraft``, ``CrewDraft``), or ``ValidationFailed``
    naming every problem at its camelCase path."""
    data = parse(text, fmt)
    if not isinstance(data, dict):
        raise RequestInvalid({ROOT: "Expected an object (field names and their values)."})
    return structure(data, kind, root=ROOT, converter=CONVERTER)


def read_catalog(text: str, fmt: Format) -> CatalogDraft:
    """A catalog document as a draft."""
    return read(text, fmt, CatalogDraft)


def read_crew(text: str, fmt: Format) -> CrewDraft:
    """A crew document as a draft."""
    return read(text, fmt, CrewDraft)


def read_forms(text: str, fmt: Format) -> FormsDraft:
    """A booking forms document (``{"forms": [...]}``) as a draft."""
    return read(text, fmt, FormsDraft)


def _plain(value: object) -> object:
    if attrs.has(type(value)):
        fields: tuple[attrs.Attribute[Any], ...] = attrs.fields(type(value))  # type: ignore[arg-type]
        return {camel(a.name): _plain(getattr(value, a.name)) for a in fields}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, time):
        return value.isoformat(timespec="seconds" if value.second else "minutes")
    return value


def write(draft: object, fmt: Format) -> str:
    """A draft as a document that ``read`` takes back to an equal draft."""
    data = _plain(draft)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def field_errors(error: ValidationFailed) -> dict[str, str]:
    """A refusal's field problems with their paths as documents spell them (camelCase)."""
    return {wire_path(path): text for path, text in error.field_errors.items()}
