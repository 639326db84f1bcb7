"""Card-processor accounts and the ids of ingested processor events.

An event id is remembered by ``INSERT ... ON CONFLICT DO NOTHING`` on its primary key:
on PostgreSQL a second transaction inserting the same id waits for the first to end and
then inserts nothing (or, if the first rolled back, inserts it); SQLite runs one writer
at a time. Either way one delivery of an event is told it is new, however many race.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import processor_accounts as accounts
from adapters.sql.tables import processor_events as events
from booking_core.errors import NotFoundError
from booking_core.processor_accounts import ProcessorAccount

TAKEN = "That account is stored already, or the company has another account connected."
SECOND_CONNECTION = "The company has another account connected."


def _values(account: ProcessorAccount) -> dict[str, Any]:
    return {
        "account_id": account.account_id,
        "company_id": account.company_id,
        "connected_at": account.connected_at,
        "disconnected_at": account.disconnected_at,
    }


def _account(row: AnyRow) -> ProcessorAccount:
    return ProcessorAccount(
        account_id=row.account_id,
        company_id=row.company_id,
        connected_at=row.connected_at,
        disconnected_at=row.disconnected_at,
    )


class SqlProcessorRepository:
    """Processor accounts by account id (the company's connected one by a partial unique
    index), and remembered event ids."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def account(self, account_id: str) -> ProcessorAccount | None:
        statement = select(accounts).where(accounts.c.account_id == account_id)
        row = self._cx.execute(statement).first()
        return None if row is None else _account(row)

    def current(self, company_id: str) -> ProcessorAccount | None:
        statement = select(accounts).where(
            accounts.c.company_id == company_id, accounts.c.disconnected_at.is_(None)
        )
        row = self._cx.execute(statement).first()
        return None if row is None else _account(row)

    def add(self, account: ProcessorAccount) -> None:
        # Either unique key may collide (the id, or a second connected account).
        statement = self._cx.insert(accounts).values(**_values(account))
        self._cx.execute_guarded(statement, TAKEN)

    def save(self, account: ProcessorAccount) -> None:
        statement = (
            update(accounts)
            .where(
                accounts.c.account_id == account.account_id,
                accounts.c.company_id == account.company_id,
            )
            .values(**without_keys(_values(account), "account_id", "company_id"))
        )
        result = self._cx.execute_guarded(statement, SECOND_CONNECTION)
        if result.rowcount == 0:
            raise NotFoundError("processor account", account.account_id)

    def remember_event(self, event_id: str, account_id: str, at: datetime) -> bool:
        statement = (
            self._cx.insert(events)
            .values(event_id=event_id, account_id=account_id, ingested_at=at)
            .on_conflict_do_nothing(index_elements=["event_id"])
            .returning(events.c.event_id)
        )
        return self._cx.execute(statement).first() is not None
