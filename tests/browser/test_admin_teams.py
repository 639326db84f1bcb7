"""Teams in the admin workspace, in Chromium: an owner makes a team of two crew members,
sees it on the crew page, edits it; a one-member team is refused beside the members and
writes nothing; another company's team in the address is the 404 page."""

from __future__ import annotations

from typing import Any

from booking_core.crew_drafts import CrewDraft, CrewMemberDraft
from booking_core.services.setup import ImportCrew, SaveTeam, import_crew, list_teams, save_team
from booking_core.users import Role
from tests.browser.support import Site, sign_in


def crewed_company(site: Site, *names: str) -> Any:
    company, _ = site.new_company()
    members = tuple(
        CrewMemberDraft(name=n, home_zip="10001", service_areas=("10001", "10003")) for n in names
    )
    changes = import_crew(
        ImportCrew(company_id=company.id, crew=CrewDraft(members=members)),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    return company, {m.name: m.id for m in changes.added}


def test_an_owner_makes_a_team_edits_it_and_a_one_member_team_is_refused(
    site: Site, page: Any, screenshots: Any
) -> None:
    company, ids = crewed_company(site, "Rosa Diaz", "Sam Lee", "Kim Ito")
    sign_in(page, site.user(company, Role.OWNER).email)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Crew").click()
    teams = page.locator("#teams")
    assert "No teams yet." in teams.inner_text()
    assert "crewIds" in teams.inner_text()

    teams.get_by_role("link", name="Add a team").click()
    page.get_by_label("Team name").fill("Blue crew")
    page.get_by_label("Rosa Diaz").check()
    page.get_by_label("Sam Lee").check()
    page.get_by_role("button", name="Add team").click()
    assert page.get_by_role("status").inner_text() == "Saved the team Blue crew."
    row = page.locator("#teams tbody tr").filter(has_text="Blue crew")
    assert "Rosa Diaz, Sam Lee" in row.inner_text()
    page.screenshot(path=str(screenshots / "admin-teams.png"), full_page=True)

    row.get_by_role("link", name="Edit Blue crew").click()
    assert page.get_by_label("Rosa Diaz").is_checked()
    page.get_by_label("Team name").fill("Blue team")
    page.get_by_label("Rosa Diaz").uncheck()
    page.get_by_label("Kim Ito").check()
    page.get_by_role("button", name="Save team").click()
    row = page.locator("#teams tbody tr").filter(has_text="Blue team")
    assert "Sam Lee, Kim Ito" in row.inner_text()
    (team,) = list_teams(company.id, uow=site.container.reader())
    assert (team.name, team.member_ids) == ("Blue team", (ids["Sam Lee"], ids["Kim Ito"]))

    row.get_by_role("link", name="Edit Blue team").click()
    page.get_by_label("Team name").fill("Just Sam")
    page.get_by_label("Kim Ito").uncheck()
    page.get_by_role("button", name="Save team").click()
    assert "at least two crew members" in page.locator("#members-error").inner_text()
    assert page.get_by_label("Team name").input_value() == "Just Sam"
    assert page.get_by_label("Sam Lee").is_checked()
    assert not page.get_by_label("Kim Ito").is_checked()
    assert list_teams(company.id, uow=site.container.reader()) == [team]
    page.screenshot(path=str(screenshots / "admin-team-form.png"), full_page=True)


def test_another_companys_team_is_the_404_page(site: Site, page: Any) -> None:
    mine, _ = crewed_company(site, "Ana Ruiz", "Ben Cho")
    theirs, their_ids = crewed_company(site, "Cy Park", "Dee Moss")
    their_team = save_team(
        SaveTeam(company_id=theirs.id, name="Theirs", member_ids=tuple(their_ids.values())),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    sign_in(page, site.user(mine, Role.OWNER).email)
    answer = page.goto(f"/admin/crew/teams/{their_team.id}")
    assert answer.status == 404
    assert page.get_by_role("heading", name="Not found").is_visible()
