"""Dict-backed repositories. Values are frozen, so a shallow copy of a table is a snapshot.

Each table maps a key to a ``Row``: the value plus the ordering instants lists use.
``changed_at`` is stamped by the unit of work at commit, like the SQL adapter does on
SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import date, datetime
from typing import Any, Generic, TypeVar

import attrs

from booking_core.auth import ApiKey
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.coupons import CouponUsage
from booking_core.crew import CrewMember
from booking_core.customers import Customer, normalize_email
from booking_core.errors import ConflictError, DomainTaken, NotFoundError
from booking_core.idempotency import IdempotencyRecord, RecordState
from booking_core.leads import Lead, LeadStage
from booking_core.ledger import Kind, PaymentEntry
from booking_core.paging import Page, PageRequest, Position, page_of
from booking_core.portal import PortalLink
from booking_core.processor_accounts import ProcessorAccount
from booking_core.quotes import Quote, QuoteStatus, effective_status

T = TypeVar("T")


@attrs.define
class Row(Generic[T]):
    """A stored value with the instants it is listed by."""

    value: T
    created_at: datetime
    changed_at: datetime | None = None  # None until the unit of work commits it


class Table(Generic[T]):
    """One table: rows keyed by (company id, id); tells its unit of work what it touched."""

    def __init__(self, name: str, rows: dict[tuple[str, str], Row[T]], touched: set[Any]) -> None:
        self.name = name
        self.rows = rows
        self.touched = touched

    def insert(self, company_id: str, row_id: str, value: T, created_at: datetime) -> None:
        if (company_id, row_id) in self.rows:
            raise ConflictError(f"{self.name} {row_id} already exists")
        self.rows[(company_id, row_id)] = Row(value, created_at)
        self.touched.add((self.name, company_id, row_id))

    def replace(self, company_id: str, row_id: str, value: T) -> None:
        row = self.rows[(company_id, row_id)]
        self.rows[(company_id, row_id)] = Row(value, row.created_at, row.changed_at)
        self.touched.add((self.name, company_id, row_id))

    def find(self, company_id: str, row_id: str) -> T | None:
        row = self.rows.get((company_id, row_id))
        return None if row is None else row.value

    def values(self, company_id: str | None = None) -> Iterable[T]:
        return (r.value for (c, _), r in self.rows.items() if company_id in (None, c))

    def page(
        self,
        company_id: str,
        request: PageRequest,
        keep: Callable[[T], bool],
        row_id: Callable[[T], str],
    ) -> Page[T]:
        """A keyset page over this company's rows that ``keep`` accepts."""
        ordered: list[tuple[Position, T]] = []
        for (c, _), row in self.rows.items():
            if c != company_id or not keep(row.value):
                continue
            if request.by_change:
                if row.changed_at is None or row.changed_at < request.updated_since:  # type: ignore[operator]
                    continue
                ordered.append((Position(row.changed_at, row_id(row.value)), row.value))
            else:
                ordered.append((Position(row.created_at, row_id(row.value)), row.value))
        newest_first = not request.by_change
        ordered.sort(key=lambda item: (item[0].at, item[0].id), reverse=newest_first)
        if request.after is not None:
            after = (request.after.at, request.after.id)
            ordered = [
                item
                for item in ordered
                if (
                    (item[0].at, item[0].id) < after
                    if newest_first
                    else (item[0].at, item[0].id) > after
                )
            ]
        return page_of(ordered[: request.limit + 1], request)


def _get(table: Table[T], kind: str, company_id: str, row_id: str) -> T:
    value = table.find(company_id, row_id)
    if value is None:
        raise NotFoundError(kind, row_id)
    return value


class MemoryCompanyRepository:
    """Companies; the company id doubles as the scope key."""

    def __init__(self, table: Table[Company]) -> None:
        self._t = table

    def get(self, company_id: str) -> Company:
        return _get(self._t, "company", company_id, company_id)

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def by_slug(self, slug: str) -> Company | None:
        return next((c for c in self._t.values() if c.slug == slug), None)

    def add(self, company: Company) -> None:
        if self.by_slug(company.slug) is not None:
            raise ConflictError(f"slug {company.slug!r} is taken")
        self._check_domain(company)
        self._t.insert(company.id, company.id, company, company.created_at)

    def save(self, company: Company) -> None:
        self.get(company.id)
        self._check_domain(company)
        self._t.replace(company.id, company.id, company)

    def _check_domain(self, company: Company) -> None:
        domain = company.custom_domain
        if domain is not None and any(
            c.custom_domain == domain and c.id != company.id for c in self._t.values()
        ):
            raise DomainTaken(domain)

    def list_all(self) -> Sequence[Company]:
        return sorted(self._t.values(), key=lambda c: (c.created_at, c.id))


class MemoryApiKeyRepository:
    """API keys by company, found across companies by lookup prefix."""

    def __init__(self, table: Table[ApiKey]) -> None:
        self._t = table

    def get(self, company_id: str, key_id: str) -> ApiKey:
        return _get(self._t, "API key", company_id, key_id)

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def by_lookup_prefix(self, prefix: str) -> ApiKey | None:
        return next((k for k in self._t.values() if k.lookup_prefix == prefix), None)

    def add(self, key: ApiKey) -> None:
        if self.by_lookup_prefix(key.lookup_prefix) is not None:
            raise ConflictError("lookup prefix is taken")
        self._t.insert(key.company_id, key.id, key, key.created_at)

    def save(self, key: ApiKey) -> None:
        self.get(key.company_id, key.id)
        other = self.by_lookup_prefix(key.lookup_prefix)
        if other is not None and other.id != key.id:
            raise ConflictError("lookup prefix is taken")
        self._t.replace(key.company_id, key.id, key)

    def list(self, company_id: str) -> Sequence[ApiKey]:
        return sorted(self._t.values(company_id), key=lambda k: (k.created_at, k.id), reverse=True)


class MemoryCustomerRepository:
    """Customers, unique by normalised email within a company."""

    def __init__(self, table: Table[Customer], portal_links: Table[PortalLink]) -> None:
        self._t = table
        self._links = portal_links

    def get(self, company_id: str, customer_id: str, *, held: bool = False) -> Customer:
        return _get(self._t, "customer", company_id, customer_id)

    def get_for_update(self, company_id: str, customer_id: str) -> Customer:
        # A memory unit of work holds the store's one lock from start to end: every read
        # in it is already a read for update (or held).
        return self.get(company_id, customer_id)

    def hold_merges(self, company_id: str, customer_ids: Collection[str]) -> None:
        pass  # units of work on the memory store already run one at a time

    def by_email(self, company_id: str, email: str, *, held: bool = False) -> Customer | None:
        # ``held`` asks nothing more here: a unit holds the whole store until it ends.
        key = normalize_email(email)
        return next((c for c in self._t.values(company_id) if c.email_key == key), None)

    def by_phone(self, company_id: str, phone_e164: str) -> Customer | None:
        held = [c for c in self._t.values(company_id) if c.phone == phone_e164]
        return min(held, key=lambda c: (c.created_at, c.id), default=None)

    def by_referral_code(self, company_id: str, code: str) -> Customer | None:
        return next((c for c in self._t.values(company_id) if c.referral_code == code), None)

    def add(self, customer: Customer) -> None:
        if self.by_email(customer.company_id, customer.email) is not None:
            raise ConflictError("a customer with this email exists")
        if self.by_referral_code(customer.company_id, customer.referral_code) is not None:
            raise ConflictError("a customer with this referral code exists")
        self._t.insert(customer.company_id, customer.id, customer, customer.created_at)

    def add_unless_email_taken(self, customer: Customer) -> tuple[Customer, bool]:
        # Units of work are serialised by the store's lock: no other can add one meanwhile.
        held = self.by_email(customer.company_id, customer.email)
        if held is not None:
            return held, False
        self.add(customer)
        return customer, True

    def save(self, customer: Customer) -> None:
        self.get(customer.company_id, customer.id)
        self._t.replace(customer.company_id, customer.id, customer)

    def list(
        self, company_id: str, page: PageRequest, *, search: str | None = None
    ) -> Page[Customer]:
        def keep(c: Customer) -> bool:
            if c.merged_into is not None:
                return False
            if not search:
                return True
            return search.casefold() in c.name.casefold() or search.lower() in c.email_key

        return self._t.page(company_id, page, keep, lambda c: c.id)

    def add_portal_link(self, link: PortalLink) -> None:
        self._links.insert(link.company_id, link.token_hash, link, link.created_at)

    def claim_portal_link(
        self, company_id: str, token_hash: str, at: datetime
    ) -> PortalLink | None:
        # Units of work on the memory store run one at a time: nothing can race this.
        link = self._links.find(company_id, token_hash)
        if link is None or link.used_at is not None:
            return None
        claimed = attrs.evolve(link, used_at=at)
        self._links.replace(company_id, token_hash, claimed)
        return claimed


class MemoryLeadRepository:
    """Leads with their timelines."""

    def __init__(self, table: Table[Lead]) -> None:
        self._t = table

    def get(self, company_id: str, lead_id: str) -> Lead:
        return _get(self._t, "lead", company_id, lead_id)

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def lock_contact(self, company_id: str, contact_keys: Sequence[str]) -> None:
        pass  # units of work on the memory store already run one at a time

    def open_matching(
        self, company_id: str, email: str | None, phone_e164: str | None
    ) -> Sequence[Lead]:
        found = [
            lead
            for lead in self._t.values(company_id)
            if lead.stage.open and lead.matches(email, phone_e164)
        ]
        return sorted(found, key=lambda lead: (lead.created_at, lead.id))

    def add(self, lead: Lead) -> None:
        self._t.insert(lead.company_id, lead.id, lead, lead.created_at)

    def save(self, lead: Lead) -> None:
        self.get(lead.company_id, lead.id)
        self._t.replace(lead.company_id, lead.id, lead)

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        stage: LeadStage | None = None,
        owner: str | None = None,
        follow_up_on: date | None = None,
    ) -> Page[Lead]:
        def keep(lead: Lead) -> bool:
            return (
                stage in (None, lead.stage)
                and owner in (None, lead.owner)
                and follow_up_on in (None, lead.follow_up_on)
            )

        return self._t.page(company_id, page, keep, lambda lead: lead.id)


class MemoryCatalogRepository:
    """Catalogs keyed by company id."""

    def __init__(self, table: Table[Catalog]) -> None:
        self._t = table

    def get(self, company_id: str) -> Catalog:
        return _get(self._t, "catalog", company_id, company_id)

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def save(self, catalog: Catalog) -> None:
        key = (catalog.company_id, catalog.company_id)
        if key in self._t.rows:
            self._t.replace(catalog.company_id, catalog.company_id, catalog)
        else:
            self._t.insert(catalog.company_id, catalog.company_id, catalog, _UNORDERED)


class MemoryCouponRedemptionRepository:
    """Redemptions as rows keyed by (company, booking:coupon)."""

    def __init__(self, table: Table[tuple[str, str, str]]) -> None:
        self._t = table

    def usage(self, company_id: str, coupon_id: str, customer_id: str | None) -> CouponUsage:
        mine = [r for r in self._t.values(company_id) if r[0] == coupon_id]
        by_customer = sum(1 for r in mine if customer_id is not None and r[1] == customer_id)
        return CouponUsage(total=len(mine), by_customer=by_customer)

    def add(self, company_id: str, coupon_id: str, customer_id: str, booking_id: str) -> None:
        self._t.insert(
            company_id,
            f"{booking_id}:{coupon_id}",
            (coupon_id, customer_id, booking_id),
            _UNORDERED,
        )

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        moved = [
            (key, row.value)
            for (company, key), row in self._t.rows.items()
            if company == company_id and row.value[1] == from_customer_id
        ]
        for key, (coupon_id, _, booking_id) in moved:
            self._t.replace(company_id, key, (coupon_id, to_customer_id, booking_id))
        return len(moved)


class MemoryQuoteRepository:
    """Quotes, saved against their version."""

    def __init__(self, table: Table[Quote]) -> None:
        self._t = table

    def get(self, company_id: str, quote_id: str) -> Quote:
        return _get(self._t, "quote", company_id, quote_id)

    def add(self, quote: Quote) -> None:
        self._t.insert(quote.company_id, quote.id, quote, quote.created_at)

    def save(self, quote: Quote, *, expected_version: int) -> None:
        current = self.get(quote.company_id, quote.id)
        if current.version != expected_version:
            raise ConflictError(f"quote {quote.id} was changed by another request")
        self._t.replace(quote.company_id, quote.id, quote)

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        status: QuoteStatus | None = None,
        lead_id: str | None = None,
        customer_id: str | None = None,
        as_of: datetime | None = None,
    ) -> Page[Quote]:
        def keep(q: Quote) -> bool:
            shown = q.status if as_of is None else effective_status(q, as_of)
            return (
                status in (None, shown)
                and lead_id in (None, q.lead_id)
                and customer_id in (None, q.customer_id)
            )

        return self._t.page(company_id, page, keep, lambda q: q.id)

    def of_customer(self, company_id: str, customer_id: str) -> Sequence[Quote]:
        mine = [q for q in self._t.values(company_id) if q.customer_id == customer_id]
        return sorted(mine, key=lambda q: (q.created_at, q.id))

    def by_public_token(self, token: str) -> Quote | None:
        return next((q for q in self._t.values() if q.public_token == token), None)


class MemoryPaymentRepository:
    """The append-only ledger in insertion order."""

    def __init__(self, table: Table[PaymentEntry]) -> None:
        self._t = table

    def lock_ledger(self, company_id: str, ledger_key: str) -> None:
        pass  # units of work on the memory store already run one at a time

    def lock_ledgers(self, company_id: str, ledger_keys: Collection[str]) -> None:
        pass  # as lock_ledger

    def get(self, company_id: str, entry_id: str) -> PaymentEntry:
        return _get(self._t, "payment", company_id, entry_id)

    def add(self, entry: PaymentEntry) -> None:
        self._t.insert(entry.company_id, entry.id, entry, entry.created_at)

    def for_booking(self, company_id: str, booking_id: str) -> Sequence[PaymentEntry]:
        mine = [e for e in self._t.values(company_id) if e.booking_id == booking_id]
        return sorted(mine, key=lambda e: (e.created_at, e.id))

    def for_bookings(
        self, company_id: str, booking_ids: Collection[str]
    ) -> dict[str, list[PaymentEntry]]:
        return {b: list(self.for_booking(company_id, b)) for b in booking_ids}

    def reversal_of(self, company_id: str, entry_id: str) -> PaymentEntry | None:
        return next(
            (
                e
                for e in self._t.values(company_id)
                if e.kind is Kind.REVERSAL and e.reverses == entry_id
            ),
            None,
        )

    def with_external_ref(self, company_id: str, external_ref: str) -> Sequence[PaymentEntry]:
        mine = [e for e in self._t.values(company_id) if e.external_ref == external_ref]
        return sorted(mine, key=lambda e: (e.created_at, e.id))

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        moved = [e for e in self._t.values(company_id) if e.customer_id == from_customer_id]
        for entry in moved:
            self._t.replace(company_id, entry.id, attrs.evolve(entry, customer_id=to_customer_id))
        return len(moved)

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        customer_id: str | None = None,
        booking_id: str | None = None,
        created_from: datetime | None = None,
        created_until: datetime | None = None,
    ) -> Page[PaymentEntry]:
        def keep(e: PaymentEntry) -> bool:
            return (
                customer_id in (None, e.customer_id)
                and booking_id in (None, e.booking_id)
                and (created_from is None or e.created_at >= created_from)
                and (created_until is None or e.created_at < created_until)
            )

        return self._t.page(company_id, page, keep, lambda e: e.id)


class MemoryCrewRepository:
    """Crew members by company."""

    def __init__(self, table: Table[CrewMember]) -> None:
        self._t = table

    def get(self, company_id: str, member_id: str) -> CrewMember:
        return _get(self._t, "crew member", company_id, member_id)

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def add(self, member: CrewMember) -> None:
        self._t.insert(member.company_id, member.id, member, member.created_at)

    def save(self, member: CrewMember) -> None:
        self.get(member.company_id, member.id)
        self._t.replace(member.company_id, member.id, member)

    def list_active(self, company_id: str, page: PageRequest) -> Page[CrewMember]:
        return self._t.page(company_id, page, lambda m: m.active, lambda m: m.id)


class MemoryIdempotencyRepository:
    """Idempotency records keyed by (company, key)."""

    def __init__(self, table: Table[IdempotencyRecord]) -> None:
        self._t = table

    def claim(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        existing = self._t.find(record.company_id, record.key)
        if existing is not None:
            return existing
        self._t.insert(record.company_id, record.key, record, record.created_at)
        return None

    def get(self, company_id: str, key: str) -> IdempotencyRecord | None:
        return self._t.find(company_id, key)

    def complete(self, company_id: str, key: str, status: int, body: bytes) -> None:
        record = self._t.find(company_id, key)
        if record is None:
            raise NotFoundError("idempotency key", key)
        done = attrs.evolve(
            record, state=RecordState.COMPLETED, response_status=status, response_body=body
        )
        self._t.replace(company_id, key, done)

    def release(self, company_id: str, key: str) -> None:
        if self._t.rows.pop((company_id, key), None) is not None:
            self._t.touched.add((self._t.name, company_id, key))

    def purge(self, before: datetime) -> int:
        old = [k for k, row in self._t.rows.items() if row.value.created_at < before]
        for k in old:
            del self._t.rows[k]
        return len(old)


_UNORDERED = datetime.fromisoformat("2000-01-01T00:00:00+00:00")
"""Creation instant of rows that are never listed (catalogs, redemptions)."""


_ANY_COMPANY = ""
"""The company key of rows found by their own id alone (processor accounts and events)."""


class MemoryProcessorRepository:
    """Processor accounts keyed by account id, and the ids of ingested processor events."""

    def __init__(self, accounts: Table[ProcessorAccount], events: Table[str]) -> None:
        self._accounts = accounts
        self._events = events

    def account(self, account_id: str) -> ProcessorAccount | None:
        return self._accounts.find(_ANY_COMPANY, account_id)

    def current(self, company_id: str) -> ProcessorAccount | None:
        return next(
            (a for a in self._accounts.values() if a.company_id == company_id and a.connected),
            None,
        )

    def _refuse_second_connection(self, account: ProcessorAccount) -> None:
        current = self.current(account.company_id)
        if account.connected and current is not None and current.account_id != account.account_id:
            raise ConflictError("the company has another account connected")

    def add(self, account: ProcessorAccount) -> None:
        self._refuse_second_connection(account)
        self._accounts.insert(_ANY_COMPANY, account.account_id, account, account.connected_at)

    def save(self, account: ProcessorAccount) -> None:
        stored = self.account(account.account_id)
        if stored is None or stored.company_id != account.company_id:
            raise NotFoundError("processor account", account.account_id)
        self._refuse_second_connection(account)
        self._accounts.replace(_ANY_COMPANY, account.account_id, account)

    def remember_event(self, event_id: str, account_id: str, at: datetime) -> bool:
        # Units of work on the memory store run one at a time: nothing can race this.
        if self._events.find(_ANY_COMPANY, event_id) is not None:
            return False
        self._events.insert(_ANY_COMPANY, event_id, account_id, at)
        return True
