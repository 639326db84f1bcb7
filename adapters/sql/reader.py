"""``CachedReader``: a read-only unit of work that opens no connection for what the read
cache holds, so a read answered from memory costs the database nothing, not even a
pooled connection's check-out (and its pre-ping round trip).

Companies by id and catalogs come from the cache when current; anything else opens a
read-only ``SqlUnitOfWork`` on first use and is read there (which keeps what it reads).
Given ``miss``, the reader never opens one: it raises ``miss()`` instead, which is how a
caller on an event loop learns that a request needs a worker thread after all.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Self, cast

from sqlalchemy import Engine

from adapters.sql.booking_forms import SqlBookingFormRepository
from adapters.sql.bookings import SqlBookingRepository
from adapters.sql.catalogs import SqlCouponRedemptionRepository
from adapters.sql.changes import Kind
from adapters.sql.crew import SqlCrewRepository
from adapters.sql.customers import SqlCustomerRepository
from adapters.sql.idempotency import SqlIdempotencyRepository
from adapters.sql.leads import SqlLeadRepository
from adapters.sql.messages import SqlMessageRepository
from adapters.sql.payments import SqlPaymentRepository
from adapters.sql.processor import SqlProcessorRepository
from adapters.sql.quotes import SqlQuoteRepository
from adapters.sql.readcache import ReadCache
from adapters.sql.teams import SqlTeamRepository
from adapters.sql.tenancy import SqlApiKeyRepository
from adapters.sql.uow import SqlUnitOfWork
from adapters.sql.users import SqlUserRepository
from adapters.sql.waitlist import SqlWaitlistRepository
from adapters.sql.webhooks import SqlOutboxRepository, SqlWebhookRepository
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.ports import UnitOfWork


class CachedReader:
    """A read-only unit of work answering companies and catalogs from the read cache."""

    def __init__(
        self, engine: Engine, cache: ReadCache, miss: type[BaseException] | None = None
    ) -> None:
        self._engine = engine
        self._cache = cache
        self._miss = miss
        self._entered = False
        self._storage: SqlUnitOfWork | None = None
        self.companies = _Companies(self)
        self.catalogs = _Catalogs(self)

    def kept(self, kind: Kind, company_id: str) -> object | None:
        """The current value the cache keeps, if any (no connection is opened)."""
        if not self._entered:
            raise RuntimeError("repositories are used inside `with uow:` only")
        found, _ = self._cache.lookup(kind, company_id)
        return found

    def storage(self) -> SqlUnitOfWork:
        """The read-only unit of work behind this one, begun on first need."""
        if not self._entered:
            raise RuntimeError("repositories are used inside `with uow:` only")
        if self._miss is not None:
            raise self._miss()
        if self._storage is None:
            storage = SqlUnitOfWork(self._engine, read_only=True)
            self._storage = storage.__enter__()
        return self._storage

    @property
    def api_keys(self) -> SqlApiKeyRepository:
        """API keys, from storage."""
        return self.storage().api_keys

    @property
    def coupon_redemptions(self) -> SqlCouponRedemptionRepository:
        """Coupon redemptions, from storage."""
        return self.storage().coupon_redemptions

    @property
    def customers(self) -> SqlCustomerRepository:
        """Customers, from storage."""
        return self.storage().customers

    @property
    def leads(self) -> SqlLeadRepository:
        """Leads, from storage."""
        return self.storage().leads

    @property
    def quotes(self) -> SqlQuoteRepository:
        """Quotes, from storage."""
        return self.storage().quotes

    @property
    def payments(self) -> SqlPaymentRepository:
        """Payments, from storage."""
        return self.storage().payments

    @property
    def idempotency(self) -> SqlIdempotencyRepository:
        """Idempotency records, from storage."""
        return self.storage().idempotency

    @property
    def crew(self) -> SqlCrewRepository:
        """Crew members, from storage."""
        return self.storage().crew

    @property
    def teams(self) -> SqlTeamRepository:
        """Teams, from storage."""
        return self.storage().teams

    @property
    def bookings(self) -> SqlBookingRepository:
        """Bookings, from storage."""
        return self.storage().bookings

    @property
    def booking_forms(self) -> SqlBookingFormRepository:
        """Booking forms, from storage."""
        return self.storage().booking_forms

    @property
    def outbox(self) -> SqlOutboxRepository:
        """The outbox, from storage."""
        return self.storage().outbox

    @property
    def webhooks(self) -> SqlWebhookRepository:
        """Webhook endpoints, deliveries and log, from storage."""
        return self.storage().webhooks

    @property
    def processor(self) -> SqlProcessorRepository:
        """Processor accounts and ingested event ids, from storage."""
        return self.storage().processor

    @property
    def users(self) -> SqlUserRepository:
        """Users and sign-in links, from storage."""
        return self.storage().users

    @property
    def waitlist(self) -> SqlWaitlistRepository:
        """The waitlist, from storage."""
        return self.storage().waitlist

    @property
    def messages(self) -> SqlMessageRepository:
        """Queued emails, from storage."""
        return self.storage().messages

    def __enter__(self) -> Self:
        if self._entered:
            raise RuntimeError("a unit of work is not re-entrant; make another")
        self._entered = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        storage, self._storage = self._storage, None
        self._entered = False
        if storage is not None:
            storage.__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        """Refused: a reader never commits."""
        raise RuntimeError("a read-only unit of work cannot commit")

    def rollback(self) -> None:
        """Ends the read transaction behind, if one was begun."""
        if self._storage is not None:
            self._storage.rollback()

    def undo_since_claims(self) -> None:
        """Refused: a reader claims no key."""
        raise RuntimeError("a read-only unit of work claims no idempotency key")


class _Companies:
    """Companies by id from the cache; the rest from storage."""

    def __init__(self, reader: CachedReader) -> None:
        self._reader = reader

    def get(self, company_id: str) -> Company:
        found = self._reader.kept(Kind.COMPANY, company_id)
        if found is not None:
            return cast(Company, found)
        return self._reader.storage().companies.get(company_id)

    def get_for_update(self, company_id: str) -> Company:
        return self._reader.storage().companies.get_for_update(company_id)

    def by_slug(self, slug: str) -> Company | None:
        return self._reader.storage().companies.by_slug(slug)

    def add(self, company: Company) -> None:
        self._reader.storage().companies.add(company)

    def save(self, company: Company) -> None:
        self._reader.storage().companies.save(company)

    def list_all(self) -> Sequence[Company]:
        return self._reader.storage().companies.list_all()


class _Catalogs:
    """Catalogs from the cache; from storage when not kept."""

    def __init__(self, reader: CachedReader) -> None:
        self._reader = reader

    def get(self, company_id: str) -> Catalog:
        found = self._reader.kept(Kind.CATALOG, company_id)
        if found is not None:
            return cast(Catalog, found)
        return self._reader.storage().catalogs.get(company_id)

    def get_for_update(self, company_id: str) -> Catalog:
        return self._reader.storage().catalogs.get_for_update(company_id)

    def save(self, catalog: Catalog) -> None:
        self._reader.storage().catalogs.save(catalog)


def _satisfies_the_port(reader: CachedReader) -> UnitOfWork:
    """Never called: mypy checks here that ``CachedReader`` is a ``UnitOfWork``."""
    return reader
