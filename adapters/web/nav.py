"""The pages a signed-in user can go to: one line each, in the order of the top bar.

A page added to the admin workspace (with its routes in ``adapters.web.routes``) gets one
``NavEntry`` here: the top bar links it for the roles named, and the admin home lists it
with its summary. Only pages that exist are listed.
"""

from __future__ import annotations

import re

from attrs import frozen

from booking_core.users import Role

ADMINS = frozenset({Role.OWNER, Role.DISPATCHER})
OWNERS = frozenset({Role.OWNER})
CREW = frozenset({Role.CREW})
EVERYONE = frozenset(Role)


@frozen
class NavEntry:
    """One page in the top bar (and, for admins, on the admin home)."""

    label: str
    path: str
    roles: frozenset[Role]
    summary: str
    in_bar: bool = True
    """False for a page the top bar reaches otherwise on a wide screen (the account, by the
    user's name; people, from the admin home), to keep the bar on one line; it is in the
    bar on a phone, where the bar wraps anyway."""


NAV: tuple[NavEntry, ...] = (
    NavEntry("Home", "/admin", ADMINS, "Your company at a glance and who can sign in."),
    NavEntry("Calendar", "/admin/calendar", ADMINS, "Bookings by crew member, day or week."),
    NavEntry("Customers", "/admin/customers", ADMINS, "Who books: visits, payments, churn risk."),
    NavEntry("Leads", "/admin/leads", ADMINS, "Enquiries: stage, owner, follow-up, history."),
    NavEntry("Catalog", "/admin/catalog", ADMINS, "Services, extras, frequencies, coupons."),
    NavEntry("Crew", "/admin/crew", ADMINS, "Who works where and when: zips, hours, time off."),
    NavEntry("Settings", "/admin/settings", ADMINS, "Timezone, notice, cutoff, codes and tax."),
    NavEntry("My jobs", "/crew", CREW, "Today's and the coming week's jobs."),
    NavEntry("API keys", "/admin/keys", OWNERS, "Keys that let your tools use the API."),
    NavEntry("Webhooks", "/admin/webhooks", OWNERS, "Where events are sent, and what was sent."),
    NavEntry(
        "People",
        "/admin/people",
        OWNERS,
        "Who can sign in: add people, send a sign-in link, remove access.",
        in_bar=False,
    ),
    NavEntry(
        "Account",
        "/account",
        EVERYONE,
        "Your password, and signing out everywhere.",
        in_bar=False,
    ),
)


def entries_for(role: Role) -> tuple[NavEntry, ...]:
    """The pages ``role`` may open, in top-bar order."""
    return tuple(entry for entry in NAV if role in entry.roles)


def home_path(role: Role) -> str:
    """Where a user lands after signing in: the admin home, or the crew portal."""
    return "/admin" if role.is_admin else "/crew"


HOMES = frozenset({"/admin", "/crew", "/account"})
"""Pages a signed-out visit is simply sent to sign in from (nothing to come back to)."""
_NEXT = re.compile(r"^/(admin|crew)(/[A-Za-z0-9._~/-]*)?(\?[A-Za-z0-9._~%&=+-]*)?\Z")
"""A page to come back to: no percent sign in its path (``/admin/%2e%2e/...`` is ``..`` to
a browser, which would leave the side), any in its query."""


def return_path(wanted: str, role: Role | None = None) -> str | None:
    """``wanted`` when it is a page of the workspace or the crew portal to come back to
    after signing in (for ``role``'s side, when given), else None: never another site or
    an address of another shape (``//elsewhere``, ``/admin\\..``, a scheme)."""
    if len(wanted) > 500 or not _NEXT.match(wanted) or wanted in HOMES or "/." in wanted:
        return None
    if role is not None and not wanted.startswith(home_path(role)):
        return None
    return wanted
