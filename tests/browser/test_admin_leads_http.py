"""The leads pages of the workspace over HTTP (docs/web.md, "Leads"): the enquiries a
company's website sent, newest first and by stage; one lead's contact and history; its
stage, owner and follow-up date changed from a form, each change on the timeline, never
over a change someone else saved meanwhile, and only for the company's own leads."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from booking_core.companies import Company
from booking_core.events import EventType
from booking_core.leads import Lead, LeadStage
from booking_core.services.companies import CreateKey, create_key
from booking_core.services.leads import CaptureLead, UpdateLead, capture_lead, update_lead
from booking_core.users import Role
from tests.browser.support import PASSWORD, Site
from tests.browser.test_admin_setup_pages_http import field_error, text_of
from tests.browser.test_admin_stale_forms_http import changed, form_of, signed_in
from tests.browser.test_brand_http import csrf


@pytest.fixture
def dispatcher(site: Site, shop: Company) -> Iterator[httpx.Client]:
    browser = signed_in(site, shop, Role.DISPATCHER)
    try:
        yield browser
    finally:
        browser.close()


def enquiry(site: Site, company: Company, name: str, email: str, message: str = "") -> Lead:
    lead, _ = capture_lead(
        CaptureLead(company_id=company.id, name=name, email=email, message=message),
        uow=site.container.uow(),
        clock=site.container.clock,
        phones=site.container.phones,
    )
    return lead


def website(site: Site) -> tuple[Company, str]:
    """A company, and the key of its website's enquiry form (``leads:write`` alone)."""
    company, _ = site.new_company()
    key = create_key(
        CreateKey(company_id=company.id, name="Website form", scopes=frozenset({"leads:write"})),
        uow=site.container.uow(),
        clock=site.container.clock,
    ).secret
    return company, key


def stored(site: Site, company: Company, lead_id: str) -> Lead:
    with site.container.reader() as uow:
        return uow.leads.get(company.id, lead_id)


def lead_events(site: Site, company: Company, lead_id: str) -> int:
    with site.container.uow() as uow:
        events = uow.outbox.claim_undispatched(100_000)
    return sum(
        1
        for e in events
        if e.company_id == company.id
        and e.subject.id == lead_id
        and e.type is EventType.LEAD_UPDATED
    )


def test_the_list_shows_the_company_s_leads_newest_first_and_by_stage(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    first = enquiry(site, shop, "Katherine Johnson", "kj@example.com", "Deep clean before we move?")
    second = enquiry(site, shop, "Dorothy Vaughan", "dv@example.com")
    other, _ = site.new_company()
    theirs = enquiry(site, other, "Mary Jackson", "mj@example.com")
    update_lead(
        UpdateLead(company_id=shop.id, lead_id=second.id, stage=LeadStage.CONTACTED),
        uow=site.container.uow(),
        clock=site.container.clock,
    )

    every = dispatcher.get("/admin/leads")
    contacted = dispatcher.get("/admin/leads", params={"stage": "contacted"})

    assert every.status_code == contacted.status_code == 200
    names = re.findall(r'<a href="/admin/leads/(lead_[^"]+)">', every.text)
    assert names == [second.id, first.id]  # newest first, another company's never
    assert theirs.id not in every.text
    assert re.findall(r'<a href="/admin/leads/(lead_[^"]+)">', contacted.text) == [second.id]
    assert '<span class="status stage-contacted">Contacted</span>' in contacted.text
    # A forged page position (a year that would overflow, garbage) is the first page.
    for after in (
        "0001-01-01T00:00:00+01:00~x",
        "9999-12-31T23:59:59-01:00~x",
        "x~y~z",
        "2026-01-01T00:00:00+00:00~lead_\x00",  # no NUL reaches the database
    ):
        forged = dispatcher.get("/admin/leads", params={"after": after})
        assert forged.status_code == 200, after
        assert re.findall(r'<a href="/admin/leads/(lead_[^"]+)">', forged.text) == names
    assert dispatcher.get(f"/admin/leads/{theirs.id}").status_code == 404
    assert dispatcher.get("/admin/leads/lead_nope").status_code == 404


def test_a_lead_is_moved_reassigned_and_given_a_follow_up_each_on_its_history(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    lead = enquiry(site, shop, "Katherine Johnson", "kj@example.com", "Deep clean before we move?")
    enquiry(site, shop, "Katherine Johnson", "KJ@example.com", "Also the windows, please.")
    path = f"/admin/leads/{lead.id}"
    page = dispatcher.get(path)
    assert page.status_code == 200
    shown = text_of(page)
    assert "Deep clean before we move?" in shown
    assert "Enquired again" in shown
    assert "Also the windows, please." in shown
    form = form_of(page, path)
    assert form["stage"] == "new"

    saved = dispatcher.post(
        path,
        data=changed(form, {"stage": "quoted", "owner": " Maria ", "follow_up_on": "2026-12-01"}),
    )

    assert saved.status_code == 303
    after = stored(site, shop, lead.id)
    assert (after.stage, after.owner, str(after.follow_up_on)) == (
        LeadStage.QUOTED,
        "Maria",
        "2026-12-01",
    )
    history = text_of(dispatcher.get(path))
    assert "Stage New → Quoted" in history
    assert "Owner none → Maria" in history
    assert "Follow-up none → Tuesday, December 1, 2026" in history
    assert "by Olivia Owner" in history  # the signed-in person
    assert lead_events(site, shop, lead.id) == 2  # the folded enquiry, then this save


def test_a_change_made_through_the_api_names_its_key_on_the_history(site: Site):
    company, key = website(site)
    lead = enquiry(site, company, "Mary Jackson", "mj@example.com")
    with site.api(key) as api:
        moved = api.patch(f"/api/v1/leads/{lead.id}", json={"owner": "Sam"})
    assert moved.status_code == 200, moved.text
    browser = signed_in(site, company, Role.DISPATCHER)
    try:
        history = text_of(browser.get(f"/admin/leads/{lead.id}"))
    finally:
        browser.close()
    assert "Owner none → Sam by API key Website form" in history


def test_a_follow_up_date_that_cannot_be_read_leaves_the_kept_one_in_the_field(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    """A date field shows no value it cannot read: the refused date came back as an empty
    field, and a second Save cleared the date the lead had."""
    lead = enquiry(site, shop, "Dorothy Vaughan", "dv@example.com")
    update_lead(
        UpdateLead(company_id=shop.id, lead_id=lead.id, follow_up_on=date(2026, 12, 2)),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    path = f"/admin/leads/{lead.id}"
    form = form_of(dispatcher.get(path), path)

    refused = dispatcher.post(path, data=changed(form, {"follow_up_on": "2026-02-30"}))
    again = dispatcher.post(path, data=form_of(refused, path))

    assert refused.status_code == 422
    assert 'name="follow_up_on" type="date"' in refused.text
    assert 'value="2026-12-02"' in refused.text
    assert again.status_code == 303
    assert str(stored(site, shop, lead.id).follow_up_on) == "2026-12-02"


def test_a_save_without_changes_says_so_and_a_field_left_out_stays_as_stored(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    lead = enquiry(site, shop, "Dorothy Vaughan", "dv@example.com")
    update_lead(
        UpdateLead(company_id=shop.id, lead_id=lead.id, owner="Maria"),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    path = f"/admin/leads/{lead.id}"
    form = form_of(dispatcher.get(path), path)

    same = dispatcher.post(path, data=form)
    assert same.status_code == 303
    assert "Nothing changed." in text_of(dispatcher.get(path))
    only_stage = {k: v for k, v in form.items() if k not in {"owner", "follow_up_on"}}
    moved = dispatcher.post(path, data={**only_stage, "stage": "contacted"})

    assert moved.status_code == 303
    after = stored(site, shop, lead.id)
    assert (after.stage, after.owner) == (LeadStage.CONTACTED, "Maria")


def test_an_owner_is_one_line_through_the_api_as_on_the_page(site: Site):
    company, key = website(site)
    lead = enquiry(site, company, "Mary Jackson", "mj@example.com")
    with site.api(key) as api:
        refused = api.patch(f"/api/v1/leads/{lead.id}", json={"owner": "Ann\tB\u202eC"})
    assert refused.status_code == 400, refused.text
    assert list(refused.json()["error"]["fieldErrors"]) == ["owner"]
    assert stored(site, company, lead.id).owner is None


def test_a_form_opened_before_someone_else_saved_the_lead_changes_nothing(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    lead = enquiry(site, shop, "Dorothy Vaughan", "dv@example.com")
    path = f"/admin/leads/{lead.id}"
    form = form_of(dispatcher.get(path), path)
    update_lead(  # another tab, or the API, moved it meanwhile
        UpdateLead(company_id=shop.id, lead_id=lead.id, stage=LeadStage.LOST),
        uow=site.container.uow(),
        clock=site.container.clock,
    )

    refused = dispatcher.post(path, data=changed(form, {"owner": "Sam"}))

    assert refused.status_code == 422
    assert "Someone else saved this lead since you opened it" in text_of(refused)
    assert stored(site, shop, lead.id).owner is None
    assert stored(site, shop, lead.id).stage is LeadStage.LOST


def test_bad_fields_are_refused_beside_them_and_nothing_is_saved(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    lead = enquiry(site, shop, "Dorothy Vaughan", "dv@example.com")
    path = f"/admin/leads/{lead.id}"
    form = form_of(dispatcher.get(path), path)

    refused = dispatcher.post(
        path,
        data=changed(
            form,
            {"stage": "closed", "owner": "Sam\nLee", "follow_up_on": "2026-02-30"},
        ),
    )

    assert refused.status_code == 422
    assert field_error(refused, "stage") == "Choose a stage from the list."
    assert (field_error(refused, "owner") or "").startswith("One line of text")
    assert field_error(refused, "follow_up_on") == (
        "Not a date: \u20182026-02-30\u2019. Choose one, or leave the field empty for none."
    )
    after = stored(site, shop, lead.id)
    assert (after.stage, after.owner, after.follow_up_on) == (LeadStage.NEW, None, None)


def test_a_won_lead_is_final_and_only_admins_see_leads(site: Site, shop: Company):
    lead = enquiry(site, shop, "Mary Jackson", "mj@example.com")
    update_lead(
        UpdateLead(company_id=shop.id, lead_id=lead.id, stage=LeadStage.WON),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    owner = signed_in(site, shop, Role.OWNER)
    crew = signed_in_as(
        site, site.user(shop, Role.CREW, crew_member_id=site.add_member(shop, "Ana Kim")).email
    )
    try:
        page = owner.get(f"/admin/leads/{lead.id}")
        form = form_of(page, f"/admin/leads/{lead.id}")
        assert re.findall(r'<option value="([a-z]+)"', page.text) == ["won"]
        refused = owner.post(f"/admin/leads/{lead.id}", data=changed(form, {"stage": "new"}))
        assert refused.status_code == 409
        assert (field_error(refused, "stage") or "").startswith("Not moved:")
        assert stored(site, shop, lead.id).stage is LeadStage.WON
        assert 'href="/admin/leads"' in owner.get("/admin").text  # in the top bar
        assert crew.get("/admin/leads").status_code == 403
        assert crew.get(f"/admin/leads/{lead.id}").status_code == 403
    finally:
        owner.close()
        crew.close()


def signed_in_as(site: Site, email: str) -> httpx.Client:
    browser = httpx.Client(base_url=site.base_url, trust_env=False, timeout=30)
    form = browser.get("/sign-in")
    answer = browser.post(
        "/sign-in", data={"csrf_token": csrf(form), "email": email, "password": PASSWORD}
    )
    assert answer.status_code in (302, 303), answer.text
    return browser


def test_the_list_pages_by_fifty_with_older_and_newest_links(
    site: Site, shop: Company, dispatcher: httpx.Client
):
    made = [enquiry(site, shop, f"Lead {n}", f"lead{n}@example.com").id for n in range(53)]
    first = dispatcher.get("/admin/leads")
    older = re.search(r'<a href="([^"]+)">Older leads →</a>', first.text)
    assert older is not None
    assert "Newest leads" not in first.text
    second = dispatcher.get(html.unescape(older[1]))
    listed = [
        re.findall(r'<a href="/admin/leads/(lead_[^"]+)">', page.text) for page in (first, second)
    ]
    assert [len(ids) for ids in listed] == [50, 3]
    assert sorted(listed[0] + listed[1]) == sorted(made)  # each once
    assert listed[0][0] == made[-1]  # newest first
    assert "Older leads" not in second.text
    assert '<a href="/admin/leads">← Newest leads</a>' in second.text
