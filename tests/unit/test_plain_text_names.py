"""A name shown back as one line (an API key's, a catalog item's, a crew member's, a
team's, a booking form's and its questions', a quote line's) may
not hold line breaks or invisible characters that reverse or hide text: one rule,
``booking_core.plain_text``."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from booking_core import auth, quotes
from booking_core.booking_forms import BookingForm, Question, form_errors
from booking_core.catalog_drafts import draft_of
from booking_core.catalog_rules import catalog_problems
from booking_core.clock import FixedClock
from booking_core.crew_drafts import CrewDraft, CrewMemberDraft, merge_crew
from booking_core.demo import demo_catalog
from booking_core.errors import ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE
from booking_core.quotes import ManualLine
from booking_core.services import companies, setup
from tests import factories

AT = datetime(2026, 11, 24, 12, tzinfo=UTC)
HIDING = ["Sam\u202eeeL", "Sam\u200bLee", "Sam\nLee", "Sam\tLee", "Sam\u2028Lee"]


@pytest.mark.parametrize("name", HIDING)
def test_a_crew_members_name_is_one_line_of_plain_text(name: str) -> None:
    catalog = demo_catalog()
    draft = CrewDraft(members=(CrewMemberDraft(name=name, home_zip="10001"),))
    with pytest.raises(ValidationFailed) as refused:
        merge_crew(
            draft,
            company_id=catalog.company_id,
            catalog=catalog,
            stored={},
            roster=(),
            at=AT,
            mint_id=lambda: "crew_new",
        )
    assert refused.value.field_errors == {"members.0.name": NOT_ONE_LINE}


@pytest.mark.parametrize("name", HIDING)
def test_a_catalog_items_name_and_an_api_keys_name_follow_the_same_rule(name: str) -> None:
    draft = draft_of(demo_catalog())
    industry = draft.industries[0]
    service = attrs.evolve(industry.services[0], name=name)
    renamed = attrs.evolve(
        draft,
        industries=(
            attrs.evolve(industry, services=(service, *industry.services[1:])),
            *draft.industries[1:],
        ),
    )
    problems = catalog_problems(renamed)
    assert problems == {"industries.0.services.0.name": NOT_ONE_LINE}
    assert auth.validate_key_settings(name, {"catalog:read"}, 120) == {"name": NOT_ONE_LINE}
    assert catalog_problems(draft) == {}  # the demo's own names are fine


@pytest.mark.parametrize("name", HIDING)
def test_a_booking_forms_name_and_labels_and_a_quotes_lines_follow_it_too(name: str) -> None:
    catalog = demo_catalog()
    form = BookingForm(
        id="bf_1",
        company_id=catalog.company_id,
        name=name,
        service_ids=("svc_standard_clean",),
        questions=(Question(id="gate", label=name),),
        created_at=AT,
        updated_at=AT,
    )
    assert form_errors(form, catalog) == {"name": NOT_ONE_LINE, "questions.0.label": NOT_ONE_LINE}
    with pytest.raises(ValidationFailed) as refused:
        quotes.create_quote(
            company_id=catalog.company_id,
            at=AT,
            customer_id="cus_1",
            manual_lines=(ManualLine(name, 10_000),),
        )
    assert refused.value.field_errors == {"manual_lines.0.description": NOT_ONE_LINE}


@pytest.mark.parametrize("name", ["Team\u202eX", "Team\u200bX"])
def test_a_teams_name_follows_it_too(name: str) -> None:
    store = MemoryStore()
    clock = FixedClock(AT)
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme", catalog=demo_catalog()),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    with MemoryUnitOfWork(store) as uow:
        for member in ("crew_a", "crew_b"):
            uow.crew.add(factories.all_week_crew(company.id, AT, member_id=member))
        uow.commit()
    with pytest.raises(ValidationFailed) as refused:
        setup.save_team(
            setup.SaveTeam(company_id=company.id, name=name, member_ids=("crew_a", "crew_b")),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )
    assert refused.value.field_errors == {"name": NOT_ONE_LINE}
