from __future__ import annotations

import attrs
import pytest

from booking_core.crew import Team, new_crew_member
from booking_core.errors import ConflictError, NotFoundError
from tests import factories as f


def member(company_id: str, name: str):
    return new_crew_member(
        member_id=f"crew_{company_id}_{name.lower()}",
        company_id=company_id,
        name=name,
        home_zip="10001",
        at=f.at(),
    )


def team(name: str, *member_ids: str, company_id: str = "cmp_a", team_id: str = "") -> Team:
    return Team(
        id=team_id or f"team_{name.lower().replace(' ', '_')}",
        company_id=company_id,
        name=name,
        member_ids=member_ids,
        created_at=f.at(),
        updated_at=f.at(),
    )


@pytest.fixture
def crew(uow_factory):
    """Ana, Ben and Cy of company A; Eve of company B."""
    made = {
        "ana": member("cmp_a", "Ana"),
        "ben": member("cmp_a", "Ben"),
        "cy": member("cmp_a", "Cy"),
        "eve": member("cmp_b", "Eve"),
    }
    with uow_factory() as uow:
        for m in made.values():
            uow.crew.add(m)
        uow.commit()
    return {k: m.id for k, m in made.items()}


def test_team_round_trips_with_its_members_in_order_and_only_in_its_company(uow_factory, crew):
    blue = team("Blue crew", crew["cy"], crew["ana"])
    with uow_factory() as uow:
        uow.teams.add(blue)
        uow.commit()
    with uow_factory() as uow:
        assert uow.teams.get("cmp_a", blue.id) == blue
        assert uow.teams.get_for_update("cmp_a", blue.id) == blue
        assert uow.teams.list("cmp_b") == []
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.teams.get("cmp_b", blue.id)
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.teams.get_for_update("cmp_b", blue.id)


def test_teams_are_listed_by_name_case_insensitively(uow_factory, crew):
    pair = (crew["ana"], crew["ben"])
    made = [team("zeta", *pair), team("Alpha", *pair), team("beta", *pair)]
    with uow_factory() as uow:
        for t in made:
            uow.teams.add(t)
        uow.commit()
    with uow_factory() as uow:
        assert [t.name for t in uow.teams.list("cmp_a")] == ["Alpha", "beta", "zeta"]


def test_a_saved_team_changes_name_and_members(uow_factory, crew):
    blue = team("Blue", crew["ana"], crew["ben"])
    with uow_factory() as uow:
        uow.teams.add(blue)
        uow.commit()
    renamed = attrs.evolve(
        blue, name="Green", member_ids=(crew["ben"], crew["cy"]), updated_at=f.at(5)
    )
    with uow_factory() as uow:
        uow.teams.save(renamed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.teams.get("cmp_a", blue.id) == renamed
        assert uow.teams.list("cmp_a") == [renamed]


def test_saving_a_team_never_stored_or_of_another_company_is_not_found(uow_factory, crew):
    blue = team("Blue", crew["ana"], crew["ben"])
    with uow_factory() as uow:
        uow.teams.add(blue)
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.teams.save(team("Never", crew["ana"], crew["ben"], team_id="team_never"))
        with pytest.raises(NotFoundError):
            uow.teams.save(attrs.evolve(blue, company_id="cmp_b", member_ids=(crew["eve"],)))


@pytest.mark.parametrize("write", ["add", "save"])
def test_another_companys_crew_member_is_refused_and_nothing_is_written(uow_factory, crew, write):
    blue = team("Blue", crew["ana"], crew["ben"])
    if write == "save":
        with uow_factory() as uow:
            uow.teams.add(blue)
            uow.commit()
    mixed = attrs.evolve(blue, member_ids=(crew["ana"], crew["eve"]))
    unknown = attrs.evolve(blue, member_ids=(crew["ana"], "crew_never"))
    with uow_factory() as uow:
        for refused in (mixed, unknown):
            with pytest.raises(NotFoundError) as raised:
                getattr(uow.teams, write)(refused)
            assert refused.member_ids[1] in str(raised.value)
        uow.commit()
    with uow_factory() as uow:
        assert uow.teams.list("cmp_a") == ([blue] if write == "save" else [])


def test_a_name_is_unique_in_a_company_as_names_are_matched(uow_factory, crew):
    blue = team("Blue  Crew", crew["ana"], crew["ben"])
    green = team("Green", crew["ana"], crew["cy"])
    with uow_factory() as uow:
        uow.teams.add(blue)
        uow.teams.add(green)
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(ConflictError):
            uow.teams.add(team("blue crew", crew["ben"], crew["cy"], team_id="team_other"))
        with pytest.raises(ConflictError):
            uow.teams.save(attrs.evolve(green, name="BLUE CREW"))
        # The unit of work stays usable after a refusal, and another company may use the name.
        uow.teams.add(team("Blue crew", crew["eve"], company_id="cmp_b", team_id="team_b"))
        uow.commit()
    with uow_factory() as uow:
        assert [t.name for t in uow.teams.list("cmp_a")] == ["Blue  Crew", "Green"]
        assert [t.name for t in uow.teams.list("cmp_b")] == ["Blue crew"]


def test_a_team_added_in_a_unit_rolled_back_is_gone(uow_factory, crew):
    with uow_factory() as uow:
        uow.teams.add(team("Blue", crew["ana"], crew["ben"]))
    with uow_factory() as uow:
        assert uow.teams.list("cmp_a") == []
