"""Ports: the Protocols the domain's use cases need from the outside world.

Adapters implement them by technology (``MemoryQuoteRepository``,
``SqlQuoteRepository``, ``SystemClock``, ``FixedClock``). Every repository is scoped
by company: an id of another company raises ``NotFoundError`` exactly like an id
that never existed. One contract test module per port runs against every adapter.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

if TYPE_CHECKING:
    from booking_core.auth import ApiKey
    from booking_core.availability import Block
    from booking_core.bookings import Booking, BookingStatus
    from booking_core.catalog import Catalog
    from booking_core.companies import Company
    from booking_core.coupons import CouponUsage
    from booking_core.crew import CrewMember
    from booking_core.customers import Customer
    from booking_core.idempotency import IdempotencyRecord
    from booking_core.leads import Lead, LeadStage
    from booking_core.ledger import PaymentEntry
    from booking_core.paging import Page, PageRequest
    from booking_core.quotes import Quote, QuoteStatus


class Clock(Protocol):
    """Tells the time; the core never calls ``now()`` itself."""

    def now(self) -> datetime:
        """The current instant, timezone-aware."""
        ...


class DriveTime(Protocol):
    """Estimated driving time between two US zip codes (``ZipCentroidDriveTime``,
    ``OsrmDriveTime``, ``TableDriveTime``)."""

    def minutes(self, from_zip: str, to_zip: str) -> int:
        """Whole minutes, rounded up, to drive from one zip to the other (a small fixed
        minimum within one zip). Raises ``UnknownZip`` for a zip the source does not know;
        its ``field`` is ``zip``, and callers re-raise it naming their own field."""
        ...


@runtime_checkable
class DriveTimeMatrix(DriveTime, Protocol):
    """A drive-time source that also answers many pairs in one lookup."""

    def matrix(
        self, origins: Sequence[str], destinations: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        """Minutes for every ``(origin, destination)`` pair, as ``minutes`` would answer
        them; a pair with an unknown zip (or no route) is left out rather than raised."""
        ...


class PhoneNormalizer(Protocol):
    """Turns a phone number as typed into E.164 (``+14155550123``), or None if it is not one."""

    def e164(self, raw: str) -> str | None:
        """The E.164 form of ``raw``, or None when it is not a valid number."""
        ...


class CompanyRepository(Protocol):
    """The tenants."""

    def get(self, company_id: str) -> Company:
        """The company; ``NotFoundError`` if none has that id."""
        ...

    def by_slug(self, slug: str) -> Company | None:
        """The company with that slug, if any."""
        ...

    def add(self, company: Company) -> None:
        """Store a new company; ``ConflictError`` if its id or slug is taken."""
        ...

    def save(self, company: Company) -> None:
        """Replace a stored company."""
        ...

    def list_all(self) -> Sequence[Company]:
        """Every company, oldest first."""
        ...


class ApiKeyRepository(Protocol):
    """API keys. ``by_lookup_prefix`` is the one query not scoped by company: it is how a
    request's key finds its company."""

    def get(self, company_id: str, key_id: str) -> ApiKey:
        """The key; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def by_lookup_prefix(self, prefix: str) -> ApiKey | None:
        """The key whose non-secret lookup prefix is ``prefix``, active or revoked."""
        ...

    def add(self, key: ApiKey) -> None:
        """Store a new key; ``ConflictError`` if its lookup prefix is taken."""
        ...

    def save(self, key: ApiKey) -> None:
        """Replace a stored key (edit, rotate, revoke)."""
        ...

    def list(self, company_id: str) -> Sequence[ApiKey]:
        """The company's keys, newest first."""
        ...


class CustomerRepository(Protocol):
    """Customers; merged records are reachable by id but omitted from lists."""

    def get(self, company_id: str, customer_id: str) -> Customer:
        """The customer; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def by_email(self, company_id: str, email: str) -> Customer | None:
        """The record with that email (case-insensitive), merged or not."""
        ...

    def add(self, customer: Customer) -> None:
        """Store a new customer; ``ConflictError`` if the email is taken in the company."""
        ...

    def add_unless_email_taken(self, customer: Customer) -> tuple[Customer, bool]:
        """Store a new customer unless its email is taken in the company; either way the
        record holding the email now and whether it is ``customer``, just added.

        A record another unit of work added and committed while this one ran counts as
        taken (the loser of a race for a new email gets the winner's record, merged or
        not), and the transaction stays usable. The record returned is locked until the
        unit of work ends where the store locks rows, so that changes saved to it are not
        lost to another unit of work changing it too.
        """
        ...

    def save(self, customer: Customer) -> None:
        """Replace a stored customer."""
        ...

    def list(
        self, company_id: str, page: PageRequest, *, search: str | None = None
    ) -> Page[Customer]:
        """A page of unmerged customers; ``search`` matches name or email, case-insensitive."""
        ...


class LeadRepository(Protocol):
    """Leads with their timelines."""

    def get(self, company_id: str, lead_id: str) -> Lead:
        """The lead; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def lock_contact(self, company_id: str, contact_keys: Sequence[str]) -> None:
        """Hold, until the unit of work ends, a lock per contact key (normalised email, E.164
        phone) so that two enquiries from one contact fold instead of both starting a lead.
        Stores that run one writer at a time need do nothing."""
        ...

    def open_matching(
        self, company_id: str, email: str | None, phone_e164: str | None
    ) -> Sequence[Lead]:
        """Open leads whose normalised email or E.164 phone matches, oldest first."""
        ...

    def add(self, lead: Lead) -> None:
        """Store a new lead."""
        ...

    def save(self, lead: Lead) -> None:
        """Replace a stored lead (its timeline only ever grows)."""
        ...

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        stage: LeadStage | None = None,
        owner: str | None = None,
    ) -> Page[Lead]:
        """A page of leads, optionally of one stage or owner."""
        ...


class CrewRepository(Protocol):
    """Crew members; teams are their own records and are not listed here."""

    def get(self, company_id: str, member_id: str) -> CrewMember:
        """The member; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def add(self, member: CrewMember) -> None:
        """Store a new member."""
        ...

    def save(self, member: CrewMember) -> None:
        """Replace a stored member."""
        ...

    def list_active(self, company_id: str, page: PageRequest) -> Page[CrewMember]:
        """A page of the company's active crew members."""
        ...


class BookingRepository(Protocol):
    """Bookings, and the guarantee that no crew member is booked twice for one minute.

    Every open booking (scheduled or in progress) occupies each of its crew members for
    each of its ``day_blocks()``, half-open: two such blocks of one member in one company
    never overlap (a block ending at 11:00 and one starting at 11:00 do not). Writes that
    would break that raise ``SlotTaken`` naming the member, and write nothing; storage
    enforces it against concurrent writers too (PostgreSQL: an exclusion constraint;
    SQLite: one writer at a time), so a lost race is ``SlotTaken``, never a double booking.
    ``SlotTaken`` is a ``ConflictError``: catch it first where the two differ.
    """

    def get(self, company_id: str, booking_id: str) -> Booking:
        """The booking; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def by_code(self, company_id: str, code: str) -> Booking | None:
        """The booking with exactly this human code in the company (normalise it first)."""
        ...

    def by_tracking_token(self, token: str) -> Booking | None:
        """The booking with this tracking token, in any company (the token is its own
        authority); whether tracking still works is the caller's check."""
        ...

    def add_all(self, bookings: Sequence[Booking]) -> None:
        """Store new bookings, all or nothing, in the caller's unit of work.

        Raises ``SlotTaken(start, crew_id)`` (``start``: the colliding block's start, ISO
        in the booking's zone) when an open booking's day block overlaps another open one
        of the same crew member, stored or in this batch; ``ConflictError`` when an id,
        a human code (per company), a tracking token or a plan's ``visit_index`` is taken,
        so that the caller can redraw codes and try again. Either way nothing of the batch
        is written and the unit of work stays usable.
        """
        ...

    def save_all(self, bookings: Sequence[Booking]) -> None:
        """Replace stored bookings, all or nothing, each against ``version - 1``.

        Raises ``NotFoundError`` for a booking not stored, ``ConflictError`` when a stored
        version moved on (another request changed it), ``SlotTaken`` as ``add_all`` does
        for the new blocks (a booking never collides with itself; cancelled and completed
        bookings never collide).
        """
        ...

    def of_plan(self, company_id: str, plan_id: str) -> list[Booking]:
        """Every visit of a plan, by ``visit_index``."""
        ...

    def of_group(self, company_id: str, group_id: str) -> list[Booking]:
        """Every booking of one multi-date request, by ``visit_index``."""
        ...

    def for_customer(self, company_id: str, customer_id: str) -> list[Booking]:
        """Every booking of a customer, any status, by (start, id): for lifetime statistics."""
        ...

    def for_customers(
        self, company_id: str, customer_ids: Collection[str]
    ) -> dict[str, list[Booking]]:
        """``for_customer`` of each id at once (every id a key), for a page of customers."""
        ...

    def busy(
        self,
        company_id: str,
        start: datetime,
        end: datetime,
        crew_ids: Collection[str] | None = None,
    ) -> dict[str, list[Block]]:
        """Each crew member's open day blocks that overlap ``[start, end)``, as
        ``Block(start, end, booking.address.zip, booking.id)`` sorted by (start, booking id).

        With ``crew_ids`` every member named is a key (an empty list when free); without,
        every member with a block in the window is.
        """
        ...

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        status: BookingStatus | None = None,
        customer_id: str | None = None,
        crew_id: str | None = None,
        starts_from: datetime | None = None,
        starts_until: datetime | None = None,
    ) -> Page[Booking]:
        """A page of bookings, optionally filtered: ``crew_id`` matches any member of a
        booking's crew (a team's job is each member's job); the window on ``start`` is
        half-open."""
        ...


class IdempotencyRepository(Protocol):
    """Stored answers of writes sent with an ``Idempotency-Key``, per company."""

    def claim(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        """Insert ``record`` (in progress) unless one exists for its company and key;
        return the existing record in that case, None when this call claimed it. Atomic
        across processes."""
        ...

    def get(self, company_id: str, key: str) -> IdempotencyRecord | None:
        """The record for that key, if any."""
        ...

    def complete(self, company_id: str, key: str, status: int, body: bytes) -> None:
        """Store the answer of a claimed key."""
        ...

    def release(self, company_id: str, key: str) -> None:
        """Forget a claim whose request ended without an answer worth keeping."""
        ...

    def purge(self, before: datetime) -> int:
        """Delete records created before ``before``; return how many."""
        ...


class CatalogRepository(Protocol):
    """The one catalog of each company."""

    def get(self, company_id: str) -> Catalog:
        """The company's catalog; ``NotFoundError`` if it has none."""
        ...

    def save(self, catalog: Catalog) -> None:
        """Store (create or replace) the catalog of ``catalog.company_id``."""
        ...


class CouponRedemptionRepository(Protocol):
    """How often coupons have been redeemed, for max-redemption and per-customer rules."""

    def usage(self, company_id: str, coupon_id: str, customer_id: str | None) -> CouponUsage:
        """Redemptions in total and by this customer (zero for an unknown customer)."""
        ...

    def add(self, company_id: str, coupon_id: str, customer_id: str, booking_id: str) -> None:
        """Record one redemption."""
        ...


class QuoteRepository(Protocol):
    """Quotes of every company, each reached only through its own company."""

    def get(self, company_id: str, quote_id: str) -> Quote:
        """The quote; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def add(self, quote: Quote) -> None:
        """Store a new quote."""
        ...

    def save(self, quote: Quote, *, expected_version: int) -> None:
        """Replace a stored quote if its stored version is still ``expected_version``.

        Raises ``ConflictError`` otherwise: this is how a quote is claimed, so that
        two converts sent at the same moment cannot both proceed.
        """
        ...

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
        """A page of quotes, optionally filtered. With ``as_of`` the status filter uses the
        status in effect then (a sent quote past its expiry is expired); else the stored one."""
        ...


class PaymentRepository(Protocol):
    """The append-only ledger: entries are added, never changed."""

    def get(self, company_id: str, entry_id: str) -> PaymentEntry:
        """One entry; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def add(self, entry: PaymentEntry) -> None:
        """Append an entry."""
        ...

    def for_booking(self, company_id: str, booking_id: str) -> Sequence[PaymentEntry]:
        """Every entry of a booking, oldest first by (created_at, id)."""
        ...

    def for_bookings(
        self, company_id: str, booking_ids: Collection[str]
    ) -> dict[str, list[PaymentEntry]]:
        """``for_booking`` of each id at once (every id a key)."""
        ...

    def reversal_of(self, company_id: str, entry_id: str) -> PaymentEntry | None:
        """The entry that reverses ``entry_id`` by hand, if any."""
        ...

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
        """A page of the ledger, optionally filtered; the date window is half-open."""
        ...


class UnitOfWork(Protocol):
    """One atomic transaction over the repositories: rolled back unless committed."""

    @property
    def companies(self) -> CompanyRepository: ...

    @property
    def api_keys(self) -> ApiKeyRepository: ...

    @property
    def catalogs(self) -> CatalogRepository: ...

    @property
    def coupon_redemptions(self) -> CouponRedemptionRepository: ...

    @property
    def customers(self) -> CustomerRepository: ...

    @property
    def leads(self) -> LeadRepository: ...

    @property
    def quotes(self) -> QuoteRepository: ...

    @property
    def payments(self) -> PaymentRepository: ...

    @property
    def idempotency(self) -> IdempotencyRepository: ...

    @property
    def crew(self) -> CrewRepository: ...

    @property
    def bookings(self) -> BookingRepository: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def commit(self) -> None:
        """Make every change since ``__enter__`` permanent."""
        ...

    def rollback(self) -> None:
        """Discard every change since ``__enter__`` (or the last commit)."""
        ...
