"""Reading a request's body: counted while it streams (413 at the limit, chunked or not),
JSON only, and decoded strictly. ``parse_json`` also reports what no field type can see:
a key given twice in one object, nesting past ``MAX_JSON_DEPTH``, and text a database
cannot store (NUL, lone surrogates), each under its path (a key of the client's as
``adapters.http.fieldpaths.shown_key`` writes it)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.requests import Request

from adapters.http.errors import ApiError
from adapters.http.fieldpaths import shown_key

MAX_BODY_BYTES = 1_000_000
"""The largest ``/api/v1`` body read; counted while it streams, chunked or not."""
MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a body may have."""


def too_large(limit: int = MAX_BODY_BYTES) -> ApiError:
    return ApiError(413, "payload_too_large", f"The body is over {limit} bytes.")


def _not_json(text: str) -> ApiError:
    message = "The body is not valid JSON."
    return ApiError(400, "invalid_request", message, field_errors={"body": text})


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers keys it was given more than once."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        out.repeated = tuple(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return out


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _text_problems(text: str) -> list[str]:
    problems = []
    if "\x00" in text:
        problems.append("May not contain NUL characters.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        problems.append("Must be valid Unicode text (no lone surrogates).")
    return problems


def _text_problem(text: str) -> str | None:
    return " ".join(_text_problems(text)) or None


def _key_problem(key: str) -> str | None:
    said = [f"The key {problem[0].lower()}{problem[1:]}" for problem in _text_problems(key)]
    return " ".join(said) or None


def _scan(data: Any) -> dict[str, str]:
    """Problems no field type can see: repeated keys, nesting past ``MAX_JSON_DEPTH``,
    and text a database cannot store (NUL, lone surrogates), each under its path: a bad
    key under its own (escaped), so that each bad key of an object is named."""
    problems: dict[str, list[str]] = {}

    def note(path: tuple[str, ...], text: str) -> None:
        texts = problems.setdefault(_where(path), [])
        if text not in texts:
            texts.append(text)

    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            problem = _text_problem(node)
            if problem:
                note(path, problem)
            continue
        if not isinstance(node, dict | list):
            continue
        if len(path) >= MAX_JSON_DEPTH:
            note(path, f"Nested deeper than {MAX_JSON_DEPTH} levels.")
            continue
        if isinstance(node, list):
            stack.extend((item, (*path, str(i))) for i, item in enumerate(node))
            continue
        for key in getattr(node, "repeated", ()):
            note((*path, shown_key(key)), "Given more than once in one object.")
        for key, value in node.items():
            problem = _key_problem(key)
            if problem:
                note((*path, shown_key(key)), problem)
                continue
            stack.append((value, (*path, shown_key(key))))
    return {where: " ".join(texts) for where, texts in problems.items()}


def _where(path: tuple[str, ...]) -> str:
    """A path as problems name it (spelt only when there is a problem to name)."""
    return ".".join(path) or "body"


LONGEST_WHOLE_NUMBER = 40
"""Digits read as written; a longer whole number (far outside the 64-bit range any field
takes) is read as ``±10**40``, so the field is named as out of range instead of the body
refused (Python refuses to convert more than 4,300 digits at all)."""


_FAR_OUT: int = 10**40


def _whole_number(text: str) -> int:
    if len(text.lstrip("-")) <= LONGEST_WHOLE_NUMBER:
        return int(text)
    return -_FAR_OUT if text.startswith("-") else _FAR_OUT


def parse_json(raw: bytes) -> tuple[Any, dict[str, str]]:
    """The decoded body (``{}`` when empty) and the problems ``_scan`` finds in it."""
    if not raw.strip():
        return {}, {}
    try:
        data = json.loads(
            raw.decode("utf-8"),
            object_pairs_hook=_object,
            parse_constant=_refuse_constant,
            parse_int=_whole_number,
        )
    except RecursionError:
        raise _not_json(f"Nested deeper than {MAX_JSON_DEPTH} levels.") from None
    except ValueError:  # bad JSON, bad UTF-8, NaN/Infinity
        raise _not_json("Not valid JSON.") from None
    return data, _scan(data)


UTF8 = ("utf-8", "utf8")
"""The charset names a JSON body may carry (JSON is UTF-8: RFC 8259)."""


def _is_json(content_type: str) -> bool:
    """JSON (``application/json`` or ``application/*+json``), in UTF-8 when a charset is
    named at all."""
    media, _, parameters = content_type.partition(";")
    media = media.strip().lower()
    if not (
        media == "application/json"
        or (media.startswith("application/") and media.endswith("+json"))
    ):
        return False
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in UTF8:
            return False
    return True


async def read_limited(request: Request, limit: int) -> bytes:
    """The body, counted while it streams: over ``limit`` bytes is 413 at once, whether
    the length was declared or the body is chunked."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


ONCE_ONLY = ("Content-Type", "Content-Encoding")
"""Headers of a write that are refused when sent more than once, as a query parameter
or a JSON key is: which copy counts would be a guess. (``Idempotency-Key`` is too, where
the key is read (``adapters/http/idempotency.py``), so that its refusal is named beside
the body's problems: two keys could record one payment twice.)"""


def sent_twice(headers: Any, name: str) -> str | None:
    """The refusal's text when header ``name`` came more than once, else None (``headers``
    without ``getlist`` hold one value per name)."""
    getlist = getattr(headers, "getlist", None)
    copies = len(getlist(name)) if getlist is not None else 0
    return f"Send the {name} header once: it came {copies} times." if copies > 1 else None


async def json_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The body of a JSON request, at most ``limit`` bytes (``read_limited``)."""
    for name in ONCE_ONLY:
        if (text := sent_twice(request.headers, name)) is not None:
            raise ApiError(400, "invalid_request", text, field_errors={name: text})
    content_type = request.headers.get("content-type")
    if content_type is not None and not _is_json(content_type):
        text = "Send the body as JSON in UTF-8, with Content-Type: application/json."
        raise ApiError(400, "invalid_request", text, field_errors={"Content-Type": text})
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):  # a compressed body would be read as it came
        text = "Send the body uncompressed: no Content-Encoding is taken."
        raise ApiError(400, "invalid_request", text, field_errors={"Content-Encoding": text})
    return await read_limited(request, limit)


NOT_UTF8 = "Not UTF-8 text: percent-encode text as UTF-8 bytes (%C3%A9 for é)."


def read_query(raw: bytes) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """A query string's (name, value) pairs as Starlette reads them (``+`` a space, a pair
    without ``=`` an empty value), and the names whose name or value is not UTF-8 once
    percent-decoded: each a problem under its name (as sent, when the name is the bad
    part), never read with replacement characters."""
    items: list[tuple[str, str]] = []
    problems: dict[str, str] = {}
    for pair in raw.split(b"&"):
        if not pair:
            continue
        name_bytes, _, value_bytes = pair.partition(b"=")
        name = _utf8(name_bytes)
        value = _utf8(value_bytes)
        if name is None or value is None:
            shown = name if name is not None else name_bytes.decode("latin-1")
            problems[shown_key(shown)] = NOT_UTF8
            continue
        items.append((name, value))
    return items, problems


def _utf8(part: bytes) -> str | None:
    try:
        return unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return None
