"""What the setup pages (``setup_pages``, ``setup_catalog``, ``setup_crew``) parse
themselves, strictly: money and percentages as hundredths, whole numbers, ticked boxes of
a list; how a use case's problems (dotted field paths) are placed beside a form's fields
or at its top; and the fingerprint of the stored values an edit form was rendered with."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping

DECIMAL = re.compile(r"^(?P<whole>[0-9]+)(?:\.(?P<part>[0-9]{1,2}))?\Z")
WHOLE = re.compile(r"^[0-9]+\Z")
MAX_DIGITS = 12
"""Longer digit runs are refused before any arithmetic (a pasted number, not an amount)."""


class FieldErrors(dict[str, str]):
    """Problems of a form by its field names; the first text for a field is kept."""

    def add(self, name: str, text: str) -> None:
        """Note a problem of field ``name``."""
        self.setdefault(name, text)


def hundredths(
    errors: FieldErrors, name: str, text: str, *, what: str, example: str, high: int, low: int = 0
) -> int:
    """``120``, ``120.5`` or ``120.50`` as hundredths (12050): dollars as cents, percent as
    basis points, from ``low`` to ``high``. Anything else (``1e3``, ``-1``, ``12.345``,
    ``1,000``, a huge number) is a problem of field ``name``; the answer is then 0."""
    cleaned = text.strip().removeprefix("$").strip() if what == "amount" else text.strip()
    found = DECIMAL.match(cleaned)
    if not cleaned:
        errors.add(name, "Required.")
        return 0
    # Zeros in front do not count (``whole`` reads them so too): ``0120.50`` is 120.50.
    if found is None or len(found["whole"].lstrip("0")) > MAX_DIGITS:
        # "1,049.99" or "12,50": a comma is a thousands mark or a decimal one; either way
        # the reading is left to no guess, and the message says what to take out.
        how = "without commas, as" if "," in cleaned else "as"
        errors.add(
            name, f"Write the {what} {how} digits with at most two decimals, e.g. {example}."
        )
        return 0
    value = int(found["whole"].lstrip("0") or "0") * 100 + int((found["part"] or "0").ljust(2, "0"))
    if value > high:
        most = show_hundredths(high)
        errors.add(name, f"At most ${most}." if what == "amount" else f"At most {most}%.")
        return 0
    if value < low:
        least = show_hundredths(low)
        errors.add(name, f"At least ${least}." if what == "amount" else f"At least {least}%.")
        return 0
    return value


def money(errors: FieldErrors, name: str, text: str, *, low: int = 0) -> int:
    """Dollars and cents as integer cents (at most $1,000,000.00, the catalog's ceiling)."""
    return hundredths(
        errors, name, text, what="amount", example="120 or 120.50", high=100_000_000, low=low
    )


def percent(errors: FieldErrors, name: str, text: str, *, high: int = 10_000, low: int = 0) -> int:
    """A percentage (``8.875`` is refused: two decimals) as basis points."""
    return hundredths(
        errors, name, text, what="percentage", example="8 or 8.25", high=high, low=low
    )


def whole(
    errors: FieldErrors,
    name: str,
    text: str,
    *,
    optional: bool = False,
    high: int = 10**9,
    over: str | None = None,
) -> int | None:
    """A whole number from 0 to ``high``; blank is None when ``optional``; ``over`` is
    what a larger number is told (by default "At most ``high``.")."""
    cleaned = text.strip()
    if not cleaned:
        if not optional:
            errors.add(name, "Required.")
        return None
    if not WHOLE.match(cleaned):
        errors.add(name, "A whole number, digits only.")
        return None
    # Zeros in front do not count; past MAX_DIGITS digits a value is over any ceiling and
    # not read (``int`` refuses over 4,300 digits, zeros included).
    significant = cleaned.lstrip("0") or "0"
    if len(significant) > MAX_DIGITS or int(significant) > high:
        errors.add(name, over or f"At most {high:,}.")
        return None
    return int(significant)


def show_hundredths(value: int) -> str:
    """12050 -> ``120.50``; 100000000 -> ``1,000,000.00``."""
    return f"{value // 100:,}.{value % 100:02d}"


def plain_hundredths(value: int | None) -> str:
    """12050 -> ``120.50``, 12000 -> ``120``: what a form field shows."""
    if value is None:
        return ""
    return str(value // 100) if value % 100 == 0 else f"{value // 100}.{value % 100:02d}"


def sort_errors(
    problems: Mapping[str, str],
    places: Mapping[str, Mapping[str, str]],
    *,
    describe: Callable[[str], str] | None = None,
) -> tuple[FieldErrors, list[str]]:
    """Split a use case's problems (dotted paths) into the form's field errors and the
    rest. ``places`` maps a path prefix (``""``: the whole path) to the form fields of its
    suffixes: a path ``prefix.suffix`` goes beside the field its suffix, or the suffix's
    first part, is mapped to. Every other problem is ``where: text`` for the page's top,
    ``where`` being the path as ``describe`` names it (the text alone when that is "")."""
    describe = describe or readable_path
    mine, others = FieldErrors(), []
    for path, text in problems.items():
        target = None
        for prefix, fields in places.items():
            if prefix and not path.startswith(prefix + "."):
                continue
            rest = path[len(prefix) + 1 :] if prefix else path
            target = fields.get(rest) or fields.get(rest.split(".")[0])
            if target is not None:
                break
        if target is not None:
            mine.add(target, text)
        else:
            where = describe(path)
            others.append(f"{where}: {text}" if where else text)
    return mine, others


def readable_path(path: str) -> str:
    """``industries.0.services.2.extras.0.price_cents`` as people read it."""
    return path.replace("_", " ").replace(".", " \u203a ")


def new_slug(name: str, taken: Collection[str]) -> str:
    """A new frequency's slug from its name: ``every_ten_days``, then
    ``every_ten_days_2`` when that is taken (1 to 100 letters, digits, ``_``). Catalog
    items get random ids instead (``booking_core.ids.new_id``)."""
    stem = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:60] or "item"
    candidate, count = stem, 1
    while candidate in taken:
        count += 1
        candidate = f"{stem}_{count}"
    return candidate


def checked(form: Mapping[str, str], name: str) -> bool:
    """Whether a checkbox was ticked (a ticked box sends its field, an unticked one none)."""
    return name in form


def ticked(
    errors: FieldErrors,
    form: Mapping[str, str],
    prefix: str,
    choices: Iterable[str],
    *,
    field: str,
) -> tuple[str, ...]:
    """The ``choices`` whose box (``prefix`` + choice) was ticked, in their order. A box
    ticked for anything else (a forged form, or an item removed since the form was
    opened) is a problem of ``field``, never left out silently: in lists where none
    ticked means "every one", leaving it out would widen the restriction to everything."""
    offered = list(choices)
    known = {prefix + choice for choice in offered}
    if any(name.startswith(prefix) and name not in known for name in form):
        errors.add(field, "Choose from the list: a box ticked here is not one of its choices.")
    return tuple(choice for choice in offered if checked(form, prefix + choice))


SHOWN_FIELD = "shown"
"""The hidden field of an edit form holding ``fingerprint`` of the values it showed."""
STALE = (
    "Someone else saved this {what} since you opened it. The form now shows what is stored:"
    " make your change again."
)
"""What an edit form says when the record changed after it was opened."""


def fingerprint(values: Mapping[str, str]) -> str:
    """A digest of a form's values as rendered from the stored record: the record's
    version as the form knows it (the same values give the same digest)."""
    text = json.dumps(sorted(values.items()), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def stale(form: Mapping[str, str], stored: Mapping[str, str]) -> bool:
    """True when the posted form was rendered from other values than ``stored`` (the
    record as stored now, rendered as its form shows it): someone saved it since. A post
    without the fingerprint (not the page's own form) names no version and is not."""
    shown = form.get(SHOWN_FIELD)
    return shown is not None and shown != fingerprint(stored)


def items(text: str, *, spaces: bool = False) -> tuple[str, ...]:
    """Entries written one a line or separated by commas, blanks left out; with
    ``spaces``, separated by spaces too (entries that hold none: zips, dates)."""
    return tuple(
        part.strip() for part in re.split(r"[,\s]" if spaces else r"[,\n]", text) if part.strip()
    )
