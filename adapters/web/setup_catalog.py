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
    visit: Visit, base: CatalogDraft, draft: CatalogDraft, places: dict[str, dict[str, str]]
) -> Refusal | None:
    """Replace the catalog with ``draft``, made from ``base`` (the stored draft this request
    read); the refusal sorted by ``places`` if refused. If the catalog changed since
    ``base`` was read (someone else saved in between), nothing is saved and the refusal
    says so: their change is never overwritten unseen."""
    try:
        replace_catalog(
            ReplaceCatalog(company_id=visit.signed_in_company.id, catalog=draft, expected=base),
            uow=visit.deps.uow(),
            clock=visit.deps.clock,
        )
    except ValidationFailed as refused:
        errors, others = sort_errors(refused.field_errors, places)
        return Refusal(errors, others)
    except CatalogChanged as changed:
        return Refusal(FieldErrors(), [changed.message])
    return None


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
        if not errors:
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
            refused = _save(
                visit,
                draft,
                new_draft,
                {
                    f"industries.{i}.services.{s}": SERVICE_FIELDS,
                    f"industries.{i}": {"name": "industry", "id": "industry"},
                },
            )
            if refused is None:
                note = " A one-time frequency was added to book it with." if added_one_time else ""
                return visit.redirect(
                    f"{CATALOG}#service-{changed.id}", flash=f"Saved {changed.name}.{note}"
                )
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
        if not errors:
            extras = list(service.extras)
            changed = ExtraDraft(
                id=current.id if current else new_id("ext"),
                name=values["name"].strip(),
                price_cents=price,
                duration_minutes=duration or 0,
                max_quantity=most or 0,
                frequency_slugs=slugs,
                discount_exempt=checked(visit.form, "discount_exempt"),
                first_visit_only=checked(visit.form, "first_visit_only"),
            )
            index = _put(extras, current, changed)
            new_draft = _replace_service(
                draft, i, s, lambda old: attrs.evolve(old, extras=tuple(extras))
            )
            refused = _save(
                visit,
                draft,
                new_draft,
                {f"industries.{i}.services.{s}.extras.{index}": EXTRA_FIELDS},
            )
            if refused is None:
                return visit.redirect(
                    f"{CATALOG}#service-{service.id}",
                    flash=f"Saved {changed.name} of {service.name}.",
                )
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
        if not errors:
            parameters = list(service.parameters)
            changed = ParameterDraft(
                id=current.id if current else new_id("par"),
                name=values["name"].strip(),
                price_cents=price,
                duration_minutes=duration or 0,
                min_quantity=least or 0,
                max_quantity=most or 0,
            )
            index = _put(parameters, current, changed)
            new_draft = _replace_service(
                draft, i, s, lambda old: attrs.evolve(old, parameters=tuple(parameters))
            )
            service_path = f"industries.{i}.services.{s}"
            refused = _save(
                visit,
                draft,
                new_draft,
                {
                    f"{service_path}.parameters.{index}": PARAMETER_FIELDS,
                    # The shortest job (base plus each parameter's minimum) is too short.
                    service_path: {"base_duration_minutes": "duration"},
                },
            )
            if refused is None:
                return visit.redirect(
                    f"{CATALOG}#service-{service.id}",
                    flash=f"Saved {changed.name} of {service.name}.",
                )
            errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_parameter.html", values=values, errors=errors, others=others,
        stored=stored if current else None, service=service, parameter=current,
        base_price=show_hundredths(service.base_price_cents),
    )  # fmt: skip


# Frequencies


def frequency_form(visit: Visit) -> Response:
    """``/admin/catalog/frequencies/new`` and ``/admin/catalog/frequencies/{slug}``: add or
    change a frequency (how often a plan's visits come, and its discount)."""
    draft = _draft(visit)
    slug = visit.request.path_params.get("slug")
    current = _named(draft.frequencies, slug, "frequency", lambda f: f.slug)
    values = {"name": "", "interval_days": "", "discount": "0"}
    if current is not None:
        values = {
            "name": current.name,
            "interval_days": "" if current.interval_days is None else str(current.interval_days),
            "discount": plain_hundredths(current.discount_bps),
        }
    stored = values
    errors = FieldErrors()
    others = _changed_since_shown(visit, current, stored, "frequency")
    if visit.request.method == "POST" and not others:
        values = {name: visit.field(name) for name in ("name", "interval_days", "discount")}
        single = current is not None and current.slug == ONE_TIME
        interval = None if single else whole(errors, "interval_days", values["interval_days"],
                                              optional=current is None, high=365)  # fmt: skip
        discount = percent(errors, "discount", values["discount"])
        name = values["name"].strip().casefold()
        if name and any(
            f.name.strip().casefold() == name and (current is None or f.slug != current.slug)
            for f in draft.frequencies
        ):
            errors.add(
                "name", "Another frequency has this name: customers could not tell them apart."
            )
        if not errors:
            frequencies = list(draft.frequencies)
            if current is None:
                made = ONE_TIME if interval is None else None
                slug = made or new_slug(values["name"], {f.slug for f in frequencies})
                changed = FrequencyDraft(
                    slug=slug,
                    name=values["name"].strip(),
                    interval_days=interval,
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
            refused = _save(
                visit,
                draft,
                attrs.evolve(draft, frequencies=tuple(frequencies)),
                {f"frequencies.{index}": FREQUENCY_FIELDS},
            )
            if refused is None:
                return visit.redirect(f"{CATALOG}#frequencies", flash=f"Saved {changed.name}.")
            errors, others = refused.errors, refused.others
            if "name" in errors and current is None and interval is None:
                errors = FieldErrors({"interval_days": "There is a one-time frequency already."})
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
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        errors.add(name, "A date such as 2026-12-31.")
        return None


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
        if not errors:
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
            refused = _save(
                visit,
                draft,
                attrs.evolve(draft, coupons=tuple(coupons)),
                {f"coupons.{index}": COUPON_FIELDS},
            )
            if refused is None:
                return visit.redirect(f"{CATALOG}#coupons", flash=f"Saved coupon {changed.code}.")
            errors, others = refused.errors, refused.others
    return _form_page(
        visit, "setup_coupon.html", values=values, errors=errors, others=others,
        stored=stored if current else None, coupon=current, services=services,
        frequencies=draft.frequencies,
    )  # fmt: skip


# Fees

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
ZIP = re.compile(r"^[0-9]{5}\Z")


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
    for entry in items(text):
        try:
            if not ISO_DATE.match(entry):
                raise ValueError(entry)
            days.append(date.fromisoformat(entry))
        except ValueError:
            errors.add("dates", f"{entry!r} is not a date such as 2026-12-24.")
    return tuple(sorted(days))


def _fee_zips(errors: FieldErrors, text: str) -> tuple[str, ...]:
    zips = items(text)
    for entry in zips:
        if not ZIP.match(entry):
            errors.add("zips", f"{entry!r} is not a 5-digit US zip code.")
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
        if not errors and kind is not None:
            fees = list(draft.fees)
            changed = FeeDraft(
                id=current.id if current else new_id("fee"),
                name=values["name"].strip(),
                kind=kind,
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
            refused = _save(
                visit, draft, attrs.evolve(draft, fees=tuple(fees)), {f"fees.{index}": FEE_FIELDS}
            )
            if refused is None:
                return visit.redirect(f"{CATALOG}#fees", flash=f"Saved fee {changed.name}.")
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
        page(f"{CATALOG}/frequencies/new", deps, frequency_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/frequencies/{{slug}}", deps, frequency_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/coupons/new", deps, coupon_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/coupons/{{coupon_id}}", deps, coupon_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/fees/new", deps, fee_form, methods=both, roles=ADMINS),
        page(f"{CATALOG}/fees/{{fee_id}}", deps, fee_form, methods=both, roles=ADMINS),
        page(
            f"{CATALOG}/fees/{{fee_id}}/active", deps, fee_active, methods=("POST",), roles=ADMINS
        ),
    ]
