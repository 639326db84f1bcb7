"""Ports: the Protocols the domain's use cases need from the outside world.

Adapters implement them by technology (``MemoryQuoteRepository``,
``SqlQuoteRepository``, ``SystemClock``, ``FixedClock``). Every repository is scoped
by company: an id of another company raises ``NotFoundError`` exactly like an id
that never existed. One contract test module per port runs against every adapter.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

if TYPE_CHECKING:
    from booking_core.auth import ApiKey
    from booking_core.availability import Block
    from booking_core.booking_forms import BookingForm
    from booking_core.bookings import Booking, BookingStatus
    from booking_core.catalog import Catalog
    from booking_core.companies import Company
    from booking_core.coupons import CouponUsage
    from booking_core.crew import CrewMember, Team
    from booking_core.customers import Customer
    from booking_core.events import Event
    from booking_core.idempotency import IdempotencyRecord
    from booking_core.leads import Lead, LeadStage
    from booking_core.ledger import PaymentEntry
    from booking_core.notifications import Message, MessageKind
    from booking_core.paging import Page, PageRequest
    from booking_core.portal import PortalLink
    from booking_core.processor_accounts import ProcessorAccount
    from booking_core.quotes import Quote, QuoteStatus
    from booking_core.users import SignInLink, User
    from booking_core.waitlist import WaitlistEntry
    from booking_core.webhook_endpoints import Attempt, Delivery, WebhookEndpoint


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


class Resolver(Protocol):
    """Resolves a host name to the addresses a connection to it would use, for the webhook
    URL policy (``SystemResolver``; ``StaticResolver`` in tests)."""

    def addresses(self, host: str, port: int) -> list[str]:
        """Every IPv4 and IPv6 address of ``host`` as text (``"203.0.113.7"``,
        ``"2001:db8::1"``); ``[]``, or an ``OSError``, when the name does not resolve."""
        ...


class CompanyRepository(Protocol):
    """The tenants."""

    def get(self, company_id: str) -> Company:
        """The company; ``NotFoundError`` if none has that id."""
        ...

    def get_for_update(self, company_id: str) -> Company:
        """``get`` for a unit of work that writes the company back: the stored record
        (never a cached copy), which no other unit reads this way, or changes, until this
        unit ends, so two settings changes racing keep each other."""
        ...

    def by_slug(self, slug: str) -> Company | None:
        """The company with that slug, if any."""
        ...

    def add(self, company: Company) -> None:
        """Store a new company; ``DomainTaken`` if another company has its custom
        domain, ``ConflictError`` if its id or slug is taken."""
        ...

    def save(self, company: Company) -> None:
        """Replace a stored company; ``DomainTaken`` if another company has its custom
        domain (held by storage, so two companies connecting one domain at once cannot
        both win)."""
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

    def get_for_update(self, company_id: str, key_id: str) -> ApiKey:
        """``get`` for a unit of work that writes the key back: no other unit reads it
        this way, or changes it, until this unit ends, so an edit or a rotation racing a
        revocation can never write back the key as it was before it was revoked."""
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

    def get(self, company_id: str, customer_id: str, *, held: bool = False) -> Customer:
        """The customer; ``NotFoundError`` for an unknown id or another company's.
        ``held``: as for ``by_email``."""
        ...

    def get_for_update(self, company_id: str, customer_id: str) -> Customer:
        """``get`` for a unit of work that writes it back: no other unit reads it this
        way, or changes it, until this unit ends, so no change is lost."""
        ...

    def hold_merges(self, company_id: str, customer_ids: Collection[str]) -> None:
        """Before anything else is read: the merges of these records, held until the unit
        ends, so that two merges sharing a record run one after the other (the second
        then reads the first's outcome before it holds any record). Nothing but a merge
        asks for it."""
        ...

    def by_email(self, company_id: str, email: str, *, held: bool = False) -> Customer | None:
        """The record with that email (case-insensitive), merged or not. ``held`` (a unit
        that files something under the record, a booking): the record cannot change until
        this unit ends, so a merge of it (which reads it for update) waits for this
        unit and then re-files what it filed; a merge that got there first is waited for,
        and the record is read as it left it (merged). Held reads of one record wait for
        each other too, so a unit holding it may then read it for update without
        deadlocking with another holder."""
        ...

    def by_phone(self, company_id: str, phone_e164: str) -> Customer | None:
        """The company's oldest record (by creation, then id) with that E.164 phone,
        merged or not; phones are not unique, so more than one may hold it."""
        ...

    def by_referral_code(self, company_id: str, code: str) -> Customer | None:
        """The company's record with that referral code, merged or not; ``code`` is
        compared as given (callers pass ``customers.referral_key`` of what was typed)."""
        ...

    def add(self, customer: Customer) -> None:
        """Store a new customer; ``ConflictError`` if the email or the referral code is
        taken in the company."""
        ...

    def add_unless_email_taken(self, customer: Customer) -> tuple[Customer, bool]:
        """Store a new customer unless its email is taken in the company; either way the
        record holding the email now and whether it is ``customer``, just added. A
        referral code taken in the company (or the id) is ``ConflictError``, and the unit
        stays usable, so the caller may draw another code and try again.

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
        """A page of unmerged customers; ``search`` matches name or email, case-insensitive
        (the name casefolded, the email lower-cased, each as ``name_key`` and
        ``normalize_email`` keep them)."""
        ...

    def add_portal_link(self, link: PortalLink) -> None:
        """Store a new portal sign-in link (by its token's hash)."""
        ...

    def claim_portal_link(
        self, company_id: str, token_hash: str, at: datetime
    ) -> PortalLink | None:
        """Mark the company's unused portal link with this token hash used at ``at`` and
        return it as claimed; None when there is none in this company or it was used (a
        link of another company is not claimed). Of two units claiming one link at once,
        one gets it and the other None. Whether it expired is the caller's check."""
        ...


class LeadRepository(Protocol):
    """Leads with their timelines."""

    def get(self, company_id: str, lead_id: str) -> Lead:
        """The lead; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def get_for_update(self, company_id: str, lead_id: str) -> Lead:
        """``get`` for a unit of work that writes it back: no other unit reads it this
        way, or changes it, until this unit ends, so no change is lost."""
        ...

    def lock_contact(self, company_id: str, contact_keys: Sequence[str]) -> None:
        """Hold, until the unit of work ends, a lock per contact key (normalised email, E.164
        phone) so that two enquiries from one contact fold instead of both starting a lead.
        Stores that run one writer at a time need do nothing."""
        ...

    def open_matching(
        self, company_id: str, email: str | None, phone_e164: str | None
    ) -> Sequence[Lead]:
        """Open leads whose normalised email or E.164 phone matches, oldest first, held
        until the unit ends as ``get_for_update`` holds one (the enquiry folds into one)."""
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
        follow_up_on: date | None = None,
    ) -> Page[Lead]:
        """A page of leads, optionally of one stage, owner or follow-up date."""
        ...


class WaitlistRepository(Protocol):
    """Waitlist entries: requests for dates with no opening, newest first."""

    def add(self, entry: WaitlistEntry) -> None:
        """Store a new entry."""
        ...

    def get(self, company_id: str, entry_id: str) -> WaitlistEntry:
        """The entry; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def delete(self, company_id: str, entry_id: str) -> None:
        """Remove an entry the company has dealt with; ``NotFoundError`` as ``get``."""
        ...

    def list(self, company_id: str, page: PageRequest) -> Page[WaitlistEntry]:
        """A page of the company's entries, newest first (``ValueError`` for a page
        by change: entries carry no change stamps)."""
        ...


class CrewRepository(Protocol):
    """Crew members; teams are their own records and are not listed here."""

    def get(self, company_id: str, member_id: str) -> CrewMember:
        """The member; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def get_for_update(self, company_id: str, member_id: str) -> CrewMember:
        """``get`` for a unit of work that writes it back: no other unit reads it this
        way, or changes it, until this unit ends, so no change is lost."""
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


class TeamRepository(Protocol):
    """Teams: named sets of one company's crew members (not in the API)."""

    def get(self, company_id: str, team_id: str) -> Team:
        """The team; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def get_for_update(self, company_id: str, team_id: str) -> Team:
        """``get`` for a unit of work that writes it back: no other unit reads it this
        way, or changes it, until this unit ends, so no change is lost."""
        ...

    def add(self, team: Team) -> None:
        """Store a new team. ``NotFoundError`` naming a member id that is not a crew
        member of the team's company (another company's included); ``ConflictError`` when
        the id, or the name (as ``crew_drafts.name_key`` matches names), is taken in
        the company."""
        ...

    def save(self, team: Team) -> None:
        """Replace a stored team; ``NotFoundError`` if it is not stored, or as ``add`` for
        its members; ``ConflictError`` as ``add`` for its name."""
        ...

    def list(self, company_id: str) -> Sequence[Team]:
        """Every team of the company, by name (case-insensitive), then id."""
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

    def hold_crew(self, company_id: str, crew_ids: Collection[str]) -> None:
        """Hold these crew members' calendars until the unit of work ends: another unit
        holding any of them waits until this one ends, and ``busy`` read after this call
        sees every job committed before it. A write that decides on a member's jobs (the
        drive between them, which no constraint of the database can see) holds the member
        before reading them, so two such writes take turns instead of both passing."""
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


class BookingFormRepository(Protocol):
    """A company's booking forms (what its online booking pages offer and ask)."""

    def get(self, company_id: str, form_id: str) -> BookingForm:
        """The form, active or not; ``NotFoundError`` for an unknown id or another
        company's."""
        ...

    def get_for_update(self, company_id: str, form_id: str) -> BookingForm:
        """``get`` for a unit of work that writes it back: no other unit reads it this
        way, or changes it, until this unit ends, so no change is lost."""
        ...

    def add(self, form: BookingForm) -> None:
        """Store a new form; ``ConflictError`` if its id is taken."""
        ...

    def save(self, form: BookingForm) -> None:
        """Replace a stored form; ``NotFoundError`` if it is not stored."""
        ...

    def delete(self, company_id: str, form_id: str) -> None:
        """Remove the form (bookings made through it keep their answers);
        ``NotFoundError`` if the company has none with that id."""
        ...

    def list(self, company_id: str, page: PageRequest) -> Page[BookingForm]:
        """A page of the company's forms, newest first (by ``created_at``, then id)."""
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

    def get_for_update(self, company_id: str) -> Catalog:
        """``get`` for a unit of work that replaces the catalog: the stored one (never a
        cached copy), which no other unit reads this way, or replaces, until this unit
        ends."""
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

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        """File every redemption of ``from_customer_id`` under ``to_customer_id`` (a merge:
        the survivor's per-customer counts then include them); returns how many moved."""
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

    def of_customer(self, company_id: str, customer_id: str) -> Sequence[Quote]:
        """Every quote filed under a customer, any status, by (created_at, id)."""
        ...

    def by_public_token(self, token: str) -> Quote | None:
        """The quote with this public token, in any company (the token is its own
        authority, as a booking's tracking token); None when there is none. Whether the
        page address names the quote's company is the caller's check."""
        ...


class PaymentRepository(Protocol):
    """The append-only ledger: entries are added, never changed (``refile`` only changes
    whose record an entry is filed under, after a merge of customers)."""

    def lock_ledger(self, company_id: str, ledger_key: str) -> None:
        """Hold, until the unit of work ends, the lock of one ledger (``ledger_key``: a
        booking id, or the id of an entry outside any booking), so that reading it,
        deciding and adding its new entry is one step: two writers of one ledger take
        turns (an entry is reversed once; a refund never takes the paid total below
        zero). Stores that run one writer at a time need do nothing."""
        ...

    def lock_ledgers(self, company_id: str, ledger_keys: Collection[str]) -> None:
        """``lock_ledger`` of each key, in one step (a merge re-filing a record's
        bookings holds their ledgers: an entry written for one of them meanwhile is
        filed before the merge re-files, or after it, under the survivor)."""
        ...

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

    def with_external_ref(self, company_id: str, external_ref: str) -> Sequence[PaymentEntry]:
        """Every entry carrying this processor reference, oldest first by (created_at, id):
        how a refund or dispute the processor reports finds the card money it concerns."""
        ...

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        """File every entry of ``from_customer_id`` under ``to_customer_id`` (a merge), the
        one change an entry ever takes: its ``customer_id`` and its change stamp move (so
        ``updatedSince`` pollers see it), never its money, kind, booking or instant.
        Returns how many entries moved."""
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


class OutboxRepository(Protocol):
    """Domain events, stored in the transaction of the change that caused them."""

    def add(self, event: Event) -> None:
        """Store ``event``; it is kept only if the unit of work commits."""
        ...

    def add_all(self, events: Sequence[Event]) -> None:
        """Store every one of ``events`` (a use case's several events at once, such as the
        visits of a plan); kept only if the unit of work commits. Empty: nothing is written."""
        ...

    def claim_undispatched(self, limit: int) -> Sequence[Event]:
        """Up to ``limit`` events not yet handed to webhooks, oldest first, locked for this
        unit of work (another unit claiming at once skips them: ``FOR UPDATE SKIP LOCKED``
        on PostgreSQL; SQLite runs one writer at a time)."""
        ...

    def mark_dispatched(self, event_ids: Collection[str], at: datetime) -> None:
        """Note that these events were handed on; they are not claimed again."""
        ...

    def claim_unmailed(self, limit: int) -> Sequence[Event]:
        """Up to ``limit`` events not yet turned into messages, oldest first, locked as
        ``claim_undispatched`` locks them. A second consumer with its own marker: webhooks
        and messages never wait for each other."""
        ...

    def mark_mailed(self, event_ids: Collection[str], at: datetime) -> None:
        """Note that these events were turned into messages; they are not claimed again."""
        ...


class MessageRepository(Protocol):
    """Emails queued for the worker to send (``booking_core.notifications``)."""

    def add(self, message: Message) -> bool:
        """Store a new message; False, storing nothing, when the company already has one
        with its ``dedupe_key`` (never raises for a duplicate; the unit of work stays
        usable)."""
        ...

    def get(self, company_id: str, message_id: str) -> Message:
        """The message; ``NotFoundError`` for an unknown id or another company's."""
        ...

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Message]:
        """Up to ``limit`` pending messages whose ``next_attempt_at`` has come, oldest
        first, leased until ``lease_until`` (their ``next_attempt_at`` moves there, so a
        worker that dies mid-send leaves them to be sent again then). Rows another unit
        has locked are skipped (``FOR UPDATE SKIP LOCKED`` on PostgreSQL)."""
        ...

    def save(self, message: Message) -> None:
        """Store a message's new state; ``NotFoundError`` if it is not stored."""
        ...

    def list(
        self, company_id: str, page: PageRequest, *, subject_id: str | None = None
    ) -> Page[Message]:
        """A page of the company's messages, newest first, optionally only those about
        one booking, quote, lead or customer (``ValueError`` for a page by change)."""
        ...

    def for_subject(self, company_id: str, subject_id: str) -> Sequence[Message]:
        """Every message about one booking, quote, lead or customer, oldest first."""
        ...


class Composer(Protocol):
    """Renders a message from its kind's templates (``JinjaComposer``)."""

    def compose(
        self, kind: MessageKind, company: Company, context: Mapping[str, object]
    ) -> tuple[str, str, str]:
        """``(subject, text, html)``: the subject a single line, the HTML escaped."""
        ...


class Mailer(Protocol):
    """Hands a message to a mail server (``SmtpMailer``) or the log (``LogMailer``)."""

    def send(self, message: Message, sender: str) -> None:
        """Send ``message`` from ``sender``, stamped ``Message-ID: <{message.id}@host>``;
        ``MailRejected`` when it was not accepted."""
        ...


class WebhookRepository(Protocol):
    """A company's webhook endpoints, their pending deliveries and delivery log."""

    def get(self, company_id: str, endpoint_id: str) -> WebhookEndpoint:
        """The endpoint; ``NotFoundError`` if the company has none with that id."""
        ...

    def get_for_update(self, company_id: str, endpoint_id: str) -> WebhookEndpoint:
        """``get`` for a unit of work that writes the endpoint back: no other unit reads
        it this way, or changes it, until this unit ends, so two read-modify-writes (a
        ``PATCH``, a secret rotation, the worker's health) never overwrite each other."""
        ...

    def add(self, endpoint: WebhookEndpoint) -> None:
        """Store a new endpoint."""
        ...

    def save(self, endpoint: WebhookEndpoint) -> None:
        """Store a changed endpoint; ``NotFoundError`` if it is not stored."""
        ...

    def delete(self, company_id: str, endpoint_id: str) -> None:
        """Remove the endpoint with all its deliveries and its delivery log;
        ``NotFoundError`` if the company has none with that id."""
        ...

    def list(self, company_id: str, page: PageRequest) -> Page[WebhookEndpoint]:
        """The company's endpoints, newest first (as every list of the API)."""
        ...

    def count(self, company_id: str) -> int:
        """How many endpoints the company has. Until the unit of work ends, no other unit
        counts the company's endpoints, so a cap checked by ``count`` and then ``add``
        holds when creations race."""
        ...

    def active(self, company_id: str) -> Sequence[WebhookEndpoint]:
        """The company's active endpoints (what an event fans out to)."""
        ...

    def add_deliveries(self, deliveries: Sequence[Delivery]) -> None:
        """Store new deliveries."""
        ...

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Delivery]:
        """Up to ``limit`` pending deliveries whose ``next_attempt_at`` has come, oldest
        first (``Delivery.claim_order``), leased until ``lease_until`` (their
        ``next_attempt_at`` moves there, so a worker that dies mid-send leaves them to be
        tried again then, and no other worker takes them meanwhile). Rows another unit has
        locked are skipped. A delivery is left out while an earlier delivery of its
        endpoint (``Delivery.order``) that waits for its first attempt is not taken with
        it, held by another worker or locked by another claim (``in_endpoint_order``)."""
        ...

    def save_delivery(self, delivery: Delivery) -> None:
        """Store a delivery's new state; ``NotFoundError`` if it is not stored."""
        ...

    def log_attempt(self, attempt: Attempt) -> None:
        """Append one try to the endpoint's delivery log."""
        ...

    def attempts(self, company_id: str, endpoint_id: str, page: PageRequest) -> Page[Attempt]:
        """The endpoint's delivery log, newest first."""
        ...

    def drop_pending(self, company_id: str, endpoint_id: str) -> int:
        """Mark the endpoint's pending deliveries failed (it was turned off); how many.
        The last logged attempt of each is left with no ``next_retry_at``: given up, it is
        never tried again. Every delivery given up unsent or unfinished goes through here."""
        ...

    def save_health(self, endpoint: WebhookEndpoint) -> None:
        """Store only what the delivery worker decides of an endpoint (``active``,
        ``disabled_reason``, ``failing_since``), leaving what its owner may have changed
        meanwhile (URL, events, secrets, description) as stored; ``NotFoundError`` if it
        is not stored."""
        ...


class ProcessorRepository(Protocol):
    """Card-processor accounts of companies (``acct_...``), and the processor events
    already ingested. Neither is scoped by company: an event names only its account."""

    def account(self, account_id: str) -> ProcessorAccount | None:
        """The account with that id, connected or not, whichever company it belongs to."""
        ...

    def current(self, company_id: str) -> ProcessorAccount | None:
        """The company's connected account, if it has one."""
        ...

    def add(self, account: ProcessorAccount) -> None:
        """Store a newly connected account; ``ConflictError`` if its id is stored (for any
        company) or the company has another account connected."""
        ...

    def save(self, account: ProcessorAccount) -> None:
        """Replace a stored account (disconnected, reconnected); ``NotFoundError`` if it is
        not stored for that company, ``ConflictError`` if the company would have two
        connected accounts."""
        ...

    def remember_event(self, event_id: str, account_id: str, at: datetime) -> bool:
        """Note that the processor event ``event_id`` is ingested in this unit of work;
        False, writing nothing, when it was already. Two units remembering one id at once
        cannot both be told True: the second waits for the first to end (and is told True
        only if the first rolled back)."""
        ...


class UserRepository(Protocol):
    """Users of the admin workspace and crew portal, and their one-time sign-in links.

    Unlike the other repositories, ``get`` and ``by_email`` are not scoped by company: a
    session names only its user and a sign-in only an email, and the company is the
    user's. Emails are unique across the service."""

    def get(self, user_id: str) -> User:
        """The user; ``NotFoundError`` if none has that id."""
        ...

    def get_for_update(self, user_id: str) -> User:
        """``get`` for a unit of work that writes the user back: no other unit reads it
        this way, or changes it, until this unit ends (a new password and a sign-out
        everywhere racing keep each other)."""
        ...

    def by_email(self, email: str) -> User | None:
        """The user with that email (compare it normalised: stripped, lower-case), if any."""
        ...

    def add(self, user: User) -> None:
        """Store a new user; ``ConflictError`` if its id or email is taken (in any company),
        leaving the unit of work usable."""
        ...

    def save(self, user: User) -> None:
        """Replace a stored user (password, session epoch); ``NotFoundError`` if it is not
        stored."""
        ...

    def list(self, company_id: str) -> Sequence[User]:
        """The company's users, oldest first."""
        ...

    def remove(self, user_id: str) -> None:
        """Delete the user and every sign-in link issued to them (used or not);
        ``NotFoundError`` if no user has that id. Their sessions end: ``get`` no longer
        finds them, and the email is free for a new user."""
        ...

    def add_link(self, link: SignInLink) -> None:
        """Store a new sign-in link (by its token's hash)."""
        ...

    def claim_link(self, token_hash: str, at: datetime) -> SignInLink | None:
        """Mark the unused link with this token hash used at ``at`` and return it as
        claimed; None when there is no such link or it was used. Of two units claiming one
        link at once, one gets it and the other None. Whether it expired is the caller's
        check."""
        ...


class PasswordHasher(Protocol):
    """Makes and checks password hashes (``Argon2Hasher``): opaque strings carrying their
    own salt and parameters."""

    def hash(self, password: str) -> str:
        """A new salted hash of ``password``."""
        ...

    def verify(self, password_hash: str, password: str) -> bool:
        """True when ``password`` is the one ``password_hash`` was made from; False for a
        wrong password or a hash this hasher cannot read."""
        ...

    def needs_rehash(self, password_hash: str) -> bool:
        """True when the hash was made with other parameters than the current ones."""
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
    def teams(self) -> TeamRepository: ...

    @property
    def bookings(self) -> BookingRepository: ...

    @property
    def booking_forms(self) -> BookingFormRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def webhooks(self) -> WebhookRepository: ...

    @property
    def processor(self) -> ProcessorRepository: ...

    @property
    def users(self) -> UserRepository: ...

    @property
    def waitlist(self) -> WaitlistRepository: ...

    @property
    def messages(self) -> MessageRepository: ...

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

    def undo_since_claims(self) -> None:
        """Discard every change since ``__enter__`` (or the last commit) except the
        ``Idempotency-Key`` claims the unit made (``IdempotencyRepository.claim``): they
        stay stored, and held, so no other unit claims their keys before this one ends.
        The unit goes on: it can store a refusal as a claim's answer and commit, and no
        request with the same key runs in between. Call it before writing anything after a
        claim you mean to keep."""
        ...
