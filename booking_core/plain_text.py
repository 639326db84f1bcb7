"""One rule for names a company's staff type that are shown back as one line: an API
key's name, a catalog item's, a crew member's, a team's, a company's, a booking form's
and its questions' labels, a hand-priced quote's line descriptions. (Names customers
type, theirs and their leads', are held to a looser one, ``person_name_problem``:
scripts such as Persian write names with a zero-width non-joiner, a format character.)"""

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


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The format characters that embed, override or isolate the direction of what follows
(U+202A to U+202E, U+2066 to U+2069): what makes ``evil\u202egnp.exe`` read otherwise."""

NOT_A_NAME = (
    "One line of text: no line breaks, tabs, or invisible characters that reverse the text."
)


def person_name_problem(name: str) -> str | None:
    """What is wrong with a person's name as typed (a customer's, a lead's, a waitlist
    entry's), None when nothing: it may not hold control characters (line breaks, tabs),
    line or paragraph separators, lone surrogates or direction controls, and must show a
    character (not only spaces and zero-width ones). Other format characters, such as the
    zero-width non-joiner some scripts write names with, are kept."""
    if problem := one_line_problem(name):
        return problem
    if not shows_something(name):
        return "Required: a name with at least one visible character."
    return None


def shows_something(text: str) -> bool:
    """Whether ``text`` shows a character: one that is neither a space nor a format
    character (a zero-width space, a zero-width joiner). A name, a street or a city made of
    those alone would print as nothing."""
    return any(not c.isspace() and unicodedata.category(c) != "Cf" for c in text)


def one_line_problem(text: str) -> str | None:
    """``NOT_A_NAME`` when ``text`` holds a control character (a line break, a tab), a
    line or paragraph separator, a lone surrogate or a direction control; else None. The
    rule of people's names and of an address's street lines and city, which crew read
    on one line."""
    if any(unicodedata.category(c) in {"Cc", "Zl", "Zp", "Cs"} or c in BIDI_CONTROLS for c in text):
        return NOT_A_NAME
    return None


def quoted(text: str, most: int = 20) -> str:
    """``text`` as a message quotes what was typed: in curly quotes, its first ``most``
    characters (then "..."), each hidden character (``HIDDEN_CATEGORIES``) written as its
    code point (``U+202E``), so the quote shows what is there and reads one way."""
    shown = "".join(
        f"U+{ord(c):04X}" if unicodedata.category(c) in HIDDEN_CATEGORIES else c
        for c in text[:most]
    )
    return f"\u2018{shown}{'...' if len(text) > most else ''}\u2019"
