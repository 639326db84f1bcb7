"""The pages a signed-in user can go to: one line each, in the order of the top bar.

A page added to the admin workspace (with its routes in ``adapters.web.routes``) gets one
``NavEntry`` here: the top bar links it for the roles named, and the admin home lists it
with its summary. Only pages that exist are listed.
"""

from __future__ import annotations

from attrs import frozen

from booking_core.users import Role

ADMINS = frozenset({Role.OWNER, Role.DISPATCHER})
CREW = frozenset({Role.CREW})
EVERYONE = frozenset(Role)


@frozen
class NavEntry:
    """One page in the top bar (and, for admins, on the admin home)."""

    label: str
    path: str
    roles: frozenset[Role]
    summary: str


NAV: tuple[NavEntry, ...] = (
    NavEntry("Home", "/admin", ADMINS, "Your company at a glance and who can sign in."),
    NavEntry("My jobs", "/crew", CREW, "Today's and the coming week's jobs."),
    NavEntry("Account", "/account", EVERYONE, "Your password, and signing out everywhere."),
)


def entries_for(role: Role) -> tuple[NavEntry, ...]:
    """The pages ``role`` may open, in top-bar order."""
    return tuple(entry for entry in NAV if role in entry.roles)


def home_path(role: Role) -> str:
    """Where a user lands after signing in: the admin home, or the crew portal."""
    return "/admin" if role.is_admin else "/crew"
