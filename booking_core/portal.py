"""Customer portal sign-in links: how a customer opens ``/{slug}/portal`` with no password.

A customer asks for a link by email on the company's portal page; a link is made only when
the email is a customer of that company, and is mailed to that address (the answer to the
visitor is the same either way). Like a staff sign-in link (``booking_core.users``) it
carries a 256-bit random token, works once, for 15 minutes, and storage keeps only the
token's SHA-256, so a copy of the table opens no one's bookings. Unlike it, a portal link
belongs to one company and one customer: it is claimed inside the company the address
names only.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import frozen

from booking_core.customers import Customer
from booking_core.ids import new_id, new_token
from booking_core.users import hash_token

LINK_LIFETIME = timedelta(minutes=15)
"""How long a portal sign-in link works (once)."""
LINK_REFUSED = "This sign-in link has expired or was already used. Ask for a new one below."
"""The one answer to an unknown, used, expired or another company's link."""

__all__ = [
    "LINK_LIFETIME",
    "LINK_REFUSED",
    "IssuedPortalLink",
    "PortalLink",
    "hash_token",
    "issue_portal_link",
    "portal_link_url",
]


@frozen(kw_only=True)
class PortalLink:
    """A stored one-time portal sign-in link (``pln_...``): the token's hash, never the token."""

    id: str
    company_id: str
    customer_id: str
    token_hash: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None

    def usable(self, at: datetime) -> bool:
        """True when unused and not yet expired at ``at``."""
        return self.used_at is None and at < self.expires_at


@frozen
class IssuedPortalLink:
    """A link as issued: the only moment its token exists in full."""

    link: PortalLink
    token: str


def issue_portal_link(customer: Customer, at: datetime) -> IssuedPortalLink:
    """A fresh one-time link for ``customer``, working for ``LINK_LIFETIME`` from ``at``."""
    token = new_token()
    link = PortalLink(
        id=new_id("pln"),
        company_id=customer.company_id,
        customer_id=customer.id,
        token_hash=hash_token(token),
        created_at=at,
        expires_at=at + LINK_LIFETIME,
    )
    return IssuedPortalLink(link, token)


def portal_link_url(base_url: str, slug: str, token: str) -> str:
    """Where a portal link's token is redeemed: ``{base}/{slug}/portal/link/{token}``."""
    return f"{base_url.rstrip('/')}/{slug}/portal/link/{token}"
