"""Quotes, saved against their version: the UPDATE names the version it expects."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, not_, or_, select, update

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import quotes
from booking_core.errors import ConflictError, NotFoundError
from booking_core.paging import Page, PageRequest
from booking_core.pricing import PriceBreakdown, Selection
from booking_core.quotes import FollowUp, ManualLine, Quote, QuoteStatus

ManualLines = tuple[ManualLine, ...]
FollowUps = tuple[FollowUp, ...]


def _values(quote: Quote) -> dict[str, Any]:
    return {
        "company_id": quote.company_id,
        "id": quote.id,
        "customer_id": quote.customer_id,
        "lead_id": quote.lead_id,
        "status": quote.status.value,
        "version": quote.version,
        "total_cents": quote.total_cents,
        "selection": None if quote.selection is None else codecs.dumps(quote.selection),
        "breakdown": None if quote.breakdown is None else codecs.dumps(quote.breakdown),
        "manual_lines": codecs.dumps(quote.manual_lines, ManualLines),
        "follow_ups": codecs.dumps(quote.follow_ups, FollowUps),
        "follow_ups_paused": quote.follow_ups_paused,
        "public_token": quote.public_token,
        "booking_id": quote.booking_id,
        "message": quote.message,
        "note": quote.note,
        "expires_at": quote.expires_at,
        "sent_at": quote.sent_at,
        "accepted_at": quote.accepted_at,
        "declined_at": quote.declined_at,
        "converted_at": quote.converted_at,
        "created_at": quote.created_at,
        "updated_at": quote.updated_at,
    }


def _quote(row: AnyRow) -> Quote:
    return Quote(
        id=row.id,
        company_id=row.company_id,
        customer_id=row.customer_id,
        lead_id=row.lead_id,
        selection=None if row.selection is None else codecs.loads(row.selection, Selection),
        breakdown=None if row.breakdown is None else codecs.loads(row.breakdown, PriceBreakdown),
        manual_lines=codecs.loads_any(row.manual_lines, ManualLines),
        total_cents=row.total_cents,
        expires_at=row.expires_at,
        public_token=row.public_token,
        status=QuoteStatus(row.status),
        follow_ups=codecs.loads_any(row.follow_ups, FollowUps),
        follow_ups_paused=row.follow_ups_paused,
        booking_id=row.booking_id,
        version=row.version,
        created_at=row.created_at,
        updated_at=row.updated_at,
        sent_at=row.sent_at,
        accepted_at=row.accepted_at,
        declined_at=row.declined_at,
        converted_at=row.converted_at,
        message=row.message,
        note=row.note,
    )


def _status_is(status: QuoteStatus, as_of: datetime | None) -> ColumnElement[bool]:
    """Quotes whose status (effective at ``as_of``: a sent quote past expiry is expired)
    is ``status``."""
    stored = quotes.c.status == status.value
    if as_of is None:
        return stored
    lapsed = and_(
        quotes.c.status == QuoteStatus.SENT.value,
        quotes.c.expires_at.is_not(None),
        quotes.c.expires_at <= as_of,
    )
    if status is QuoteStatus.SENT:
        return and_(stored, not_(lapsed))
    if status is QuoteStatus.EXPIRED:
        return or_(stored, lapsed)
    return stored


class SqlQuoteRepository:
    """Quotes of every company, each reached only through its own company."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, quote_id: str) -> Quote:
        statement = select(quotes).where(quotes.c.company_id == company_id, quotes.c.id == quote_id)
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("quote", quote_id)
        return _quote(row)

    def add(self, quote: Quote) -> None:
        self._cx.insert_new(quotes, _values(quote), f"Quote {quote.id} already exists.")
        self._cx.touch(quotes, quote.company_id, quote.id)

    def save(self, quote: Quote, *, expected_version: int) -> None:
        """``UPDATE ... WHERE version = expected``: of two writers that read one version,
        the second finds no row to update (PostgreSQL re-checks the condition once the
        first commits; SQLite never runs them together) and gets ``ConflictError``."""
        statement = (
            update(quotes)
            .where(
                quotes.c.company_id == quote.company_id,
                quotes.c.id == quote.id,
                quotes.c.version == expected_version,
            )
            .values(**without_keys(_values(quote)))
        )
        if self._cx.execute(statement).rowcount == 0:
            self.get(quote.company_id, quote.id)  # NotFoundError when there is no such quote
            raise ConflictError(f"Quote {quote.id} was changed by another request.")
        self._cx.touch(quotes, quote.company_id, quote.id)

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
        where: list[ColumnElement[bool]] = []
        if status is not None:
            where.append(_status_is(status, as_of))
        if lead_id is not None:
            where.append(quotes.c.lead_id == lead_id)
        if customer_id is not None:
            where.append(quotes.c.customer_id == customer_id)
        return self._cx.keyset_page(quotes, company_id, page, where, _quote)

    def of_customer(self, company_id: str, customer_id: str) -> Sequence[Quote]:
        statement = (
            select(quotes)
            .where(quotes.c.company_id == company_id, quotes.c.customer_id == customer_id)
            .order_by(quotes.c.created_at, quotes.c.id)
        )
        return [_quote(row) for row in self._cx.execute(statement)]

    def by_public_token(self, token: str) -> Quote | None:
        """Found through ``ix_quotes_public_token`` (256 random bits: one quote a token)."""
        row = self._cx.execute(select(quotes).where(quotes.c.public_token == token)).first()
        return None if row is None else _quote(row)
