"""Signing in and out: ``/sign-in`` (email and password), ``/sign-in/link/{token}`` (a
one-time link, redeemed and redirected away at once so that the token never stays in the
address bar), ``/sign-out`` and ``/sign-out-everywhere``.

Every sign-in issues a new session (a new id, hence a new CSRF token): a session id
planted before sign-in is worth nothing after it. Refused password attempts are counted
per email and per client address (``SignInThrottle``).
"""

from __future__ import annotations

import math

from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.nav import EVERYONE, home_path, return_path
from adapters.web.pages import PageError, Visit, page
from adapters.web.sessions import new_session, with_flash
from booking_core.services import users as cases
from booking_core.services.users import session_user
from booking_core.users import SignInRefused, User

SIGNED_OUT = "You are signed out."
SIGNED_OUT_EVERYWHERE = "You are signed out on every device and browser."


def _signed_in_user(visit: Visit) -> User | None:
    session = visit.session
    if session.user_id is None:
        return None
    return session_user(session.user_id, session.epoch, uow=visit.deps.reader())


def _begin(visit: Visit, user: User, wanted: str = "", *, by_link: bool = False) -> Response:
    """A new session for ``user`` and off to the page they wanted (a page of their side
    of the service), else their home page."""
    now = visit.deps.clock.now()
    visit.replace_session(new_session(now, user.id, user.session_epoch, by_link=by_link))
    return visit.redirect(return_path(wanted, user.role) or home_path(user.role))


def sign_in_form(visit: Visit) -> Response:
    """``GET /sign-in``: the form, or the user's home when already signed in."""
    user = _signed_in_user(visit)
    wanted = return_path(visit.request.query_params.get("next", ""))
    if user is not None:
        return visit.redirect(return_path(wanted or "", user.role) or home_path(user.role))
    return visit.render("sign_in.html", email="", error=None, wanted=wanted)


def hold_off_refused(visit: Visit, email: str) -> None:
    """A 429 page when refused passwords for ``email``, or from this client's address,
    have used up their window (``SignInThrottle``); nothing otherwise."""
    wait = visit.deps.throttle.wait_seconds(email, visit.client_address)
    if wait:
        minutes = math.ceil(wait / 60)
        raise PageError(
            429,
            "Too many attempts",
            "Too many refused passwords for this email or from this network. Try again in"
            f" {minutes} minute{'s' if minutes != 1 else ''}, or ask for a sign-in link.",
            {"retry-after": str(wait)},
        )


def sign_in(visit: Visit) -> Response:
    """``POST /sign-in``: email and password."""
    email = visit.field("email").strip()[:254]
    password = visit.field("password")
    throttle, address = visit.deps.throttle, visit.client_address
    hold_off_refused(visit, email)
    try:
        user = cases.sign_in_with_password(
            email, password, uow=visit.deps.uow(), hasher=visit.deps.hasher
        )
    except SignInRefused as refused:
        throttle.refused(email, address)
        wanted = return_path(visit.field("next"))
        return visit.render(
            "sign_in.html", status=401, email=email, error=refused.message, wanted=wanted
        )
    return _begin(visit, user, visit.field("next"))


def sign_in_page(visit: Visit) -> Response:
    """``/sign-in``: the form (GET) or a password sign-in (POST)."""
    return sign_in(visit) if visit.request.method == "POST" else sign_in_form(visit)


def sign_in_with_link(visit: Visit) -> Response:
    """``GET /sign-in/link/{token}``: redeem once, then redirect (the token leaves the
    address bar either way)."""
    token = str(visit.request.path_params["token"])
    try:
        user = cases.redeem_sign_in_link(token, uow=visit.deps.uow(), clock=visit.deps.clock)
    except SignInRefused as refused:  # whoever is signed in stays so: nothing was granted
        response = visit.redirect("/sign-in", flash=refused.message)
    else:
        response = _begin(visit, user, by_link=True)
    response.headers["referrer-policy"] = "no-referrer"  # the token is in this address
    return response


def sign_out(visit: Visit) -> Response:
    """``POST /sign-out``: this browser's session ends."""
    visit.replace_session(with_flash(new_session(visit.deps.clock.now()), SIGNED_OUT))
    return visit.redirect("/sign-in")


def sign_out_everywhere(visit: Visit) -> Response:
    """``POST /sign-out-everywhere``: every session of the user ends, this one too."""
    cases.sign_out_everywhere(visit.signed_in_user.id, uow=visit.deps.uow())
    visit.replace_session(with_flash(new_session(visit.deps.clock.now()), SIGNED_OUT_EVERYWHERE))
    return visit.redirect("/sign-in")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The sign-in and sign-out routes."""
    return [
        page("/sign-in", deps, sign_in_page, methods=("GET", "POST")),
        page("/sign-in/link/{token}", deps, sign_in_with_link),
        page("/sign-out", deps, sign_out, methods=("POST",)),
        page("/sign-out-everywhere", deps, sign_out_everywhere, methods=("POST",), roles=EVERYONE),
    ]
