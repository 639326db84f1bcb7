"""Teams in the admin workspace, in Chromium: an owner makes a team of two crew members,
sees it on the crew page, edits it; a one-member team is refused beside the members and
writes nothing; another company's team in the address is the 404 page."""

from __future__ import annotations

from typing import Any

import attrs
from playwright.sync_api import expect

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
    expect(teams).to_contain_text("No teams yet.", use_inner_text=True)
    expect(teams).to_contain_text("crewIds", use_inner_text=True)

    teams.get_by_role("link", name="Add a team").click()
    page.get_by_label("Team name").fill("Blue crew")
    page.get_by_label("Rosa Diaz").check()
    page.get_by_label("Sam Lee").check()
    page.get_by_role("button", name="Add team").click()
    expect(page.get_by_role("status")).to_have_text(
        "Saved the team Blue crew.", use_inner_text=True
    )
    row = page.locator("#teams tbody tr").filter(has_text="Blue crew")
    expect(row).to_contain_text("Rosa Diaz, Sam Lee", use_inner_text=True)
    page.screenshot(path=str(screenshots / "admin-teams.png"), full_page=True)

    row.get_by_role("link", name="Edit Blue crew").click()
    expect(page.get_by_role("button", name="Save team")).to_be_visible()
    expect(page.get_by_label("Rosa Diaz")).to_be_checked()
    page.get_by_label("Team name").fill("Blue team")
    page.get_by_label("Rosa Diaz").uncheck()
    page.get_by_label("Kim Ito").check()
    page.get_by_role("button", name="Save team").click()
    row = page.locator("#teams tbody tr").filter(has_text="Blue team")
    expect(row).to_contain_text("Sam Lee, Kim Ito", use_inner_text=True)
    (team,) = list_teams(company.id, uow=site.container.reader())
    assert (team.name, team.member_ids) == ("Blue team", (ids["Sam Lee"], ids["Kim Ito"]))

    row.get_by_role("link", name="Edit Blue team").click()
    page.get_by_label("Team name").fill("Just Sam")
    page.get_by_label("Kim Ito").uncheck()
    page.get_by_role("button", name="Save team").click()
    expect(page.locator("#members-error")).to_contain_text(
        "at least two crew members", use_inner_text=True
    )
    expect(page.get_by_label("Team name")).to_have_value("Just Sam")
    expect(page.get_by_label("Sam Lee")).to_be_checked()
    expect(page.get_by_label("Kim Ito")).not_to_be_checked()
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
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()


def test_a_member_made_inactive_is_named_in_the_team_form_s_refusal(site: Site, page: Any) -> None:
    """A team whose member was made inactive since: saving it is refused beside the
    members, naming her as the form does (never by id), with what to do."""
    company, ids = crewed_company(site, "Rosa Diaz", "Sam Lee", "Ana Kim")
    team = save_team(
        SaveTeam(company_id=company.id, name="Blue", member_ids=(ids["Rosa Diaz"], ids["Ana Kim"])),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    with site.container.uow() as uow:
        ana = uow.crew.get_for_update(company.id, ids["Ana Kim"])
        uow.crew.save(attrs.evolve(ana, active=False))
        uow.commit()
    sign_in(page, site.user(company, Role.OWNER).email)
    page.goto(f"/admin/crew/teams/{team.id}")
    page.get_by_label("Team name").fill("Blue crew")
    page.get_by_role("button", name="Save team").click()
    expect(page.locator("#members-error")).to_have_text(
        "Not an active crew member: Ana Kim. Untick them to save the team.",
        use_inner_text=True,
    )
    assert list_teams(company.id, uow=site.container.reader()) == [team]
