"""The in-memory unit of work: serialised, snapshot on enter, restored unless committed.

At commit every row touched in the unit of work gets ``changed_at`` stamped with one
instant later than any stamped before, as the SQL adapter does on SQLite under its
write lock (on PostgreSQL it orders changes by transaction id instead).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

import attrs

from adapters.memory.booking_forms import MemoryBookingFormRepository
from adapters.memory.bookings import MemoryBookingRepository
from adapters.memory.messages import MemoryMessageRepository
from adapters.memory.repositories import (
    MemoryApiKeyRepository,
    MemoryCatalogRepository,
    MemoryCompanyRepository,
    MemoryCouponRedemptionRepository,
    MemoryCrewRepository,
    MemoryCustomerRepository,
    MemoryIdempotencyRepository,
    MemoryLeadRepository,
    MemoryPaymentRepository,
    MemoryProcessorRepository,
    MemoryQuoteRepository,
    Row,
    Table,
)
from adapters.memory.teams import MemoryTeamRepository
from adapters.memory.users import MemoryUserRepository
from adapters.memory.waitlist import MemoryWaitlistRepository
from adapters.memory.webhooks import MemoryOutboxRepository, MemoryWebhookRepository

TABLES = (
    "companies",
    "api_keys",
    "catalogs",
    "coupon_redemptions",
    "customers",
    "leads",
    "quotes",
    "payments",
    "idempotency",
    "crew",
    "teams",
    "bookings",
    "booking_forms",
    "outbox",
    "webhooks",
    "deliveries",
    "attempts",
    "processor_accounts",
    "processor_events",
    "users",
    "sign_in_links",
    "portal_links",
    "waitlist",
    "messages",
)


@attrs.define
class MemoryStore:
    """The tables memory units of work read and write; share one store across them."""

    tables: dict[str, dict[tuple[str, str], Row[Any]]] = attrs.Factory(
        lambda: {name: {} for name in TABLES}
    )
    last_change: datetime = datetime(2000, 1, 1, tzinfo=UTC)
    lock: threading.RLock = attrs.Factory(threading.RLock)

    def snapshot(self) -> dict[str, dict[tuple[str, str], Row[Any]]]:
        """Copies of every table; rows are copied too since ``changed_at`` is stamped."""
        return {
            name: {k: attrs.evolve(r) for k, r in rows.items()}
            for name, rows in self.tables.items()
        }

    def restore(self, snapshot: dict[str, dict[tuple[str, str], Row[Any]]]) -> None:
        """Put every table back as it was in ``snapshot``, in place."""
        for name, rows in self.tables.items():
            rows.clear()
            rows.update(snapshot[name])

    def values(self, name: str) -> dict[tuple[str, str], Any]:
        """A copy of one table's values keyed by (company id, id): for tests and demos."""
        return {key: row.value for key, row in self.tables[name].items()}

    def next_change(self) -> datetime:
        """A change instant later than every earlier one."""
        self.last_change = max(datetime.now(UTC), self.last_change + timedelta(microseconds=1))
        return self.last_change


class MemoryUnitOfWork:
    """A unit of work over a ``MemoryStore``. Units of work are serialised by the store's
    lock, held from ``__enter__`` to ``__exit__``."""

    def __init__(self, store: MemoryStore | None = None) -> None:
        self.store = store if store is not None else MemoryStore()
        self._touched: set[tuple[str, str, str]] = set()

        def table(name: str) -> Table[Any]:
            return Table(name, self.store.tables[name], self._touched)

        self.companies = MemoryCompanyRepository(table("companies"))
        self.api_keys = MemoryApiKeyRepository(table("api_keys"))
        self.catalogs = MemoryCatalogRepository(table("catalogs"))
        self.coupon_redemptions = MemoryCouponRedemptionRepository(table("coupon_redemptions"))
        self.customers = MemoryCustomerRepository(table("customers"), table("portal_links"))
        self.leads = MemoryLeadRepository(table("leads"))
        self.quotes = MemoryQuoteRepository(table("quotes"))
        self.payments = MemoryPaymentRepository(table("payments"))
        self.idempotency = MemoryIdempotencyRepository(table("idempotency"))
        self.crew = MemoryCrewRepository(table("crew"))
        self.teams = MemoryTeamRepository(table("teams"), table("crew"))
        self.bookings = MemoryBookingRepository(table("bookings"))
        self.booking_forms = MemoryBookingFormRepository(table("booking_forms"))
        self.outbox = MemoryOutboxRepository(table("outbox"))
        self.webhooks = MemoryWebhookRepository(
            table("webhooks"), table("deliveries"), table("attempts")
        )
        self.processor = MemoryProcessorRepository(
            table("processor_accounts"), table("processor_events")
        )
        self.users = MemoryUserRepository(table("users"), table("sign_in_links"))
        self.waitlist = MemoryWaitlistRepository(table("waitlist"))
        self.messages = MemoryMessageRepository(table("messages"))
        self._snapshot: dict[str, dict[tuple[str, str], Row[Any]]] | None = None
        self.commits = 0

    def __enter__(self) -> Self:
        self.store.lock.acquire()
        self._snapshot = self.store.snapshot()
        self._touched.clear()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.rollback()
        finally:
            self._snapshot = None
            self.store.lock.release()

    def commit(self) -> None:
        if self._snapshot is None:
            raise RuntimeError("commit outside a unit of work")
        if self._touched:
            stamp = self.store.next_change()
            for name, company_id, row_id in self._touched:
                row = self.store.tables[name].get((company_id, row_id))
                if row is not None:
                    row.changed_at = stamp
        self._touched.clear()
        self._snapshot = self.store.snapshot()
        self.commits += 1

    def rollback(self) -> None:
        if self._snapshot is not None:
            self.store.restore(self._snapshot)
        self._touched.clear()

    def undo_since_claims(self) -> None:
        """The unit holds the store's lock until it ends, so nobody claims in between:
        roll back, then put back the idempotency records this unit added."""
        if self._snapshot is None:
            raise RuntimeError("undo outside a unit of work")
        before = self._snapshot["idempotency"]
        claims = [row.value for k, row in self.store.tables["idempotency"].items()
                  if k not in before]  # fmt: skip
        self.rollback()
        for record in claims:
            self.idempotency.claim(record)
