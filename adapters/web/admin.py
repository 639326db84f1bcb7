"""The admin home (``/admin``) and every user's account page (``/account``)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS, EVERYONE, entries_for
from adapters.web.pages import Visit, page, roster_names
from adapters.web.sessions import new_session
from adapters.web.signin import hold_off_refused
from booking_core.errors import ValidationFailed
from booking_core.services import users as cases
from booking_core.users import CURRENT_WRONG, current_password_needed

PASSWORD_SAVED = "Password saved. Every other session of yours is signed out."


def admin_home(visit: Visit) -> Response:
    """``GET /admin``: the company's facts, its setup pages, and who can sign in."""
    user, company = visit.signed_in_user, visit.signed_in_company
    sections = [e for e in entries_for(user.role) if e.path != "/admin"]
    people = cases.list_users(company.id, uow=visit.deps.reader())
    crew_names = roster_names(visit.deps, company.id)
    customer_base = f"{visit.deps.base_url.rstrip('/')}/{company.slug}"
    return visit.render(
        "admin_home.html",
        sections=sections,
        people=people,
        crew_names=crew_names,
        customer_base=customer_base,
    )


def account(visit: Visit) -> Response:
    """``/account``: set or change a password (POST), sign out everywhere. A user who has
    a password types it to change it, unless they signed in with a one-time link a
    moment ago (``users.current_password_needed``); wrong ones count against the sign-in
    throttle, so a left-open session cannot be used to guess it."""
    user = visit.signed_in_user
    link_sign_in_at = visit.session.link_sign_in_at
    now = visit.deps.clock.now()  # one instant: the page and the change decide alike
    ask_current = current_password_needed(user, link_sign_in_at, now)
    errors: dict[str, str] = {}
    if visit.request.method == "POST":
        if ask_current:
            hold_off_refused(visit, user.email)
        try:
            changed = cases.change_password(
                user.id,
                visit.field("password"),
                confirm=visit.field("confirm"),
                current=visit.field("current"),
                link_sign_in_at=link_sign_in_at,
                at=now,
                uow=visit.deps.uow(),
                hasher=visit.deps.hasher,
            )
        except ValidationFailed as refused:
            errors = dict(refused.field_errors)
            if errors.get("current") == CURRENT_WRONG:
                visit.deps.throttle.refused(user.email, visit.client_address)
        else:
            # The new epoch ends every older session; this browser goes on in a new one.
            visit.replace_session(new_session(now, changed.id, changed.session_epoch))
            return visit.redirect("/account", flash=PASSWORD_SAVED)
    status = 422 if errors else 200
    return visit.render("account.html", status=status, errors=errors, ask_current=ask_current)


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The admin home and the account page."""
    return [
        page("/admin", deps, admin_home, roles=ADMINS),
        page("/account", deps, account, methods=("GET", "POST"), roles=EVERYONE),
    ]
