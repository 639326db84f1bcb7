"""How ``fieldErrors`` name what they refuse: dotted paths (``address.zip``), some of whose
keys are the client's own (an unknown field, a key given twice), and every problem of a
path kept, however many checks found one there.

A client's key is shown as it was sent, except for characters an answer must not carry
as they are: a lone surrogate (not text: no strict JSON parser reads it back), NUL and
the other control characters, format characters (a bidi override would reorder the
message around it) and line or paragraph separators. Each is written ``\\u`` and its
code point in four hex digits (``\\U`` and eight beyond U+FFFF), as JSON escapes it, so
the answer is valid UTF-8 and the client can still tell which key is meant."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

UNSHOWN = frozenset({"Cc", "Cs", "Cf", "Zl", "Zp"})
"""Unicode categories a shown key escapes: control, surrogate, format, line and
paragraph separator."""


def shown_key(key: str) -> str:
    """``key`` as a field path names it: as sent, but with each character of ``UNSHOWN``
    categories escaped (``a\\x00`` is ``a\\u0000``, a lone surrogate ``\\ud800``)."""
    if key.isprintable():  # no character of UNSHOWN is printable: the usual key
        return key
    return "".join(_escaped(char) for char in key)


def _escaped(char: str) -> str:
    if unicodedata.category(char) not in UNSHOWN:
        return char
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def merged(*found: Mapping[str, str]) -> dict[str, str]:
    """The problems of several checks by path, none lost: the texts found for one path
    are joined, each once, in the order given."""
    texts: dict[str, list[str]] = {}
    for problems in found:
        for path, text in problems.items():
            kept = texts.setdefault(path, [])
            if text not in kept:
                kept.append(text)
    return {path: " ".join(kept) for path, kept in texts.items()}
