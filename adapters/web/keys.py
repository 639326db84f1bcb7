"""The API keys page (``/admin/keys``): list the company's keys, create one, edit an active
key's permissions and rate limit, rotate and revoke a key (each after a confirmation page).

Owners only: a key opens the company's data over ``/api/v1``, so dispatchers get the 403
page here (docs/web.md). The rules are the core's (``booking_core.auth``: SPEC.md section
5, items 6 to 10) through the use cases of ``booking_core.services.companies``; this
module only reads the form and shows the answer.

A full key exists once, in the answer to the POST that created or rotated it: that page
is rendered, never reached by a redirect, so the key is in no address, and it is sent
with ``Cache-Control: no-store`` (every page is), so leaving it and coming back shows it
no more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.nav import OWNERS
from adapters.web.pages import Visit, page
from adapters.web.setup_forms import MAX_DIGITS, STALE, WHOLE, fingerprint, stale
from adapters.web.time_text import moment
from booking_core import auth
from booking_core.auth import ApiKey
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.services import companies as cases
from booking_core.services.setup import ChangedMeanwhile

SCOPE_FIELD = "scope."
"""A scope's checkbox is named ``scope.<scope>`` (a form keeps one value per name)."""
SCOPE_SUMMARIES: Mapping[str, str] = {
    "catalog:read": "Services and prices; price a job",
    "bookings:read": "Read bookings",
    "bookings:write": "Make, move and cancel bookings",
    "customers:read": "Read customers",
    "customers:write": "Add customers",
    "leads:read": "Read leads",
    "leads:write": "Capture and update leads",
    "quotes:read": "Read quotes",
    "quotes:write": "Create, send and act on quotes",
    "payments:read": "Read the payment ledger",
    "payments:write": "Record and reverse payments",
    "crews:read": "Read the crew list",
    "webhooks:manage": "Register and manage webhook endpoints",
}
"""One line per scope of ``booking_core.auth.SCOPES`` (docs/api.md, Scopes)."""
NO_STORE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}
"""The headers of an answer that shows a secret once."""


def local_time(instant: datetime | None, timezone: str, *, seconds: bool = False) -> str:
    """``Nov 23, 2026, 5:30 PM`` (``5:30:07 PM`` with ``seconds``) in the company's
    timezone; ``—`` for None."""
    return "—" if instant is None else moment(instant, ZoneInfo(timezone), seconds=seconds)


@frozen
class KeyForm:
    """What the create and edit forms show: the values typed (or the defaults)."""

    name: str
    scopes: frozenset[str]
    rate_limit: str


NEW_KEY = KeyForm("", auth.DEFAULT_SCOPES, str(auth.DEFAULT_RATE_LIMIT))
"""A new key starts with SPEC.md's three read scopes and 120 requests per minute."""


def _ticked(form: Mapping[str, str]) -> frozenset[str]:
    """The scopes ticked in a form (unknown names included: the core refuses them)."""
    return frozenset(
        name.removeprefix(SCOPE_FIELD) for name in form if name.startswith(SCOPE_FIELD)
    )


GROUPED = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+\Z")
"""A number written with thousands commas: ``6,000``, ``1,000,000``."""


def _rate_limit(text: str) -> tuple[int | None, dict[str, str]]:
    """The rate limit typed (digits 0-9, commas only between groups of three: "6,000"),
    or the field error of one that is not a whole number. ``int`` alone would take other
    scripts' digits, ``1_000`` and ``+120``, which no other form takes; a comma elsewhere
    ("6,00", "60,00") is refused rather than guessed at, as money's commas are."""
    typed = text.strip()
    digits = typed.replace(",", "")
    significant = digits.lstrip("0") or "0"  # zeros in front do not count
    grouped = "," not in typed or GROUPED.match(typed) is not None
    if WHOLE.match(digits) and grouped and len(significant) <= MAX_DIGITS:
        return int(significant), {}
    low, high = auth.MIN_RATE_LIMIT, auth.MAX_RATE_LIMIT
    return None, {"rate_limit": f"A whole number of requests per minute, {low} to {high:,}."}


def _read_form(visit: Visit, *, with_name: bool) -> tuple[KeyForm, int | None, dict[str, str]]:
    form = KeyForm(visit.field("name"), _ticked(visit.form), visit.field("rate_limit"))
    limit, errors = _rate_limit(form.rate_limit)
    # The core's rules (name, at least one permission, 10 to 6,000), all at once.
    name = form.name if with_name else None
    return form, limit, {**auth.validate_key_settings(name, form.scopes, limit), **errors}


def _key(visit: Visit, key_id: str) -> ApiKey:
    """The company's key ``key_id``; ``NotFoundError`` (the 404 page) for any other."""
    with visit.deps.reader() as uow:
        return uow.api_keys.get(visit.signed_in_company.id, key_id)


def _scope_rows(chosen: Iterable[str]) -> list[tuple[str, str, bool]]:
    wanted = set(chosen)
    return [(scope, SCOPE_SUMMARIES.get(scope, ""), scope in wanted) for scope in auth.SCOPES]


def _list_page(
    visit: Visit, form: KeyForm = NEW_KEY, errors: Mapping[str, str] | None = None
) -> Response:
    company = visit.signed_in_company
    keys = cases.list_keys(company.id, uow=visit.deps.reader())
    return visit.render(
        "keys.html",
        status=422 if errors else 200,
        keys=keys,
        scope_order=auth.SCOPES,
        form=form,
        scopes=_scope_rows(form.scopes),
        errors=errors or {},
        when=lambda at: local_time(at, company.timezone),
        low=auth.MIN_RATE_LIMIT,
        high=auth.MAX_RATE_LIMIT,
    )


def keys_page(visit: Visit) -> Response:
    """``GET /admin/keys``: the keys and the create form; ``POST``: create one."""
    if visit.request.method != "POST":
        return _list_page(visit)
    form, limit, errors = _read_form(visit, with_name=True)
    if errors:
        return _list_page(visit, form, errors)
    deps = visit.deps
    try:
        issued = cases.create_key(
            cases.CreateKey(
                company_id=visit.signed_in_company.id,
                name=form.name,
                scopes=form.scopes,
                rate_limit=limit,
            ),
            uow=deps.uow(),
            clock=deps.clock,
        )
    except ValidationFailed as refused:
        return _list_page(visit, form, refused.field_errors)
    return _shown_once(visit, issued, created=True)


def _shown_once(visit: Visit, issued: auth.IssuedKey, *, created: bool) -> Response:
    """The answer that shows the full key, this once."""
    key = issued.key
    response = visit.render(
        "keys_secret.html",
        title="Key created" if created else "Key rotated",
        lead=(
            f"{key.name}: copy the key now. It is shown this once; this page will not show"
            " it again."
            if created
            else f"{key.name} has a new key. The old one stopped working just now. Copy the"
            " new one now: it is shown this once."
        ),
        label="API key",
        secret=issued.secret,
        facts=[
            ("Permissions", ", ".join(s for s in auth.SCOPES if s in key.scopes)),
            ("Rate limit", f"{key.rate_limit_per_minute:,} requests per minute"),
            # Where a developer given the key sends it, and reads how (the one-page reference).
            ("API address", f"{visit.deps.base_url.rstrip('/')}/api/v1"),
            ("Reference", f"{visit.deps.base_url.rstrip('/')}/docs"),
        ],
        usage="Authorization: Bearer <the key>",
        back_path=f"/admin/keys/{key.id}",
        back_label="Done: go to the key",
    )
    response.headers.update(NO_STORE)
    return response


def _stored_form(key: ApiKey) -> dict[str, str]:
    """What a key's edit form shows of the stored key, for its fingerprint."""
    return {"scopes": " ".join(sorted(key.scopes)), "rate_limit": str(key.rate_limit_per_minute)}


def _key_page(
    visit: Visit,
    key: ApiKey,
    form: KeyForm | None = None,
    errors: Mapping[str, str] | None = None,
    refusal: str | None = None,
) -> Response:
    company = visit.signed_in_company
    shown = form or KeyForm(key.name, key.scopes, str(key.rate_limit_per_minute))
    return visit.render(
        "keys_key.html",
        status=422 if errors or refusal else 200,
        key=key,
        form=shown,
        scopes=_scope_rows(shown.scopes),
        errors=errors or {},
        refusal=refusal,
        shown=fingerprint(_stored_form(key)),
        when=lambda at: local_time(at, company.timezone),
        low=auth.MIN_RATE_LIMIT,
        high=auth.MAX_RATE_LIMIT,
    )


def key_page(visit: Visit) -> Response:
    """``GET /admin/keys/{id}``: one key, its edit form while active; ``POST``: save the
    edit (a revoked key refuses it with the core's message)."""
    key = _key(visit, visit.request.path_params["key_id"])
    if visit.request.method != "POST":
        return _key_page(visit, key)
    changed = STALE.format(what="key")
    if key.active and stale(visit.form, _stored_form(key)):
        return _key_page(visit, key, refusal=changed)  # the form shows what is stored
    form, limit, errors = _read_form(visit, with_name=False)
    form = KeyForm(key.name, form.scopes, form.rate_limit)
    if errors and key.active:
        return _key_page(visit, key, form, errors)
    deps = visit.deps
    try:
        cases.edit_key(
            key.company_id,
            key.id,
            scopes=form.scopes,
            rate_limit=limit,
            expected=key,
            uow=deps.uow(),
            clock=deps.clock,
        )
    except ChangedMeanwhile:  # saved by someone else since this request read it
        return _key_page(visit, _key(visit, key.id), refusal=changed)
    except InvalidTransition as refused:  # a revoked key: the core refuses any edit
        return _key_page(visit, _key(visit, key.id), refusal=refused.message)
    except ValidationFailed as refused:
        return _key_page(visit, key, form, refused.field_errors)
    return visit.redirect(f"/admin/keys/{key.id}", flash=f"Saved the changes to {key.name}.")


def rotate_page(visit: Visit) -> Response:
    """``GET /admin/keys/{id}/rotate``: the confirmation; ``POST``: a new secret, shown
    once, and the old one stops working."""
    key = _key(visit, visit.request.path_params["key_id"])
    if not key.active and visit.request.method != "POST":
        return visit.redirect(f"/admin/keys/{key.id}", flash=f"{key.name} is revoked.")
    if visit.request.method != "POST":
        return visit.render(
            "keys_confirm.html",
            title=f"Rotate {key.name}?",
            message=(
                "A new key replaces this one. The current key stops working at once, so"
                f" every tool using {key.name} fails until it is given the new key."
            ),
            action=f"/admin/keys/{key.id}/rotate",
            button="Rotate key",
            danger=True,
            cancel=f"/admin/keys/{key.id}",
        )
    deps = visit.deps
    try:
        issued = cases.rotate_key(key.company_id, key.id, uow=deps.uow(), clock=deps.clock)
    except InvalidTransition as refused:  # a revoked key cannot be rotated
        return _key_page(visit, _key(visit, key.id), refusal=refused.message)
    return _shown_once(visit, issued, created=False)


def revoke_page(visit: Visit) -> Response:
    """``GET /admin/keys/{id}/revoke``: the confirmation; ``POST``: revoke for good."""
    key = _key(visit, visit.request.path_params["key_id"])
    if not key.active:
        return visit.redirect(f"/admin/keys/{key.id}", flash=f"{key.name} is already revoked.")
    if visit.request.method != "POST":
        return visit.render(
            "keys_confirm.html",
            title=f"Revoke {key.name}?",
            message=(
                "The key stops working at once and for good: a revoked key cannot be edited,"
                " rotated or turned back on. Create a new key if a tool still needs access."
            ),
            action=f"/admin/keys/{key.id}/revoke",
            button="Revoke key",
            danger=True,
            cancel=f"/admin/keys/{key.id}",
        )
    deps = visit.deps
    cases.revoke_key(key.company_id, key.id, uow=deps.uow(), clock=deps.clock)
    return visit.redirect("/admin/keys", flash=f"{key.name} is revoked. It no longer works.")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The keys page, a key's page, and the rotate and revoke confirmations."""
    both = ("GET", "POST")
    return [
        page("/admin/keys", deps, keys_page, methods=both, roles=OWNERS),
        page("/admin/keys/{key_id}", deps, key_page, methods=both, roles=OWNERS),
        page("/admin/keys/{key_id}/rotate", deps, rotate_page, methods=both, roles=OWNERS),
        page("/admin/keys/{key_id}/revoke", deps, revoke_page, methods=both, roles=OWNERS),
    ]
