"""Company and API key use cases: create a company, issue, list, edit, rotate, revoke
and authenticate keys."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from attrs import frozen

from booking_core import auth
from booking_core.auth import ApiKey, IssuedKey
from booking_core.catalog import Catalog
from booking_core.companies import DOMAIN_TAKEN, Company, default_code_prefix, validate_company
from booking_core.errors import ConflictError, DomainTaken, NotFoundError, ValidationFailed
from booking_core.ids import new_id
from booking_core.ports import Clock, UnitOfWork
from booking_core.services.setup import ChangedMeanwhile


@frozen(kw_only=True)
class CreateCompany:
    """A new company; its catalog starts empty unless one is given."""

    slug: str
    name: str
    timezone: str = "America/New_York"
    tax_rate_bps: int = 0
    code_prefix: str | None = None
    custom_domain: str | None = None
    catalog: Catalog | None = None


def create_company(cmd: CreateCompany, *, uow: UnitOfWork, clock: Clock) -> Company:
    """Create a company (and its catalog); a taken slug is a field error on ``slug``."""
    company = validate_company(
        Company(
            id=new_id("cmp"),
            slug=cmd.slug,
            name=cmd.name.strip(),
            timezone=cmd.timezone,
            code_prefix=cmd.code_prefix or default_code_prefix(cmd.name),
            created_at=clock.now(),
            tax_rate_bps=cmd.tax_rate_bps,
            custom_domain=cmd.custom_domain,
        )
    )
    with uow:
        if uow.companies.by_slug(company.slug) is not None:
            raise ValidationFailed({"slug": f"The slug {company.slug!r} is taken."})
        try:
            uow.companies.add(company)
        except DomainTaken:
            raise ValidationFailed({"custom_domain": DOMAIN_TAKEN}) from None
        base = cmd.catalog or Catalog(company_id=company.id)
        uow.catalogs.save(
            Catalog(
                company_id=company.id,
                timezone=company.timezone,
                tax_rate_bps=company.tax_rate_bps,
                industries=base.industries,
                frequencies=base.frequencies,
                fees=base.fees,
                coupons=base.coupons,
            )
        )
        uow.commit()
    return company


def company_by_slug(slug: str, *, uow: UnitOfWork) -> Company:
    """The company with that slug; ``NotFoundError`` if none."""
    with uow:
        company = uow.companies.by_slug(slug)
    if company is None:
        raise NotFoundError("company", slug)
    return company


@frozen(kw_only=True)
class CreateKey:
    """Issue a key; None scopes or rate limit take SPEC.md's defaults."""

    company_id: str
    name: str
    scopes: frozenset[str] | None = None
    rate_limit: int | None = None


def create_key(cmd: CreateKey, *, uow: UnitOfWork, clock: Clock) -> IssuedKey:
    """Issue a key; the secret in the answer is the only time it exists in full."""
    with uow:
        uow.companies.get(cmd.company_id)
        for _ in range(3):
            issued = auth.issue_key(
                key_id=new_id("key"),
                company_id=cmd.company_id,
                name=cmd.name,
                at=clock.now(),
                scopes=cmd.scopes,
                rate_limit=cmd.rate_limit,
            )
            # A lookup-prefix collision is astronomically rare; draw again rather than fail.
            if uow.api_keys.by_lookup_prefix(issued.key.lookup_prefix) is None:
                break
        else:  # pragma: no cover - three collisions in a row
            raise ConflictError("could not draw a unique key prefix")
        uow.api_keys.add(issued.key)
        uow.commit()
    return issued


def list_keys(company_id: str, *, uow: UnitOfWork) -> Sequence[ApiKey]:
    """The company's keys, newest first; never their secrets."""
    with uow:
        uow.companies.get(company_id)
        return uow.api_keys.list(company_id)


def edit_key(
    company_id: str,
    key_id: str,
    *,
    scopes: Iterable[str] | None = None,
    rate_limit: int | None = None,
    expected: ApiKey | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> ApiKey:
    """Change an active key's scopes and/or rate limit. ``expected``: the stored key the
    change was made from; when it is no longer stored as it was, ``ChangedMeanwhile``
    and nothing is saved."""
    with uow:
        stored = uow.api_keys.get_for_update(company_id, key_id)
        if expected is not None and stored != expected:
            raise ChangedMeanwhile("API key")
        edited = auth.edit_key(
            stored,
            at=clock.now(),
            scopes=scopes,
            rate_limit=rate_limit,
        )
        uow.api_keys.save(edited)
        uow.commit()
    return edited


def rotate_key(company_id: str, key_id: str, *, uow: UnitOfWork, clock: Clock) -> IssuedKey:
    """Give an active key a new secret; the old one stops working at once."""
    with uow:
        rotated = auth.rotate_key(uow.api_keys.get_for_update(company_id, key_id), at=clock.now())
        uow.api_keys.save(rotated.key)
        uow.commit()
    return rotated


def revoke_key(company_id: str, key_id: str, *, uow: UnitOfWork, clock: Clock) -> ApiKey:
    """Revoke a key for good."""
    with uow:
        revoked = auth.revoke_key(uow.api_keys.get_for_update(company_id, key_id), at=clock.now())
        uow.api_keys.save(revoked)
        uow.commit()
    return revoked


def authenticate(secret: str, *, uow: UnitOfWork) -> ApiKey | None:
    """The active key whose secret this is, or None (malformed, unknown or revoked).

    The checksum rejects typos without touching storage; the stored hash is compared
    in constant time.
    """
    if not auth.well_formed(secret):
        return None
    with uow:
        key = uow.api_keys.by_lookup_prefix(auth.lookup_prefix(secret))
    if key is None or not auth.matches(key, secret) or not key.active:
        return None
    return key
