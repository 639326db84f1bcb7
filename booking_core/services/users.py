"""User use cases: create and remove a user, issue and redeem one-time sign-in links, sign
in with a password, set or change a password, sign out everywhere, and check a session's user."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from attrs import frozen

from booking_core import users
from booking_core.errors import ConflictError, NotFoundError, RuleViolation, ValidationFailed
from booking_core.ids import new_id
from booking_core.ports import Clock, PasswordHasher, UnitOfWork
from booking_core.users import IssuedLink, Role, SignInRefused, User


@frozen(kw_only=True)
class CreateUser:
    """A new user of a company; ``crew_member_id`` is required for (and only for) crew."""

    company_id: str
    email: str
    role: Role
    name: str = ""
    crew_member_id: str | None = None
    password: str | None = None


def create_user(
    cmd: CreateUser, *, uow: UnitOfWork, clock: Clock, hasher: PasswordHasher | None = None
) -> User:
    """Create a user (with a password when ``cmd.password`` is given, which needs
    ``hasher``). Field errors: a malformed email, one taken by any user of the service,
    a crew member missing for crew, given for another role, or not the company's."""
    user = users.new_user(
        user_id=new_id("usr"),
        company_id=cmd.company_id,
        email=cmd.email,
        name=cmd.name,
        role=cmd.role,
        at=clock.now(),
        crew_member_id=cmd.crew_member_id,
    )
    if cmd.password is not None:
        problems = users.password_errors(cmd.password)
        if problems:
            raise ValidationFailed(problems)
        if hasher is None:
            raise ValueError("a password needs a hasher")
        user = users.with_password_hash(user, hasher.hash(cmd.password))
    taken = {"email": "A user with this email exists already."}
    with uow:
        uow.companies.get(cmd.company_id)
        if user.crew_member_id is not None:
            try:
                uow.crew.get(cmd.company_id, user.crew_member_id)
            except NotFoundError:
                raise ValidationFailed(
                    {"crew_member_id": f"No crew member {user.crew_member_id!r} in this company."}
                ) from None
        if uow.users.by_email(user.email) is not None:
            raise ValidationFailed(taken)
        try:
            uow.users.add(user)
        except ConflictError:  # another unit added the email meanwhile
            raise ValidationFailed(taken) from None
        uow.commit()
    return user


def list_users(company_id: str, *, uow: UnitOfWork) -> Sequence[User]:
    """The company's users, oldest first."""
    with uow:
        uow.companies.get(company_id)
        return uow.users.list(company_id)


def issue_sign_in_link(email: str, *, uow: UnitOfWork, clock: Clock) -> tuple[User, IssuedLink]:
    """A fresh one-time link for the user with that email (``NotFoundError`` if none); the
    token in the answer is the only time it exists in full."""
    with uow:
        user = uow.users.by_email(email.strip().lower())
        if user is None:
            raise NotFoundError("user", email)
        issued = users.issue_link(user, clock.now())
        uow.users.add_link(issued.link)
        uow.commit()
    return user, issued


def company_user(company_id: str, user_id: str, *, uow: UnitOfWork) -> User:
    """The company's user ``user_id``; ``NotFoundError`` for an unknown id or another
    company's user, alike."""
    with uow:
        user = uow.users.get(user_id)
    if user.company_id != company_id:
        raise NotFoundError("user", user_id)
    return user


def issue_link_for(
    company_id: str, user_id: str, *, uow: UnitOfWork, clock: Clock
) -> tuple[User, IssuedLink]:
    """A fresh one-time link for the company's user ``user_id`` (an owner handing a
    person a way in); ``NotFoundError`` for another company's user."""
    with uow:
        user = uow.users.get(user_id)
        if user.company_id != company_id:
            raise NotFoundError("user", user_id)
        issued = users.issue_link(user, clock.now())
        uow.users.add_link(issued.link)
        uow.commit()
    return user, issued


def remove_user(company_id: str, user_id: str, *, acting_user_id: str, uow: UnitOfWork) -> User:
    """Take away a person's access for good: the user, their sign-in links and their
    sessions are gone (the email may be given to a new user later). Nobody removes
    themselves, so a company always keeps the owner doing it. ``NotFoundError`` for
    another company's user; ``RuleViolation`` for oneself."""
    if user_id == acting_user_id:
        raise RuleViolation("You cannot remove yourself; another owner can.")
    with uow:
        user = uow.users.get_for_update(user_id)
        if user.company_id != company_id:
            raise NotFoundError("user", user_id)
        uow.users.remove(user.id)
        uow.commit()
    return user


def redeem_sign_in_link(token: str, *, uow: UnitOfWork, clock: Clock) -> User:
    """The user a link was issued to, claiming the link for good; ``SignInRefused`` for an
    unknown, used or expired link (one message for all three)."""
    at = clock.now()
    with uow:
        link = uow.users.claim_link(users.hash_token(token), at)
        if link is None or at >= link.expires_at:
            # An expired link is claimed too (it could never be used again anyway).
            uow.commit()
            raise SignInRefused(users.LINK_REFUSED)
        try:
            user = uow.users.get(link.user_id)
        except NotFoundError:
            raise SignInRefused(users.LINK_REFUSED) from None
        uow.commit()
    return user


def sign_in_with_password(
    email: str, password: str, *, uow: UnitOfWork, hasher: PasswordHasher
) -> User:
    """The user whose email and password these are; ``SignInRefused`` with one message
    whether the email is unknown, the password wrong or the account has no password. A
    hash made with old parameters is replaced by one made with the current ones."""
    if len(password) > users.PASSWORD_MAX or not password:
        raise SignInRefused(users.REFUSED)
    with uow:
        user = uow.users.by_email(email.strip().lower())
    if user is None or user.password_hash is None:
        # As long as checking a real hash: the answer's timing says nothing either.
        hasher.hash(password)
        raise SignInRefused(users.REFUSED)
    if not hasher.verify(user.password_hash, password):
        raise SignInRefused(users.REFUSED)
    if hasher.needs_rehash(user.password_hash):
        with uow:
            current = uow.users.get_for_update(user.id)
            if current.password_hash == user.password_hash:
                user = users.with_password_hash(current, hasher.hash(password))
                uow.users.save(user)
                uow.commit()
            else:  # changed meanwhile; the newer hash stands
                user = current
    return user


def set_password(user_id: str, password: str, *, uow: UnitOfWork, hasher: PasswordHasher) -> User:
    """Give the user a new password (12 to 1,000 characters). Every session begun before
    is signed out (the session epoch moves on); the caller re-issues its own session."""
    problems = users.password_errors(password)
    if problems:
        raise ValidationFailed(problems)
    password_hash = hasher.hash(password)
    with uow:
        return _save_password_hash(uow, uow.users.get_for_update(user_id), password_hash)


def _save_password_hash(uow: UnitOfWork, locked: User, password_hash: str) -> User:
    """``locked`` (read for update) with its new hash and the next session epoch, saved
    and committed."""
    user = users.signed_out_everywhere(users.with_password_hash(locked, password_hash))
    uow.users.save(user)
    uow.commit()
    return user


def change_password(
    user_id: str,
    password: str,
    *,
    confirm: str,
    current: str,
    link_sign_in_at: datetime | None,
    at: datetime,
    uow: UnitOfWork,
    hasher: PasswordHasher,
) -> User:
    """The account page's change of password: as ``set_password``, once the user has typed
    their ``current`` password, which a user without one, or one who signed in with a
    one-time link (at ``link_sign_in_at``) shortly before ``at``, need not
    (``users.current_password_needed``, decided at ``at``: the page that asks decides
    with the same instant), and typed the new one twice (``confirm``).
    ``ValidationFailed`` names every problem at once: ``current`` (missing or wrong),
    ``password`` and ``confirm``. The current password is checked against the user's
    row as locked for the change, so of two changes at once only one can pass with it."""
    problems = dict(users.password_errors(password))
    if confirm != password:
        problems["confirm"] = users.CONFIRM_DIFFERS
    password_hash = None if problems else hasher.hash(password)
    with uow:
        user = uow.users.get_for_update(user_id)
        if users.current_password_needed(user, link_sign_in_at, at):
            assert user.password_hash is not None
            if not current:
                problems["current"] = users.CURRENT_MISSING
            elif len(current) > users.PASSWORD_MAX or not hasher.verify(
                user.password_hash, current
            ):
                problems["current"] = users.CURRENT_WRONG
        if problems or password_hash is None:
            raise ValidationFailed(problems)
        return _save_password_hash(uow, user, password_hash)


def sign_out_everywhere(user_id: str, *, uow: UnitOfWork) -> User:
    """Refuse every session of the user begun before now."""
    with uow:
        user = users.signed_out_everywhere(uow.users.get_for_update(user_id))
        uow.users.save(user)
        uow.commit()
    return user


def session_user(user_id: str, epoch: int, *, uow: UnitOfWork) -> User | None:
    """The user of a session begun under ``epoch``, or None when the user is gone or has
    signed out everywhere since."""
    with uow:
        try:
            user = uow.users.get(user_id)
        except NotFoundError:
            return None
    return user if users.session_valid(user, epoch) else None
