"""The people page (``/admin/people``): who can sign in to the company's workspace and
crew portal; add a person, hand someone a fresh one-time sign-in link, remove a person's
access (after a confirmation page).

Owners only, as API keys are: a person added as an owner can do everything. The rules
are the core's (``booking_core.services.users``): an email is unique across the service,
a crew user is linked to one of the company's crew members, nobody removes themselves.
A sign-in link exists once, in the answer to the POST that issued it (never reached by a
redirect, sent with ``Cache-Control: no-store``), like a new API key.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.keys import NO_STORE, local_time
from adapters.web.nav import OWNERS
from adapters.web.pages import Visit, page
from booking_core.errors import NotFoundError, RuleViolation, ValidationFailed
from booking_core.services import users as cases
from booking_core.services.scheduling import active_crew
from booking_core.users import IssuedLink, Role, User

ROLES: Mapping[str, str] = {
    Role.OWNER.value: "Owner: everything, including API keys, webhooks and people",
    Role.DISPATCHER.value: "Dispatcher: calendar, catalog, crew and settings",
    Role.CREW.value: "Crew: their own jobs in the crew portal",
}
"""The role choices of the add form, in order, each with what it opens."""
FIELDS = ("email", "name", "role", "crew_member_id")


def _list_page(
    visit: Visit, values: Mapping[str, str] | None = None, errors: Mapping[str, str] | None = None
) -> Response:
    company = visit.signed_in_company
    with visit.deps.reader() as uow:
        crew = sorted(active_crew(uow, company.id), key=lambda m: (m.name.lower(), m.id))
    return visit.render(
        "people.html",
        status=422 if errors else 200,
        people=cases.list_users(company.id, uow=visit.deps.reader()),
        crew=crew,
        crew_names={member.id: member.name for member in crew},  # the roster read once
        roles=ROLES,
        values=values or {"role": Role.DISPATCHER.value},
        errors=errors or {},
        when=lambda at: local_time(at, company.timezone),
    )


def _link_page(visit: Visit, user: User, issued: IssuedLink, *, added: bool) -> Response:
    """The answer that shows a sign-in link, this once."""
    who = user.name or user.email
    response = visit.render(
        "keys_secret.html",
        title=f"{who} added" if added else f"A sign-in link for {who}",
        lead=(
            f"Send {who} this link ({user.email}). It signs them in once, within 15 minutes;"
            " they can then set a password on their account page. It is shown this once."
        ),
        label="Sign-in link",
        warning=(
            f"Send it to {who} alone, by a message only they read: whoever opens it first is"
            " signed in as them. Once you leave this page the service cannot show it again."
        ),
        secret=f"{visit.deps.base_url.rstrip('/')}/sign-in/link/{issued.token}",
        facts=[("Email", user.email), ("Role", user.role.value)],
        usage=None,
        back_path="/admin/people",
        back_label="Done: back to people",
    )
    response.headers.update(NO_STORE)
    return response


def people_page(visit: Visit) -> Response:
    """``GET /admin/people``: the people and the add form; ``POST``: add one."""
    if visit.request.method != "POST":
        return _list_page(visit)
    values = {name: visit.field(name) for name in FIELDS}
    errors: dict[str, str] = {}
    if values["role"] not in ROLES:
        errors["role"] = "Choose a role."
    if not values["email"].strip():
        errors["email"] = "Required."
    if errors:
        return _list_page(visit, values, errors)
    role = Role(values["role"])
    deps = visit.deps
    company = visit.signed_in_company
    try:
        user = cases.create_user(
            cases.CreateUser(
                company_id=company.id,
                email=values["email"],
                role=role,
                name=values["name"].strip(),
                crew_member_id=(values["crew_member_id"] or None) if role is Role.CREW else None,
            ),
            uow=deps.uow(),
            clock=deps.clock,
        )
        _, issued = cases.issue_link_for(company.id, user.id, uow=deps.uow(), clock=deps.clock)
    except ValidationFailed as refused:
        found = dict(refused.field_errors)
        if "crew_member_id" in found:  # a form names a crew member, never an id
            found["crew_member_id"] = "Choose the crew member this person is."
        return _list_page(visit, values, found)
    return _link_page(visit, user, issued, added=True)


def link_page(visit: Visit) -> Response:
    """``POST /admin/people/{id}/link``: a fresh one-time sign-in link, shown once."""
    deps = visit.deps
    user, issued = cases.issue_link_for(
        visit.signed_in_company.id,
        visit.request.path_params["user_id"],
        uow=deps.uow(),
        clock=deps.clock,
    )
    return _link_page(visit, user, issued, added=False)


def remove_page(visit: Visit) -> Response:
    """``GET /admin/people/{id}/remove``: the confirmation; ``POST``: remove for good."""
    company, deps = visit.signed_in_company, visit.deps
    user = cases.company_user(company.id, visit.request.path_params["user_id"], uow=deps.reader())
    who = user.name or user.email
    if visit.request.method != "POST":
        yourself = user.id == visit.signed_in_user.id
        return visit.render(
            "keys_confirm.html",
            title="You cannot remove yourself" if yourself else f"Remove {who}?",
            message=(
                "Another owner can remove you."
                if yourself
                else f"{who} ({user.email}) is signed out at once and cannot sign in again:"
                " their sign-in links and password stop working. Add them again to give"
                " access back."
            ),
            action=None if yourself else f"/admin/people/{user.id}/remove",
            button="Remove access",
            danger=True,
            cancel="/admin/people",
        )
    try:
        cases.remove_user(
            company.id, user.id, acting_user_id=visit.signed_in_user.id, uow=deps.uow()
        )
    except RuleViolation as refused:
        return visit.redirect("/admin/people", flash=refused.message)
    except NotFoundError:  # removed meanwhile by another owner
        return visit.redirect("/admin/people", flash=f"{who} was already removed.")
    return visit.redirect("/admin/people", flash=f"{who} can no longer sign in.")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The people page, a fresh link, and the remove confirmation."""
    both = ("GET", "POST")
    return [
        page("/admin/people", deps, people_page, methods=both, roles=OWNERS),
        page("/admin/people/{user_id}/link", deps, link_page, methods=("POST",), roles=OWNERS),
        page("/admin/people/{user_id}/remove", deps, remove_page, methods=both, roles=OWNERS),
    ]
