"""The rules a whole catalog meets, checked on its draft (``catalog_drafts``): every
problem at once, each at its field path (``industries.0.services.2.extras.0.price_cents``);
and what a new catalog may not drop while open bookings, the crew or booking forms still
use or name it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from booking_core.booking_forms import BookingForm, form_errors
from booking_core.bookings import Booking
from booking_core.catalog import ONE_TIME, Catalog, FeeKind
from booking_core.catalog_drafts import (
    CatalogDraft,
    CouponDraft,
    ExtraDraft,
    FeeDraft,
    FrequencyDraft,
    ParameterDraft,
    ServiceDraft,
    catalog_of,
)
from booking_core.coupons import normalize_code
from booking_core.crew import CrewMember
from booking_core.errors import ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters, quoted

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,100}\Z")
"""Catalog ids and slugs: what a query string's ``id:quantity`` item can name."""
ID_TEXT = "1 to 100 letters, digits, hyphens or underscores."
ZIP_PATTERN = re.compile(r"^[0-9]{5}\Z")


def zip_problem(zip_code: str, *, listed: bool) -> str:
    """What is wrong with a zip that is not 5 digits; one of a list is quoted
    (``plain_text.quoted``), since a form shows the whole list's problems beside one
    field."""
    if not listed:
        return "A 5-digit US zip code."
    return f"{quoted(zip_code)} is not a 5-digit US zip code."


MAX_NAME = 200
MAX_DESCRIPTION = 2_000
MAX_CODE = 100
MAX_CENTS = 100_000_000
"""One million dollars: the ceiling of every amount in a catalog."""
MAX_MINUTES = 24 * 60
MAX_QUANTITY = 10_000
MAX_INTERVAL_DAYS = 365
MAX_FEE_BPS = 100_000
MAX_ENTRIES = 1_000
"""The longest list a catalog (or a crew document) may hold."""


class Problems:
    """Field problems gathered by dotted path; the first text for a path is kept."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def add(self, path: str, text: str) -> None:
        """Note a problem of the field at ``path``."""
        self.errors.setdefault(path, text)

    def name(self, path: str, value: str, limit: int = MAX_NAME) -> None:
        """A required text of at most ``limit`` characters."""
        if not value.strip():
            self.add(path, "Required: may not be blank.")
        elif "\x00" in value:
            self.add(path, "May not contain NUL characters.")
        elif has_hidden_characters(value):
            self.add(path, NOT_ONE_LINE)
        elif len(value) > limit:
            self.add(path, f"At most {limit} characters.")

    def id(self, path: str, value: str) -> None:
        """An id or slug."""
        if not ID_PATTERN.match(value):
            self.add(path, ID_TEXT)

    def between(self, path: str, value: int, low: int, high: int) -> None:
        """A whole number from ``low`` to ``high``."""
        if not low <= value <= high:
            self.add(path, f"A whole number from {low} to {high}.")

    def entries(self, path: str, items: Sequence[object], limit: int = MAX_ENTRIES) -> None:
        """A list of at most ``limit`` entries."""
        if len(items) > limit:
            self.add(path, f"At most {limit} entries.")

    def unique(self, path: str, keys: Iterable[str], text: str) -> None:
        """Each key once. A repeat is named at ``path`` with its index in place of ``{}``
        (``fees.{}.id`` -> ``fees.3.id``), or at ``path.<index>`` when it has none."""
        seen: set[str] = set()
        for index, key in enumerate(keys):
            if key in seen:
                self.add(path.format(index) if "{}" in path else f"{path}.{index}", text)
            seen.add(key)


def _money(problems: Problems, path: str, value: int) -> None:
    problems.between(path, value, 0, MAX_CENTS)


def _minutes(problems: Problems, path: str, value: int) -> None:
    problems.between(path, value, 0, MAX_MINUTES)


def _parameter(problems: Problems, path: str, p: ParameterDraft) -> None:
    problems.id(f"{path}.id", p.id)
    problems.name(f"{path}.name", p.name)
    _money(problems, f"{path}.price_cents", p.price_cents)
    _minutes(problems, f"{path}.duration_minutes", p.duration_minutes)
    problems.between(f"{path}.min_quantity", p.min_quantity, 0, MAX_QUANTITY)
    if p.max_quantity < p.min_quantity:
        problems.add(f"{path}.max_quantity", "At least the minimum quantity.")
    problems.between(f"{path}.max_quantity", p.max_quantity, 0, MAX_QUANTITY)


def _extra(problems: Problems, path: str, e: ExtraDraft, slugs: set[str]) -> None:
    problems.id(f"{path}.id", e.id)
    problems.name(f"{path}.name", e.name)
    _money(problems, f"{path}.price_cents", e.price_cents)
    _minutes(problems, f"{path}.duration_minutes", e.duration_minutes)
    problems.between(f"{path}.max_quantity", e.max_quantity, 1, MAX_QUANTITY)
    _known(problems, f"{path}.frequency_slugs", e.frequency_slugs, slugs, "frequency")


def _known(
    problems: Problems, path: str, values: Sequence[str], known: set[str], kind: str
) -> None:
    """Each of ``values`` names one of ``known``, once."""
    problems.entries(path, values)
    for index, value in enumerate(values):
        if value not in known:
            problems.add(f"{path}.{index}", f"No {kind} {value!r} in this catalog.")
    problems.unique(path, values, "Listed twice.")


def _service(problems: Problems, path: str, s: ServiceDraft, slugs: set[str]) -> None:
    problems.id(f"{path}.id", s.id)
    problems.name(f"{path}.name", s.name)
    if len(s.description) > MAX_DESCRIPTION:
        problems.add(f"{path}.description", f"At most {MAX_DESCRIPTION} characters.")
    _money(problems, f"{path}.base_price_cents", s.base_price_cents)
    _minutes(problems, f"{path}.base_duration_minutes", s.base_duration_minutes)
    shortest = s.base_duration_minutes + sum(
        max(p.min_quantity, 0) * max(p.duration_minutes, 0) for p in s.parameters
    )
    if shortest < 1:
        problems.add(
            f"{path}.base_duration_minutes",
            "The shortest job (base plus each parameter's minimum) must last at least a minute.",
        )
    problems.entries(f"{path}.parameters", s.parameters)
    problems.entries(f"{path}.extras", s.extras)
    for index, parameter in enumerate(s.parameters):
        _parameter(problems, f"{path}.parameters.{index}", parameter)
    for index, extra in enumerate(s.extras):
        _extra(problems, f"{path}.extras.{index}", extra, slugs)
    problems.unique(
        f"{path}.parameters.{{}}.id",
        (p.id for p in s.parameters),
        "Another parameter of this service has this id.",
    )
    problems.unique(
        f"{path}.extras.{{}}.id",
        (e.id for e in s.extras),
        "Another extra of this service has this id.",
    )
    problems.unique(
        f"{path}.parameters.{{}}.name",
        (name_key(p.name) for p in s.parameters),
        "Another parameter of this service has this name: customers could not tell them apart.",
    )
    problems.unique(
        f"{path}.extras.{{}}.name",
        (name_key(e.name) for e in s.extras),
        "Another extra of this service has this name: customers could not tell them apart.",
    )


def name_key(name: str) -> str:
    """What two names of one list may not share: ``Bedrooms`` and `` bedrooms`` are one
    name to a customer choosing by it (case and spacing aside)."""
    return " ".join(name.split()).casefold()


def _frequency(problems: Problems, path: str, f: FrequencyDraft) -> None:
    problems.id(f"{path}.slug", f.slug)
    problems.name(f"{path}.name", f.name)
    problems.between(f"{path}.discount_bps", f.discount_bps, 0, 10_000)
    if f.slug == ONE_TIME and f.interval_days is not None:
        problems.add(f"{path}.interval_days", "one_time is a single visit: give null.")
    elif f.slug != ONE_TIME and f.interval_days is None:
        problems.add(f"{path}.interval_days", "Only one_time has no interval.")
    elif f.interval_days is not None:
        problems.between(f"{path}.interval_days", f.interval_days, 1, MAX_INTERVAL_DAYS)


_FEE_TARGETS = {
    "weekdays": FeeKind.DATE,
    "dates": FeeKind.DATE,
    "zips": FeeKind.ZIP,
    "service_ids": FeeKind.SERVICE,
}


def _fee(problems: Problems, path: str, fee: FeeDraft, services: set[str]) -> None:
    problems.id(f"{path}.id", fee.id)
    problems.name(f"{path}.name", fee.name)
    if (fee.amount_cents is None) == (fee.amount_bps is None):
        problems.add(
            f"{path}.amount_cents",
            "Give exactly one of a fixed amount in cents and a percentage in basis points.",
        )
    if fee.amount_cents is not None:
        _money(problems, f"{path}.amount_cents", fee.amount_cents)
    if fee.amount_bps is not None:
        problems.between(f"{path}.amount_bps", fee.amount_bps, 0, MAX_FEE_BPS)
    for name, kind in _FEE_TARGETS.items():
        if getattr(fee, name) and fee.kind is not kind:
            problems.add(f"{path}.{name}", f"Only {kind.value} fees have {name}.")
    for index, weekday in enumerate(fee.weekdays):
        problems.between(f"{path}.weekdays.{index}", weekday, 1, 7)
    problems.unique(f"{path}.weekdays", (str(d) for d in fee.weekdays), "Listed twice.")
    problems.entries(f"{path}.dates", fee.dates)
    problems.unique(f"{path}.dates", (d.isoformat() for d in fee.dates), "Listed twice.")
    _zips(problems, f"{path}.zips", fee.zips)
    if fee.kind is FeeKind.SERVICE:
        _known(problems, f"{path}.service_ids", fee.service_ids, services, "service")
    if fee.kind is FeeKind.DATE and not (fee.weekdays or fee.dates):
        problems.add(f"{path}.weekdays", "A date fee needs weekdays (1-7) or dates.")
    if fee.kind is FeeKind.ZIP and not fee.zips:
        problems.add(f"{path}.zips", "A zip fee needs zips.")
    if fee.kind is FeeKind.SERVICE and not fee.service_ids:
        problems.add(f"{path}.service_ids", "A service fee needs service ids.")


def _zips(problems: Problems, path: str, zips: Sequence[str]) -> None:
    problems.entries(path, zips)
    for index, zip_code in enumerate(zips):
        if not ZIP_PATTERN.match(zip_code):
            problems.add(f"{path}.{index}", zip_problem(zip_code, listed=True))
    problems.unique(path, zips, "Listed twice.")


def _coupon(
    problems: Problems, path: str, c: CouponDraft, services: set[str], slugs: set[str]
) -> None:
    problems.id(f"{path}.id", c.id)
    problems.name(f"{path}.code", c.code, MAX_CODE)
    if c.code != c.code.strip():
        problems.add(f"{path}.code", "No spaces before or after the code.")
    if (c.percent_bps is None) == (c.amount_cents is None):
        problems.add(
            f"{path}.percent_bps",
            "Give exactly one of a percentage in basis points and a fixed amount in cents.",
        )
    if c.percent_bps is not None:
        problems.between(f"{path}.percent_bps", c.percent_bps, 1, 10_000)
    if c.amount_cents is not None:
        problems.between(f"{path}.amount_cents", c.amount_cents, 1, MAX_CENTS)
    for name in ("valid_from", "valid_until"):
        instant = getattr(c, name)
        if instant is not None and instant.utcoffset() is None:
            problems.add(f"{path}.{name}", "A time with a UTC offset.")
    if (
        c.valid_from is not None
        and c.valid_until is not None
        and f"{path}.valid_from" not in problems.errors
        and f"{path}.valid_until" not in problems.errors
        and not c.valid_from < c.valid_until
    ):
        problems.add(f"{path}.valid_until", "After the start of the coupon's validity.")
    for name in ("max_redemptions", "per_customer_limit"):
        limit = getattr(c, name)
        if limit is not None:
            problems.between(f"{path}.{name}", limit, 1, 1_000_000_000)
    _money(problems, f"{path}.min_subtotal_cents", c.min_subtotal_cents)
    _known(problems, f"{path}.service_ids", c.service_ids, services, "service")
    _known(problems, f"{path}.frequency_slugs", c.frequency_slugs, slugs, "frequency")


def catalog_problems(draft: CatalogDraft) -> dict[str, str]:
    """Every problem of ``draft`` by field path (``industries.0.services.2.extras.0.
    price_cents``); empty when it makes a valid catalog."""
    problems = Problems()
    problems.between("tax_rate_bps", draft.tax_rate_bps, 0, 10_000)
    slugs = {f.slug for f in draft.frequencies}
    services = [s for i in draft.industries for s in i.services]
    service_ids = {s.id for s in services}
    for name in ("frequencies", "industries", "fees", "coupons"):
        problems.entries(name, getattr(draft, name))
    if len(services) > MAX_ENTRIES:
        problems.add("industries", f"At most {MAX_ENTRIES} services in all.")
    for index, frequency in enumerate(draft.frequencies):
        _frequency(problems, f"frequencies.{index}", frequency)
    problems.unique(
        "frequencies.{}.slug",
        (f.slug for f in draft.frequencies),
        "Another frequency has this slug.",
    )
    problems.unique(
        "frequencies.{}.name",
        (name_key(f.name) for f in draft.frequencies),
        "Another frequency has this name: customers could not tell them apart.",
    )
    if services and not draft.frequencies:
        problems.add("frequencies", "Add at least one (such as one_time): nothing is bookable.")
    seen_services: set[str] = set()
    for i, industry in enumerate(draft.industries):
        path = f"industries.{i}"
        problems.id(f"{path}.id", industry.id)
        problems.name(f"{path}.name", industry.name)
        for s, service in enumerate(industry.services):
            _service(problems, f"{path}.services.{s}", service, slugs)
            if service.id in seen_services:
                problems.add(f"{path}.services.{s}.id", "Another service has this id.")
            seen_services.add(service.id)
    problems.unique(
        "industries.{}.id", (i.id for i in draft.industries), "Another industry has this id."
    )
    for index, fee in enumerate(draft.fees):
        _fee(problems, f"fees.{index}", fee, service_ids)
    problems.unique("fees.{}.id", (f.id for f in draft.fees), "Another fee has this id.")
    for index, coupon in enumerate(draft.coupons):
        _coupon(problems, f"coupons.{index}", coupon, service_ids, slugs)
    problems.unique("coupons.{}.id", (c.id for c in draft.coupons), "Another coupon has this id.")
    problems.unique(
        "coupons.{}.code",
        (normalize_code(c.code) for c in draft.coupons),
        "Another coupon has this code (codes match whatever their case).",
    )
    return problems.errors


def build_catalog(draft: CatalogDraft, *, company_id: str, timezone: str) -> Catalog:
    """The catalog ``draft`` describes for the company, or ``ValidationFailed`` naming every
    problem at its field path."""
    errors = catalog_problems(draft)
    if errors:
        raise ValidationFailed(errors, "The catalog has problems; nothing was saved.")
    return catalog_of(draft, company_id=company_id, timezone=timezone)


def removal_problems(new: Catalog, open_bookings: Iterable[Booking]) -> dict[str, str]:
    """What ``new`` may not leave out while open bookings use it: the service of every open
    booking (a service may be made inactive instead), and everything a plan's later visits
    are priced from when the plan is extended: its frequency, parameters and extras (each
    still taking the plan's quantity, an extra still offered with its frequency), manual
    fees and coupon (a coupon may be made inactive instead)."""
    missing: dict[str, Counter[str]] = {}
    narrowed: dict[str, Counter[str]] = {}

    def lacks(where: str, what: str) -> None:
        missing.setdefault(where, Counter())[what] += 1

    def narrows(where: str, what: str) -> None:
        narrowed.setdefault(where, Counter())[what] += 1

    for booking in open_bookings:
        selection = booking.selection
        service = new.services_by_id.get(selection.service_id)
        if service is None:
            lacks("industries", f"service {selection.service_id!r}")
        if booking.plan_id is None:
            continue
        if selection.frequency_slug not in new.frequencies_by_slug:
            lacks("frequencies", f"frequency {selection.frequency_slug!r}")
        if service is not None:
            for item in selection.parameters:
                parameter = service.parameters_by_id.get(item.id)
                if parameter is None:
                    lacks("industries", f"parameter {item.id!r} of {service.id!r}")
                elif not parameter.min_quantity <= item.quantity <= parameter.max_quantity:
                    narrows(
                        "industries",
                        f"parameter {item.id!r} of {service.id!r} at {item.quantity}",
                    )
            for item in selection.extras:
                extra = service.extras_by_id.get(item.id)
                if extra is None:
                    lacks("industries", f"extra {item.id!r} of {service.id!r}")
                elif item.quantity > extra.max_quantity or (
                    extra.frequency_slugs and selection.frequency_slug not in extra.frequency_slugs
                ):
                    narrows(
                        "industries",
                        f"extra {item.id!r} of {service.id!r} at {item.quantity}"
                        f" on {selection.frequency_slug!r}",
                    )
        for fee_id in selection.manual_fee_ids:
            if fee_id not in new.fees_by_id:
                lacks("fees", f"fee {fee_id!r}")
        code = selection.coupon_code
        if code is not None and normalize_code(code) not in new.coupons_by_code:
            lacks("coupons", f"coupon {code!r}")
    problems = {
        where: "Still used by open bookings, so it cannot be removed: "
        + ", ".join(f"{what} ({count} booked)" for what, count in sorted(counts.items()))
        + "."
        + _keep_instead(where, counts)
        for where, counts in missing.items()
    }
    for where, counts in narrowed.items():
        said = (
            "Open plans are priced from these as they were booked, so their range may not"
            " leave them out (their next visits could not be made): "
            + ", ".join(f"{what} ({count} booked)" for what, count in sorted(counts.items()))
            + "."
        )
        problems[where] = f"{problems[where]} {said}" if where in problems else said
    return problems


def reference_problems(
    new: Catalog, crew: Iterable[CrewMember], forms: Iterable[BookingForm]
) -> dict[str, str]:
    """What ``new`` may not leave out while the crew or booking forms name it: a service a
    crew member excludes, and a service, frequency or extra a booking form offers (each
    would stay behind as a name of nothing, and the crew or forms would no longer export
    and import back)."""
    named: dict[str, list[str]] = {}
    for member in crew:
        for service_id in member.excluded_service_ids:
            if service_id not in new.services_by_id:
                named.setdefault("industries", []).append(
                    f"service {service_id!r} (excluded by crew member {member.name})"
                )
    services_named = False  # what could be made inactive instead of removed
    for member in crew:
        services_named |= any(s not in new.services_by_id for s in member.excluded_service_ids)
    for form in forms:
        for path, problem in form_errors(form, new, stored=form).items():
            where = "frequencies" if path.startswith("frequency_slugs") else "industries"
            services_named |= path.startswith("service_ids")
            named.setdefault(where, []).append(
                f"{problem.rstrip('.')} (booking form {form.name!r})"
            )
    return {
        where: "Still named by the crew or booking forms, so it cannot be removed: "
        + "; ".join(items)
        + ". Change those first"
        + (
            ", or make the service inactive instead."
            if where == "industries" and services_named
            else "."
        )
        for where, items in named.items()
    }


_KEEP_INSTEAD = {
    "industries": " Keep it; a service can be made inactive to take no new bookings.",
    "coupons": " Keep it; a coupon can be made inactive to take no new bookings.",
}


def _keep_instead(where: str, counts: Mapping[str, int]) -> str:
    """What to do instead of removing what open bookings use: make it inactive, where the
    thing can be (a service, a coupon); an extra or a parameter cannot, so it is kept
    until those bookings are done."""
    if where == "industries" and not any(what.startswith("service ") for what in counts):
        return " Keep it until those bookings are done or cancelled."
    return _KEEP_INSTEAD.get(where, "")
