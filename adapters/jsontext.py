"""Compact JSON for what the adapters write: orjson where it can, the standard library
where only it can.

``compact(value)`` is ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
as UTF-8 bytes, byte for byte for the values the adapters write (dicts with string
keys, lists and tuples, strings, integers, booleans and None; orjson writes a float as
the same number, possibly spelled differently), written by orjson some fifteen times
faster: a booking encodes its row's document, its event's and its answer. What orjson
refuses goes to the standard library, which writes it as before: an integer beyond
64 bits, a key that is not a string, and a lone surrogate (echoed from a request's
field path), written as a ``\\ud800`` escape.

Only writing: orjson reads an integer beyond 64 bits as a float, so documents and
request bodies are read by the standard library.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def compact(value: Any) -> bytes:
    """``value`` as compact JSON, UTF-8."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, the only way JSON can hold it
        return json.dumps(value, separators=(",", ":")).encode()
