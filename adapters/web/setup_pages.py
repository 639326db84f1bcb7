"""Setting the company up from the admin workspace: ``/admin/settings`` here, the catalog
(``setup_catalog``) and the crew (``setup_crew``). Owners and dispatchers may both use
them.

Every form goes through the use cases of ``booking_core.services.setup``, which check the
whole change and write nothing when anything is wrong. What a form parses itself (money,
percentages, whole numbers) is parsed strictly here: text that is not exactly a plain
amount is refused beside its field, before any use case runs.
"""

from __future__ import annotations

from urllib.parse import urlsplit
from zoneinfo import available_timezones

from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web import setup_catalog, setup_crew
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import Visit, page
from adapters.web.setup_forms import (
    STALE,
    FieldErrors,
    fingerprint,
    money,
    percent,
    plain_hundredths,
    sort_errors,
    stale,
    whole,
)
from booking_core.companies import (
    BRAND_COLOR_PATTERN,
    MAX_CUTOFF_HOURS,
    MAX_NOTICE_MINUTES,
    MAX_REMINDER_HOURS,
    normalize_brand_color,
)
from booking_core.errors import ValidationFailed
from booking_core.services.setup import (
    ChangedMeanwhile,
    UpdateCompanySettings,
    update_company_settings,
)

TIMEZONES = tuple(sorted(z for z in available_timezones() if "/" in z and not z.startswith("Etc/")))
"""The IANA zones offered (areas such as ``America/New_York``; no ``Etc/`` aliases)."""

SETTINGS_FIELDS = {
    "name": "name",
    "timezone": "timezone",
    "self_service_cutoff_hours": "cutoff_hours",
    "min_notice_minutes": "min_notice_minutes",
    "code_prefix": "code_prefix",
    "tax_rate_bps": "tax_rate",
    "brand_color": "brand_color",
    "notify_email": "notify_email",
    "reminder_hours": "reminder_hours",
    "referral_discount_cents": "referral_discount",
    "custom_domain": "custom_domain",
}
EMAIL_FIELDS = ("notify_email", "reminder_hours")
LATER_FIELDS = (*EMAIL_FIELDS, "referral_discount", "custom_domain", "brand_color")
"""Fields a form made before they existed lacks: such a form leaves them as stored."""
PLAIN_SETTINGS = {
    "A lowercase host name such as book.example.com.": (
        "A domain name such as book.example.com: no https://, no path."
    ),
}
"""The company's own texts (written for the API and the command line) in the page's words."""
DEFAULT_PICK = "#4338ca"
"""What the colour picker shows for a company with no brand colour (the pages' own)."""


def chosen_brand_color(visit: Visit) -> str:
    """The brand colour a settings form asks for ("" for the default colours): the
    picker's when it was moved and the text was left as shown (the form carries what
    each was shown with), else the text's (a picker cannot be blank)."""
    typed, picked = visit.field("brand_color"), visit.field("brand_color_pick")
    typed_unchanged = typed == visit.field("brand_color_shown")
    if picked and typed_unchanged and picked != visit.field("brand_color_pick_shown"):
        return picked
    return typed


def _hours(errors: FieldErrors, name: str, text: str, most: int) -> int | None:
    """A whole number of hours from 0 to ``most``, told as the core tells it."""
    return whole(errors, name, text, high=most, over=f"Between 0 and {most} hours.")


def settings(visit: Visit) -> Response:
    """``/admin/settings``: the company's name, timezone, booking rules, tax rate, the
    brand colour of its customer pages, its email address and reminder hours."""
    company = visit.signed_in_company
    errors = FieldErrors()
    others: list[str] = []
    values = {
        "name": company.name,
        "timezone": company.timezone,
        "cutoff_hours": str(company.self_service_cutoff_hours),
        "min_notice_minutes": str(company.min_notice_minutes),
        "code_prefix": company.code_prefix,
        "tax_rate": plain_hundredths(company.tax_rate_bps),
        "brand_color": company.brand_color or "",
        "notify_email": company.notify_email or "",
        "reminder_hours": str(company.reminder_hours),
        "referral_discount": plain_hundredths(company.referral_discount_cents),
        "custom_domain": company.custom_domain or "",
    }
    stored = values  # as the form shows the stored company: its fingerprint goes with it
    if visit.request.method == "POST" and stale(visit.form, stored):
        others = [STALE.format(what="company's settings")]  # the form shows what is stored
    elif visit.request.method == "POST":
        # A form without the later fields (made before they existed) leaves them as stored.
        values = {
            name: visit.form.get(name, shown) if name in LATER_FIELDS else visit.field(name)
            for name, shown in values.items()
        }
        if "brand_color" in visit.form:
            values["brand_color"] = chosen_brand_color(visit)
        cutoff = _hours(errors, "cutoff_hours", values["cutoff_hours"], MAX_CUTOFF_HOURS)
        notice = whole(
            errors,
            "min_notice_minutes",
            values["min_notice_minutes"],
            high=MAX_NOTICE_MINUTES,
            over=f"Between 0 and {MAX_NOTICE_MINUTES} minutes.",
        )
        tax = percent(errors, "tax_rate", values["tax_rate"])
        reminder = _hours(errors, "reminder_hours", values["reminder_hours"], MAX_REMINDER_HOURS)
        referral = money(errors, "referral_discount", values["referral_discount"].strip() or "0")
        if values["timezone"] not in TIMEZONES and values["timezone"] != company.timezone:
            errors.add("timezone", "Choose a timezone from the list.")
        # With the form's own problems found, the settings that could be read are still
        # checked (nothing stored), so that every problem shows at once.
        try:
            update_company_settings(
                UpdateCompanySettings(
                    company_id=company.id,
                    name=values["name"],
                    timezone=values["timezone"] if "timezone" not in errors else None,
                    self_service_cutoff_hours=cutoff,
                    min_notice_minutes=notice,
                    code_prefix=values["code_prefix"].strip(),
                    tax_rate_bps=tax,
                    brand_color=values["brand_color"],
                    notify_email=values["notify_email"],
                    reminder_hours=reminder,
                    referral_discount_cents=referral,
                    custom_domain=values["custom_domain"],
                    dry_run=bool(errors),
                    expected=company,
                    service_host=urlsplit(visit.deps.base_url).hostname,
                ),
                uow=visit.deps.uow(),
            )
        except ChangedMeanwhile:  # saved by someone else since this request read it
            return visit.redirect("/admin/settings", flash=STALE.format(what="company's settings"))
        except ValidationFailed as refused:
            found, others = sort_errors(refused.field_errors, {"": SETTINGS_FIELDS})
            for name, text in found.items():
                errors.add(name, PLAIN_SETTINGS.get(text, text))
        else:
            if not errors:
                return visit.redirect("/admin/settings", flash="Settings saved.")
    return visit.render(
        "setup_settings.html",
        status=422 if errors or others else 200,
        values=values,
        errors=errors,
        others=others,
        shown=fingerprint(stored),
        timezones=TIMEZONES,
        brand_pick=brand_pick(values["brand_color"], company.brand_color),
        # The hint says where quote links go now: the stored domain, not one refused.
        quote_host=company.custom_domain or "",
    )


def brand_pick(typed: str, stored: str | None) -> str:
    """The picker's value: the typed colour when it is one, else the stored or default."""
    candidate = normalize_brand_color(typed)
    if candidate is not None and BRAND_COLOR_PATTERN.match(candidate):
        return candidate
    return stored or DEFAULT_PICK


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The settings page, the catalog's pages and the crew's."""
    return [
        page("/admin/settings", deps, settings, methods=("GET", "POST"), roles=ADMINS),
        *setup_catalog.routes(deps),
        *setup_crew.routes(deps),
    ]
