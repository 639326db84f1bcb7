"""The catalog in the admin workspace: ``/admin/catalog`` shows it whole; forms add and
change a service, a parameter or an extra of a service, a frequency, a coupon and a fee
definition, and retire a service or a fee (or offer it again).

Each form changes one item of the stored catalog's draft (``export_catalog``) and hands
the whole draft to ``replace_catalog``, which checks everything and writes nothing when
anything is wrong. Problems at the form's item are shown beside its fields; any other
(say, what an open booking still needs) at the top of the form. The item is named in
the address and looked up in the signed-in user's catalog only: an id the company does
not have is the 404 page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.calendar import read_date
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import Visit, page
from adapters.web.setup_forms import (
    STALE,
    FieldErrors,
    checked,
    fingerprint,
    items,
    money,
    new_slug,
    percent,
    plain_hundredths,
    readable_path,
    show_hundredths,
    sort_errors,
    stale,
    ticked,
    whole,
)
from booking_core.catalog import ONE_TIME, FeeKind
from booking_core.catalog_drafts import (
    CatalogDraft,
    CouponDraft,
    ExtraDraft,
    FeeDraft,
    FrequencyDraft,
    IndustryDraft,
    ParameterDraft,
    ServiceDraft,
)
from booking_core.catalog_rules import ZIP_PATTERN, zip_problem
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.ids import new_id
from booking_core.services.setup import (
    CatalogChanged,
    ReplaceCatalog,
    export_catalog,
    replace_catalog,
)

T = TypeVar("T")
CATALOG = "/admin/catalog"
ONE_TIME_DRAFT = FrequencyDraft(slug=ONE_TIME, name="One time")

SERVICE_FIELDS = {
    "id": "name",
    "name": "name",
    "description": "description",
    "base_price_cents": "price",
    "base_duration_minutes": "duration",
}
PARAMETER_FIELDS = {
    "id": "name",
    "name": "name",
    "price_cents": "price",
    "duration_minutes": "duration",
    "min_quantity": "min_quantity",
    "max_quantity": "max_quantity",
}
EXTRA_FIELDS = {
    "id": "name",
    "name": "name",
    "price_cents": "price",
    "duration_minutes": "duration",
    "max_quantity": "max_quantity",
    "frequency_slugs": "frequencies",
}
FREQUENCY_FIELDS = {
    "slug": "name",
    "name": "name",
    "interval_days": "interval_days",
    "discount_bps": "discount",
}
FEE_FIELDS = {
    "id": "name",
    "name": "name",
    "kind": "kind",
    "amount_cents": "amount",
    "amount_bps": "percent",
    "weekdays": "weekdays",
    "dates": "dates",
    "zips": "zips",
    "service_ids": "services",
}
FEE_KINDS = (
    (FeeKind.DATE, "Date", "on the weekdays or dates below"),
    (FeeKind.ZIP, "Zip", "for jobs in the zip codes below"),
    (FeeKind.SERVICE, "Service", "on the services ticked below"),
    (FeeKind.MANUAL, "Manual", "only when the office adds it to a booking, by its id"),
)
"""Each kind of fee, its label, and when it applies."""
COUPON_FIELDS = {
    "id": "code",
    "code": "code",
    "percent_bps": "percent",
    "amount_cents": "amount",
    "valid_from": "valid_from",
    "valid_until": "valid_until",
    "max_redemptions": "max_redemptions",
    "per_customer_limit": "per_customer_limit",
    "min_subtotal_cents": "min_subtotal",
    "service_ids": "services",
    "frequency_slugs": "frequencies",
}


@frozen
class Refusal:
    """What ``replace_catalog`` refused, sorted for the form."""

    errors: FieldErrors
    others: list[str]
    problems: dict[str, str] = attrs.field(factory=dict)
    """The catalog's own problems by path, as it named them."""


def _named(items: Sequence[T], wanted: str | None, what: str, key: Callable[[T], str]) -> T | None:
    """The item the address names (``wanted``), or None for a new one; an id the catalog
    does not hold (another company's, say) is ``NotFoundError``: the 404 page."""
    if wanted is None:
        return None
    found = next((item for item in items if key(item) == wanted), None)
    if found is None:
        raise NotFoundError(what, wanted)
    return found


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


def _put(items: list[Any], current: _Identified | None, changed: _Identified) -> int:
    """Put ``changed`` in ``items``: in place of ``current`` (same id), or at the end when
    it is new; its index, for the field paths of the catalog's errors."""
    if current is None:
        items.append(changed)
        return len(items) - 1
    index = [item.id for item in items].index(current.id)
    items[index] = changed
    return index


def _draft(visit: Visit) -> CatalogDraft:
    return export_catalog(visit.signed_in_company.id, uow=visit.deps.reader())


def _save(
    visit: Visit,
    base: CatalogDraft,
    draft: CatalogDraft,
    places: dict[str, dict[str, str]],
    *,
    dry_run: bool = False,
) -> Refusal | None:
    """Replace the catalog with ``draft``, made from ``base`` (the stored draft this request
    read); the refusal sorted by ``places`` if refused, in the page's words. If the catalog
    changed since ``base`` was read (someone else saved in between), nothing is saved and
    the refusal says so: their change is never overwritten unseen. ``dry_run``: only
    check (a form with problems of its own is still checked whole, so that every problem
    shows at once)."""
    try:
        replace_catalog(
            ReplaceCatalog(
                company_id=visit.signed_in_company.id,
                catalog=draft,
                expected=base,
                dry_run=dry_run,
            ),
            uow=visit.deps.uow(),
            clock=visit.deps.clock,
        )
    except ValidationFailed as refused:
        names = Names(base, draft)
        plain = {path: names.plain(path, text) for path, text in refused.field_errors.items()}
        errors, others = sort_errors(plain, places, describe=names.place)
        return Refusal(errors, others, refused.field_errors)
    except CatalogChanged as changed:
        return Refusal(FieldErrors(), [changed.message])
    return None


def _check(
    visit: Visit,
    base: CatalogDraft,
    draft: CatalogDraft,
    places: dict[str, dict[str, str]],
    errors: FieldErrors,
    *,
    then: tuple[str, str],
) -> Response | Refusal:
    """Save ``draft`` when the form had no problems of its own (``errors``), else only check
    it (what could not be read stands in as a placeholder whose problems fall on fields
    already marked). Saved: the redirect to ``then`` (the address, and the flash said
    there); else every problem, the form's and the catalog's."""
    refused = _save(visit, base, draft, places, dry_run=bool(errors))
    if refused is None and not errors:
        go_to, flash = then
        return visit.redirect(go_to, flash=flash)
    found = FieldErrors(errors)
    for name, text in (refused.errors if refused else {}).items():
        found.add(name, text)
    return Refusal(found, refused.others if refused else [])


PLAIN = {
    "A date fee needs weekdays (1-7) or dates.": (
        "Tick the weekdays, or write the dates, the fee is charged on."
    ),
    "A zip fee needs zips.": "Write the zip codes the fee is charged in.",
    "A service fee needs service ids.": "Tick the services the fee is charged on.",
    "Only one_time has no interval.": "Give the number of days between visits.",
    "Required: may not be blank.": "Required.",
    "Give exactly one of a fixed amount in cents and a percentage in basis points.": (
        "Give a fixed amount or a percentage, not both."
    ),
    "Give exactly one of a percentage in basis points and a fixed amount in cents.": (
        "Give a percentage or an amount off, not both."
    ),
    "Add at least one (such as one_time): nothing is bookable.": (
        "Services need at least one frequency to be booked: add another frequency first."
    ),
}
"""The catalog's own texts (written for the API and the command line) in the pages' words."""
QUOTED = re.compile(r"'([A-Za-z0-9_-]{1,100})'")
FIELD_WORDS = {
    "name": "name",
    "frequency_slugs": "frequencies",
    "service_ids": "services",
    "price_cents": "price",
    "base_price_cents": "base price",
    "duration_minutes": "time",
    "base_duration_minutes": "duration",
}


class Names:
    """The catalog's items by id, for messages that name them (the draft before and
    after a change, so that a removed item is named too)."""

    def __init__(self, *drafts: CatalogDraft) -> None:
        self.drafts = drafts
        self.by_id: dict[str, str] = {}
        for draft in drafts:
            self.by_id |= {f.slug: f.name for f in draft.frequencies}
            self.by_id |= {c.id: c.code for c in draft.coupons}
            self.by_id |= {f.id: f.name for f in draft.fees}
            for industry in draft.industries:
                for service in industry.services:
                    self.by_id[service.id] = service.name
                    self.by_id |= {p.id: p.name for p in service.parameters}
                    self.by_id |= {e.id: e.name for e in service.extras}

    def plain(self, path: str, text: str) -> str:
        """``text`` in the page's words, every quoted id as the item's name."""
        text = PLAIN.get(text, text)
        return QUOTED.sub(lambda m: f"\u201c{self.by_id.get(m[1], m[1])}\u201d", text)

    def place(self, path: str) -> str:
        """``industries.0.services.2.extras.0.price_cents`` as people read it: ``The extra
        \u201cFridge\u201d of Standard clean (price)``, from the draft after the change."""
        draft, parts = self.drafts[-1], path.split(".")
        if len(parts) == 1:  # the catalog's whole list (what open bookings still use)
            return ""
        words, rest = [], parts
        try:
            if parts[0] == "industries" and len(parts) > 1:
                industry = draft.industries[int(parts[1])]
                words, rest = [f"the industry \u201c{industry.name}\u201d"], parts[2:]
                if rest[:1] == ["services"] and len(rest) > 1:
                    service = industry.services[int(rest[1])]
                    words, rest = [f"the service \u201c{service.name}\u201d"], rest[2:]
                    for kind, found in (("parameters", service.parameters),
                                        ("extras", service.extras)):  # fmt: skip
                        if rest[:1] == [kind] and len(rest) > 1:
                            item = found[int(rest[1])]
                            words = [f"the {kind[:-1]} \u201c{item.name}\u201d of {service.name}"]
                            rest = rest[2:]
            elif parts[0] in ("frequencies", "fees", "coupons") and len(parts) > 1:
                listed = getattr(draft, parts[0])[int(parts[1])]
                label = listed.code if parts[0] == "coupons" else listed.name
                words = [f"the {parts[0][:-1].replace('frequencie', 'frequency')} "
                         f"\u201c{label}\u201d"]  # fmt: skip
                rest = parts[2:]
        except (ValueError, IndexError):
            return readable_path(path)
        if not words:
            return readable_path(path)
        field = next((p for p in rest if not p.isdigit()), None)
        where = words[0][0].upper() + words[0][1:]
        return f"{where} ({FIELD_WORDS.get(field, field.replace('_', ' '))})" if field else where


def _where(draft: CatalogDraft, service_id: str) -> tuple[int, int]:
    """The industry and service indexes of ``service_id``; 404 when there is none."""
    for i, industry in enumerate(draft.industries):
        for s, service in enumerate(industry.services):
            if service.id == service_id:
                return i, s
    raise NotFoundError("service", service_id)


def _form_page(
    visit: Visit,
    template: str,
    *,
    values: dict[str, str],
    errors: FieldErrors,
    others: list[str] | None = None,
    stored: dict[str, str] | None = None,
    **context: object,
) -> Response:
    """The form; ``stored``: the item's stored values as the form shows them (an edit),
    whose fingerprint the form carries back."""
    failed = bool(errors or others)
    return visit.render(
        template,
        status=422 if failed else 200,
        values=values,
        errors=errors,
        others=others or [],
        shown="" if stored is None else fingerprint(stored),
        **context,
    )


def _changed_since_shown(
    visit: Visit, current: object | None, stored: dict[str, str], what: str
) -> list[str]:
    """The problem of a POST made from a form opened before someone else saved the item
    (its fingerprint is not the stored values'), else none. The save itself is checked
    against the catalog read in this request (``_save``), in one unit of work."""
    if visit.request.method == "POST" and current is not None and stale(visit.form, stored):
        return [STALE.format(what=what)]
    return []


# The catalog at a glance


def minutes_text(minutes: int) -> str:
    """90 -> ``1 h 30 min``."""
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return f"{hours} h {rest} min"
    return f"{hours} h" if hours else f"{rest} min"


def catalog_page(visit: Visit) -> Response:
    """``GET /admin/catalog``: industries, services, extras, frequencies, fees, coupons."""
    draft = _draft(visit)
    return visit.render(
        "setup_catalog.html",
        draft=draft,
        dollars=show_hundredths,
        percent=lambda bps: f"{plain_hundredths(bps)}%",
        minutes=minutes_text,
        frequency_names={f.slug: f.name for f in draft.frequencies},
        service_names={s.id: s.name for i in draft.industries for s in i.services},
        names=lambda keys, table: ", ".join(str(table.get(key, key)) for key in keys),
        weekday_names=dict(enumerate(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), start=1)),
    )


# Services


def _service_values(service: ServiceDraft | None, industry: str) -> dict[str, str]:
    if service is None:
        return {
            "name": "",
            "industry": industry,
            "description": "",
            "price": "",
            "duration": "",
            "taxable": "on",
            "active": "on",
        }
    return {
        "name": service.name,
        "industry": industry,
        "description": service.description,
        "price": plain_hundredths(service.base_price_cents),
        "duration": str(service.base_duration_minutes),
        **({"taxable": "on"} if service.taxable else {}),
        **({"active": "on"} if service.active else {}),
    }


def service_form(visit: Visit) -> Response:
    """``/admin/catalog/services/new`` and ``/admin/catalog/services/{service_id}``: add or
    change a service (its parameters and extras are kept as they are)."""
    draft = _draft(visit)
    service_id = visit.request.path_params.get("service_id")
    current: ServiceDraft | None = None
    industry_name = draft.industries[0].name if draft.industries else ""
    if service_id is not None:
        i, s = _where(draft, service_id)
        current = draft.industries[i].services[s]
        industry_name = draft.industries[i].name
    stored = values = _service_values(current, industry_name)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "service")
    added_one_time = False
    if visit.request.method == "POST" and not others:
        values = {name: visit.field(name) for name in ("name", "industry", "description")}
        values |= {"price": visit.field("price"), "duration": visit.field("duration")}
        values |= {name: "on" for name in ("taxable", "active") if checked(visit.form, name)}
        price = money(errors, "price", values["price"])
        duration = whole(errors, "duration", values["duration"], high=24 * 60)
        if not values["industry"].strip():
            errors.add("industry", "Required: the services of one industry are listed together.")
        # Checked whole even with the form's own problems: every problem at once.
        changed = ServiceDraft(
            id=current.id if current else new_id("svc"),
            name=values["name"].strip(),
            description=values["description"].strip(),
            base_price_cents=price,
            base_duration_minutes=duration or 0,
            taxable=checked(visit.form, "taxable"),
            active=checked(visit.form, "active"),
            parameters=current.parameters if current else (),
            extras=current.extras if current else (),
        )
        new_draft, i, s = _placed(draft, changed, values["industry"].strip())
        if not new_draft.frequencies:
            new_draft = attrs.evolve(new_draft, frequencies=(ONE_TIME_DRAFT,))
            added_one_time = True
        note = " A one-time frequency was added to book it with." if added_one_time else ""
        refused = _check(
            visit,
            draft,
            new_draft,
            {
                f"industries.{i}.services.{s}": SERVICE_FIELDS,
                f"industries.{i}": {"name": "industry", "id": "industry"},
            },
            errors,
            then=(f"{CATALOG}#service-{changed.id}", f"Saved {changed.name}.{note}"),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit,
        "setup_service.html",
        values=values,
        errors=errors,
        others=others,
        stored=stored if current else None,
        service=current,
        industries=[i.name for i in draft.industries],
    )


def _placed(
    draft: CatalogDraft, service: ServiceDraft, industry_name: str
) -> tuple[CatalogDraft, int, int]:
    """``draft`` with ``service`` in the industry of that name (made when there is none),
    in its old place if it stays in its industry; and where it now is."""
    industries = [
        attrs.evolve(i, services=tuple(s for s in i.services if s.id != service.id))
        for i in draft.industries
    ]
    old = {s.id: s for i in draft.industries for s in i.services}
    wanted = " ".join(industry_name.split()).casefold()
    target = next(
        (n for n, i in enumerate(industries) if " ".join(i.name.split()).casefold() == wanted),
        None,
    )
    if target is None:
        made = IndustryDraft(id=new_id("ind"), name=industry_name)
        industries.append(made)
        target = len(industries) - 1
    original = draft.industries[target].services if target < len(draft.industries) else ()
    services = list(industries[target].services)
    if service.id in old and any(s.id == service.id for s in original):
        index = [s.id for s in original].index(service.id)
        services.insert(index, service)
    else:
        index = len(services)
        services.append(service)
    industries[target] = attrs.evolve(industries[target], services=tuple(services))
    return attrs.evolve(draft, industries=tuple(industries)), target, index


def _replace_service(
    draft: CatalogDraft, i: int, s: int, change: Callable[[ServiceDraft], ServiceDraft]
) -> CatalogDraft:
    industry = draft.industries[i]
    services = list(industry.services)
    services[s] = change(services[s])
    industries = list(draft.industries)
    industries[i] = attrs.evolve(industry, services=tuple(services))
    return attrs.evolve(draft, industries=tuple(industries))


def service_active(visit: Visit) -> Response:
    """``POST /admin/catalog/services/{service_id}/active``: retire a service (no new
    bookings; plans that have it go on) or offer it again."""
    draft = _draft(visit)
    i, s = _where(draft, visit.request.path_params["service_id"])
    service = draft.industries[i].services[s]
    active = visit.field("active") == "true"
    refused = _save(
        visit,
        draft,
        _replace_service(draft, i, s, lambda old: attrs.evolve(old, active=active)),
        {},
    )
    if refused is not None:
        return visit.redirect(CATALOG, flash=" ".join(refused.others) or "Nothing was saved.")
    verb = "is offered again" if active else "is retired: no new bookings can choose it"
    return visit.redirect(f"{CATALOG}#service-{service.id}", flash=f"{service.name} {verb}.")


# Extras


def _extra_values(extra: ExtraDraft | None) -> dict[str, str]:
    if extra is None:
        return {"name": "", "price": "", "duration": "0", "max_quantity": "1"}
    return {
        "name": extra.name,
        "price": plain_hundredths(extra.price_cents),
        "duration": str(extra.duration_minutes),
        "max_quantity": str(extra.max_quantity),
        **{f"frequency_{slug}": "on" for slug in extra.frequency_slugs},
        **({"discount_exempt": "on"} if extra.discount_exempt else {}),
        **({"first_visit_only": "on"} if extra.first_visit_only else {}),
    }


def extra_form(visit: Visit) -> Response:
    """``/admin/catalog/services/{service_id}/extras/new`` and ``.../extras/{extra_id}``:
    add or change an extra of a service."""
    draft = _draft(visit)
    params = visit.request.path_params
    i, s = _where(draft, params["service_id"])
    service = draft.industries[i].services[s]
    current = _named(service.extras, params.get("extra_id"), "extra", lambda e: e.id)
    stored = values = _extra_values(current)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "extra")
    if visit.request.method == "POST" and not others:
        values = {name: visit.field(name) for name in ("name", "price", "duration", "max_quantity")}
        values |= {name: "on" for name in visit.form if name.startswith("frequency_")}
        values |= {
            name: "on"
            for name in ("discount_exempt", "first_visit_only")
            if checked(visit.form, name)
        }
        price = money(errors, "price", values["price"])
        duration = whole(errors, "duration", values["duration"], high=24 * 60)
        most = whole(errors, "max_quantity", values["max_quantity"], high=10_000)
        slugs = ticked(errors, visit.form, "frequency_", [f.slug for f in draft.frequencies],
                       field="frequencies")  # fmt: skip
        # Checked whole even with the form's own problems: every problem at once.
        extras = list(service.extras)
        changed = ExtraDraft(
            id=current.id if current else new_id("ext"),
            name=values["name"].strip(),
            price_cents=price,
            duration_minutes=duration or 0,
            max_quantity=1 if most is None else most,
            frequency_slugs=slugs,
            discount_exempt=checked(visit.form, "discount_exempt"),
            first_visit_only=checked(visit.form, "first_visit_only"),
        )
        index = _put(extras, current, changed)
        new_draft = _replace_service(
            draft, i, s, lambda old: attrs.evolve(old, extras=tuple(extras))
        )
        refused = _check(
            visit,
            draft,
            new_draft,
            {f"industries.{i}.services.{s}.extras.{index}": EXTRA_FIELDS},
            errors,
            then=(f"{CATALOG}#service-{service.id}", f"Saved {changed.name} of {service.name}."),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit,
        "setup_extra.html",
        values=values,
        errors=errors,
        others=others,
        stored=stored if current else None,
        service=service,
        extra=current,
        frequencies=draft.frequencies,
    )


# Parameters


def _parameter_values(parameter: ParameterDraft | None) -> dict[str, str]:
    if parameter is None:
        return {"name": "", "price": "", "duration": "0", "min_quantity": "0", "max_quantity": "10"}
    return {
        "name": parameter.name,
        "price": plain_hundredths(parameter.price_cents),
        "duration": str(parameter.duration_minutes),
        "min_quantity": str(parameter.min_quantity),
        "max_quantity": str(parameter.max_quantity),
    }


def parameter_form(visit: Visit) -> Response:
    """``/admin/catalog/services/{service_id}/parameters/new`` and
    ``.../parameters/{parameter_id}``: add or change a parameter of a service (a counted
    property of the job, such as bedrooms: each unit adds its price and minutes)."""
    draft = _draft(visit)
    params = visit.request.path_params
    i, s = _where(draft, params["service_id"])
    service = draft.industries[i].services[s]
    current = _named(service.parameters, params.get("parameter_id"), "parameter", lambda p: p.id)
    stored = values = _parameter_values(current)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "parameter")
    if visit.request.method == "POST" and not others:
        fields = ("name", "price", "duration", "min_quantity", "max_quantity")
        values = {name: visit.field(name) for name in fields}
        price = money(errors, "price", values["price"])
        duration = whole(errors, "duration", values["duration"], high=24 * 60)
        least = whole(errors, "min_quantity", values["min_quantity"], high=10_000)
        most = whole(errors, "max_quantity", values["max_quantity"], high=10_000)
        # Checked whole even with the form's own problems: every problem at once.
        parameters = list(service.parameters)
        changed = ParameterDraft(
            id=current.id if current else new_id("par"),
            name=values["name"].strip(),
            price_cents=price,
            duration_minutes=duration or 0,
            min_quantity=least or 0,
            max_quantity=max(most or 0, least or 0) if most is None else most,
        )
        index = _put(parameters, current, changed)
        new_draft = _replace_service(
            draft, i, s, lambda old: attrs.evolve(old, parameters=tuple(parameters))
        )
        service_path = f"industries.{i}.services.{s}"
        refused = _check(
            visit,
            draft,
            new_draft,
            {
                f"{service_path}.parameters.{index}": PARAMETER_FIELDS,
                # The shortest job (base plus each parameter's minimum) is too short.
                service_path: {"base_duration_minutes": "duration"},
            },
            errors,
            then=(f"{CATALOG}#service-{service.id}", f"Saved {changed.name} of {service.name}."),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_parameter.html", values=values, errors=errors, others=others,
        stored=stored if current else None, service=service, parameter=current,
        base_price=show_hundredths(service.base_price_cents),
    )  # fmt: skip


# Frequencies


def _frequency_values(frequency: FrequencyDraft | None) -> dict[str, str]:
    if frequency is None:
        return {"name": "", "interval_days": "", "discount": "0"}
    return {
        "name": frequency.name,
        "interval_days": "" if frequency.interval_days is None else str(frequency.interval_days),
        "discount": plain_hundredths(frequency.discount_bps),
    }


def frequency_form(visit: Visit) -> Response:
    """``/admin/catalog/frequencies/new`` and ``/admin/catalog/frequencies/{slug}``: add or
    change a frequency (how often a plan's visits come, and its discount)."""
    draft = _draft(visit)
    slug = visit.request.path_params.get("slug")
    current = _named(draft.frequencies, slug, "frequency", lambda f: f.slug)
    stored = values = _frequency_values(current)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "frequency")
    if visit.request.method == "POST" and not others:
        values = {name: visit.field(name) for name in ("name", "interval_days", "discount")}
        single = current is not None and current.slug == ONE_TIME
        interval = None if single else whole(errors, "interval_days", values["interval_days"],
                                              optional=current is None, high=365)  # fmt: skip
        discount = percent(errors, "discount", values["discount"])
        slugs = {f.slug for f in draft.frequencies}
        if "interval_days" in errors:
            interval = 7  # not read: checked as a weekly plan (its problem is marked)
        elif current is None and interval is None and ONE_TIME in slugs:
            errors.add("interval_days", "There is a one-time frequency already.")
        # Checked whole even with the form's own problems: every problem at once; a name
        # another frequency has is the catalog's rule (case and spacing aside).
        frequencies = list(draft.frequencies)
        if current is None:
            made = ONE_TIME if interval is None and ONE_TIME not in slugs else None
            slug = made or new_slug(values["name"], slugs)
            changed = FrequencyDraft(
                slug=slug,
                name=values["name"].strip(),
                interval_days=None if slug == ONE_TIME else 7 if interval is None else interval,
                discount_bps=discount,
            )
            index = len(frequencies)
            frequencies.append(changed)
        else:
            changed = attrs.evolve(
                current,
                name=values["name"].strip(),
                interval_days=interval,
                discount_bps=discount,
            )
            index = [f.slug for f in frequencies].index(current.slug)
            frequencies[index] = changed
        refused = _check(
            visit,
            draft,
            attrs.evolve(draft, frequencies=tuple(frequencies)),
            {f"frequencies.{index}": FREQUENCY_FIELDS},
            errors,
            then=(f"{CATALOG}#frequencies", f"Saved {changed.name}."),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_frequency.html", values=values, errors=errors, others=others,
        stored=stored if current else None, frequency=current,
    )  # fmt: skip


# Coupons


def _day_start(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone)


def _coupon_values(coupon: CouponDraft | None, zone: ZoneInfo) -> dict[str, str]:
    if coupon is None:
        return {"code": "", "percent": "", "amount": "", "min_subtotal": "0", "active": "on"}
    until = coupon.valid_until
    return {
        "code": coupon.code,
        "percent": plain_hundredths(coupon.percent_bps),
        "amount": plain_hundredths(coupon.amount_cents),
        "valid_from": coupon.valid_from.astimezone(zone).date().isoformat()
        if coupon.valid_from
        else "",
        # Stored as the start of the day after the last one.
        "valid_until": (until.astimezone(zone) - timedelta(days=1)).date().isoformat()
        if until
        else "",
        "max_redemptions": str(coupon.max_redemptions or ""),
        "per_customer_limit": str(coupon.per_customer_limit or ""),
        "min_subtotal": plain_hundredths(coupon.min_subtotal_cents),
        **{f"service_{sid}": "on" for sid in coupon.service_ids},
        **{f"frequency_{slug}": "on" for slug in coupon.frequency_slugs},
        **({"active": "on"} if coupon.active else {}),
    }


def _date(errors: FieldErrors, name: str, text: str) -> date | None:
    if not text.strip():
        return None
    day = read_date(text)  # 1970 to 2999: a day after the last is still a date
    if day is None:
        errors.add(name, "A date such as 2026-12-31.")
    return day


def coupon_form(visit: Visit) -> Response:
    """``/admin/catalog/coupons/new`` and ``/admin/catalog/coupons/{coupon_id}``: add or
    change a coupon. Its days are the company's: valid from the start of the first day
    through the end of the last."""
    draft = _draft(visit)
    zone = ZoneInfo(visit.signed_in_company.timezone)
    coupon_id = visit.request.path_params.get("coupon_id")
    current = _named(draft.coupons, coupon_id, "coupon", lambda c: c.id)
    stored = values = _coupon_values(current, zone)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "coupon")
    services = [s for i in draft.industries for s in i.services]
    if visit.request.method == "POST" and not others:
        fields = ("code", "percent", "amount", "valid_from", "valid_until", "max_redemptions",
                  "per_customer_limit", "min_subtotal")  # fmt: skip
        values = {name: visit.field(name) for name in fields}
        values |= {
            name: "on"
            for name in visit.form
            if name.startswith(("service_", "frequency_")) or name == "active"
        }
        share = amount = None
        if values["percent"].strip() and values["amount"].strip():
            errors.add("amount", "Give a percentage or an amount off, not both.")
            share = 1  # a placeholder for the rest of the checks
        elif values["percent"].strip():
            share = percent(errors, "percent", values["percent"], low=1)
        elif values["amount"].strip():
            amount = money(errors, "amount", values["amount"], low=1)
        else:
            errors.add("percent", "Give a percentage or an amount off.")
        first = _date(errors, "valid_from", values["valid_from"])
        last = _date(errors, "valid_until", values["valid_until"])
        most = whole(errors, "max_redemptions", values["max_redemptions"], optional=True)
        each = whole(errors, "per_customer_limit", values["per_customer_limit"], optional=True)
        least = money(errors, "min_subtotal", values["min_subtotal"] or "0")
        service_ids = ticked(errors, visit.form, "service_", [s.id for s in services],
                             field="services")  # fmt: skip
        slugs = ticked(errors, visit.form, "frequency_", [f.slug for f in draft.frequencies],
                       field="frequencies")  # fmt: skip
        # Checked whole even with the form's own problems: every problem at once.
        coupons = list(draft.coupons)
        changed = CouponDraft(
            id=current.id if current else new_id("cpn"),
            code=values["code"].strip(),
            percent_bps=share,
            amount_cents=amount,
            valid_from=_day_start(first, zone) if first else None,
            valid_until=_day_start(last + timedelta(days=1), zone) if last else None,
            max_redemptions=most,
            per_customer_limit=each,
            min_subtotal_cents=least,
            service_ids=service_ids,
            frequency_slugs=slugs,
            active=checked(visit.form, "active"),
        )
        index = _put(coupons, current, changed)
        refused = _check(
            visit,
            draft,
            attrs.evolve(draft, coupons=tuple(coupons)),
            {f"coupons.{index}": COUPON_FIELDS},
            errors,
            then=(f"{CATALOG}#coupons", f"Saved coupon {changed.code}."),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_coupon.html", values=values, errors=errors, others=others,
        stored=stored if current else None, coupon=current, services=services,
        frequencies=draft.frequencies,
    )  # fmt: skip


# Fees

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _fee_values(fee: FeeDraft | None) -> dict[str, str]:
    if fee is None:
        return {"name": "", "kind": "", "amount": "", "percent": "", "active": "on"}
    return {
        "name": fee.name,
        "kind": fee.kind.value,
        "amount": plain_hundredths(fee.amount_cents),
        "percent": plain_hundredths(fee.amount_bps),
        "dates": ", ".join(d.isoformat() for d in fee.dates),
        "zips": ", ".join(fee.zips),
        **{f"weekday_{day}": "on" for day in fee.weekdays},
        **{f"service_{sid}": "on" for sid in fee.service_ids},
        **({"taxable": "on"} if fee.taxable else {}),
        **({"active": "on"} if fee.active else {}),
    }


def _fee_dates(errors: FieldErrors, text: str) -> tuple[date, ...]:
    days: list[date] = []
    for entry in items(text, spaces=True):
        day = read_date(entry)  # 1970 to 2999, as every date a form takes
        if day is None:
            errors.add("dates", f"{entry!r} is not a date such as 2026-12-24.")
        else:
            days.append(day)
    return tuple(sorted(days))


def _fee_zips(errors: FieldErrors, text: str) -> tuple[str, ...]:
    zips = items(text, spaces=True)
    for entry in zips:
        if not ZIP_PATTERN.match(entry):
            errors.add("zips", zip_problem(entry, listed=True))
    return tuple(sorted(zips))


def fee_form(visit: Visit) -> Response:
    """``/admin/catalog/fees/new`` and ``/admin/catalog/fees/{fee_id}``: add or change a
    fee definition. Its kind decides which of weekdays and dates, zips or services make
    it apply; what was given for another kind is left out."""
    draft = _draft(visit)
    fee_id = visit.request.path_params.get("fee_id")
    current = _named(draft.fees, fee_id, "fee", lambda f: f.id)
    stored = values = _fee_values(current)
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "fee")
    services = [s for i in draft.industries for s in i.services]
    if visit.request.method == "POST" and not others:
        values = {name: visit.field(name) for name in ("name", "kind", "amount", "percent")}
        values |= {name: visit.field(name) for name in ("dates", "zips")}
        values |= {
            name: "on"
            for name in visit.form
            if name.startswith(("weekday_", "service_")) or name in ("taxable", "active")
        }
        kind = next((k for k in FeeKind if k.value == values["kind"]), None)
        if kind is None:
            errors.add("kind", "Choose what makes the fee apply.")
        cents = share = None
        if values["amount"].strip() and values["percent"].strip():
            errors.add("amount", "Give a fixed amount or a percentage, not both.")
            cents = 0  # a placeholder for the rest of the checks
        elif values["amount"].strip():
            cents = money(errors, "amount", values["amount"])
        elif values["percent"].strip():
            share = percent(errors, "percent", values["percent"], high=100_000)
        else:
            errors.add("amount", "Give a fixed amount or a percentage.")
        dates = _fee_dates(errors, values["dates"]) if kind is FeeKind.DATE else ()
        zips = _fee_zips(errors, values["zips"]) if kind is FeeKind.ZIP else ()
        weekdays: tuple[str, ...] = ()
        service_ids: tuple[str, ...] = ()
        if kind is FeeKind.DATE:
            weekdays = ticked(errors, visit.form, "weekday_", [str(d) for d in range(1, 8)],
                              field="weekdays")  # fmt: skip
        if kind is FeeKind.SERVICE:
            service_ids = ticked(errors, visit.form, "service_", [s.id for s in services],
                                 field="services")  # fmt: skip
        # Checked whole even with the form's own problems: every problem at once.
        fees = list(draft.fees)
        changed = FeeDraft(
            id=current.id if current else new_id("fee"),
            name=values["name"].strip(),
            kind=kind or FeeKind.MANUAL,  # no kind chosen: checked as the plainest
            amount_cents=cents,
            amount_bps=share,
            taxable=checked(visit.form, "taxable"),
            active=checked(visit.form, "active"),
            weekdays=tuple(int(day) for day in weekdays),
            dates=dates,
            zips=zips,
            service_ids=tuple(sorted(service_ids)),
        )
        index = _put(fees, current, changed)
        refused = _check(
            visit,
            draft,
            attrs.evolve(draft, fees=tuple(fees)),
            {f"fees.{index}": FEE_FIELDS},
            errors,
            then=(f"{CATALOG}#fees", f"Saved fee {changed.name}."),
        )
        if isinstance(refused, Response):
            return refused
        errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_fee.html", values=values, errors=errors, others=others,
        stored=stored if current else None, fee=current, services=services, kinds=FEE_KINDS,
        weekdays=WEEKDAYS,
    )  # fmt: skip


def fee_active(visit: Visit) -> Response:
    """``POST /admin/catalog/fees/{fee_id}/active``: retire a fee (it is no longer
    charged on new prices) or use it again."""
    draft = _draft(visit)
    fee_id = visit.request.path_params["fee_id"]
    index = next((n for n, f in enumerate(draft.fees) if f.id == fee_id), None)
    if index is None:
        raise NotFoundError("fee", fee_id)
    fee = draft.fees[index]
    active = visit.field("active") == "true"
    fees = list(draft.fees)
    fees[index] = attrs.evolve(fee, active=active)
    refused = _save(visit, draft, attrs.evolve(draft, fees=tuple(fees)), {})
    if refused is not None:
        return visit.redirect(
            f"{CATALOG}#fees", flash=" ".join(refused.others) or "Nothing was saved."
        )
    verb = "is charged again" if active else "is retired: new prices leave it out"
    return visit.redirect(f"{CATALOG}#fees", flash=f"{fee.name} {verb}.")


# Removing a parameter, an extra or a frequency (they have no "retired" state)

USED_BY_BOOKINGS = re.compile(r"\((\d+) booked\)")


def _removal_reasons(problems: dict[str, str], names: Names) -> list[str]:
    """Why the catalog refused a removal, in plain words: the open bookings still priced
    from the item, and the items and forms that name it (to change first)."""
    reasons = []
    for path, text in problems.items():
        parts = path.split(".")
        if text.startswith("Still used by open bookings"):
            count = sum(int(n) for n in USED_BY_BOOKINGS.findall(text))
            reasons.append(
                f"{count} open booking{'s' if count != 1 else ''} of a plan still use"
                f"{'' if count != 1 else 's'} it: their later visits are priced with it. It can"
                " be removed once those plans are cancelled or end."
            )
        elif "frequency_slugs" in parts:
            owner = names.place(".".join(parts[: parts.index("frequency_slugs")]))
            reasons.append(
                f"{owner} names it among the frequencies ticked on its form: untick it there first."
            )
        else:
            reasons.append(names.plain(path, text))
    return reasons


@frozen
class Removal:
    """What a remove page removes: its name, its place, the catalog without it, where the
    catalog lists it, and its values as its form shows them (their fingerprint guards
    against removing an item someone changed since the page was opened)."""

    what: str
    name: str
    owner: str
    without: CatalogDraft
    back: str
    values: dict[str, str]


def _remove_page(visit: Visit, draft: CatalogDraft, removal: Removal) -> Response:
    """``GET``: ask, after checking that the catalog may go without it (if not, say why and
    offer no button); ``POST``: remove it, or say why not (422)."""
    errors: list[str] = []
    changed_meanwhile = _changed_since_shown(visit, removal, removal.values, removal.what)
    refused = None
    if not changed_meanwhile:
        refused = _save(visit, draft, removal.without, {}, dry_run=visit.request.method == "GET")
    if refused is None and visit.request.method == "POST" and not changed_meanwhile:
        return visit.redirect(removal.back, flash=f"Removed {removal.name}{removal.owner}.")
    if refused is not None:
        names = Names(draft, removal.without)
        errors = _removal_reasons(refused.problems, names) if refused.problems else refused.others
    return visit.render(
        "setup_remove.html",
        status=422 if visit.request.method == "POST" or changed_meanwhile else 200,
        what=removal.what,
        name=removal.name,
        owner=removal.owner,
        reasons=changed_meanwhile + errors,
        blocked=bool(errors),
        back=removal.back,
        shown=fingerprint(removal.values),
    )


def _service_item_remove(
    visit: Visit, field: str, what: str, values: Callable[[Any], Any]
) -> Response:
    """The remove page of one of a service's ``field`` (``parameters`` or ``extras``), named
    ``what``, its id in the address as ``{what}_id``."""
    draft = _draft(visit)
    params = visit.request.path_params
    i, s = _where(draft, params["service_id"])
    service = draft.industries[i].services[s]
    item = _named(getattr(service, field), params[f"{what}_id"], what, lambda x: x.id)
    assert item is not None
    without = _replace_service(
        draft,
        i,
        s,
        lambda old: attrs.evolve(
            old,
            **{field: tuple(x for x in getattr(old, field) if x.id != item.id)},  # type: ignore[arg-type]
        ),
    )
    return _remove_page(
        visit,
        draft,
        Removal(
            what=what,
            name=item.name,
            owner=f" from {service.name}",
            without=without,
            back=f"{CATALOG}#service-{service.id}",
            values=values(item),
        ),
    )


def parameter_remove(visit: Visit) -> Response:
    """``/admin/catalog/services/{service_id}/parameters/{parameter_id}/remove``."""
    return _service_item_remove(visit, "parameters", "parameter", _parameter_values)


def extra_remove(visit: Visit) -> Response:
    """``/admin/catalog/services/{service_id}/extras/{extra_id}/remove``."""
    return _service_item_remove(visit, "extras", "extra", _extra_values)


def frequency_remove(visit: Visit) -> Response:
    """``/admin/catalog/frequencies/{slug}/remove``."""
    draft = _draft(visit)
    frequency = _named(draft.frequencies, visit.request.path_params["slug"], "frequency",
                       lambda f: f.slug)  # fmt: skip
    assert frequency is not None
    without = attrs.evolve(
        draft, frequencies=tuple(f for f in draft.frequencies if f.slug != frequency.slug)
    )
    return _remove_page(
        visit,
        draft,
        Removal(
            what="frequency",
            name=frequency.name,
            owner="",
            without=without,
            back=f"{CATALOG}#frequencies",
            values=_frequency_values(frequency),
        ),
    )


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The catalog page and its forms (``new`` before an id: it is not one)."""
    both = ("GET", "POST")
    return [
        page(CATALOG, deps, catalog_page, roles=ADMINS),
        page(f"{CATALOG}/services/new", deps, service_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/services/{{service_id}}", deps, service_form, methods=both, roles=ADMINS),
        page(
            f"{CATALOG}/services/{{service_id}}/active",
            deps,
            service_active,
            methods=("POST",),
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/extras/new",
            deps,
            extra_form,
            methods=both,
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/extras/{{extra_id}}",
            deps,
            extra_form,
            methods=both,
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/parameters/new",
            deps,
            parameter_form,
            methods=both,
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/parameters/{{parameter_id}}",
            deps,
            parameter_form,
            methods=both,
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/extras/{{extra_id}}/remove",
            deps,
            extra_remove,
            methods=both,
            roles=ADMINS,
        ),
        page(
            f"{CATALOG}/services/{{service_id}}/parameters/{{parameter_id}}/remove",
            deps,
            parameter_remove,
            methods=both,
            roles=ADMINS,
        ),
        page(f"{CATALOG}/frequencies/new", deps, frequency_form, methods=both, roles=ADMINS),
        page(
            f"{CATALOG}/frequencies/{{slug}}/remove",
            deps,
            frequency_remove,
            methods=both,
            roles=ADMINS,
        ),
        page(f"{CATALOG}/frequencies/{{slug}}", deps, frequency_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/coupons/new", deps, coupon_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/coupons/{{coupon_id}}", deps, coupon_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/fees/new", deps, fee_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/fees/{{fee_id}}", deps, fee_form, methods=both, roles=ADMINS),
        page(
            f"{CATALOG}/fees/{{fee_id}}/active", deps, fee_active, methods=("POST",), roles=ADMINS
        ),
    ]
