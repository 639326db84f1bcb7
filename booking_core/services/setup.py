"""Setting a company up: replace its catalog, import its crew, save its teams, change its
settings; and read the catalog and crew back as drafts (what an export writes).

Each change is checked whole first and written in one unit of work: a refused change
names every problem at its field path (``ValidationFailed``) and writes nothing. A dry
run checks everything a real run does, storage included, and writes nothing either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.bookings import OPEN_STATUSES, Booking, BookingStatus
from booking_core.catalog import Catalog
from booking_core.catalog_drafts import CatalogDraft, draft_of
from booking_core.catalog_rules import build_catalog, reference_problems, removal_problems
from booking_core.companies import (
    DOMAIN_TAKEN,
    Company,
    normalize_brand_color,
    validate_company,
)
from booking_core.crew import CrewMember, Team, deprecated_service_ids
from booking_core.crew_drafts import CrewChanges, CrewDraft, crew_draft, merge_crew, name_key
from booking_core.errors import (
    ConflictError,
    DomainTaken,
    NotFoundError,
    UnknownZip,
    ValidationFailed,
)
from booking_core.ids import new_id
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters
from booking_core.ports import Clock, DriveTime, UnitOfWork
from booking_core.services.booking_forms import all_forms
from booking_core.services.scheduling import active_crew


@frozen(kw_only=True)
class ReplaceCatalog:
    """Make ``catalog`` the company's whole catalog; ``dry_run`` only checks it.
    ``expected``: the stored catalog's draft the change was made from (an edit of one
    item); when the stored catalog is no longer that, ``CatalogChanged`` and nothing is
    saved. None (an import of a whole catalog) replaces whatever is stored."""

    company_id: str
    catalog: CatalogDraft
    dry_run: bool = False
    expected: CatalogDraft | None = None


class CatalogChanged(ConflictError):
    """The catalog changed after the draft an edit was made from was read."""

    def __init__(self) -> None:
        super().__init__(
            "The catalog was changed by someone else while this change was being saved, so"
            " nothing was saved. Save again to make your change to the catalog as it is now."
        )


class ChangedMeanwhile(ConflictError):
    """A record an edit was made from (a crew member, a team, the company's settings, an
    API key) is no longer what is stored: someone saved it in between; nothing is saved."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The {what} was changed by someone else while this change was being saved, so"
            " nothing was saved."
        )
        self.what = what


def _stored_catalog(uow: UnitOfWork, company: Company, *, for_update: bool = False) -> Catalog:
    """The company's catalog (an empty one if it has none yet); ``for_update``: the stored
    one, held until the unit ends, for a unit that replaces it."""
    try:
        if for_update:
            return uow.catalogs.get_for_update(company.id)
        return uow.catalogs.get(company.id)
    except NotFoundError:
        return Catalog(company_id=company.id, timezone=company.timezone)


def _open_bookings(uow: UnitOfWork, company_id: str) -> Iterator[Booking]:
    for status in sorted(OPEN_STATUSES):
        after = None
        while True:
            page = uow.bookings.list(
                company_id, PageRequest(limit=MAX_LIMIT, after=after), status=status
            )
            yield from page.items
            if not page.has_more:
                break
            after = page.next_after


def _drops_anything(old: Catalog, new: Catalog) -> bool:
    """True when ``new`` lacks a service, parameter, extra, frequency, fee or coupon of
    ``old`` (only then can an open booking be left without what it was booked from)."""

    def items(catalog: Catalog) -> set[tuple[str, ...]]:
        found: set[tuple[str, ...]] = {("frequency", f.slug) for f in catalog.frequencies}
        found |= {("fee", f.id) for f in catalog.fees}
        found |= {("coupon", c.normalized_code) for c in catalog.coupons}
        for s in catalog.services():
            found.add(("service", s.id))
            found |= {("parameter", s.id, p.id) for p in s.parameters}
            found |= {("extra", s.id, e.id) for e in s.extras}
        return found

    return not items(old) <= items(new) or _narrows_anything(old, new)


def _narrows_anything(old: Catalog, new: Catalog) -> bool:
    """True when ``new`` takes a parameter's or extra's quantity, or an extra's
    frequency, that ``old`` took (an open plan's later visits may have been booked so)."""
    for service in old.services():
        kept = new.services_by_id.get(service.id)
        if kept is None:
            continue
        for parameter in service.parameters:
            now = kept.parameters_by_id.get(parameter.id)
            if now is not None and (
                now.min_quantity > parameter.min_quantity
                or now.max_quantity < parameter.max_quantity
            ):
                return True
        for extra in service.extras:
            after = kept.extras_by_id.get(extra.id)
            if after is None:
                continue
            # An empty list offers the extra with every frequency.
            fewer = bool(after.frequency_slugs) and (
                not extra.frequency_slugs
                or not set(after.frequency_slugs) >= set(extra.frequency_slugs)
            )
            if after.max_quantity < extra.max_quantity or fewer:
                return True
    return False


def _restamp_crew(
    uow: UnitOfWork, company_id: str, before: Catalog, after: Catalog, *, at: datetime
) -> None:
    """Save again, changed at ``at``, each active member whose derived ``serviceIds``
    differ between the two catalogs: a service added, retired or brought back changes
    every member who may do it, though nothing of the member's own record did."""
    for member in active_crew(uow, company_id):
        if deprecated_service_ids(member, before) != deprecated_service_ids(member, after):
            held = uow.crew.get_for_update(company_id, member.id)
            uow.crew.save(attrs.evolve(held, updated_at=at))


def replace_catalog(cmd: ReplaceCatalog, *, uow: UnitOfWork, clock: Clock) -> Catalog:
    """Check the whole draft and, unless it is a dry run, store it as the catalog (and its
    tax rate as the company's). Refused, naming every problem, when the draft is invalid
    or leaves out what open bookings still use (``catalog_drafts.removal_problems``).
    Every crew member whose deprecated ``serviceIds`` (the active services they may be
    given) the new catalog changes is saved again, changed now, so ``GET /crew`` polled
    with ``updatedSince`` shows them."""
    with uow:
        # Held until the commit: replacements (and settings changes, which sync the
        # catalog) of one company take turns, each seeing the one before.
        company = uow.companies.get_for_update(cmd.company_id)
        stored = _stored_catalog(uow, company, for_update=True)
        if cmd.expected is not None and draft_of(stored) != cmd.expected:
            raise CatalogChanged()
        catalog = build_catalog(cmd.catalog, company_id=company.id, timezone=company.timezone)
        if _drops_anything(stored, catalog):
            refused = removal_problems(catalog, _open_bookings(uow, company.id))
            for where, text in reference_problems(
                catalog, active_crew(uow, company.id), all_forms(uow, company.id)
            ).items():
                refused[where] = f"{refused[where]} {text}" if where in refused else text
            if refused:
                raise ValidationFailed(refused, "The catalog has problems; nothing was saved.")
        if cmd.dry_run:
            return catalog
        uow.catalogs.save(catalog)
        _restamp_crew(uow, company.id, stored, catalog, at=clock.now())
        if company.tax_rate_bps != catalog.tax_rate_bps:
            uow.companies.save(attrs.evolve(company, tax_rate_bps=catalog.tax_rate_bps))
        uow.commit()
    return catalog


def export_catalog(company_id: str, *, uow: UnitOfWork) -> CatalogDraft:
    """The company's catalog as a draft: what ``replace_catalog`` takes back unchanged."""
    with uow:
        return draft_of(_stored_catalog(uow, uow.companies.get(company_id)))


@frozen(kw_only=True)
class ImportCrew:
    """Add or change the crew members of ``crew`` (``crew_drafts``); ``dry_run`` only
    checks them."""

    company_id: str
    crew: CrewDraft
    dry_run: bool = False
    expected: tuple[CrewMember, ...] = ()
    """The stored members the change was made from (an edit form's member): when one of
    them is no longer stored as it was, ``ChangedMeanwhile`` and nothing is saved."""


def _zip_checker(drive: DriveTime | None) -> Callable[[str], bool]:
    if drive is None:
        return lambda _: True

    def known(zip_code: str) -> bool:
        try:
            drive.minutes(zip_code, zip_code)
        except UnknownZip:
            return False
        return True

    return known


def import_crew(
    cmd: ImportCrew, *, uow: UnitOfWork, clock: Clock, drive: DriveTime | None = None
) -> CrewChanges:
    """Check every member first, then add and save them in one unit of work. With
    ``drive``, a home zip or service area it does not know is refused too (no slot could
    ever be found there)."""
    at = clock.now()
    with uow:
        company = uow.companies.get(cmd.company_id)
        stored: dict[str, CrewMember] = {}
        for item in cmd.crew.members:
            if item.id is not None and item.id not in stored:
                with suppress(NotFoundError):  # merge_crew names an id not found
                    stored[item.id] = uow.crew.get_for_update(company.id, item.id)
        for member in cmd.expected:
            held = stored.get(member.id) or uow.crew.get_for_update(company.id, member.id)
            if held != member:
                raise ChangedMeanwhile("crew member")
        roster = active_crew(uow, company.id)
        changes = merge_crew(
            cmd.crew,
            company_id=company.id,
            catalog=_stored_catalog(uow, company),
            stored=stored,
            roster=roster,
            at=at,
            mint_id=lambda: new_id("crew"),
            known_zip=_zip_checker(drive),
        )
        active_before = {member.id for member in roster}
        still = _still_booked(uow, changes, active_before, at)
        changes = attrs.evolve(changes, still_booked=still)
        if cmd.dry_run:
            return changes
        for member in changes.added:
            uow.crew.add(member)
        for member in changes.updated:
            uow.crew.save(member)
        uow.commit()
    return changes


def _still_booked(
    uow: UnitOfWork, changes: CrewChanges, active_before: set[str], at: datetime
) -> tuple[tuple[CrewMember, int], ...]:
    """Each member ``changes`` makes inactive (one of ``active_before``) with the number
    of their scheduled jobs starting from ``at``, when they have any."""
    found = []
    for member in changes.updated:
        if member.active or member.id not in active_before:
            continue
        count, after = 0, None
        while True:
            page = uow.bookings.list(
                member.company_id,
                PageRequest(limit=MAX_LIMIT, after=after),
                status=BookingStatus.SCHEDULED,
                crew_id=member.id,
                starts_from=at,
            )
            count += len(page.items)
            if not page.has_more:
                break
            after = page.next_after
        if count:
            found.append((member, count))
    return tuple(found)


def export_crew(company_id: str, *, uow: UnitOfWork) -> CrewDraft:
    """The company's active crew as a draft, oldest first: what ``import_crew`` takes back
    without a change."""
    with uow:
        uow.companies.get(company_id)
        return crew_draft(active_crew(uow, company_id))


TEAM_NAME_MAX = 200


@frozen(kw_only=True)
class SaveTeam:
    """Add a team (``team_id`` None) or change one: its name and its members, crew member
    ids of the company in the order chosen."""

    company_id: str
    name: str
    member_ids: tuple[str, ...]
    team_id: str | None = None
    expected: Team | None = None
    """The stored team the change was made from; when it is no longer stored as it was,
    ``ChangedMeanwhile`` and nothing is saved."""


def save_team(cmd: SaveTeam, *, uow: UnitOfWork, clock: Clock) -> Team:
    """Check the team and store it. Refused (``ValidationFailed`` at ``name`` and
    ``member_ids``) unless the name is given, at most 200 characters and no other team's
    of the company (as ``name_key`` matches names), and the members are at least two
    distinct active crew members of the company. Another company's team id is
    ``NotFoundError``, as one that never existed."""
    at = clock.now()
    name = " ".join(cmd.name.split())
    member_ids = tuple(dict.fromkeys(cmd.member_ids))
    with uow:
        company = uow.companies.get(cmd.company_id)
        current = (
            uow.teams.get_for_update(company.id, cmd.team_id) if cmd.team_id is not None else None
        )
        if cmd.expected is not None and current != cmd.expected:
            raise ChangedMeanwhile("team")
        errors: dict[str, str] = {}
        if not name or len(name) > TEAM_NAME_MAX:
            errors["name"] = f"Required, at most {TEAM_NAME_MAX} characters."
        elif has_hidden_characters(name):
            errors["name"] = NOT_ONE_LINE
        elif any(
            name_key(t.name) == name_key(name) and (current is None or t.id != current.id)
            for t in uow.teams.list(company.id)
        ):
            errors["name"] = "Another team has this name already."
        active = {m.id for m in active_crew(uow, company.id)}
        strangers = [m for m in member_ids if m not in active]
        if strangers:
            errors["member_ids"] = f"Not an active crew member: {', '.join(strangers)}."
        elif len(member_ids) < 2:
            errors["member_ids"] = "Choose at least two crew members: a team works together."
        if errors:
            raise ValidationFailed(errors, "The team has problems; nothing was saved.")
        if current is None:
            team = Team(
                id=new_id("team"),
                company_id=company.id,
                name=name,
                member_ids=member_ids,
                created_at=at,
                updated_at=at,
            )
            uow.teams.add(team)
        else:
            if (current.name, current.member_ids) == (name, member_ids):
                return current
            team = attrs.evolve(current, name=name, member_ids=member_ids, updated_at=at)
            uow.teams.save(team)
        uow.commit()
    return team


def list_teams(company_id: str, *, uow: UnitOfWork) -> list[Team]:
    """The company's teams by name."""
    with uow:
        uow.companies.get(company_id)
        return list(uow.teams.list(company_id))


@frozen(kw_only=True)
class UpdateCompanySettings:
    """Change some of a company's settings; None leaves a setting as it is, an empty
    ``custom_domain`` disconnects the domain, and an empty ``brand_color`` goes back to
    the default colours; an empty ``notify_email`` removes the address."""

    company_id: str
    name: str | None = None
    timezone: str | None = None
    tax_rate_bps: int | None = None
    self_service_cutoff_hours: int | None = None
    min_notice_minutes: int | None = None
    code_prefix: str | None = None
    custom_domain: str | None = None
    brand_color: str | None = None
    notify_email: str | None = None
    reminder_hours: int | None = None
    referral_discount_cents: int | None = None
    dry_run: bool = False
    """Only check: the settings as they would be, nothing stored."""
    expected: Company | None = None
    """The stored company the change was made from (the settings form's); when it is no
    longer stored as it was, ``ChangedMeanwhile`` and nothing is saved."""
    service_host: str | None = None
    """The host the service itself answers on (its base address's): never a company's
    custom domain, or that company's quote pages would answer for the service."""


SERVICE_HOST = "That is this service's own address: connect a domain of the company's own."


def update_company_settings(cmd: UpdateCompanySettings, *, uow: UnitOfWork) -> Company:
    """Check every changed setting (``validate_company``: all problems at once) and store
    them. The timezone and tax rate are the catalog's too, so it changes with them;
    bookings already made keep their own timezone and price."""
    changes = {
        name: getattr(cmd, name)
        for name in (
            "name",
            "timezone",
            "tax_rate_bps",
            "self_service_cutoff_hours",
            "min_notice_minutes",
            "code_prefix",
            "reminder_hours",
            "referral_discount_cents",
        )
        if getattr(cmd, name) is not None
    }
    if cmd.notify_email is not None:
        changes["notify_email"] = cmd.notify_email.strip().lower() or None
    if cmd.name is not None:
        changes["name"] = cmd.name.strip()
    if cmd.custom_domain is not None:
        changes["custom_domain"] = cmd.custom_domain.strip().lower() or None
    if cmd.brand_color is not None:
        changes["brand_color"] = normalize_brand_color(cmd.brand_color)
    with uow:
        company = uow.companies.get_for_update(cmd.company_id)
        if cmd.expected is not None and company != cmd.expected:
            raise ChangedMeanwhile("company's settings")
        changed = validate_company(attrs.evolve(company, **changes))
        # A domain serves one company's pages: another's quote links may not go out under
        # it (as a slug, it is taken by the first to connect it).
        domain = changed.custom_domain
        if domain is not None and cmd.service_host and domain == cmd.service_host.lower():
            raise ValidationFailed({"custom_domain": SERVICE_HOST})
        if (
            domain is not None
            and domain != company.custom_domain
            and any(
                c.custom_domain == domain for c in uow.companies.list_all() if c.id != company.id
            )
        ):
            raise ValidationFailed({"custom_domain": DOMAIN_TAKEN})
        if changed == company or cmd.dry_run:
            return changed
        try:
            uow.companies.save(changed)
        except DomainTaken:  # connected by another company since the check above
            raise ValidationFailed({"custom_domain": DOMAIN_TAKEN}) from None
        catalog = _stored_catalog(uow, company, for_update=True)
        synced = attrs.evolve(catalog, timezone=changed.timezone, tax_rate_bps=changed.tax_rate_bps)
        if synced != catalog:
            uow.catalogs.save(synced)
        uow.commit()
    return changed
