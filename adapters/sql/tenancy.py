"""Companies and their API keys.

A company by id comes from the read cache (``adapters.sql.readcache``) while the change
feed vouches for it; saving a company or a key announces the change
(``adapters.sql.changes``) in the same transaction, after the guarded statement (a
refused one announces nothing). New rows need no announcement: misses are never kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update

from adapters.sql.changes import Kind
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.readcache import announce, through
from adapters.sql.tables import api_keys, companies
from booking_core.auth import ApiKey, KeyStatus
from booking_core.companies import Company
from booking_core.errors import ConflictError, DomainTaken, NotFoundError

SLUG_TAKEN = "That slug is taken by another company."
PREFIX_TAKEN = "That key's lookup prefix is taken; issue the key again."


def _company_values(company: Company) -> dict[str, Any]:
    return {
        "id": company.id,
        "slug": company.slug,
        "name": company.name,
        "timezone": company.timezone,
        "code_prefix": company.code_prefix,
        "created_at": company.created_at,
        "tax_rate_bps": company.tax_rate_bps,
        "custom_domain": company.custom_domain,
        "self_service_cutoff_hours": company.self_service_cutoff_hours,
        "min_notice_minutes": company.min_notice_minutes,
        "brand_color": company.brand_color,
        "notify_email": company.notify_email,
        "reminder_hours": company.reminder_hours,
        "referral_discount_cents": company.referral_discount_cents,
    }


def _company(row: AnyRow) -> Company:
    return Company(
        id=row.id,
        slug=row.slug,
        name=row.name,
        timezone=row.timezone,
        code_prefix=row.code_prefix,
        created_at=row.created_at,
        tax_rate_bps=row.tax_rate_bps,
        custom_domain=row.custom_domain,
        self_service_cutoff_hours=row.self_service_cutoff_hours,
        min_notice_minutes=row.min_notice_minutes,
        brand_color=row.brand_color,
        notify_email=row.notify_email,
        reminder_hours=row.reminder_hours,
        referral_discount_cents=row.referral_discount_cents,
    )


class SqlCompanyRepository:
    """Companies; the company id doubles as the scope key."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str) -> Company:
        return through(self._cx, Kind.COMPANY, company_id, lambda: self._read(company_id))

    def get_for_update(self, company_id: str) -> Company:
        # Never from the read cache: the stored row, locked on PostgreSQL until the unit
        # ends (SQLite: the unit's write lock).
        return self._read(company_id, locked=self._cx.dialect == "postgresql")

    def _read(self, company_id: str, *, locked: bool = False) -> Company:
        statement = select(companies).where(companies.c.id == company_id)
        if locked:
            statement = statement.with_for_update()
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("company", company_id)
        return _company(row)

    def by_slug(self, slug: str) -> Company | None:
        row = self._cx.execute(select(companies).where(companies.c.slug == slug)).first()
        return None if row is None else _company(row)

    def add(self, company: Company) -> None:
        try:
            self._cx.insert_new(companies, _company_values(company), SLUG_TAKEN)
        except ConflictError:
            self._raise_if_domain_taken(company)
            raise

    def save(self, company: Company) -> None:
        statement = (
            update(companies)
            .where(companies.c.id == company.id)
            .values(**without_keys(_company_values(company), "id"))
        )
        try:
            result = self._cx.execute_guarded(statement, SLUG_TAKEN)
        except ConflictError:
            self._raise_if_domain_taken(company)
            raise
        if result.rowcount == 0:
            raise NotFoundError("company", company.id)
        announce(self._cx, Kind.COMPANY, company.id)

    def _raise_if_domain_taken(self, company: Company) -> None:
        """After a unique key refused ``company``: ``DomainTaken`` when it was the custom
        domain's (``uq_companies_custom_domain``, revision 0017)."""
        domain = company.custom_domain
        if domain is None:
            return
        statement = select(companies.c.id).where(
            companies.c.custom_domain == domain, companies.c.id != company.id
        )
        if self._cx.execute(statement).first() is not None:
            raise DomainTaken(domain)

    def list_all(self) -> Sequence[Company]:
        statement = select(companies).order_by(companies.c.created_at, companies.c.id)
        return [_company(row) for row in self._cx.execute(statement)]


def _key_values(key: ApiKey) -> dict[str, Any]:
    return {
        "company_id": key.company_id,
        "id": key.id,
        "name": key.name,
        "scopes": json.dumps(sorted(key.scopes)),
        "rate_limit_per_minute": key.rate_limit_per_minute,
        "lookup_prefix": key.lookup_prefix,
        "secret_hash": key.secret_hash,
        "status": key.status.value,
        "created_at": key.created_at,
        "updated_at": key.updated_at,
        "revoked_at": key.revoked_at,
    }


def _key(row: AnyRow) -> ApiKey:
    return ApiKey(
        id=row.id,
        company_id=row.company_id,
        name=row.name,
        scopes=frozenset(json.loads(row.scopes)),
        rate_limit_per_minute=row.rate_limit_per_minute,
        lookup_prefix=row.lookup_prefix,
        secret_hash=row.secret_hash,
        status=KeyStatus(row.status),
        created_at=row.created_at,
        updated_at=row.updated_at,
        revoked_at=row.revoked_at,
    )


class SqlApiKeyRepository:
    """API keys by company, found across companies by lookup prefix."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, key_id: str) -> ApiKey:
        return _key(self._cx.row(api_keys, company_id, key_id, "API key"))

    def get_for_update(self, company_id: str, key_id: str) -> ApiKey:
        return _key(self._cx.row(api_keys, company_id, key_id, "API key", locked=True))

    def by_lookup_prefix(self, prefix: str) -> ApiKey | None:
        statement = select(api_keys).where(api_keys.c.lookup_prefix == prefix)
        row = self._cx.execute(statement).first()
        return None if row is None else _key(row)

    def add(self, key: ApiKey) -> None:
        self._cx.insert_new(api_keys, _key_values(key), PREFIX_TAKEN)

    def save(self, key: ApiKey) -> None:
        statement = (
            update(api_keys)
            .where(api_keys.c.company_id == key.company_id, api_keys.c.id == key.id)
            .values(**without_keys(_key_values(key)))
        )
        if self._cx.execute_guarded(statement, PREFIX_TAKEN).rowcount == 0:
            raise NotFoundError("API key", key.id)
        announce(self._cx, Kind.KEYS, key.company_id)

    def list(self, company_id: str) -> Sequence[ApiKey]:
        statement = (
            select(api_keys)
            .where(api_keys.c.company_id == company_id)
            .order_by(api_keys.c.created_at.desc(), api_keys.c.id.desc())
        )
        return [_key(row) for row in self._cx.execute(statement)]
