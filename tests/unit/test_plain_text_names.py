"""A name shown back as one line (an API key's, a catalog item's, a crew member's) may
not hold line breaks or invisible characters that reverse or hide text: one rule,
``booking_core.plain_text``."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from booking_core import auth
from booking_core.catalog_drafts import draft_of
from booking_core.catalog_rules import catalog_problems
from booking_core.crew_drafts import CrewDraft, CrewMemberDraft, merge_crew
from booking_core.demo import demo_catalog
from booking_core.errors import ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE

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
