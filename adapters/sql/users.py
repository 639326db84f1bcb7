"""Users and their one-time sign-in links.

Neither table is keyed by company: a session names only its user and a sign-in only an
email or a token, and the email is unique across the service (``uq_users_email``). A link
is claimed by ``UPDATE ... SET used_at WHERE token_hash = :hash AND used_at IS NULL
RETURNING``: on PostgreSQL a second transaction claiming the same link waits on the row
lock, then finds ``used_at`` set and updates nothing; SQLite runs one writer at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update

from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import sign_in_links as links
from adapters.sql.tables import users
from booking_core.errors import NotFoundError
from booking_core.users import Role, SignInLink, User

EMAIL_TAKEN = "A user with this email exists already."


def _values(user: User) -> dict[str, Any]:
    return {
        "id": user.id,
        "company_id": user.company_id,
        "email": user.email,
        "name": user.name,
        "role": user.role.value,
        "crew_member_id": user.crew_member_id,
        "password_hash": user.password_hash,
        "session_epoch": user.session_epoch,
        "created_at": user.created_at,
    }


def _user(row: AnyRow) -> User:
    return User(
        id=row.id,
        company_id=row.company_id,
        email=row.email,
        name=row.name,
        role=Role(row.role),
        created_at=row.created_at,
        crew_member_id=row.crew_member_id,
        password_hash=row.password_hash,
        session_epoch=row.session_epoch,
    )


def _link(row: AnyRow) -> SignInLink:
    return SignInLink(
        token_hash=row.token_hash,
        user_id=row.user_id,
        created_at=row.created_at,
        expires_at=row.expires_at,
        used_at=row.used_at,
    )


class SqlUserRepository:
    """Users by id (unique by email) and sign-in links by token hash."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, user_id: str) -> User:
        return self._get(user_id, locked=False)

    def get_for_update(self, user_id: str) -> User:
        # PostgreSQL: the row stays locked until the unit ends. SQLite: a unit that may
        # write holds the database's write lock from its BEGIN IMMEDIATE on.
        return self._get(user_id, locked=self._cx.dialect == "postgresql")

    def _get(self, user_id: str, *, locked: bool) -> User:
        statement = select(users).where(users.c.id == user_id)
        if locked:
            statement = statement.with_for_update()
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("user", user_id)
        return _user(row)

    def by_email(self, email: str) -> User | None:
        statement = select(users).where(users.c.email == email.strip().lower())
        row = self._cx.execute(statement).first()
        return None if row is None else _user(row)

    def add(self, user: User) -> None:
        self._cx.insert_new(users, _values(user), EMAIL_TAKEN)

    def save(self, user: User) -> None:
        statement = (
            update(users)
            .where(users.c.id == user.id)
            .values(**without_keys(_values(user), "id", "company_id"))
        )
        if self._cx.execute_guarded(statement, EMAIL_TAKEN).rowcount == 0:
            raise NotFoundError("user", user.id)

    def list(self, company_id: str) -> Sequence[User]:
        statement = (
            select(users)
            .where(users.c.company_id == company_id)
            .order_by(users.c.created_at, users.c.id)
        )
        return [_user(row) for row in self._cx.execute(statement)]

    def remove(self, user_id: str) -> None:
        self._cx.execute(delete(links).where(links.c.user_id == user_id))
        if self._cx.execute(delete(users).where(users.c.id == user_id)).rowcount == 0:
            raise NotFoundError("user", user_id)

    def add_link(self, link: SignInLink) -> None:
        values = {
            "token_hash": link.token_hash,
            "user_id": link.user_id,
            "created_at": link.created_at,
            "expires_at": link.expires_at,
            "used_at": link.used_at,
        }
        self._cx.insert_new(links, values, "That sign-in link exists already.")

    def claim_link(self, token_hash: str, at: datetime) -> SignInLink | None:
        statement = (
            update(links)
            .where(links.c.token_hash == token_hash, links.c.used_at.is_(None))
            .values(used_at=at)
            .returning(*links.c)
        )
        row = self._cx.execute(statement).first()
        return None if row is None else _link(row)
