"""Users of the admin workspace and the crew portal, and their one-time sign-in links.

A user belongs to one company, with a role: ``owner`` and ``dispatcher`` work in the admin
workspace, ``crew`` in the crew portal as one crew member. An email is unique across the
whole service, because signing in names no company: the company is the user's.

A password is kept only as the opaque string a ``PasswordHasher`` made (argon2id in the
server). ``session_epoch`` is the generation of the user's sessions: a session carries the
epoch it began under, and signing out everywhere moves the epoch on, so every older
session is refused.

A sign-in link carries a 256-bit random token, works once, for 15 minutes; storage keeps
only the token's SHA-256, so a copy of the table opens no account.
"""

from __future__ import annotations

import enum
import hashlib
from datetime import datetime, timedelta

import attrs
from attrs import field, frozen

from booking_core.customers import email_errors, normalize_email
from booking_core.errors import DomainError, ValidationFailed
from booking_core.ids import new_token
from booking_core.plain_text import one_line_problem

NAME_MAX = 200
PASSWORD_MIN = 12
PASSWORD_MAX = 1_000
LINK_LIFETIME = timedelta(minutes=15)
"""How long a sign-in link works (once)."""
REFUSED = "That email and password do not match an account."
"""The one answer to a refused password sign-in: an unknown email, a wrong password and an
account without a password read the same."""
LINK_REFUSED = "This sign-in link has expired or was already used. Ask for a new one."
FRESH_LINK_SIGN_IN = timedelta(minutes=15)
"""How long after signing in with a one-time link a user may set a new password without
typing the current one (the link proved they hold the email: it is how a forgotten
password is replaced)."""
CURRENT_MISSING = "Type your current password, to show it is you."
CURRENT_WRONG = "That is not your current password."
CONFIRM_DIFFERS = "The two passwords differ."


class Role(enum.StrEnum):
    """What a user may do: owners and dispatchers run the admin workspace, crew the portal."""

    OWNER = "owner"
    DISPATCHER = "dispatcher"
    CREW = "crew"

    @property
    def is_admin(self) -> bool:
        """True for the roles of the admin workspace."""
        return self is not Role.CREW


class SignInRefused(DomainError):
    """A sign-in was refused; the message is safe to show and never says which part was wrong."""


@frozen(kw_only=True)
class User:
    """A person who signs in; ``crew_member_id`` is set exactly for the ``crew`` role."""

    id: str
    company_id: str
    email: str
    name: str
    role: Role
    created_at: datetime
    crew_member_id: str | None = None
    password_hash: str | None = field(default=None, repr=False)
    session_epoch: int = 0

    def __attrs_post_init__(self) -> None:
        if self.email != normalize_email(self.email):
            raise ValueError("a user's email is stored normalised (stripped, lower-case)")
        if (self.role is Role.CREW) != (self.crew_member_id is not None):
            raise ValueError("crew_member_id is set exactly for the crew role")
        if self.session_epoch < 0:
            raise ValueError("session_epoch is never negative")

    @property
    def first_name(self) -> str:
        """The first word of the name (the email's local part when there is no name)."""
        return first_name(self.name) or self.email.split("@", 1)[0]


def first_name(name: str) -> str:
    """The first word of a person's name: what a crew member sees of a customer."""
    words = name.split()
    return words[0] if words else ""


def parse_role(text: str) -> Role:
    """The role named ``text``; ``ValidationFailed`` on ``role`` otherwise."""
    try:
        return Role(text.strip().lower())
    except ValueError:
        names = ", ".join(r.value for r in Role)
        raise ValidationFailed({"role": f"One of {names}."}) from None


def new_user(
    *,
    user_id: str,
    company_id: str,
    email: str,
    name: str,
    role: Role,
    at: datetime,
    crew_member_id: str | None = None,
) -> User:
    """A user after checking its fields (``ValidationFailed`` naming each bad one).

    Whether the crew member exists in the company is the use case's check."""
    errors = email_errors(email)
    if len(name) > NAME_MAX:
        errors["name"] = f"At most {NAME_MAX} characters."
    elif problem := one_line_problem(name):  # shown in the top bar and on the people page
        errors["name"] = problem
    if role is Role.CREW and not crew_member_id:
        errors["crew_member_id"] = "A crew user is linked to a crew member: give its id."
    if role is not Role.CREW and crew_member_id:
        errors["crew_member_id"] = "Only a crew user is linked to a crew member."
    if errors:
        raise ValidationFailed(errors)
    return User(
        id=user_id,
        company_id=company_id,
        email=normalize_email(email),
        name=name.strip(),
        role=role,
        created_at=at,
        crew_member_id=crew_member_id or None,
    )


def password_errors(password: str) -> dict[str, str]:
    """Field errors for a new password (empty when acceptable): 12 to 1,000 characters."""
    if len(password) < PASSWORD_MIN:
        return {"password": f"At least {PASSWORD_MIN} characters."}
    if len(password) > PASSWORD_MAX:
        return {"password": f"At most {PASSWORD_MAX:,} characters."}
    return {}


def current_password_needed(user: User, link_sign_in_at: datetime | None, at: datetime) -> bool:
    """True when ``user`` must type their current password to change it: they have one,
    and did not sign in with a one-time link (at ``link_sign_in_at``) within the last
    ``FRESH_LINK_SIGN_IN``."""
    if user.password_hash is None:
        return False
    return link_sign_in_at is None or not at - FRESH_LINK_SIGN_IN <= link_sign_in_at <= at


def with_password_hash(user: User, password_hash: str) -> User:
    """The user with a new password hash (the hash is made by the ``PasswordHasher``)."""
    return attrs.evolve(user, password_hash=password_hash)


def signed_out_everywhere(user: User) -> User:
    """The user with the next session epoch: every session begun before is refused."""
    return attrs.evolve(user, session_epoch=user.session_epoch + 1)


def session_valid(user: User, epoch: int) -> bool:
    """True when a session begun under ``epoch`` is still the user's current generation."""
    return user.session_epoch == epoch


@frozen(kw_only=True)
class SignInLink:
    """A stored one-time sign-in link: the token's hash, never the token."""

    token_hash: str
    user_id: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None

    def usable(self, at: datetime) -> bool:
        """True when unused and not yet expired at ``at``."""
        return self.used_at is None and at < self.expires_at


@frozen
class IssuedLink:
    """A link as issued: the only moment its token exists in full."""

    link: SignInLink
    token: str


def hash_token(token: str) -> str:
    """The SHA-256 hex digest stored for a sign-in token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_link(user: User, at: datetime) -> IssuedLink:
    """A fresh one-time link for ``user``, working for ``LINK_LIFETIME`` from ``at``."""
    token = new_token()
    link = SignInLink(
        token_hash=hash_token(token),
        user_id=user.id,
        created_at=at,
        expires_at=at + LINK_LIFETIME,
    )
    return IssuedLink(link, token)


def sign_in_link_url(base_url: str, token: str) -> str:
    """Where a link's token is redeemed: ``{base}/sign-in/link/{token}``."""
    return f"{base_url.rstrip('/')}/sign-in/link/{token}"
