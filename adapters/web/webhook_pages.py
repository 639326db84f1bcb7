"""The webhooks pages (``/admin/webhooks``): the company's endpoints, registering one, and
an endpoint's page with its delivery log, a test event, rotating the signing secret,
turning it off and on, and deleting it.

Owners only, as API keys (docs/web.md): an endpoint receives the company's data. The
rules are the core's (``booking_core.services.webhooks``); URLs are checked with the same
``UrlPolicy`` as ``/api/v1/webhooks`` (the server's resolver and
``BOOKING_WEBHOOK_ALLOW_HOSTS``), and a refusal is shown beside the URL field.

The signing secret is shown once, in the answer to the POST that registered the endpoint
or rotated its secret (never through a redirect, ``Cache-Control: no-store``).

The delivery log lists attempts, as the API's does: a delivery queued but not yet tried
(a test event just asked for) has no row until the delivery worker has tried it; the
page says so rather than showing a row it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.keys import NO_STORE, local_time
from adapters.web.nav import OWNERS
from adapters.web.pages import Visit, page, pager_links, read_position
from booking_core.errors import InvalidTransition, RuleViolation, ValidationFailed
from booking_core.events import DESCRIPTIONS, EventType
from booking_core.paging import PageRequest
from booking_core.services import webhooks as cases
from booking_core.webhook_endpoints import (
    ALL_EVENTS,
    MAX_DESCRIPTION_LENGTH,
    MAX_ENDPOINTS_PER_COMPANY,
    MAX_URL_LENGTH,
    SUBSCRIBABLE,
    WebhookEndpoint,
)

EVENT_FIELD = "event."
"""An event type's checkbox is named ``event.<type>`` (a form keeps one value per name)."""
LOG_PAGE = 25
EVENTS: tuple[tuple[str, str], ...] = tuple(
    (t.value, DESCRIPTIONS[t]) for t in EventType if t.value in SUBSCRIBABLE
)
"""The event types an endpoint may subscribe to, in the catalogue's order."""
NO_EVENTS = "Tick at least one event, or choose All events."


@frozen
class EndpointForm:
    """What the register form shows: the values typed (or the defaults)."""

    url: str
    every: bool
    events: frozenset[str]
    description: str


NEW_ENDPOINT = EndpointForm("", True, frozenset(), "")


def _endpoint(visit: Visit, endpoint_id: str) -> WebhookEndpoint:
    """The company's endpoint; ``NotFoundError`` (the 404 page) for any other id."""
    return cases.get_endpoint(visit.signed_in_company.id, endpoint_id, uow=visit.deps.reader())


def _urls(visit: Visit) -> cases.UrlPolicy:
    deps = visit.deps
    return cases.UrlPolicy(resolver=deps.resolver, allow_hosts=deps.webhook_allow_hosts)


def _when(visit: Visit) -> Callable[[datetime | None], str]:
    zone = visit.signed_in_company.timezone
    return lambda at: local_time(at, zone)


def _list_page(
    visit: Visit,
    form: EndpointForm = NEW_ENDPOINT,
    errors: Mapping[str, str] | None = None,
    refusal: str | None = None,
) -> Response:
    company = visit.signed_in_company
    found = cases.list_endpoints(
        company.id, PageRequest(limit=MAX_ENDPOINTS_PER_COMPANY), uow=visit.deps.reader()
    )
    return visit.render(
        "webhooks.html",
        status=422 if errors or refusal else 200,
        endpoints=found.items,
        form=form,
        events=[(name, text, name in form.events) for name, text in EVENTS],
        errors=errors or {},
        refusal=refusal,
        when=_when(visit),
        max_url=MAX_URL_LENGTH,
        max_description=MAX_DESCRIPTION_LENGTH,
        all_events=ALL_EVENTS,
    )


def webhooks_page(visit: Visit) -> Response:
    """``GET /admin/webhooks``: the endpoints and the register form; ``POST``: register."""
    if visit.request.method != "POST":
        return _list_page(visit)
    form = EndpointForm(
        url=visit.field("url").strip(),
        every=visit.field("which") != "some",
        events=frozenset(
            name.removeprefix(EVENT_FIELD) for name in visit.form if name.startswith(EVENT_FIELD)
        ),
        description=visit.field("description").strip(),
    )
    chosen = (ALL_EVENTS,) if form.every else tuple(n for n, _ in EVENTS if n in form.events)
    chosen += tuple(sorted(form.events - SUBSCRIBABLE)) if not form.every else ()
    deps = visit.deps
    try:
        endpoint, secret = cases.create_endpoint(
            cases.CreateEndpoint(
                company_id=visit.signed_in_company.id,
                url=form.url,
                events=chosen,
                description=form.description,
            ),
            uow=deps.uow(),
            clock=deps.clock,
            urls=_urls(visit),
        )
    except ValidationFailed as refused:
        errors = dict(refused.field_errors)
        if "events" in errors and not chosen:
            errors["events"] = NO_EVENTS
        return _list_page(visit, form, errors)
    except RuleViolation as refused:  # too many endpoints
        return _list_page(visit, form, refusal=refused.message)
    return _secret_once(visit, endpoint, secret, created=True)


def _secret_once(
    visit: Visit, endpoint: WebhookEndpoint, secret: str, *, created: bool
) -> Response:
    """The answer that shows the signing secret, this once."""
    facts = [("URL", endpoint.url)]
    expiry = cases.previous_secret_expiry(endpoint, visit.deps.clock.now())
    if expiry is not None:
        zone = visit.signed_in_company.timezone
        facts.append(("Previous secret signs until", local_time(expiry, zone)))
    response = visit.render(
        "keys_secret.html",
        title="Endpoint registered" if created else "Signing secret rotated",
        lead=(
            "Deliveries to this endpoint are signed with this secret. Copy it into the"
            " receiver now: it is shown this once."
            if created
            else "Deliveries are now signed with this new secret, and with the previous"
            " one too for 24 hours, so the receiver can switch at leisure. Copy it now:"
            " it is shown this once."
        ),
        label="Signing secret",
        secret=secret,
        facts=facts,
        usage="Standard Webhooks: the webhook-signature header (docs/webhooks.md).",
        usage_label="How receivers check it:",
        back_path=f"/admin/webhooks/{endpoint.id}",
        back_label="Done: go to the endpoint",
    )
    response.headers.update(NO_STORE)
    return response


def endpoint_page(visit: Visit) -> Response:
    """``GET /admin/webhooks/{id}``: the endpoint, its actions and its delivery log."""
    endpoint = _endpoint(visit, visit.request.path_params["endpoint_id"])
    after = read_position(visit.request.query_params.get("after", ""))
    log = cases.list_deliveries(
        endpoint.company_id,
        endpoint.id,
        PageRequest(limit=LOG_PAGE, after=after),
        uow=visit.deps.reader(),
    )
    older, _ = pager_links(f"/admin/webhooks/{endpoint.id}", log)
    now = visit.deps.clock.now()
    return visit.render(
        "webhooks_endpoint.html",
        endpoint=endpoint,
        attempts=log.items,
        first_page=after is None,
        older=older,
        previous_expiry=cases.previous_secret_expiry(endpoint, now),
        every=ALL_EVENTS in endpoint.events,
        when=_when(visit),
        exact=lambda at: local_time(at, visit.signed_in_company.timezone, seconds=True),
    )


def send_test(visit: Visit) -> Response:
    """``POST /admin/webhooks/{id}/test``: queue a ``webhook.test`` event for it."""
    endpoint = _endpoint(visit, visit.request.path_params["endpoint_id"])
    back = f"/admin/webhooks/{endpoint.id}"
    deps = visit.deps
    try:
        delivery = cases.send_test(
            endpoint.company_id, endpoint.id, uow=deps.uow(), clock=deps.clock
        )
    except InvalidTransition:
        return visit.redirect(back, flash="This endpoint is turned off: turn it on first.")
    return visit.redirect(
        back,
        flash=(
            f"Test event {delivery.event_id} queued. The delivery worker (booking worker)"
            " sends it within seconds of picking it up; it shows in the log below after"
            " its first attempt (reload to see it)."
        ),
    )


def set_active(visit: Visit) -> Response:
    """``POST /admin/webhooks/{id}/active``: turn the endpoint on (``active=on``) or off."""
    endpoint = _endpoint(visit, visit.request.path_params["endpoint_id"])
    active = visit.field("active") == "on"
    deps = visit.deps
    cases.update_endpoint(
        cases.UpdateEndpoint(
            company_id=endpoint.company_id, endpoint_id=endpoint.id, active=active
        ),
        uow=deps.uow(),
        urls=_urls(visit),
        clock=deps.clock,
    )
    said = (
        "Turned on: new events are sent to it again."
        if active
        else "Turned off: nothing is sent to it, and deliveries that were waiting are given up."
    )
    return visit.redirect(f"/admin/webhooks/{endpoint.id}", flash=said)


def rotate_page(visit: Visit) -> Response:
    """``GET /admin/webhooks/{id}/rotate``: the confirmation; ``POST``: a new secret,
    shown once."""
    endpoint = _endpoint(visit, visit.request.path_params["endpoint_id"])
    if visit.request.method != "POST":
        return visit.render(
            "keys_confirm.html",
            title="Rotate the signing secret?",
            message=(
                f"A new secret signs deliveries to {endpoint.url} from now on. The current"
                " one keeps signing beside it for 24 hours, so the receiver can switch"
                " without missing a delivery."
            ),
            action=f"/admin/webhooks/{endpoint.id}/rotate",
            button="Rotate secret",
            danger=False,
            cancel=f"/admin/webhooks/{endpoint.id}",
        )
    deps = visit.deps
    changed, secret = cases.rotate_secret(
        endpoint.company_id, endpoint.id, uow=deps.uow(), clock=deps.clock
    )
    return _secret_once(visit, changed, secret, created=False)


def delete_page(visit: Visit) -> Response:
    """``GET /admin/webhooks/{id}/delete``: the confirmation; ``POST``: delete it."""
    endpoint = _endpoint(visit, visit.request.path_params["endpoint_id"])
    if visit.request.method != "POST":
        return visit.render(
            "keys_confirm.html",
            title="Delete this endpoint?",
            message=(
                f"Nothing more is sent to {endpoint.url}. Deliveries waiting for it and its"
                " delivery log are deleted with it. This cannot be undone."
            ),
            action=f"/admin/webhooks/{endpoint.id}/delete",
            button="Delete endpoint",
            danger=True,
            cancel=f"/admin/webhooks/{endpoint.id}",
        )
    cases.delete_endpoint(endpoint.company_id, endpoint.id, uow=visit.deps.uow())
    return visit.redirect("/admin/webhooks", flash=f"Deleted the endpoint {endpoint.url}.")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The webhooks page, an endpoint's page and its actions."""
    both = ("GET", "POST")
    post = ("POST",)
    base = "/admin/webhooks/{endpoint_id}"
    return [
        page("/admin/webhooks", deps, webhooks_page, methods=both, roles=OWNERS),
        page(base, deps, endpoint_page, roles=OWNERS),
        page(f"{base}/test", deps, send_test, methods=post, roles=OWNERS),
        page(f"{base}/active", deps, set_active, methods=post, roles=OWNERS),
        page(f"{base}/rotate", deps, rotate_page, methods=both, roles=OWNERS),
        page(f"{base}/delete", deps, delete_page, methods=both, roles=OWNERS),
    ]
