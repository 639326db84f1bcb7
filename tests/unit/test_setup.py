"""Setting a company up (docs/setup.md): the catalog replaced whole or not at all, crew
added and changed by id or name, company settings, and setup documents that read back
exactly what they write."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters import setup_documents as documents
from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.booking_forms import FormDraft
from booking_core.catalog import Catalog, FeeKind
from booking_core.catalog_drafts import CatalogDraft, draft_of
from booking_core.catalog_rules import build_catalog
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.crew_drafts import CrewDraft, CrewMemberDraft, WorkingHoursDraft
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.paging import PageRequest
from booking_core.pricing import SelectedItem, Selection
from booking_core.services import booking_forms, companies, scheduling, setup
from booking_core.services.pricing import price_selection
from booking_core.testing import catalogs
from tests import setup_examples

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday, 07:00 in New York
ZIPS = frozenset({"10001", "10003", "10011", "11201", "11215"})
DRIVE = TableDriveTime(default=15, known=ZIPS)


class Shop:
    """A company made empty, as ``booking company create`` makes it, in memory."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(NOW)
        self.company = companies.create_company(
            companies.CreateCompany(slug="brightside", name="Brightside Cleaning"),
            uow=self.uow(),
            clock=self.clock,
        )

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def catalog(self) -> Catalog:
        with self.uow() as uow:
            return uow.catalogs.get(self.company.id)

    def stored_company(self) -> Company:
        with self.uow() as uow:
            return uow.companies.get(self.company.id)

    def replace(
        self, draft: CatalogDraft, *, dry_run: bool = False, expected: CatalogDraft | None = None
    ) -> Catalog:
        return setup.replace_catalog(
            setup.ReplaceCatalog(
                company_id=self.company.id, catalog=draft, dry_run=dry_run, expected=expected
            ),
            uow=self.uow(),
            clock=self.clock,
        )

    def import_crew(self, *members: CrewMemberDraft, dry_run: bool = False) -> setup.CrewChanges:
        return setup.import_crew(
            setup.ImportCrew(
                company_id=self.company.id, crew=CrewDraft(members=members), dry_run=dry_run
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
        )

    def roster(self) -> CrewDraft:
        return setup.export_crew(self.company.id, uow=self.uow())

    def book(self, frequency: str = "one_time", **changes: object) -> None:
        values: dict[str, object] = {
            "company_id": self.company.id,
            "service_id": "svc_standard",
            "frequency_slug": frequency,
            "start": datetime(2026, 11, 24, 15, tzinfo=UTC),  # Tuesday 10:00 in New York
            "customer": scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
            "address": Address("1 Main St", "New York", "NY", "10003"),
            "extras": (SelectedItem("ext_oven"),),
        }
        values.update(changes)
        scheduling.create_booking(
            scheduling.CreateBooking(**values),  # type: ignore[arg-type]
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PhonenumbersNormalizer(),
        )


def example_catalog() -> CatalogDraft:
    return documents.read_catalog(setup_examples.document("catalog.yaml"), "yaml")


def example_crew() -> CrewDraft:
    return documents.read_crew(setup_examples.document("crew.yaml"), "yaml")


def problems(call: object, *args: object, **kwargs: object) -> dict[str, str]:
    """The field problems ``call`` is refused with, by camelCase path."""
    with pytest.raises(ValidationFailed) as refused:
        call(*args, **kwargs)  # type: ignore[operator]
    return documents.field_errors(refused.value)


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def stocked(shop: Shop) -> Shop:
    """The shop with the docs/setup.md example catalog and crew imported."""
    shop.replace(example_catalog())
    shop.import_crew(*example_crew().members)
    return shop


# --- The docs/setup.md example ------------------------------------------------------------


def test_example_catalog_of_the_docs_exports_back_to_the_very_same_text(shop):
    shop.replace(example_catalog())

    exported = documents.write(setup.export_catalog(shop.company.id, uow=shop.uow()), "yaml")

    assert exported == setup_examples.document("catalog.yaml").split("\n", 1)[1]


def test_example_prices_to_the_cent_what_the_docs_state(stocked):
    body = setup_examples.quote_request()
    selection = Selection(
        service_id=body["serviceId"],
        frequency_slug=body["frequencySlug"],
        parameters=tuple(SelectedItem(p["id"], p.get("quantity", 1)) for p in body["parameters"]),
        extras=tuple(SelectedItem(e["id"], e.get("quantity", 1)) for e in body["extras"]),
    )

    plan = price_selection(stocked.company.id, selection, uow=stocked.uow(), clock=stocked.clock)

    assert plan.later_visits is not None
    assert (plan.first_visit.total_cents, plan.later_visits.total_cents) == (
        setup_examples.stated_totals()
    )


def test_an_empty_company_is_bookable_once_catalog_and_crew_are_imported(stocked):
    stocked.book()

    with stocked.uow() as uow:
        page = uow.bookings.list(stocked.company.id, PageRequest())
    assert [b.service_id for b in page.items] == ["svc_standard"]
    assert page.items[0].price.total_cents == 18_900  # (12000 + 2500 + 3000) + 8 % tax


# --- Catalogs -------------------------------------------------------------------------------


def test_the_catalog_tax_rate_becomes_the_company_tax_rate(shop):
    shop.replace(attrs.evolve(example_catalog(), tax_rate_bps=725))

    assert shop.catalog().tax_rate_bps == 725
    assert shop.stored_company().tax_rate_bps == 725
    assert shop.catalog().timezone == shop.company.timezone


def test_an_edit_made_from_a_catalog_changed_since_is_refused_and_nothing_is_written(stocked):
    """Two people edit the catalog from the same page: the second save would overwrite
    the first one's change unseen, so it is refused (``CatalogChanged``) instead."""
    base = setup.export_catalog(stocked.company.id, uow=stocked.uow())
    first = attrs.evolve(base, tax_rate_bps=500)
    second = attrs.evolve(base, fees=())
    stocked.replace(first, expected=base)
    with pytest.raises(setup.CatalogChanged) as refused:
        stocked.replace(second, expected=base)
    assert "changed by someone else" in refused.value.message
    assert setup.export_catalog(stocked.company.id, uow=stocked.uow()) == first
    # Made from what is stored now, it is saved; an import (no expected draft) always is.
    stocked.replace(attrs.evolve(first, fees=()), expected=first)
    assert stocked.catalog().fees == ()
    stocked.replace(base)
    assert setup.export_catalog(stocked.company.id, uow=stocked.uow()) == base


def test_an_edit_made_from_a_crew_member_team_settings_or_key_changed_since_is_refused(stocked):
    """Each use case an edit form calls takes the record the form was made from
    (``expected``) and compares it with the stored one in its own unit of work: saved in
    between by someone else, it is refused (``ChangedMeanwhile``) and nothing is written."""
    cid = stocked.company.id
    with stocked.uow() as uow:
        member = scheduling.active_crew(uow, cid)[0]
    stocked.import_crew(rosa(id=member.id, name=member.name, home_zip="10011"))
    with pytest.raises(setup.ChangedMeanwhile, match="crew member was changed by someone"):
        setup.import_crew(
            setup.ImportCrew(
                company_id=cid,
                crew=CrewDraft(members=(rosa(id=member.id, name="Someone Else"),)),
                expected=(member,),
            ),
            uow=stocked.uow(),
            clock=stocked.clock,
            drive=DRIVE,
        )
    with stocked.uow() as uow:
        held = uow.crew.get(cid, member.id)
    assert (held.name, held.home_zip) == (member.name, "10011")
    done = setup.import_crew(
        setup.ImportCrew(
            company_id=cid, crew=CrewDraft(members=(rosa(id=member.id),)), expected=(held,)
        ),
        uow=stocked.uow(),
        clock=stocked.clock,
        drive=DRIVE,
    )
    assert [m.name for m in done.updated] == ["Rosa Diaz"]

    company = stocked.stored_company()
    setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=cid, self_service_cutoff_hours=72),
        uow=stocked.uow(),
    )
    with pytest.raises(setup.ChangedMeanwhile):
        setup.update_company_settings(
            setup.UpdateCompanySettings(
                company_id=cid, self_service_cutoff_hours=48, name="Renamed", expected=company
            ),
            uow=stocked.uow(),
        )
    assert (stocked.stored_company().self_service_cutoff_hours, stocked.stored_company().name) == (
        72,
        company.name,
    )

    issued = companies.create_key(
        companies.CreateKey(company_id=cid, name="zapier"), uow=stocked.uow(), clock=stocked.clock
    )
    companies.edit_key(cid, issued.key.id, rate_limit=200, uow=stocked.uow(), clock=stocked.clock)
    with pytest.raises(setup.ChangedMeanwhile):
        companies.edit_key(
            cid,
            issued.key.id,
            rate_limit=300,
            expected=issued.key,
            uow=stocked.uow(),
            clock=stocked.clock,
        )
    with stocked.uow() as uow:
        assert uow.api_keys.get(cid, issued.key.id).rate_limit_per_minute == 200

    with stocked.uow() as uow:
        two = tuple(m.id for m in scheduling.active_crew(uow, cid))[:2]
    team = setup.save_team(
        setup.SaveTeam(company_id=cid, name="Alpha", member_ids=two),
        uow=stocked.uow(),
        clock=stocked.clock,
    )
    renamed = setup.save_team(
        setup.SaveTeam(company_id=cid, name="Beta", member_ids=two, team_id=team.id, expected=team),
        uow=stocked.uow(),
        clock=stocked.clock,
    )
    with pytest.raises(setup.ChangedMeanwhile):
        setup.save_team(
            setup.SaveTeam(
                company_id=cid, name="Gamma", member_ids=two, team_id=team.id, expected=team
            ),
            uow=stocked.uow(),
            clock=stocked.clock,
        )
    assert [t.name for t in setup.list_teams(cid, uow=stocked.uow())] == [renamed.name]


def test_every_problem_is_named_at_its_path_and_nothing_is_written(shop):
    shop.replace(example_catalog())
    before = shop.catalog()
    draft = example_catalog()
    service = draft.industries[0].services[0]
    broken = attrs.evolve(
        draft,
        tax_rate_bps=10_001,
        industries=(
            attrs.evolve(
                draft.industries[0],
                services=(
                    attrs.evolve(
                        service,
                        extras=(
                            attrs.evolve(service.extras[0], price_cents=-1),
                            attrs.evolve(service.extras[1], frequency_slugs=("monthly",)),
                            *service.extras[2:],
                        ),
                    ),
                ),
            ),
        ),
        coupons=(attrs.evolve(draft.coupons[0], percent_bps=None),),
    )

    found = problems(shop.replace, broken)

    assert found == {
        "taxRateBps": "A whole number from 0 to 10000.",
        "industries.0.services.0.extras.0.priceCents": "A whole number from 0 to 100000000.",
        "industries.0.services.0.extras.1.frequencySlugs.0": "No frequency 'monthly' in this "
        "catalog.",
        "coupons.0.percentBps": "Give exactly one of a percentage in basis points and a fixed "
        "amount in cents.",
    }
    assert shop.catalog() == before


def test_ids_must_be_unique_where_they_are_looked_up(shop):
    draft = example_catalog()
    industry = draft.industries[0]
    service = industry.services[0]
    twice = attrs.evolve(
        draft,
        industries=(attrs.evolve(industry, services=(service, attrs.evolve(service, name="B"))),),
        frequencies=(*draft.frequencies, draft.frequencies[1]),
        coupons=(*draft.coupons, attrs.evolve(draft.coupons[0], id="cpn_2", code="welcome10")),
    )

    found = problems(shop.replace, twice)

    assert found == {
        "industries.0.services.1.id": "Another service has this id.",
        "frequencies.2.slug": "Another frequency has this slug.",
        "frequencies.2.name": FREQUENCY_TWICE,
        "coupons.1.code": "Another coupon has this code (codes match whatever their case).",
    }


FREQUENCY_TWICE = "Another frequency has this name: customers could not tell them apart."


def test_names_customers_choose_by_are_unique_in_any_case_and_spacing(shop):
    """Two parameters or extras of one service, or two frequencies, named alike (``Bedrooms``
    and ``bedrooms``) are refused: the booking page would show both. Another service may
    use the name."""
    draft = example_catalog()
    industry = draft.industries[0]
    service = industry.services[0]
    parameter, extra = service.parameters[0], service.extras[0]
    twice = attrs.evolve(
        service,
        parameters=(
            *service.parameters,
            attrs.evolve(parameter, id="par_again", name=f" {parameter.name.lower()}  "),
        ),
        extras=(*service.extras, attrs.evolve(extra, id="ext_again", name=extra.name.upper())),
    )
    other = attrs.evolve(service, id="svc_other", name="Other")
    frequency = attrs.evolve(draft.frequencies[1], slug="again")
    found = problems(
        shop.replace,
        attrs.evolve(
            draft,
            industries=(attrs.evolve(industry, services=(twice, other)),),
            frequencies=(*draft.frequencies, frequency),
        ),
    )

    n, m, f = len(service.parameters), len(service.extras), len(draft.frequencies)
    assert found == {
        f"industries.0.services.0.parameters.{n}.name": (
            "Another parameter of this service has this name: customers could not tell them apart."
        ),
        f"industries.0.services.0.extras.{m}.name": (
            "Another extra of this service has this name: customers could not tell them apart."
        ),
        f"frequencies.{f}.name": FREQUENCY_TWICE,
    }


def test_one_extra_id_may_serve_two_services_as_the_demo_catalog_does():
    catalog = demo_catalog()
    again = build_catalog(
        draft_of(catalog), company_id=catalog.company_id, timezone=catalog.timezone
    )

    assert again == catalog


@pytest.mark.parametrize(
    ("change", "path", "text"),
    [
        ({"kind": FeeKind.ZIP}, "fees.0.zips", "A zip fee needs zips."),
        ({"zips": ("10003",)}, "fees.0.zips", "Only zip fees have zips."),
        ({"weekdays": (6, 8)}, "fees.0.weekdays.1", "A whole number from 1 to 7."),
        ({"weekdays": (6, 6)}, "fees.0.weekdays.1", "Listed twice."),
        ({"amount_cents": 100}, "fees.0.amountCents", "Give exactly one of a fixed amount in "
         "cents and a percentage in basis points."),
        ({"kind": FeeKind.SERVICE, "weekdays": (), "service_ids": ("svc_gone",)},
         "fees.0.serviceIds.0", "No service 'svc_gone' in this catalog."),
    ],
)  # fmt: skip
def test_a_fee_applies_by_the_fields_of_its_own_kind_only(shop, change, path, text):
    draft = example_catalog()
    fee = attrs.evolve(draft.fees[0], **change)

    assert problems(shop.replace, attrs.evolve(draft, fees=(fee,)))[path] == text


def test_a_service_no_job_of_which_lasts_a_minute_is_refused(shop):
    draft = example_catalog()
    service = attrs.evolve(draft.industries[0].services[0], base_duration_minutes=0)
    service = attrs.evolve(
        service, parameters=(attrs.evolve(service.parameters[0], min_quantity=0),)
    )
    industry = attrs.evolve(draft.industries[0], services=(service,))

    found = problems(shop.replace, attrs.evolve(draft, industries=(industry,)))

    assert list(found) == ["industries.0.services.0.baseDurationMinutes"]


def test_a_dry_run_checks_but_writes_nothing(shop):
    checked = shop.replace(example_catalog(), dry_run=True)

    assert [s.id for s in checked.services()] == ["svc_standard"]
    assert list(shop.catalog().services()) == []


def test_a_booked_service_cannot_be_removed_but_can_be_made_inactive(stocked):
    stocked.book()
    draft = example_catalog()
    industry = draft.industries[0]

    found = problems(
        stocked.replace, attrs.evolve(draft, industries=(attrs.evolve(industry, services=()),))
    )

    assert found == {
        "industries": "Still used by open bookings, so it cannot be removed: service "
        "'svc_standard' (1 booked). Keep it; a service can be made inactive to take no new "
        "bookings."
    }
    inactive = attrs.evolve(industry.services[0], active=False)
    stocked.replace(attrs.evolve(draft, industries=(attrs.evolve(industry, services=(inactive,)),)))
    assert not stocked.catalog().services_by_id["svc_standard"].active


def without_extra(draft: CatalogDraft, extra_id: str) -> CatalogDraft:
    """``draft`` with its first service's extra ``extra_id`` left out."""
    industry = draft.industries[0]
    service = industry.services[0]
    kept = attrs.evolve(service, extras=tuple(e for e in service.extras if e.id != extra_id))
    return attrs.evolve(draft, industries=(attrs.evolve(industry, services=(kept,)),))


def test_a_booked_extra_cannot_be_removed_and_is_not_told_to_be_made_inactive(stocked):
    """An extra has no inactive state: the refusal says to keep it until its bookings
    are done, not to make it inactive as a service could be."""
    stocked.book("weekly", extras=(SelectedItem("ext_oven", 1),))
    found = problems(stocked.replace, without_extra(example_catalog(), "ext_oven"))
    assert "extra 'ext_oven' of 'svc_standard'" in found["industries"]
    assert found["industries"].endswith("Keep it until those bookings are done or cancelled.")
    assert "made inactive" not in found["industries"]


def test_a_service_the_crew_or_a_form_names_cannot_be_removed(stocked):
    # A crew member excludes a second service and a booking form books it: leaving it
    # out would leave both naming nothing (and neither would import back its export).
    draft = example_catalog()
    industry = draft.industries[0]
    deep = attrs.evolve(industry.services[0], id="svc_deep", name="Deep clean")
    two = attrs.evolve(
        draft, industries=(attrs.evolve(industry, services=(*industry.services, deep)),)
    )
    stocked.replace(two)
    (first, *others) = example_crew().members
    stocked.import_crew(attrs.evolve(first, excluded_service_ids=("svc_deep",)), *others)
    booking_forms.create_form(
        stocked.company.id,
        FormDraft(name="Deep cleans", service_ids=("svc_deep",)),
        uow=stocked.uow(),
        clock=stocked.clock,
    )

    found = problems(stocked.replace, draft)

    assert list(found) == ["industries"]
    assert f"'svc_deep' (excluded by crew member {first.name})" in found["industries"]
    assert "(booking form 'Deep cleans')" in found["industries"]
    assert [s.id for s in stocked.catalog().services()] == ["svc_standard", "svc_deep"]
    # Made inactive instead, it may stay named.
    inactive = attrs.evolve(deep, active=False)
    stocked.replace(
        attrs.evolve(
            draft, industries=(attrs.evolve(industry, services=(*industry.services, inactive)),)
        )
    )


def test_an_extra_a_form_offers_cannot_be_removed_and_is_not_told_to_be_made_inactive(
    stocked,
):
    booking_forms.create_form(
        stocked.company.id,
        FormDraft(name="Ovens", service_ids=("svc_standard",), extra_ids=("ext_oven",)),
        uow=stocked.uow(),
        clock=stocked.clock,
    )
    found = problems(stocked.replace, without_extra(example_catalog(), "ext_oven"))
    assert found["industries"].endswith(
        "No extra 'ext_oven' on the form's services (booking form 'Ovens'). Change those first."
    )


def test_what_a_plan_is_extended_from_cannot_be_removed_while_it_runs(stocked):
    stocked.book("weekly", coupon_code="welcome10")
    draft = example_catalog()
    service = draft.industries[0].services[0]
    bare = attrs.evolve(
        draft,
        frequencies=draft.frequencies[:1],
        industries=(
            attrs.evolve(
                draft.industries[0],
                services=(attrs.evolve(service, extras=service.extras[1:2]),),
            ),
        ),
        coupons=(),
    )

    found = problems(stocked.replace, bare)

    assert set(found) == {"frequencies", "industries", "coupons"}
    assert "frequency 'weekly'" in found["frequencies"]
    assert "extra 'ext_oven' of 'svc_standard'" in found["industries"]
    assert "coupon 'welcome10'" in found["coupons"]
    assert "made inactive" in found["coupons"]


def test_what_a_plan_is_extended_from_cannot_be_narrowed_past_it_while_it_runs(stocked):
    """A weekly plan of 4 bedrooms with the oven: the bedrooms may not stop at 3, nor the
    oven be offered for one-time jobs only (its next visits could not be priced); a
    range that still takes them may change."""
    stocked.book("weekly", parameters=(SelectedItem("par_bedrooms", 4),))
    draft = example_catalog()
    industry = draft.industries[0]
    service = industry.services[0]

    def with_service(**changes: object) -> CatalogDraft:
        changed = attrs.evolve(service, **changes)
        return attrs.evolve(draft, industries=(attrs.evolve(industry, services=(changed,)),))

    fewer_rooms = (attrs.evolve(service.parameters[0], max_quantity=3),)
    oven_once = (
        attrs.evolve(service.extras[0], frequency_slugs=("one_time",)),
        *service.extras[1:],
    )
    found = problems(stocked.replace, with_service(parameters=fewer_rooms, extras=oven_once))

    assert list(found) == ["industries"]
    assert "parameter 'par_bedrooms' of 'svc_standard' at 4 (8 booked)" in found["industries"]
    assert "extra 'ext_oven' of 'svc_standard' at 1 on 'weekly' (8 booked)" in found["industries"]
    assert stocked.catalog().services_by_id["svc_standard"].parameters[0].max_quantity == 6
    wider = (attrs.evolve(service.parameters[0], max_quantity=4),)
    stocked.replace(with_service(parameters=wider))
    assert stocked.catalog().services_by_id["svc_standard"].parameters[0].max_quantity == 4


def test_a_one_time_job_keeps_its_price_when_its_extras_go(stocked):
    stocked.book()
    draft = example_catalog()
    service = draft.industries[0].services[0]
    fewer = attrs.evolve(
        draft,
        industries=(
            attrs.evolve(draft.industries[0], services=(attrs.evolve(service, extras=()),)),
        ),
    )

    stocked.replace(fewer)

    assert stocked.catalog().services_by_id["svc_standard"].extras == ()


def test_an_unknown_company_is_not_found(shop):
    with pytest.raises(NotFoundError):
        setup.replace_catalog(
            setup.ReplaceCatalog(company_id="cmp_nope", catalog=CatalogDraft()),
            uow=shop.uow(),
            clock=shop.clock,
        )


# --- Crew -----------------------------------------------------------------------------------


def rosa(**changes: object) -> CrewMemberDraft:
    values: dict[str, object] = {
        "name": "Rosa Diaz",
        "home_zip": "10003",
        "service_areas": ("10003", "10011"),
        "working_hours": (WorkingHoursDraft(weekday=1, start=time(8), end=time(17)),),
    }
    values.update(changes)
    return CrewMemberDraft(**values)  # type: ignore[arg-type]


def test_crew_is_added_then_matched_by_name_then_changed_by_id(stocked):
    first = stocked.import_crew(rosa(name="Ana Kim"))
    assert [m.name for m in first.added] == ["Ana Kim"]

    again = stocked.import_crew(rosa(name="  ana   KIM "))
    assert again.added == ()
    assert [m.id for m in again.updated] == [first.added[0].id]

    same = stocked.import_crew(rosa(name="  ana   KIM "))
    assert [m.id for m in same.unchanged] == [first.added[0].id]

    renamed = stocked.import_crew(rosa(id=first.added[0].id, name="Ana Kim-Lee", active=False))
    assert [m.name for m in renamed.updated] == ["Ana Kim-Lee"]
    assert "Ana Kim-Lee" not in [m.name for m in stocked.roster().members]


def test_exported_crew_imports_back_without_a_change(stocked):
    exported = stocked.roster()

    again = stocked.import_crew(*exported.members)

    assert (again.added, again.updated) == ((), ())
    assert [m.id for m in again.unchanged] == [m.id for m in exported.members]
    assert sorted(m.name for m in exported.members) == ["Rosa Diaz", "Sam Lee"]


def test_members_added_together_export_in_the_document_s_order(shop):
    names = ["Zoe Park", "Amy Chen", "Moe Diaz", "Bea Ruiz", "Kit Wu"]

    shop.import_crew(*(rosa(name=name) for name in names))

    assert [m.name for m in shop.roster().members] == names  # oldest first, ties none


def test_every_crew_problem_is_named_and_no_member_is_written(stocked):
    before = stocked.roster()

    found = problems(
        stocked.import_crew,
        rosa(name="New Person"),
        rosa(id="crew_not_ours"),
        rosa(
            name="Bo",
            home_zip="99999",
            service_areas=("10003", "1000", "10003"),
            excluded_service_ids=("svc_gone",),
            working_hours=(
                WorkingHoursDraft(weekday=1, start=time(8), end=time(12)),
                WorkingHoursDraft(weekday=1, start=time(11), end=time(15)),
                WorkingHoursDraft(weekday=8, start=time(9), end=time(8)),
            ),
        ),
    )

    assert found == {
        "members.1.id": "No crew member of this company has this id; leave it out to add one.",
        "members.2.homeZip": "Unknown US zip code '99999'.",
        "members.2.serviceAreas.1": "\u20181000\u2019 is not a 5-digit US zip code.",
        "members.2.serviceAreas.2": "Listed twice.",
        "members.2.excludedServiceIds.0": "No service 'svc_gone' in the catalog.",
        "members.2.workingHours.1": "Overlaps another stretch of that day.",
        "members.2.workingHours.2.weekday": "A whole number from 1 to 7.",
        "members.2.workingHours.2.end": "After start.",
    }
    assert stocked.roster() == before


def test_two_active_members_of_one_name_must_be_told_apart_by_id(stocked):
    stocked.import_crew(rosa(name="Twin"))
    twin = stocked.import_crew(rosa(id=None, name="Twin B")).added[0]
    stocked.import_crew(rosa(id=twin.id, name="Twin"))

    found = problems(stocked.import_crew, rosa(name="Twin"))

    assert found == {
        "members.0.name": "2 active crew members have this name: give the one meant by id."
    }


def test_one_member_named_twice_in_a_document_is_refused(stocked):
    found = problems(stocked.import_crew, rosa(name="Max"), rosa(name="MAX"))

    assert found == {"members.1.name": "The same crew member as members.0."}


def test_a_crew_dry_run_writes_nothing(stocked):
    checked = stocked.import_crew(rosa(name="Dry Run"), dry_run=True)

    assert [m.name for m in checked.added] == ["Dry Run"]
    assert "Dry Run" not in [m.name for m in stocked.roster().members]


# --- Company settings -----------------------------------------------------------------------


def test_settings_change_one_by_one_and_the_timezone_moves_the_catalog_too(stocked):
    changed = setup.update_company_settings(
        setup.UpdateCompanySettings(
            company_id=stocked.company.id,
            timezone="America/Chicago",
            self_service_cutoff_hours=48,
            code_prefix="BC",
            custom_domain="Book.Brightside.example",
        ),
        uow=stocked.uow(),
    )

    assert stocked.stored_company() == changed
    assert (changed.timezone, changed.self_service_cutoff_hours, changed.code_prefix) == (
        "America/Chicago",
        48,
        "BC",
    )
    assert changed.custom_domain == "book.brightside.example"
    assert changed.min_notice_minutes == stocked.company.min_notice_minutes
    assert stocked.catalog().timezone == "America/Chicago"


def test_every_bad_setting_is_named_and_none_is_stored(stocked):
    before = stocked.stored_company()

    found = problems(
        setup.update_company_settings,
        setup.UpdateCompanySettings(
            company_id=stocked.company.id,
            timezone="Mars/Olympus",
            min_notice_minutes=-1,
            code_prefix="b",
            name=" ",
        ),
        uow=stocked.uow(),
    )

    assert set(found) == {"timezone", "minNoticeMinutes", "codePrefix", "name"}
    assert stocked.stored_company() == before


def test_an_empty_custom_domain_disconnects_it(stocked):
    setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=stocked.company.id, custom_domain="b.example.com"),
        uow=stocked.uow(),
    )
    cleared = setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=stocked.company.id, custom_domain=""),
        uow=stocked.uow(),
    )

    assert cleared.custom_domain is None


def test_a_domain_another_company_connected_is_refused(stocked):
    """A domain serves one company's quote pages: a second company may not connect it
    (any spelling of it), and keeps its own; the first may save its settings again."""
    other = companies.create_company(
        companies.CreateCompany(slug="handy", name="Handy Helpers"),
        uow=stocked.uow(),
        clock=stocked.clock,
    )
    setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=stocked.company.id, custom_domain="book.b.example"),
        uow=stocked.uow(),
    )
    with pytest.raises(ValidationFailed) as refused:
        setup.update_company_settings(
            setup.UpdateCompanySettings(company_id=other.id, custom_domain=" Book.B.example "),
            uow=stocked.uow(),
        )
    assert refused.value.field_errors == {
        "custom_domain": "Another company has connected this domain."
    }
    with stocked.uow() as uow:
        assert uow.companies.get(other.id).custom_domain is None
    again = setup.update_company_settings(
        setup.UpdateCompanySettings(
            company_id=stocked.company.id, custom_domain="book.b.example", name="Brightside"
        ),
        uow=stocked.uow(),
    )
    assert (again.custom_domain, again.name) == ("book.b.example", "Brightside")


# --- Documents ------------------------------------------------------------------------------


def _workable(catalog: Catalog) -> Catalog:
    """``catalog`` with what the setup rules refuse and the strategy may draw mended: a
    service lasting no time, fees with nothing to apply by."""
    services = tuple(
        attrs.evolve(s, base_duration_minutes=max(s.base_duration_minutes, 1))
        for s in catalog.services()
    )
    fees = tuple(
        attrs.evolve(f, weekdays=f.weekdays or frozenset({6}))
        if f.kind is FeeKind.DATE and not f.dates
        else attrs.evolve(f, zips=f.zips or frozenset({"10001"}))
        if f.kind is FeeKind.ZIP
        else attrs.evolve(f, service_ids=f.service_ids or frozenset({services[0].id}))
        if f.kind is FeeKind.SERVICE
        else f
        for f in catalog.fees
    )
    industry = attrs.evolve(catalog.industries[0], services=services)
    return attrs.evolve(catalog, industries=(industry,), fees=fees)


@given(catalogs().map(_workable), st.sampled_from(documents.FORMATS))
def test_a_catalog_reads_back_from_its_document_and_the_document_from_it(catalog, fmt):
    text = documents.write(draft_of(catalog), fmt)

    draft = documents.read_catalog(text, fmt)

    assert build_catalog(draft, company_id=catalog.company_id, timezone=catalog.timezone) == (
        catalog
    )
    assert documents.write(draft, fmt) == text


@pytest.mark.parametrize("fmt", documents.FORMATS)
def test_the_demo_catalog_reads_back_from_its_document(fmt):
    catalog = demo_catalog()
    text = documents.write(draft_of(catalog), fmt)

    draft = documents.read_catalog(text, fmt)

    assert build_catalog(draft, company_id=catalog.company_id, timezone=catalog.timezone) == (
        catalog
    )


@pytest.mark.parametrize(
    ("text", "fmt", "path", "problem"),
    [
        ('{"taxRateBps": 5, "timezone": "UTC"}', "json", "timezone", "Unknown field."),
        ('{"taxRateBps": "5"}', "json", "taxRateBps", "Expected a whole number."),
        ('{"taxRateBps": 5.5}', "json", "taxRateBps", "Expected a whole number."),
        ('{"taxRateBps": 5, "taxRateBps": 6}', "json", "document",
         "Not valid JSON: the key 'taxRateBps' is given twice in one object."),
        ('{"taxRateBps": NaN}', "json", "document",
         "Not valid JSON: NaN is not a number JSON allows."),
        ('{"taxRateBps": 5', "json", "document",
         "Not valid JSON at line 1, column 17: Expecting ',' delimiter."),
        ("[]", "json", "document", "Expected an object (field names and their values)."),
        ("taxRateBps: 5\ntaxRateBps: 6\n", "yaml", "document",
         "Not valid YAML at line 2, column 1: the key 'taxRateBps' is given twice."),
        ("a: &x 1\ntaxRateBps: *x\n", "yaml", "document",
         "Not valid YAML at line 2, column 13: aliases (*name) are not allowed."),
        ("taxRateBps: yes\n", "yaml", "taxRateBps", "Expected a whole number."),
        # Past 4,300 digits int() refused to read them: "failed: ValueError: Exceeds ...".
        ('{"taxRateBps": ' + "1" * 5000 + "}", "json", "taxRateBps", "Outside the 64-bit range."),
        ("taxRateBps: -" + "1" * 5000 + "\n", "yaml", "taxRateBps", "Outside the 64-bit range."),
        ("taxRateBps: !!int zz\n", "yaml", "document",
         "Not valid YAML at line 1, column 13: 'zz' is not a whole number."),
        ("fees:\n- {id: f, name: F, kind: zip, amountCents: 1, zips: [10003]}\n", "yaml",
         "fees.0.zips.0", "Expected text: put it in quotes, e.g. '10003'."),
        ("fees:\n- {id: f, name: F, kind: date, amountCents: 1, dates: [2026-02-30]}\n", "yaml",
         "fees.0.dates.0", "Must be a date such as 2026-05-01."),
        ("coupons:\n- {id: c, code: X, amountCents: 1, validFrom: '2026-01-01T00:00:00'}\n",
         "yaml", "coupons.0.validFrom", "Must be an ISO 8601 time with a UTC offset, e.g. "
         "2026-05-01T09:00:00-04:00."),
        ("fees:\n- {id: f, name: F, kind: weekly, amountCents: 1}\n", "yaml", "fees.0.kind",
         "One of date, zip, service, manual."),
        ("industries:\n- id: i\n  name: I\n  services:\n  - {id: s, basePriceCents: 1,"
         " baseDurationMinutes: 6}\n", "yaml", "industries.0.services.0.name", "Required."),
    ],
)  # fmt: skip
def test_a_catalog_document_is_read_strictly(text, fmt, path, problem):
    assert problems(documents.read_catalog, text, fmt) == {path: problem}


@pytest.mark.parametrize(
    ("hours", "problem"),
    [
        ("{weekday: 1, start: '8:00', end: '17:00'}", "A wall-clock time such as 08:00 or 17:30."),
        ("{weekday: 1, start: '24:00', end: '17:00'}", "A wall-clock time such as 08:00 or 17:30."),
        ("{weekday: 1, start: 480, end: '17:00'}", "Expected a string."),
    ],
)
def test_working_hours_are_wall_clock_times(hours, problem):
    text = f"members:\n- {{name: A, homeZip: '10003', workingHours: [{hours}]}}\n"

    assert problems(documents.read_crew, text, "yaml") == {
        "members.0.workingHours.0.start": problem
    }


def test_yaml_reads_zero_led_zips_clock_times_and_dates_as_text():
    text = (
        "members:\n- name: no\n  homeZip: 02554\n  workingHours: [{weekday: 1, start: 08:00,"
        " end: 17:30}]\n  timeOff: [{start: '2026-12-24T00:00:00-05:00', end:"
        " '2026-12-27T00:00:00-05:00'}]\n"
    )

    member = documents.read_crew(text, "yaml").members[0]

    assert (member.name, member.home_zip) == ("no", "02554")
    assert member.working_hours[0].end == time(17, 30)
    assert member.time_off[0].end - member.time_off[0].start == timedelta(days=3)


def test_the_format_follows_the_file_name_else_the_first_character():
    assert documents.format_of("c.JSON") == "json"
    assert documents.format_of("c.yml", "{}") == "yaml"
    assert documents.format_of("-", '  {"a": 1}') == "json"
    assert documents.format_of(None, "a: 1") == "yaml"


def test_making_a_member_inactive_says_how_many_scheduled_jobs_they_still_hold(stocked):
    """The jobs stay theirs (an inactive member opens no crew portal): the import says so,
    for the office to give them to someone else."""
    stocked.book()  # a job of the roster's member, ahead of the clock
    with stocked.uow() as uow:
        (job,) = uow.bookings.list(stocked.company.id, PageRequest(limit=10)).items
    (held_by,) = job.crew_ids
    member = next(m for m in stocked.roster().members if m.id == held_by)

    checked = stocked.import_crew(attrs.evolve(member, active=False), dry_run=True)
    assert [(m.id, count) for m, count in checked.still_booked] == [(held_by, 1)]
    done = stocked.import_crew(attrs.evolve(member, active=False))
    assert [(m.name, count) for m, count in done.still_booked] == [(member.name, 1)]
    # Saved inactive again, or active: nothing more to say.
    assert stocked.import_crew(attrs.evolve(member, active=False)).still_booked == ()
    assert stocked.import_crew(attrs.evolve(member, active=True)).still_booked == ()


def test_the_services_own_host_is_no_companys_custom_domain(shop: Shop):
    """A company that connected the service's own host would answer its quote pages for
    the service (found by an outside security check); any other domain is taken."""

    def connect(domain: str) -> Company:
        return setup.update_company_settings(
            setup.UpdateCompanySettings(
                company_id=shop.company.id, custom_domain=domain, service_host="Book.Example.COM"
            ),
            uow=shop.uow(),
        )

    with pytest.raises(ValidationFailed) as refused:
        connect("book.example.com")
    assert refused.value.field_errors == {"custom_domain": setup.SERVICE_HOST}
    assert connect("quotes.acme.example").custom_domain == "quotes.acme.example"
