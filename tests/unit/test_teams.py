"""Teams (docs/setup.md): named sets of at least two active crew members of one company,
unique by name in it; and booking a team's members together through ``crewIds``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from booking_core.crew import Team, deactivate
from booking_core.crew_drafts import CrewMemberDraft
from booking_core.errors import NotFoundError, SlotTaken, ValidationFailed
from booking_core.paging import PageRequest
from booking_core.services import companies, setup
from booking_core.services.scheduling import CustomerDetails, active_crew
from tests.unit.test_setup import NOW, Shop, example_catalog, example_crew


class Crewed(Shop):
    """The docs' example shop: Rosa Diaz and Sam Lee, and a third member, Kim Ito."""

    def __init__(self) -> None:
        super().__init__()
        self.replace(example_catalog())
        kim = CrewMemberDraft(name="Kim Ito", home_zip="10003", service_areas=("10003",))
        self.import_crew(*example_crew().members, kim)
        with self.uow() as uow:
            by_name = {m.name: m.id for m in active_crew(uow, self.company.id)}
        self.rosa, self.sam, self.kim = by_name["Rosa Diaz"], by_name["Sam Lee"], by_name["Kim Ito"]

    def save(self, name: str, *member_ids: str, team_id: str | None = None) -> Team:
        return setup.save_team(
            setup.SaveTeam(
                company_id=self.company.id, name=name, member_ids=member_ids, team_id=team_id
            ),
            uow=self.uow(),
            clock=self.clock,
        )

    def teams(self) -> list[Team]:
        return setup.list_teams(self.company.id, uow=self.uow())


@pytest.fixture
def shop() -> Crewed:
    return Crewed()


def refused(call: object, *args: object, **kwargs: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as raised:
        call(*args, **kwargs)  # type: ignore[operator]
    return raised.value.field_errors


def test_a_team_is_added_listed_by_name_and_changed(shop):
    blue = shop.save("  Blue   crew ", shop.rosa, shop.sam, shop.rosa)
    green = shop.save("green", shop.sam, shop.kim)

    assert (blue.name, blue.member_ids) == ("Blue crew", (shop.rosa, shop.sam))
    assert blue.id.startswith("team_")
    assert shop.teams() == [blue, green]

    changed = shop.save("Blue crew", shop.kim, shop.rosa, team_id=blue.id)

    assert changed.member_ids == (shop.kim, shop.rosa)
    assert changed.created_at == blue.created_at
    assert [t.member_ids for t in shop.teams()] == [(shop.kim, shop.rosa), green.member_ids]


@pytest.mark.parametrize(
    ("name", "problem"),
    [("", "Required, at most 200 characters."), ("x" * 201, "Required, at most 200 characters.")],
)
def test_a_name_is_required_and_at_most_200_characters(shop, name, problem):
    assert refused(shop.save, name, shop.rosa, shop.sam) == {"name": problem}
    assert shop.teams() == []


def test_a_name_is_unique_in_the_company_but_a_team_keeps_its_own(shop):
    blue = shop.save("Blue crew", shop.rosa, shop.sam)

    assert refused(shop.save, "BLUE  CREW", shop.sam, shop.kim) == {
        "name": "Another team has this name already."
    }
    assert shop.save("blue crew", shop.rosa, shop.sam, team_id=blue.id).name == "blue crew"


def test_a_team_needs_two_distinct_members(shop):
    two = "Choose at least two crew members: a team works together."

    assert refused(shop.save, "Solo", shop.rosa) == {"member_ids": two}
    assert refused(shop.save, "Twice", shop.rosa, shop.rosa) == {"member_ids": two}
    assert refused(shop.save, "", shop.rosa) == {
        "name": "Required, at most 200 characters.",
        "member_ids": two,
    }


def test_members_are_active_crew_of_the_company(shop):
    other = companies.create_company(
        companies.CreateCompany(slug="elsewhere", name="Elsewhere"),
        uow=shop.uow(),
        clock=shop.clock,
    )
    with shop.uow() as uow:
        kim = uow.crew.get(shop.company.id, shop.kim)
        uow.crew.save(deactivate(kim, at=NOW))
        uow.commit()

    assert refused(shop.save, "Gone", shop.rosa, shop.kim) == {
        "member_ids": f"Not an active crew member: {shop.kim}."
    }
    assert refused(shop.save, "Odd", shop.rosa, "crew_never") == {
        "member_ids": "Not an active crew member: crew_never."
    }
    # Another company sees neither the members nor the team.
    blue = shop.save("Blue", shop.rosa, shop.sam)
    with pytest.raises(ValidationFailed):
        setup.save_team(
            setup.SaveTeam(company_id=other.id, name="Mine", member_ids=(shop.rosa, shop.sam)),
            uow=shop.uow(),
            clock=shop.clock,
        )
    with pytest.raises(NotFoundError):
        setup.save_team(
            setup.SaveTeam(
                company_id=other.id, name="Blue", member_ids=(shop.rosa, shop.sam), team_id=blue.id
            ),
            uow=shop.uow(),
            clock=shop.clock,
        )
    assert setup.list_teams(other.id, uow=shop.uow()) == []


def test_booking_a_teams_members_together_books_each_of_them(shop):
    """What the team page says: ``crewIds`` naming a team's members books them together,
    and the job is each member's."""
    start = datetime(2026, 11, 24, 15, tzinfo=UTC)  # Tuesday 10:00 in New York
    shop.book(start=start, crew_ids=(shop.rosa, shop.sam))

    with shop.uow() as uow:
        (job,) = uow.bookings.list(shop.company.id, PageRequest()).items
        sams = uow.bookings.list(shop.company.id, PageRequest(), crew_id=shop.sam).items
    assert set(job.crew_ids) == {shop.rosa, shop.sam}
    assert [b.id for b in sams] == [job.id]
    with pytest.raises(SlotTaken):
        shop.book(
            start=start,
            crew_ids=(shop.sam,),
            customer=CustomerDetails(name="Bo", email="bo@example.com"),
        )
