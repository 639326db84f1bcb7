"""Compact JSON for what the adapters write: orjson where it can, the standard library
where only it can.

``compact(value)`` is ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
as UTF-8 bytes, byte for byte for the values the adapters write (dicts with string
keys, lists and tuples, strings, integers, booleans and None; orjson writes a float as
the same number, possibly spelled differently), written by orjson some fifteen times
faster: a booking encodes its row's document, its event's and its answer, and every
request writes a log line (``entrypoints/logs.py``, given structlog's fallback as
``default``). What orjson refuses goes to the standard library, which writes it as
before: an integer beyond 64 bits, a key that is not a string, and a lone surrogate
(echoed from a request's field path), written as a ``\\ud800`` escape.

Only writing: orjson reads an integer beyond 64 bits as a float, so documents and
request bodies are read by the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson


def compact(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """``value`` as compact JSON, UTF-8. ``default``, as in both libraries, turns what
    JSON has no type for into something it has (log lines: its ``repr``); without it
    such a value is a ``TypeError``."""
    try:
        return orjson.dumps(value, default=default)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        written = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=default)
        return written.encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, the only way JSON can hold it
        return json.dumps(value, separators=(",", ":"), default=default).encode()
