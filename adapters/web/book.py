"""The customer booking page ``/{slug}/book``: choose, pick a time, say who, confirm.

Four steps, each a plain form, so the page books with no JavaScript at all; the state
travels in the forms (a query string while nothing personal is in it, hidden fields once
there is):

1. *Your job* (``GET``): service, frequency, parameters (within their min and max),
   extras, zip code, coupon code and, while the company's referral programme is on
   (``referral_discount_cents`` > 0), referral code, with the price; "Update price" asks
   again. A code the API refuses is its field's error, the price shown without it.
2. *Date and time* (``GET ?step=date``): which of the next ``DAYS_SHOWN`` days have any
   open start, then the open starts of the chosen day, in the company's timezone.
3. *Your details* (``GET ?step=details`` shows the form, ``POST step=review`` checks it):
   name, email, phone, street, city, state, access notes, and a booking form's
   questions, each refusal beside its field (the API's structuring, and the booking use
   case's phone normalizer and ``Address.errors``, so none waits for the confirm).
4. *Confirm* (``POST step=confirm``): the booking is made, then the confirmation page
   with its code, time and tracking link. A time taken meanwhile, or a start refused as
   a start (passed or off the quarter hour, checked from the details step on; no longer
   open, known at the confirm) shows the open times again with a sentence saying so.

The page is a client of the public API in process (``adapters.http.public.call_public``):
the catalog, the price, the open days and starts and the booking are the answers of
``/api/public/{slug}/catalog|quote|days|slots|book`` themselves, through the same
pipeline (structuring, SPEC.md ceilings, idempotency, the use cases), so the page can
never show a price or a time the API would not. The confirm step's later visits, and the
coupon and referral code checked for the customer's email, come from the booking's own
pricer (``services.pricing.price_booking_visits``): a link's unknown service or frequency
is said on step 1, and a coupon this customer has used up, or a referral code that is
their own or comes after their first booking, is refused on the details step with a
button to go on without it.

``?form=bf_...`` is a booking form's page: ``booking-forms/{id}`` stands for the
catalog (its services, extras and frequencies alone), its name is the heading, its
questions (``q.<question id>`` fields) are asked on the details step, ``form`` travels
with the rest of the state and the booking is sent with ``formId`` and ``answers``; an
unknown or inactive form is the 404 page.

A double submit books once: the details form carries a random flow token, sent as the
booking's ``Idempotency-Key``; the same token again replays the booking made. The CSRF
token of the POSTs is bound to that flow token (an HMAC under the session secret), not
to the session cookie: framed on another site (``?embed=1``), the browser sends no
SameSite=Lax cookie, and the flow still posts.

``?embed=1`` renders without the page's header and may be framed by any site
(``frame-ancestors *``, no ``X-Frame-Options``); every other page keeps the strict
headers of ``adapters.web.pages``. This page alone allows a script, from the site
itself: ``/assets/book.js`` updates the price live through ``POST
/api/public/{slug}/quote`` and, framed, tells the embedding page its height. The
embedding snippet ``<script src="{base}/{slug}/embed.js" async></script>`` inserts the
iframe (``data-form="bf_..."`` on the tag adds ``&form=``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from adapters.http.public import PublicBookingBody, call_public, stored_public_answer
from adapters.http.structuring import structure
from adapters.web.admin_booking import long_date, money
from adapters.web.calendar import read_instant
from adapters.web.customer import NOT_FOUND, company_of, customer_page
from adapters.web.deps import WebDeps
from adapters.web.pages import CSRF_FIELD, STATIC, PageError, Visit, asset_version
from adapters.web.sessions import Session
from adapters.web.time_text import clock_range, clock_time, needs_zones, zone_label
from booking_core.booking_orders import start_problem
from booking_core.bookings import Booking, BookingStatus
from booking_core.companies import SLUG_PATTERN, Company
from booking_core.customers import Address
from booking_core.errors import (
    CouponRejected,
    DomainError,
    NotFoundError,
    ReferralRejected,
    ValidationFailed,
)
from booking_core.ports import PhoneNormalizer
from booking_core.pricing import PriceBreakdown, SelectedItem, Selection
from booking_core.services import self_service
from booking_core.services.customers import normalized_phone
from booking_core.services.pricing import price_booking_visits

DAYS_SHOWN = 21
"""How many days from today the date step lists (three weeks)."""
CUSTOMER_FIELDS = ("name", "email", "phone", "line1", "line2", "city", "state", "access_notes")
REQUIRED = {
    "name": "Enter your name.",
    "email": "Enter your email address, e.g. you@example.com.",
    "line1": "Enter the street address.",
    "city": "Enter the city.",
    "state": "Enter the state, e.g. NY.",
}
WIRE_FIELDS = {
    "customer.name": "name",
    "customer.email": "email",
    "customer.phone": "phone",
    "address.line1": "line1",
    "address.line2": "line2",
    "address.city": "city",
    "address.state": "state",
    "address.zip": "zip",
    "address.accessNotes": "access_notes",
    "notes": "access_notes",
    "zip": "zip",
    "couponCode": "coupon",
    "referralCode": "referral",
}
"""Where a refusal of the API's body is shown on the page."""
SLOT_TAKEN = "Sorry, that time was just taken. Here are the open times now: pick another."
SLOT_GONE = "That time is no longer open. Here are the open times now: pick another."
START_PASSED = "That time has passed. Here are the open times now: pick another."
START_OFF_GRID = (
    "That time is not one of the open times. Here are the open times now: pick another."
)
DETAIL_LABELS = {
    "name": "Full name",
    "email": "Email",
    "phone": "Phone",
    "line1": "Street address",
    "line2": "Apartment, suite, floor",
    "city": "City",
    "state": "State",
    "access_notes": "Access notes",
}
"""The details step's fields and their labels (the page's and its problem summary's)."""
CHOICE_LABELS = {"zip": "Zip code", "coupon": "Coupon code", "referral": "Referral code"}
START_FIELDS = ("startIso", "start_iso")
"""The API's names of the start, refused on the date step, where a time is picked."""
ZIP_TEXT = "Enter the 5-digit zip code of the place to be served, e.g. 10001."
MAX_COUPON_LENGTH = 100
"""The API's ceiling of ``couponCode`` and ``referralCode``
(``adapters.http.structuring.Code``)."""
CODES = (("coupon", "couponCode"), ("referral", "referralCode"))
"""The codes of step 1: the page's field and ``Choice`` attribute, and the API's name."""
REFERRALS_OFF = (
    "This company takes no referral codes at the moment; the price shown is without one."
)
MAX_ANSWER_LENGTH = 500
"""The API's ceiling of one intake answer (SPEC.md section 8)."""
ANSWER_TEXT = "Enter your answer."
CHOOSE_TEXT = "Choose an answer."
CHOICES_TEXT = "Choose one of the answers listed."
BOOK_JS = (STATIC / "book.js").read_bytes()
BOOK_JS_VERSION = asset_version("book.js")
EMBED_JS = (STATIC / "embed.js").read_bytes()


def page_policy(embed: bool) -> str:
    """The booking page's CSP: the site's own script and fetches; framed by any site
    when embedded, by none otherwise."""
    ancestors = "*" if embed else "'none'"
    return (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self';"
        f" connect-src 'self'; form-action 'self'; frame-ancestors {ancestors};"
        " base-uri 'none'"
    )


def flow_csrf(visit: Visit, flow: str) -> str:
    """The CSRF token of a booking flow: bound to its flow token, not to the session."""
    return visit.deps.sessions.csrf_token(Session(f"book:{flow}", visit.deps.clock.now()))


def csrf_of_flow(visit: Visit) -> bool:
    """A POST of this page is good when its token is its flow token's."""
    flow = visit.field("flow")
    if not 16 <= len(flow) <= 64:
        return False
    session = Session(f"book:{flow}", visit.deps.clock.now())
    return visit.deps.sessions.csrf_valid(session, visit.field(CSRF_FIELD))


@frozen
class Choice:
    """What the customer chose at step 1, read from the request (query or form)."""

    service: dict[str, Any]
    frequency: str
    parameters: tuple[tuple[dict[str, Any], int], ...]
    extras: tuple[tuple[dict[str, Any], int], ...]
    zip: str
    errors: dict[str, str]
    coupon: str = ""
    form: str = ""
    """The booking form's id (``bf_...``) the page is for; empty: the whole catalog."""
    referral: str = ""
    """Another customer's referral code; always empty while the programme is off."""
    typed: Mapping[str, str] = attrs.field(factory=dict)
    """What was typed in a quantity field the page refused (by field name), shown back in
    the field beside its error: the choice itself goes on with the field's default."""

    def codes(self) -> dict[str, str]:
        """The coupon and referral codes to send, by the API's names: those typed and not
        refused by the page itself (over the ceiling)."""
        return {
            wire: getattr(self, name)
            for name, wire in CODES
            if getattr(self, name) and name not in self.errors
        }

    def items(self) -> dict[str, list[dict[str, Any]]]:
        """Parameters and extras as the API's body takes them."""
        return {
            "parameters": [{"id": p["id"], "quantity": q} for p, q in self.parameters],
            "extras": [{"id": e["id"], "quantity": q} for e, q in self.extras if q > 0],
        }

    def specs(self) -> list[tuple[str, str]]:
        """Parameters and extras as the API's query string takes them."""
        items = self.items()
        return [
            (name, ",".join(f"{i['id']}:{i['quantity']}" for i in items[name]))
            for name in ("parameters", "extras")
            if items[name]
        ]

    def keeping(self, *names: str) -> Choice:
        """The choice with only the codes ``names`` (``coupon``, ``referral``)."""
        return attrs.evolve(
            self,
            coupon=self.coupon if "coupon" in names else "",
            referral=self.referral if "referral" in names else "",
        )

    def state(self) -> list[tuple[str, str]]:
        """The choice as form fields, to carry to the next step."""
        pairs = [("service", self.service["id"]), ("frequency", self.frequency)]
        pairs += [(f"param.{p['id']}", str(q)) for p, q in self.parameters]
        pairs += [(f"extra.{e['id']}", str(q)) for e, q in self.extras if q > 0]
        pairs.append(("zip", self.zip))
        if self.coupon:
            pairs.append(("coupon", self.coupon))
        if self.referral:
            pairs.append(("referral", self.referral))
        if self.form:
            pairs.append(("form", self.form))
        return pairs


def _services(catalog: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [s for industry in catalog["industries"] for s in industry["services"]]


def _quantity(text: str, low: int, high: int, default: int) -> tuple[int, str | None]:
    text = text.strip()
    if not text:
        return default, None
    # ASCII digits only ("²" is a digit to isdigit(), not to int()), and few enough
    # that int() reads them (it refuses over 4,300).
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or not low <= int(text) <= high:
        return default, f"Choose {low} to {high}."
    return int(text), None


def link_notice(
    catalog: Mapping[str, Any], values: Mapping[str, str], referrals: bool = False
) -> str:
    """What a link asked for that is not offered (an unknown or retired service or
    frequency in its query, an extra the service it opens on has not; a referral code
    while the programme is off), said above the choices it falls back to; else ``""``."""
    offered = _services(catalog)
    services = {s["id"] for s in offered}
    slugs = {f["slug"] for f in catalog["frequencies"]}
    missing = [
        name
        for name, asked, known in (
            ("service", values.get("service", ""), services),
            ("frequency", values.get("frequency", ""), slugs),
        )
        if asked and asked not in known
    ]
    service = next((s for s in offered if s["id"] == values.get("service")), None)
    if service is None and offered:
        service = offered[0]
    extras = {e["id"] for e in service["extras"]} if service else set()
    if any(
        name.startswith("extra.") and name[6:] not in extras and value.strip() not in ("", "0")
        for name, value in values.items()
    ):
        missing.append("extra")
    if not missing:
        return "" if referrals or not values.get("referral", "").strip() else REFERRALS_OFF
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"The {' and '.join(missing)} this link asks for {verb} not offered here."
        " Choose from those below."
    )


def read_choice(
    catalog: Mapping[str, Any],
    values: Mapping[str, str],
    form: str = "",
    referrals: bool = False,
) -> Choice:
    """The step-1 choice in ``values``: the first service, one time, the parameters'
    minimums and no extras until chosen; a quantity out of range or a coupon or referral
    code over its ceiling is a field error. ``catalog`` is a booking form's when ``form``
    names one (its services, extras and frequencies only); the referral code is read
    while the company's programme is on (``referrals``), else left out."""
    services = _services(catalog)
    if not services:
        raise PageError(
            404,
            "Not open for booking",
            "This form books no service offered now."
            if form
            else "This company takes no bookings online yet.",
            # The company's booking page: not from itself (a loop), but from a form's.
            home_button=bool(form),
        )
    service = next((s for s in services if s["id"] == values.get("service")), services[0])
    slugs = [f["slug"] for f in catalog["frequencies"]]
    frequency = values.get("frequency", "")
    if frequency not in slugs:
        frequency = "one_time" if "one_time" in slugs else slugs[0]
    errors: dict[str, str] = {}
    typed: dict[str, str] = {}
    parameters = []
    for p in service["parameters"]:
        low, high = p["minQuantity"], p["maxQuantity"]
        quantity, problem = _quantity(values.get(f"param.{p['id']}", ""), low, high, low)
        if problem:
            errors[f"param.{p['id']}"] = problem
            typed[f"param.{p['id']}"] = values.get(f"param.{p['id']}", "")[:20]
        parameters.append((p, quantity))
    extras = []
    for e in service["extras"]:
        quantity, problem = _quantity(values.get(f"extra.{e['id']}", ""), 0, e["maxQuantity"], 0)
        if not _goes_with(e, frequency):
            if quantity > 0 and not problem:  # asked for: refused by name, never dropped
                errors[f"extra.{e['id']}"] = (
                    f"{e['name']} is not offered on this frequency. Continue without it,"
                    " or choose a frequency it is offered on."
                )
            continue
        if problem:
            errors[f"extra.{e['id']}"] = problem
            typed[f"extra.{e['id']}"] = values.get(f"extra.{e['id']}", "")[:20]
        extras.append((e, quantity))
    zip_code = values.get("zip", "").strip()
    coupon = values.get("coupon", "").strip()
    referral = values.get("referral", "").strip() if referrals else ""
    for name, code in (("coupon", coupon), ("referral", referral)):
        if len(code) > MAX_COUPON_LENGTH:
            errors[name] = f"At most {MAX_COUPON_LENGTH} characters."
    return Choice(
        service,
        frequency,
        tuple(parameters),
        tuple(extras),
        zip_code,
        errors,
        coupon,
        form,
        referral=referral,
        typed=typed,
    )


class Booker:
    """One visit of the booking page: the company, what was sent, the public API."""

    def __init__(self, visit: Visit) -> None:
        self.visit = visit
        self.company: Company = company_of(visit) if visit.company is None else visit.company
        request = visit.request
        self.values: dict[str, str] = {**dict(request.query_params), **visit.form}
        self.embed = self.values.get("embed") == "1"
        self.zone = ZoneInfo(self.company.timezone)
        visit.frameable = self.embed
        self._catalog: dict[str, Any] | None = None
        self.form_id = self.values.get("form", "").strip()
        self.form: dict[str, Any] | None = None
        """The booking form the page is for (the public API's answer), once read."""
        self.referrals = self.company.referral_discount_cents > 0
        """Whether the company's referral programme is on: the referral field shows."""

    @property
    def path(self) -> str:
        return f"/{self.company.slug}/book"

    def api(self, name: str, **kwargs: Any) -> tuple[int, Any]:
        """The public endpoint ``name``'s answer for this company."""
        deps = self.visit.deps.api
        if deps is None:
            raise RuntimeError("the booking page needs the API's dependencies (WebDeps.api)")
        request_id = getattr(self.visit.request.state, "request_id", "")
        return call_public(
            deps, self.company.id, self.company.slug, name, request_id=request_id, **kwargs
        )

    def booking_now(self, booking_id: str) -> Booking | None:
        """The company's booking as stored now; None when there is none."""
        try:
            with self.visit.deps.reader() as uow:
                return uow.bookings.get(self.company.id, booking_id)
        except NotFoundError:
            return None

    def stored_answer(self, key: str) -> tuple[int, Any] | None:
        """The stored answer of this company's public write sent with ``key``."""
        deps = self.visit.deps.api
        if deps is None:
            raise RuntimeError("the booking page needs the API's dependencies (WebDeps.api)")
        return stored_public_answer(deps, self.company.id, key)

    def phones(self) -> PhoneNormalizer:
        """The phone normalizer of the API's booking use case."""
        deps = self.visit.deps.api
        if deps is None:
            raise RuntimeError("the booking page needs the API's dependencies (WebDeps.api)")
        return deps.phones

    def catalog(self) -> dict[str, Any]:
        """The API's catalog of the company (asked once a request); with ``?form=``, the
        booking form's services, extras and frequencies in the catalog's shape (an
        unknown or inactive form is the 404 page)."""
        if self._catalog is None and self.form_id:
            form_status, form = self.api("booking-forms/{id}", path_params={"id": self.form_id})
            if 400 <= form_status < 500:
                raise NOT_FOUND
            if form_status != 200:
                raise PageError(503, "Booking is unavailable", "Please try again in a minute.")
            self.form = form
            self._catalog = {
                "industries": [{"services": form["services"]}],
                "frequencies": form["frequencies"],
            }
        if self._catalog is None:
            status, catalog = self.api("catalog")
            if status != 200:
                raise PageError(503, "Booking is unavailable", "Please try again in a minute.")
            self._catalog = catalog
        return self._catalog

    def questions(self) -> list[dict[str, Any]]:
        """The booking form's questions (none without a form)."""
        return list(self.form["questions"]) if self.form else []

    def quote(self, choice: Choice, start: str | None = None) -> tuple[dict[str, Any] | None, str]:
        """The API's price of ``choice`` (and the start, for date fees), or why not."""
        body: dict[str, Any] = {
            "serviceId": choice.service["id"],
            "frequencySlug": choice.frequency,
            **choice.items(),
        }
        if len(choice.zip) == 5 and choice.zip.isdigit():
            body["zip"] = choice.zip
        if start:
            body["startIso"] = start
        body.update(choice.codes())
        status, answer = self.api("quote", body=body)
        if status != 200:
            return None, str(answer["error"]["message"])
        return answer, ""

    def code_check(
        self, choice: Choice, start: str | None = None
    ) -> tuple[Choice, dict[str, Any] | None, str]:
        """``quote`` of ``choice``; when only its codes (coupon, referral) are refused,
        the choice with the API's refusal of each as its field's error and the price with
        the codes that are not refused."""
        quote, problem = self.quote(choice, start)
        codes = [name for name, wire in CODES if wire in choice.codes()]
        if quote is not None or not codes:
            return choice, quote, problem
        without, _ = self.quote(choice.keeping(), start)
        if without is None:  # refused for something else than its codes
            return choice, quote, problem
        refused = {codes[0]: problem} if len(codes) == 1 else {}
        for name in codes if len(codes) > 1 else ():
            _, why = self.quote(choice.keeping(name), start)
            if why:
                refused[name] = why
        if not refused:  # each alone is taken: the refusal is of the two together
            return choice, quote, problem
        checked = attrs.evolve(choice, errors={**choice.errors, **refused})
        if len(refused) < len(codes):
            kept, _ = self.quote(checked, start)
            without = kept or without
        return checked, without, ""

    def href(self, pairs: Sequence[tuple[str, str]]) -> str:
        """This page's address with ``pairs`` (and ``embed=1`` when framed)."""
        pairs = [*pairs, ("embed", "1")] if self.embed else list(pairs)
        return f"{self.path}?{urlencode(pairs)}"

    def local(self, iso: str) -> datetime:
        return datetime.fromisoformat(iso).astimezone(self.zone)

    def closed(self, iso: str) -> str:
        """The sentence saying changes online are closed for a visit starting at ``iso``
        (it is inside the company's cutoff: ``self_service.changes_open``, the
        tracking page's rule); "" while the customer may still change it online."""
        start, now = datetime.fromisoformat(iso), self.visit.deps.clock.now()
        if self_service.changes_open(self.company, start, now):
            return ""
        return self_service.closed_message(self.company)

    def when(self, iso: str) -> str:
        """``Tuesday, March 10, 2026 at 9:00 AM`` in the company's timezone."""
        local = self.local(iso)
        return f"{long_date(local.date())} at {clock_time(local)}"

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        flow = context.pop("flow", "")
        response = self.visit.render(
            template,
            status=status,
            embed=self.embed,
            book_path=self.path,
            script_version=BOOK_JS_VERSION,
            flow=flow,
            csrf_token=flow_csrf(self.visit, flow) if flow else "",
            money=money,
            **context,
        )
        response.headers["content-security-policy"] = page_policy(self.embed)
        return response


def price_lines(price: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(label, amount, kind) of a priced visit, line by line, to the total."""
    rows = []
    for line in price["lines"]:
        label = line["name"]
        if line["kind"] == "parameter":
            label = f"{line['name']}: {line['quantity']}"
        elif line["quantity"] != 1:
            label = f"{line['name']} \u00d7 {line['quantity']}"
        rows.append((label, money(line["amountCents"]), line["kind"]))
    rows.extend((d["name"], money(-d["amountCents"]), "discount") for d in price["discounts"])
    rows.extend((f["name"], money(f["amountCents"]), "fee") for f in price["fees"])
    if price["taxCents"]:
        rows.append((f"Tax ({price['taxRateBps'] / 100:g}%)", money(price["taxCents"]), "tax"))
    return rows


def _duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest} min" if rest else f"{hours} h"


OptionSet = tuple[
    dict[str, Any],
    bool,
    list[tuple[dict[str, Any], int | str]],
    list[tuple[dict[str, Any], int | str, bool]],
]
"""A service, whether it is the one chosen, its parameters and extras with the quantity
each field shows (what was typed, for a field the page refused)."""


def option_sets(services: list[dict[str, Any]], choice: Choice) -> list[OptionSet]:
    """Each service with its parameters and extras (quantity, and whether the extra goes
    with the chosen frequency): the chosen service's as chosen, the others' at their
    defaults. The page shows the chosen one; the others are disabled fieldsets, which
    the script shows when their service is picked."""
    sets: list[OptionSet] = []
    for service in services:
        chosen = service["id"] == choice.service["id"]
        counts = {p["id"]: q for p, q in choice.parameters} if chosen else {}
        extras = {e["id"]: q for e, q in choice.extras} if chosen else {}
        typed = choice.typed if chosen else {}
        sets.append(
            (
                service,
                chosen,
                [
                    (p, typed.get(f"param.{p['id']}", counts.get(p["id"], p["minQuantity"])))
                    for p in service["parameters"]
                ],
                [
                    (
                        e,
                        typed.get(f"extra.{e['id']}", extras.get(e["id"], 0)),
                        _goes_with(e, choice.frequency),
                    )
                    for e in service["extras"]
                ],
            )
        )
    return sets


def _goes_with(extra: Mapping[str, Any], frequency: str) -> bool:
    return not extra["frequencySlugs"] or frequency in extra["frequencySlugs"]


def problem_lines(
    errors: Mapping[str, str], labels: Mapping[str, str], anchor: Callable[[str], str]
) -> list[tuple[str, str]]:
    """The problem summary atop a refused step, in the order of ``labels`` (the page's):
    each field's problem as ``(anchor, "Label: problem")``, a link that takes the focus
    to its field (a problem that names its field already goes without the label); a
    problem of no field on the page last, as ``("", problem)``."""
    order = {name: index for index, name in enumerate(labels)}
    lines = []
    for name in sorted(errors, key=lambda name: order.get(name, len(order))):
        text = errors[name]
        if name not in labels:
            lines.append(("", text))
        elif text.startswith(labels[name]):
            lines.append((anchor(name), text))
        else:
            lines.append((anchor(name), f"{labels[name]}: {text}"))
    return lines


def _choice_problems(choice: Choice) -> list[tuple[str, str]]:
    """Step 1's problem summary: a quantity's field is named under the chosen service's
    id (each service has its own on the page)."""
    service = choice.service
    labels = {
        **{f"param.{p['id']}": p["name"] for p in service["parameters"]},
        **{f"extra.{e['id']}": e["name"] for e in service["extras"]},
        **CHOICE_LABELS,
    }

    def anchor(name: str) -> str:
        return f"{service['id']}.{name}" if name.startswith(("param.", "extra.")) else name

    return problem_lines(choice.errors, labels, anchor)


def step_job(book: Booker, choice: Choice, status: int = 200, alert: str = "") -> Response:
    """Step 1: the choice and its price."""
    catalog = book.catalog()
    choice, quote, problem = book.code_check(choice)
    if any(name in choice.errors for name, _ in CODES) and status == 200:
        status = 422
    return book.render(
        "book.html",
        status=status,
        step=1,
        heading=book.form["name"] if book.form else "Book online",
        services=_services(catalog),
        option_sets=option_sets(_services(catalog), choice),
        frequencies=catalog["frequencies"],
        choice=choice,
        quote=quote,
        lines=price_lines(quote["firstVisit"]) if quote else [],
        duration=_duration(quote["firstVisit"]["durationMinutes"]) if quote else "",
        problem=problem,
        errors=choice.errors,
        problems=_choice_problems(choice),
        alert=alert,
        quote_url=f"/api/public/{book.company.slug}/quote",
        referral_off=money(book.company.referral_discount_cents) if book.referrals else "",
    )


def _zip_error(book: Booker, choice: Choice) -> str | None:
    if not (len(choice.zip) == 5 and choice.zip.isdigit()):
        return ZIP_TEXT
    return None


def _api_field_errors(answer: Mapping[str, Any]) -> dict[str, str]:
    problems: dict[str, str] = answer.get("error", {}).get("fieldErrors") or {}
    return {WIRE_FIELDS.get(name, name): text for name, text in problems.items()}


def step_date(book: Booker, choice: Choice, status: int = 200, alert: str = "") -> Response:
    """Step 2: the days with an opening, then the open starts of the chosen day."""
    problem = _zip_error(book, choice)
    if choice.codes() and not choice.errors:
        choice, _, _ = book.code_check(choice)
    if problem or choice.errors:
        errors = {**choice.errors, **({"zip": problem} if problem else {})}
        return step_job(book, attrs.evolve(choice, errors=errors), status=422)
    today = book.visit.deps.clock.now().astimezone(book.zone).date()
    base = [("serviceId", choice.service["id"]), ("zip", choice.zip)]
    base += [("frequencySlug", choice.frequency), *choice.specs()]
    days_status, days = book.api(
        "days", query=[*base, ("from", today.isoformat()), ("count", str(DAYS_SHOWN))]
    )
    if days_status != 200:
        errors = _api_field_errors(days)
        if "zip" not in errors:
            errors = {"zip": str(days["error"]["message"])}
        return step_job(book, attrs.evolve(choice, errors=errors), status=422)
    open_days = [date.fromisoformat(d["date"]) for d in days if d["available"]]
    chosen = _read_date(book.values.get("date", ""))
    if chosen is None and open_days:
        chosen = open_days[0]
    starts: list[tuple[str, str]] = []
    if chosen is not None:
        slots_status, slots = book.api("slots", query=[*base, ("date", chosen.isoformat())])
        if slots_status == 200:
            seen = sorted({s["startIso"] for s in slots["data"]}, key=book.local)
            starts = [(iso, clock_time(book.local(iso))) for iso in seen]
    state = choice.state()
    weeks = _calendar(today, [(date.fromisoformat(d["date"]), d["available"]) for d in days])
    return book.render(
        "book.html",
        status=status,
        step=2,
        choice=choice,
        state=state,
        weeks=weeks,
        chosen=chosen,
        chosen_label=long_date(chosen) if chosen else "",
        starts=starts,
        day_href=lambda day: (
            book.href([*state, ("step", "date"), ("date", day.isoformat())]) + "#times"
        ),
        start_href=lambda iso: book.href(
            [
                *state,
                ("step", "details"),
                ("date", chosen.isoformat() if chosen else ""),
                ("start", iso),
            ]
        ),
        back_href=book.href(state),
        alert=alert,
        any_open=bool(open_days),
        timezone=book.company.timezone,
    )


def _calendar(today: date, days: list[tuple[date, bool]]) -> list[list[tuple[date, bool] | None]]:
    """The days in weeks from Monday, blanks before the first and after the last."""
    if not days:
        return []
    cells: list[tuple[date, bool] | None] = [None] * days[0][0].weekday()
    cells += days
    cells += [None] * (-len(cells) % 7)
    return [cells[i : i + 7] for i in range(0, len(cells), 7)]


def _read_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _read_start(book: Booker) -> str | None:
    text = book.values.get("start", "")
    return text if read_instant(text) is not None else None


def step_details(
    book: Booker,
    choice: Choice,
    start: str,
    *,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    status: int = 200,
    alert: str = "",
    flow: str = "",
    coupon_problem: str = "",
    referral_problem: str = "",
) -> Response:
    """Step 3: who and where; ``coupon_problem`` and ``referral_problem``, why the
    booking would refuse the coupon or the referral code, each with a button to go on
    without it."""
    state = [*choice.state(), ("date", book.local(start).date().isoformat()), ("start", start)]
    return book.render(
        "book_details.html",
        status=status,
        step=3,
        choice=choice,
        state=state,
        when=book.when(start),
        values=values or {},
        errors=errors or {},
        labels=DETAIL_LABELS,
        problems=problem_lines(
            errors or {},
            {**DETAIL_LABELS, **{question_field(q): q["label"] for q in book.questions()}},
            lambda name: name,
        ),
        alert=alert,
        flow=flow or secrets.token_urlsafe(24),
        change_href=book.href([*choice.state(), ("step", "date"), ("date", state[-2][1])]),
        job_href=book.href(choice.state()),
        questions=book.questions(),
        form_name=book.form["name"] if book.form else "",
        max_answer=MAX_ANSWER_LENGTH,
        coupon_problem=coupon_problem,
        referral_problem=referral_problem,
    )


def question_field(question: Mapping[str, Any]) -> str:
    """The form field of a booking form's question."""
    return f"q.{question['id']}"


def read_details(book: Booker) -> dict[str, str]:
    """The details sent: the customer's fields, then the answers to the form's questions."""
    names = [*CUSTOMER_FIELDS, *(question_field(q) for q in book.questions())]
    return {name: book.values.get(name, "").strip() for name in names}


def _answers(book: Booker, values: Mapping[str, str]) -> list[tuple[str, dict[str, str]]]:
    """(field, wire answer) of each question answered."""
    return [
        (question_field(q), {"questionId": q["id"], "answer": values[question_field(q)]})
        for q in book.questions()
        if values.get(question_field(q))
    ]


def _customer_body(
    book: Booker, choice: Choice, start: str, values: Mapping[str, str]
) -> dict[str, Any]:
    customer: dict[str, Any] = {"name": values["name"], "email": values["email"]}
    if values["phone"]:
        customer["phone"] = values["phone"]
    extra: dict[str, Any] = {wire: code for name, wire in CODES if (code := getattr(choice, name))}
    if book.form is not None:
        extra["formId"] = book.form["id"]
        extra["answers"] = [answer for _, answer in _answers(book, values)]
    return {
        "serviceId": choice.service["id"],
        "frequencySlug": choice.frequency,
        "startIso": start,
        "customer": customer,
        "address": {
            "line1": values["line1"],
            "line2": values["line2"],
            "city": values["city"],
            "state": values["state"],
            "zip": choice.zip,
            "accessNotes": values["access_notes"],
        },
        **choice.items(),
        **extra,
    }


def _question_errors(book: Booker, values: Mapping[str, str]) -> dict[str, str]:
    """The form's questions as the API checks them: required ones answered, a choice
    one of its choices (the ceiling is the API's structuring, below)."""
    errors: dict[str, str] = {}
    for question in book.questions():
        name, choice = question_field(question), question["kind"] == "choice"
        answer = values[name]
        if not answer and question["required"]:
            errors[name] = CHOOSE_TEXT if choice else ANSWER_TEXT
        elif answer and choice and answer not in question["choices"]:
            errors[name] = CHOICES_TEXT
    return errors


def _check_details(
    book: Booker, body: Mapping[str, Any], values: Mapping[str, str]
) -> dict[str, str]:
    """The field errors of the details: required fields and questions, then the API's
    own structuring (its SPEC.md ceilings and email rule) of the booking body."""
    errors = {name: text for name, text in REQUIRED.items() if not values[name]}
    errors.update(_question_errors(book, values))
    fields = {f"answers.{i}.answer": name for i, (name, _) in enumerate(_answers(book, values))}
    try:
        structure(dict(body), PublicBookingBody)
    except ValidationFailed as failed:
        for name, text in failed.field_errors.items():
            wire = name.removeprefix("body.")
            errors.setdefault(fields.get(wire) or WIRE_FIELDS.get(wire, wire), text)
    # The booking use case's own rules, which the structuring above leaves to it: its
    # phone normalizer and ``Address.errors`` (a two-letter state), so that a refusal
    # shows here and never after "Confirm booking".
    sent = body["address"]
    address = Address(
        line1=sent["line1"],
        city=sent["city"],
        state=sent["state"],
        zip=sent["zip"],
        line2=sent["line2"],
        access_notes=sent["accessNotes"],
    )
    for name, text in address.errors().items():
        if name.removeprefix("address.") in CUSTOMER_FIELDS:
            errors.setdefault(name.removeprefix("address."), text)
    if "phone" not in errors:
        try:
            normalized_phone(values["phone"], book.phones())
        except ValidationFailed as failed:
            errors.update(failed.field_errors)
    return errors


def _start_refused(book: Booker, choice: Choice, start: str) -> Response | None:
    """The date step with a sentence saying why, when the API would refuse ``start`` as
    the booking's start (passed, or off the quarter hour in the company's zone); else
    None."""
    instant = read_instant(start)
    if instant is None or start_problem(instant, book.zone, book.visit.deps.clock.now()) is None:
        return None
    return _pick_another(book, choice, start)


def _pick_another(book: Booker, choice: Choice, start: str) -> Response:
    """The date step again (409) for a start refused on the start itself: the open
    times of its day (of the first open day, once the day has passed), a sentence
    saying why above them."""
    now = book.visit.deps.clock.now()
    day = book.local(start).date()
    passed = datetime.fromisoformat(start) < now
    alert = START_PASSED if passed else START_OFF_GRID
    today = now.astimezone(book.zone).date()
    pairs = [("date", day.isoformat() if day >= today else "")]
    return step_date(_with(book, pairs), choice, status=409, alert=alert)


def review(book: Booker, choice: Choice, start: str) -> Response:
    """``POST step=review``: the details checked, then the whole booking to confirm."""
    refused = _start_refused(book, choice, start)
    if refused is not None:
        return refused
    values = read_details(book)
    flow = book.values["flow"]
    body = _customer_body(book, choice, start, values)
    errors = _check_details(book, body, values)
    if errors:
        return step_details(
            book, choice, start, values=values, errors=errors, status=422, flow=flow
        )
    try:
        visits = _visit_prices(book, choice, start, values)
    except (CouponRejected, ReferralRejected) as rejected:
        return _code_refused(book, choice, start, values, rejected)
    quote, problem = book.quote(choice, start)
    return book.render(
        "book_review.html",
        closed=book.closed(start),
        step=4,
        choice=choice,
        state=[*choice.state(), ("start", start)],
        values=values,
        when=book.when(start),
        quote=quote,
        lines=price_lines(quote["firstVisit"]) if quote else [],
        later=quote["laterVisits"] if quote else None,
        later_text=later_visits_text(visits, book.zone),
        problem=problem,
        frequency_name=_frequency_name(book, choice),
        flow=flow,
        answers=[
            (q["label"], values[question_field(q)])
            for q in book.questions()
            if values[question_field(q)]
        ],
    )


def _code_refused(
    book: Booker,
    choice: Choice,
    start: str,
    values: Mapping[str, str],
    refused: CouponRejected | ReferralRejected,
) -> Response:
    """The details step again (422) saying why the booking would refuse its coupon or
    referral code, with a button to go on without it."""
    coupon = isinstance(refused, CouponRejected)
    return step_details(
        book,
        choice,
        start,
        values=values,
        status=422,
        flow=book.values["flow"],
        coupon_problem=str(refused) if coupon else "",
        referral_problem="" if coupon else str(refused),
    )


def _visit_prices(
    book: Booker, choice: Choice, start: str, values: Mapping[str, str]
) -> list[tuple[datetime, PriceBreakdown]]:
    """Each visit the booking would make, priced as the booking will price it (a plan's
    later visits each at its own date, the coupon and the referral code as this email's
    customer may use them); raises ``CouponRejected`` or ``ReferralRejected`` for a code
    the booking would refuse. Empty when it cannot be priced (the quote's problem is
    shown then)."""
    items = choice.items()
    selection = Selection(
        service_id=choice.service["id"],
        frequency_slug=choice.frequency,
        parameters=tuple(SelectedItem(i["id"], i["quantity"]) for i in items["parameters"]),
        extras=tuple(SelectedItem(i["id"], i["quantity"]) for i in items["extras"]),
        coupon_code=choice.codes().get("couponCode"),
    )
    address = Address(
        line1=values["line1"],
        city=values["city"],
        state=values["state"],
        zip=choice.zip,
        line2=values["line2"],
        access_notes=values["access_notes"],
    )
    try:
        return price_booking_visits(
            book.company.id,
            selection,
            datetime.fromisoformat(start),
            address,
            customer_email=values["email"],
            referral_code=choice.codes().get("referralCode"),
            uow=book.visit.deps.reader(),
            clock=book.visit.deps.clock,
        )
    except (CouponRejected, ReferralRejected):
        raise
    except DomainError:
        return []


def later_visits_text(visits: Sequence[tuple[datetime, PriceBreakdown]], zone: ZoneInfo) -> str:
    """``Later visits: $124.93 each.``, naming the visits that cost otherwise and why
    (``..., except Dec 24 and Dec 31: $152.15 (Holiday surcharge).``); ``""`` without
    later visits."""
    later = visits[1:]
    if not later:
        return ""
    totals = [price.total_cents for _, price in later]
    usual = max(totals, key=lambda total: (totals.count(total), -totals.index(total)))
    usual_fees = next({f.name for f in p.fees} for _, p in later if p.total_cents == usual)
    others: dict[tuple[int, str], list[date]] = {}
    for when, price in later:
        if price.total_cents != usual:
            why = ", ".join(f.name for f in price.fees if f.name not in usual_fees)
            others.setdefault((price.total_cents, why), []).append(when.astimezone(zone).date())
    text = f"Later visits: {money(usual)} each"
    if not others:
        return f"{text}."
    parts = []
    for (total, why), days in others.items():
        named = [f"{day:%b} {day.day}" for day in days]
        listed = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
        parts.append(f"{listed}: {money(total)}" + (f" ({why})" if why else ""))
    return f"{text}, except {'; '.join(parts)}."


def _frequency_name(book: Booker, choice: Choice) -> str:
    for frequency in book.catalog()["frequencies"]:
        if frequency["slug"] == choice.frequency:
            return str(frequency["name"])
    return choice.frequency


ALREADY_BOOKED = (
    "This form had already made the booking below, so the changes you made were not sent."
    " To move it, use its tracking page; to book another job, start again."
)


def _done(
    book: Booker, choice: Choice, answer: dict[str, Any], *, email: str, notice: str = ""
) -> Response:
    """The last step: the booking ``answer`` (the public ``book`` answer) names, its time
    with its zone (as the tracking page and the emails write it), total and tracking
    link; ``notice`` above it."""
    first = book.local(answer["startIso"])
    last = book.local(answer["endIso"])
    starts, ends = clock_range(first, last)
    if not needs_zones(first, last):
        ends = f"{ends} {zone_label(last)}"
    return book.render(
        "book_done.html",
        step=5,
        closed=book.closed(answer["startIso"]),
        booking=answer,
        when=f"{long_date(first.date())} at {starts}",
        ends=ends,
        visits=len(answer["bookings"]),
        total=money(answer["price"]["totalCents"]),
        referral_discount=answer["price"].get("referralDiscountCents", 0),
        email=email,
        notice=notice,
        again_href=book.href([("form", choice.form)] if choice.form else []),
    )


def confirm(book: Booker, choice: Choice, start: str) -> Response:
    """``POST step=confirm``: book through the public book endpoint, once per flow."""
    values = read_details(book)
    flow = book.values["flow"]
    body = _customer_body(book, choice, start, values)
    key = f"book-page:{flow}"
    status, answer = book.api("book", body=body, idempotency_key=key)
    if status == 201:
        return _done(book, choice, answer, email=values["email"])
    error = answer["error"]
    code, message = error["code"], str(error["message"])
    if code == "idempotency_key_reused":
        # This form booked already, and was sent again changed (the back button, then an
        # edit): the booking it made is shown, never a second one made unsaid.
        stored = book.stored_answer(key)
        if stored is not None and stored[0] == 201:
            made = stored[1]
            now = book.booking_now(str(made["id"]))
            if now is not None and now.status is not BookingStatus.CANCELLED:
                # As it stands now: moved or repriced since, the page says so.
                made = {
                    **made,
                    "startIso": now.start.isoformat(),
                    "endIso": now.end.isoformat(),
                    "price": {**made["price"], "totalCents": now.price.total_cents},
                }
                return _done(book, choice, made, email="", notice=ALREADY_BOOKED)
            alert = (
                f"This form's booking {made['code']} was cancelled since."
                " Check the details and send again to book anew."
            )
            return step_details(book, choice, start, values=values, status=409, alert=alert)
    day = [("date", book.local(start).date().isoformat())]
    if code == "conflict":
        return step_date(_with(book, day), choice, status=409, alert=SLOT_TAKEN)
    if status == 422 and "is not an open slot" in message:
        return step_date(_with(book, day), choice, status=409, alert=SLOT_GONE)
    if code == "idempotency_key_reused":
        alert = "This booking was already sent with other details. Check them and send again."
        return step_details(book, choice, start, values=values, status=409, alert=alert)
    if code == "idempotency_key_in_use":
        alert = "Your booking is being made. Wait a moment, then send again."
        return step_details(book, choice, start, values=values, status=409, alert=alert, flow=flow)
    errors = _api_field_errors(answer)
    if any(name in errors for name in START_FIELDS):
        return _pick_another(book, choice, start)
    if code == "unprocessable" and not errors and choice.codes():
        # A code refused by the booking itself (used up or booked meanwhile): said as
        # the details step says it, with the button to go on without it.
        try:
            _visit_prices(book, choice, start, values)
        except (CouponRejected, ReferralRejected) as refused:
            return _code_refused(book, choice, start, values, refused)
    coupon_problem = errors.pop("coupon", "") or errors.pop("referral", "")
    # Marked beside their fields under the page's one sentence; a refusal of a field the
    # page does not show is said in words instead, and the API's generic sentence only
    # when it names no field at all.
    shown = {*CUSTOMER_FIELDS, *(question_field(q) for q in book.questions())}
    marked = {name: text for name, text in errors.items() if name in shown}
    unmarked = [text for name, text in errors.items() if name not in shown]
    alert = " ".join(unmarked) if unmarked else ("" if marked or coupon_problem else message)
    return step_details(
        book,
        choice,
        start,
        values=values,
        errors=marked,
        status=422,
        alert=alert,
        flow=flow,
        coupon_problem=coupon_problem,
    )


def _with(book: Booker, pairs: list[tuple[str, str]]) -> Booker:
    book.values.update(pairs)
    return book


def booking_page(visit: Visit) -> Response:
    """``GET|POST /{slug}/book``: the step the request names."""
    book = Booker(visit)
    catalog = book.catalog()
    step = book.values.get("step", "")
    for name, _ in CODES:  # the details step's ways past a refusal
        if visit.request.method == "POST" and book.values.get(f"without_{name}") == "1":
            book.values[name], step = "", "review"
    choice = read_choice(catalog, book.values, form=book.form_id, referrals=book.referrals)
    notice = link_notice(catalog, book.values, book.referrals)
    if notice and visit.request.method == "GET":
        return step_job(book, choice, alert=notice)
    if visit.request.method == "POST":
        start = _read_start(book)
        if start is None or step not in {"review", "confirm", "edit"}:
            raise PageError(400, "That form could not be read", "Start again from the first step.")
        if step == "edit":
            values = read_details(book)
            return step_details(book, choice, start, values=values, flow=book.values["flow"])
        if step == "review":
            return review(book, choice, start)
        return confirm(book, choice, start)
    if step == "date":
        return step_date(book, choice)
    if step == "details":
        start = _read_start(book)
        if start is None:
            return step_date(book, choice)
        return _start_refused(book, choice, start) or step_details(book, choice, start)
    return step_job(book, choice, status=422 if choice.errors else 200)


async def book_script(request: Request) -> Response:
    """``/assets/book.js``: the booking page's live price and, framed, its height."""
    cache = "public, max-age=31536000, immutable"
    if request.query_params.get("v") != BOOK_JS_VERSION:
        cache = "public, max-age=300"
    return Response(
        BOOK_JS,
        media_type="text/javascript",
        headers={"cache-control": cache, "x-content-type-options": "nosniff"},
    )


def embed_script(deps: WebDeps) -> Route:
    """``/{slug}/embed.js``: the snippet's script, which puts the company's booking page
    in an iframe where the script tag stands; 404 for an unknown company. No cookie."""

    def known(slug: str) -> bool:
        if not 1 <= len(slug) <= 63 or not SLUG_PATTERN.match(slug):
            return False
        with deps.reader() as uow:
            return uow.companies.by_slug(slug) is not None

    async def answer(request: Request) -> Response:
        slug = str(request.path_params["slug"])
        if not await run_in_threadpool(known, slug):
            return Response("// No such company.\n", 404, media_type="text/javascript")
        return Response(
            EMBED_JS.replace(b"__SLUG__", slug.encode()),
            media_type="text/javascript",
            headers={
                "cache-control": "public, max-age=300",
                "x-content-type-options": "nosniff",
                "cross-origin-resource-policy": "cross-origin",
            },
        )

    return Route("/{slug}/embed.js", answer, methods=["GET"])


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The booking page, its script and the embed snippet's script."""
    return [
        Route("/assets/book.js", book_script, methods=["GET"]),
        customer_page(
            "/{slug}/book", deps, booking_page, methods=("GET", "POST"), csrf=csrf_of_flow
        ),
        embed_script(deps),
    ]
