"""Users and sign-in links in memory (the memory unit of work's tables ``users`` and
``sign_in_links``). Neither is keyed by company: a session names only its user, a sign-in
only an email or a token."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from adapters.memory.repositories import Table
from booking_core.errors import ConflictError, NotFoundError
from booking_core.users import SignInLink, User

_ANY_COMPANY = ""
"""The company key of these rows: they are found by their own id alone."""


class MemoryUserRepository:
    """Users by id, unique by email across companies; sign-in links by token hash."""

    def __init__(self, users: Table[User], links: Table[SignInLink]) -> None:
        self._users = users
        self._links = links

    def get(self, user_id: str) -> User:
        found = self._users.find(_ANY_COMPANY, user_id)
        if found is None:
            raise NotFoundError("user", user_id)
        return found

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def by_email(self, email: str) -> User | None:
        wanted = email.strip().lower()
        return next((u for u in self._users.values() if u.email == wanted), None)

    def add(self, user: User) -> None:
        if self.by_email(user.email) is not None:
            raise ConflictError("A user with this email exists already.")
        self._users.insert(_ANY_COMPANY, user.id, user, user.created_at)

    def save(self, user: User) -> None:
        stored = self.get(user.id)
        other = self.by_email(user.email)
        if other is not None and other.id != user.id:
            raise ConflictError("A user with this email exists already.")
        self._users.replace(_ANY_COMPANY, stored.id, user)

    def list(self, company_id: str) -> Sequence[User]:
        mine = (u for u in self._users.values() if u.company_id == company_id)
        return sorted(mine, key=lambda u: (u.created_at, u.id))

    def remove(self, user_id: str) -> None:
        self.get(user_id)
        self._users.rows.pop((_ANY_COMPANY, user_id))
        for key, row in list(self._links.rows.items()):
            if row.value.user_id == user_id:
                del self._links.rows[key]

    def add_link(self, link: SignInLink) -> None:
        self._links.insert(_ANY_COMPANY, link.token_hash, link, link.created_at)

    def claim_link(self, token_hash: str, at: datetime) -> SignInLink | None:
        # Units of work on the memory store run one at a time: nothing can race this.
        link = self._links.find(_ANY_COMPANY, token_hash)
        if link is None or link.used_at is not None:
            return None
        claimed = attrs.evolve(link, used_at=at)
        self._links.replace(_ANY_COMPANY, token_hash, claimed)
        return claimed
