"""One rule for names a company's staff type that are shown back as one line: an API
key's name, a catalog item's, a crew member's, a team's, a company's, a booking form's
and its questions' labels, a hand-priced quote's line descriptions. (Names customers
type, theirs and their leads', are not held to it: scripts such as Persian write
names with a zero-width non-joiner, a format character.)"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
"""Unicode categories a one-line name may not hold: control characters (line breaks,
tabs), format characters (direction overrides, zero-width spaces), line and paragraph
separators, lone surrogates: a name reads as it is written."""

NOT_ONE_LINE = (
    "One line of plain text: no line breaks, tabs, or invisible characters that "
    "control or reverse the text."
)


def has_hidden_characters(text: str) -> bool:
    """True when ``text`` holds a character of ``HIDDEN_CATEGORIES``."""
    return any(unicodedata.category(c) in HIDDEN_CATEGORIES for c in text)
