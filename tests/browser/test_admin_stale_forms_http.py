"""Admin edit forms over HTTP (no browser), two people at once: a form opened before
someone else saved the same record is refused with a sentence saying so, nothing is
written, and it comes back showing what is stored (docs/web.md, "Setting the company
up"); a box ticked for something the company does not have is refused, not dropped."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser

import httpx
import pytest

from booking_core.companies import Company
from booking_core.services import setup
from booking_core.users import Role
from tests.browser.support import PASSWORD, Site
from tests.browser.test_brand_http import csrf

STALE = "Someone else saved this"


class FormReader(HTMLParser):
    """The fields a browser would post from the form whose action is ``action``: text and
    hidden inputs, ticked boxes and radios, textareas, a select's chosen option."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside, self.fields = action, False, {}
        self.textarea: str | None = None
        self.select: str | None = None
        self.first_option: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action and a.get("method") == "post"
        if not self.inside or ("name" not in a and tag != "option"):
            return
        if tag == "input":
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self.fields[a["name"]] = a.get("value", "on" if kind == "checkbox" else "")
        elif tag == "textarea":
            self.textarea = a["name"]
            self.fields[a["name"]] = ""
        elif tag == "select":
            self.select, self.first_option = a["name"], None
        elif tag == "option" and self.select is not None:
            if self.first_option is None:
                self.first_option = a.get("value", "")
                self.fields.setdefault(self.select, self.first_option)
            if "selected" in a:
                self.fields[self.select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "textarea":
            self.textarea = None
        elif tag == "select":
            self.select = None

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.fields[self.textarea] += data


def form_of(page: httpx.Response, action: str) -> dict[str, str]:
    reader = FormReader(action)
    reader.feed(page.text)
    assert reader.fields, f"no form posting to {action}"
    text_fields = {k: v.removeprefix("\n") for k, v in reader.fields.items()}
    return text_fields


def changed(form: dict[str, str], change: dict[str, str | None]) -> dict[str, str]:
    """``form`` with ``change`` made (None: the box unticked)."""
    made = {k: v for k, v in form.items() if change.get(k, "") is not None}
    made.update({k: v for k, v in change.items() if v is not None})
    return made


def shown(form: dict[str, str], change: dict[str, str | None]) -> bool:
    """Whether ``form`` shows ``change``."""
    return all(form.get(k) == v for k, v in change.items())


def signed_in(site: Site, company: Company, role: Role) -> httpx.Client:
    user = site.user(company, role)
    browser = httpx.Client(base_url=site.base_url, trust_env=False, timeout=30)
    form = browser.get("/sign-in")
    answer = browser.post(
        "/sign-in", data={"csrf_token": csrf(form), "email": user.email, "password": PASSWORD}
    )
    assert answer.status_code in (302, 303), answer.text
    return browser


@pytest.fixture
def people(site: Site, shop: Company) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """Two people signed in to ``shop``: an owner and a dispatcher."""
    owner = signed_in(site, shop, Role.OWNER)
    dispatcher = signed_in(site, shop, Role.DISPATCHER)
    try:
        yield owner, dispatcher
    finally:
        owner.close()
        dispatcher.close()


def _member(site: Site, company: Company) -> str:
    return f"/admin/crew/{site.add_member(company, 'Rosa Diaz')}"


def _team(site: Site, company: Company) -> str:
    ids = (site.add_member(company, n) for n in ("Ana Kim", "Sam Lee", "Tess Ray"))
    first, second, _ = ids
    team = setup.save_team(
        setup.SaveTeam(company_id=company.id, name="Blue", member_ids=(first, second)),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    return f"/admin/crew/teams/{team.id}"


def _key(site: Site, company: Company) -> str:
    with site.container.uow() as uow:
        key = uow.api_keys.list(company.id)[0]
    return f"/admin/keys/{key.id}"


Address = Callable[[Site, Company], str]
CASES: list[tuple[str, Address, dict[str, str | None], dict[str, str | None]]] = [
    (
        "service",
        lambda s, c: "/admin/catalog/services/svc_standard_clean",
        {"price": "150"},
        {"description": "Top to bottom."},
    ),
    (
        "extra",
        lambda s, c: "/admin/catalog/services/svc_standard_clean/extras/ext_fridge",
        {"price": "26"},
        {"name": "Fridge inside"},
    ),
    (
        "parameter",
        lambda s, c: "/admin/catalog/services/svc_standard_clean/parameters/par_bedrooms",
        {"price": "31"},
        {"name": "Bedrooms (each)"},
    ),
    (
        "frequency",
        lambda s, c: "/admin/catalog/frequencies/weekly",
        {"discount": "12"},
        {"name": "Every week"},
    ),
    (
        "coupon",
        lambda s, c: "/admin/catalog/coupons/cpn_spring",
        {"min_subtotal": "80"},
        {"max_redemptions": "500"},
    ),
    (
        "fee",
        lambda s, c: "/admin/catalog/fees/fee_pets",
        {"amount": "19"},
        {"name": "Pets at home"},
    ),
    ("crew member", _member, {"time_off": "2030-12-18"}, {"day_6": "10:00-14:00"}),
    ("team", _team, {"name": "Green"}, {}),  # the second: tick a third member (found below)
    (
        "company's settings",
        lambda s, c: "/admin/settings",
        {"cutoff_hours": "72"},
        {"notify_email": "office@shop.example"},
    ),
    ("key", _key, {"rate_limit": "200"}, {"scope.customers:read": None}),
]


@pytest.mark.parametrize(
    ("what", "address", "first", "second"), CASES, ids=[case[0] for case in CASES]
)
def test_a_form_opened_before_someone_else_saved_is_refused_and_shows_what_is_stored(
    request: pytest.FixtureRequest,
    site: Site,
    shop: Company,
    people: tuple[httpx.Client, httpx.Client],
    what: str,
    address: Address,
    first: dict[str, str | None],
    second: dict[str, str | None],
) -> None:
    path = address(site, shop)
    one, two = people
    if what == "key":  # owners only: two owners
        two = one
        one = signed_in(site, shop, Role.OWNER)
        request.addfinalizer(one.close)
    if what == "team":  # tick the member not in the team
        members = re.findall(r'name="(member_[^"]+)" value="on">', one.get(path).text)
        second = {members[0]: "on"}
    opened_by_one, opened_by_two = one.get(path), two.get(path)
    assert opened_by_one.status_code == opened_by_two.status_code == 200
    form_one, form_two = form_of(opened_by_one, path), form_of(opened_by_two, path)
    assert "shown" in form_two

    saved = one.post(path, data=changed(form_one, first))
    assert saved.status_code == 303, saved.text

    refused = two.post(path, data=changed(form_two, second))
    assert refused.status_code == 422, refused.text
    said = html.unescape(refused.text)
    assert f"{STALE} {what} since you opened it. The form now shows what is stored" in said
    assert "make your change again" in said
    back = form_of(refused, path)  # the form again, as stored now: the first change in it
    assert shown(back, first)
    now = form_of(one.get(path), path)
    assert shown(now, first)
    assert not shown(now, {k: v for k, v in second.items() if v is not None} or {"-": "-"})

    again = two.post(path, data=changed(back, second))  # made again from what is stored
    assert again.status_code == 303, again.text
    after = form_of(one.get(path), path)
    assert shown(after, first)
    assert all(after.get(k) == v for k, v in second.items())


def test_a_stale_form_leaves_the_record_as_the_other_person_saved_it(
    site: Site, shop: Company, people: tuple[httpx.Client, httpx.Client]
) -> None:
    """The audit's case: a day off added by one person survives another's older form."""
    path = _member(site, shop)
    one, two = people
    form_one, form_two = form_of(one.get(path), path), form_of(two.get(path), path)
    assert one.post(path, data=changed(form_one, {"time_off": "2030-12-18"})).status_code == 303
    assert two.post(path, data=changed(form_two, {"day_6": "10:00-14:00"})).status_code == 422
    with site.container.uow() as uow:
        member = uow.crew.get(shop.id, path.rsplit("/", 1)[1])
    assert [off.start.date().isoformat() for off in member.time_off] == ["2030-12-18"]
    assert not [h for h in member.working_hours if h.weekday == 6 and h.start.hour == 10]


FORGED = [
    ("/admin/catalog/coupons/new",
     {"code": "XSVC", "percent": "10", "min_subtotal": "0", "active": "on",
      "service_svc_not_ours": "on"}, "services"),
    ("/admin/catalog/coupons/cpn_spring", {"frequency_fortnightly_not_ours": "on"}, "frequencies"),
    ("/admin/catalog/services/svc_standard_clean/extras/new",
     {"name": "xf", "price": "1", "duration": "0", "max_quantity": "1",
      "frequency_every_ten_days": "on"}, "frequencies"),
    ("/admin/catalog/fees/new",
     {"name": "Kit", "kind": "service", "amount": "5", "active": "on",
      "service_svc_not_ours": "on"}, "services"),
    ("/admin/catalog/fees/new",
     {"name": "Eighth day", "kind": "date", "amount": "5", "active": "on", "weekday_8": "on"},
     "weekdays"),
    ("/admin/crew/new",
     {"name": "New Person", "home_zip": "10001", "service_areas": "10001", "active": "on",
      "exclude_svc_not_ours": "on"}, "excluded"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "fields", "field"), FORGED)
def test_a_box_ticked_for_something_the_company_lacks_is_refused_and_nothing_saved(
    site: Site,
    shop: Company,
    people: tuple[httpx.Client, httpx.Client],
    path: str,
    fields: dict[str, str],
    field: str,
) -> None:
    """A forged id (or one removed since the form was opened) in a list where none ticked
    means "every one" would have widened the restriction to everything."""
    owner, _ = people
    before = setup.export_catalog(shop.id, uow=site.container.uow())
    crew_before = setup.export_crew(shop.id, uow=site.container.uow())
    page = owner.get(path)
    form = form_of(page, path) if "/new" not in path else {"csrf_token": csrf(page)}
    answer = owner.post(path, data={**form, **fields})
    assert answer.status_code == 422, answer.text
    error = "Choose from the list: a box ticked here is not one of its choices."
    fieldsets = re.findall(r"<fieldset[^>]*>.*?</fieldset>", answer.text, re.S)
    marked = [f for f in fieldsets if error in f]
    assert len(marked) == 1, (field, answer.text)
    assert "has-error" in marked[0]
    assert setup.export_catalog(shop.id, uow=site.container.uow()) == before
    assert setup.export_crew(shop.id, uow=site.container.uow()) == crew_before


def test_a_team_form_naming_a_stranger_is_refused(
    site: Site, shop: Company, people: tuple[httpx.Client, httpx.Client]
) -> None:
    path = _team(site, shop)
    owner, _ = people
    form = form_of(owner.get(path), path)
    answer = owner.post(path, data={**form, "member_crew_not_ours": "on"})
    assert answer.status_code == 422
    assert "Choose from the list" in answer.text
    assert [len(t.member_ids) for t in setup.list_teams(shop.id, uow=site.container.uow())] == [2]


@pytest.mark.parametrize(
    "typed", ["\u0663" + "0", "\uff11\uff12" + "0", "1_000", "+120", "6,00", "60,00", "6,0,0,0"]
)
def test_a_rate_limit_in_other_digits_or_grouped_oddly_is_refused_not_guessed_at(
    site: Site, shop: Company, people: tuple[httpx.Client, httpx.Client], typed: str
):
    owner, _ = people
    path = _key(site, shop)
    page = owner.get(path)
    with site.container.uow() as uow:
        before = uow.api_keys.list(shop.id)[0]
    form = {"csrf_token": csrf(page), "name": before.name, "rate_limit": typed}
    form.update({f"scope.{scope}": "1" for scope in before.scopes})
    refused = owner.post(path, data=form)
    assert refused.status_code == 422, refused.text
    assert "A whole number of requests per minute" in html.unescape(refused.text)
    with site.container.uow() as uow:
        assert uow.api_keys.list(shop.id)[0].rate_limit_per_minute == before.rate_limit_per_minute
