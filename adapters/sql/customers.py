"""Customers: unique by normalised email within a company; saved addresses as JSON; and
their portal sign-in links, claimed by ``UPDATE ... SET used_at WHERE company_id = :c AND
token_hash = :hash AND used_at IS NULL RETURNING`` (on PostgreSQL a second transaction
claiming the same link waits on the row lock, then finds ``used_at`` set)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, bindparam, or_, select, update

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import customers, portal_links
from booking_core.customers import Customer, SavedAddress, normalize_email
from booking_core.errors import ConflictError, NotFoundError
from booking_core.paging import Page, PageRequest
from booking_core.portal import PortalLink

EMAIL_TAKEN = "A customer with this email already exists."
CODE_TAKEN = "Another customer has this id or referral code."
Addresses = tuple[SavedAddress, ...]


def _values(customer: Customer) -> dict[str, Any]:
    return {
        "company_id": customer.company_id,
        "id": customer.id,
        "name": customer.name,
        "name_key": customer.name.casefold(),
        "email": customer.email,
        "email_key": customer.email_key,
        "phone": customer.phone,
        "addresses": codecs.dumps(customer.addresses, Addresses),
        "default_address_id": customer.default_address_id,
        "merged_into": customer.merged_into,
        "notes": customer.notes,
        "referral_code": customer.referral_code,
        "created_at": customer.created_at,
        "updated_at": customer.updated_at,
    }


def _customer(row: AnyRow) -> Customer:
    return Customer(
        id=row.id,
        company_id=row.company_id,
        name=row.name,
        email=row.email,
        phone=row.phone,
        created_at=row.created_at,
        updated_at=row.updated_at,
        addresses=codecs.loads_any(row.addresses, Addresses),
        default_address_id=row.default_address_id,
        merged_into=row.merged_into,
        notes=row.notes,
        referral_code=row.referral_code,
    )


_BY_EMAIL = select(customers).where(
    customers.c.company_id == bindparam("company_id"),
    customers.c.email_key == bindparam("email_key"),
)
"""Built once: a booking for a returning customer runs it (``UnitContext.shape``)."""
_BY_EMAIL_HELD = _BY_EMAIL.with_for_update(key_share=True)
"""``_BY_EMAIL`` with ``FOR NO KEY UPDATE`` (PostgreSQL): the booking's read, held against
merges (``FOR UPDATE``) and other held reads of the record."""
_BY_REFERRAL_CODE = select(customers).where(
    customers.c.company_id == bindparam("company_id"),
    customers.c.referral_code == bindparam("referral_code"),
)


class SqlCustomerRepository:
    """Customers; merged records are reachable by id and email but left out of lists."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, customer_id: str, *, held: bool = False) -> Customer:
        row = self._cx.row(
            customers, company_id, customer_id, "customer", lock="held" if held else None
        )
        return _customer(row)

    def get_for_update(self, company_id: str, customer_id: str) -> Customer:
        return _customer(self._cx.row(customers, company_id, customer_id, "customer", locked=True))

    def hold_merges(self, company_id: str, customer_ids: Collection[str]) -> None:
        # SQLite already runs one writer at a time. On PostgreSQL advisory locks, taken
        # sorted by the unit's next statement (``UnitContext.hold``).
        if self._cx.dialect == "postgresql":
            self._cx.hold({f"merge:{company_id}:{cid}" for cid in customer_ids})

    def by_email(self, company_id: str, email: str, *, held: bool = False) -> Customer | None:
        params = {"company_id": company_id, "email_key": normalize_email(email)}
        # Held: FOR NO KEY UPDATE on PostgreSQL (SQLite's writing unit holds the write
        # lock from its BEGIN IMMEDIATE on), in the same one statement.
        held_here = held and self._cx.dialect == "postgresql"
        row = self._cx.run_kept(_BY_EMAIL_HELD if held_here else _BY_EMAIL, params).first()
        return None if row is None else _customer(row)

    def by_phone(self, company_id: str, phone_e164: str) -> Customer | None:
        # Only a convert of a quote made for a lead asks (docs/quotes.md), so no index of
        # its own: the company's rows are read through the primary key's prefix.
        statement = (
            select(customers)
            .where(customers.c.company_id == company_id, customers.c.phone == phone_e164)
            .order_by(customers.c.created_at, customers.c.id)
            .limit(1)
        )
        row = self._cx.execute(statement).first()
        return None if row is None else _customer(row)

    def by_referral_code(self, company_id: str, code: str) -> Customer | None:
        params = {"company_id": company_id, "referral_code": code}
        row = self._cx.run_kept(_BY_REFERRAL_CODE, params).first()
        return None if row is None else _customer(row)

    def add(self, customer: Customer) -> None:
        try:
            self._cx.insert_new(customers, _values(customer), EMAIL_TAKEN)
        except ConflictError:
            if self.by_email(customer.company_id, customer.email) is None:
                raise ConflictError(CODE_TAKEN) from None
            raise
        self._cx.touch(customers, customer.company_id, customer.id)

    def add_unless_email_taken(self, customer: Customer) -> tuple[Customer, bool]:
        # ON CONFLICT DO NOTHING reports a taken email without an error, which on
        # PostgreSQL would abort the whole transaction. Against a row another transaction
        # has inserted but not committed, PostgreSQL waits for that transaction to end
        # first; SQLite never gets here with one, since its writers run one at a time.
        insert = (
            self._cx.insert(customers)
            .values(**_values(customer))
            .on_conflict_do_nothing()
            .returning(customers.c.id)
        )
        if self._cx.execute(insert, EMAIL_TAKEN).first() is not None:
            self._cx.touch(customers, customer.company_id, customer.id)
            return customer, True
        # A new statement: at READ COMMITTED it sees the winner's committed row. Locked so
        # that two units adding an address to it one after the other both keep theirs.
        statement = (
            select(customers)
            .where(
                customers.c.company_id == customer.company_id,
                customers.c.email_key == customer.email_key,
            )
            .with_for_update()
        )
        row = self._cx.execute(statement).first()
        if row is None:  # the id or referral code collided, not the email: vanishingly
            # rare, and retryable (the caller draws another code)
            raise ConflictError("Another customer has this id or referral code; try again.")
        return _customer(row), False

    def save(self, customer: Customer) -> None:
        statement = (
            update(customers)
            .where(customers.c.company_id == customer.company_id, customers.c.id == customer.id)
            .values(**without_keys(_values(customer)))
        )
        if self._cx.execute_guarded(statement, EMAIL_TAKEN).rowcount == 0:
            raise NotFoundError("customer", customer.id)
        self._cx.touch(customers, customer.company_id, customer.id)

    def list(
        self, company_id: str, page: PageRequest, *, search: str | None = None
    ) -> Page[Customer]:
        where: list[ColumnElement[bool]] = [customers.c.merged_into.is_(None)]
        if search:
            # Each compared as it is stored: the name casefolded, the email lower-cased
            # (normalize_email), so "ß" finds "straße@..." in both.
            where.append(
                or_(
                    customers.c.name_key.contains(search.casefold(), autoescape=True),
                    customers.c.email_key.contains(search.lower(), autoescape=True),
                )
            )
        return self._cx.keyset_page(customers, company_id, page, where, _customer)

    def add_portal_link(self, link: PortalLink) -> None:
        values = {
            "token_hash": link.token_hash,
            "id": link.id,
            "company_id": link.company_id,
            "customer_id": link.customer_id,
            "created_at": link.created_at,
            "expires_at": link.expires_at,
            "used_at": link.used_at,
        }
        self._cx.insert_new(portal_links, values, "That portal link exists already.")

    def claim_portal_link(
        self, company_id: str, token_hash: str, at: datetime
    ) -> PortalLink | None:
        statement = (
            update(portal_links)
            .where(
                portal_links.c.token_hash == token_hash,
                portal_links.c.company_id == company_id,
                portal_links.c.used_at.is_(None),
            )
            .values(used_at=at)
            .returning(*portal_links.c)
        )
        row = self._cx.execute(statement).first()
        if row is None:
            return None
        return PortalLink(
            id=row.id,
            company_id=row.company_id,
            customer_id=row.customer_id,
            token_hash=row.token_hash,
            created_at=row.created_at,
            expires_at=row.expires_at,
            used_at=row.used_at,
        )
