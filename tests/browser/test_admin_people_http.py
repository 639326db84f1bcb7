"""The people page over HTTP (no browser): an owner adds a person and gets a one-time
sign-in link that signs them in, hands someone a fresh link, and removes a person's
access (signed out at once, their links dead); dispatchers and crew cannot open it, and
another company's people are not found (docs/web.md, "People")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from booking_core.companies import Company
from booking_core.users import Role
from tests.browser.support import PASSWORD, Site
from tests.browser.test_brand_http import csrf

LINK = re.compile(r'>(http://[^<"]+/sign-in/link/[A-Za-z0-9_-]+)</textarea>')


def browser(site: Site) -> httpx.Client:
    return httpx.Client(base_url=site.base_url, trust_env=False, timeout=30)


@contextmanager
def signed_in(site: Site, email: str) -> Iterator[httpx.Client]:
    with browser(site) as client:
        form = client.get("/sign-in")
        answer = client.post(
            "/sign-in", data={"csrf_token": csrf(form), "email": email, "password": PASSWORD}
        )
        assert answer.status_code in (302, 303), answer.text
        yield client


@pytest.fixture
def owner(site: Site, shop: Company) -> Iterator[httpx.Client]:
    with signed_in(site, site.user(shop, Role.OWNER).email) as client:
        yield client


def add(owner: httpx.Client, **fields: str) -> httpx.Response:
    page = owner.get("/admin/people")
    assert page.status_code == 200, page.text
    return owner.post("/admin/people", data={"csrf_token": csrf(page), **fields})


@contextmanager
def follow_link(site: Site, answer: httpx.Response) -> Iterator[httpx.Client]:
    """A new browser that opened the sign-in link shown in ``answer``."""
    found = LINK.search(answer.text)
    assert found is not None, answer.text
    with browser(site) as client:
        opened = client.get(found.group(1).removeprefix(site.base_url), follow_redirects=True)
        assert opened.status_code == 200, opened.text
        yield client


def test_an_owner_adds_a_dispatcher_whose_link_signs_them_in_once(
    site: Site, shop: Company, owner: httpx.Client
) -> None:
    answer = add(owner, email=" Dana@Example.com ", name="Dana Dispatch", role="dispatcher")
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"  # the link is shown this once
    assert "Dana Dispatch added" in answer.text
    # The page says to send the link to them, not to keep it where no one sees it.
    assert "Send it to Dana Dispatch alone" in answer.text
    assert "where the tool keeps its secrets" not in answer.text
    with follow_link(site, answer) as dana:
        home = dana.get("/admin")
        assert home.status_code == 200
        assert "Welcome, Dana" in home.text
        assert dana.get("/admin/people").status_code == 403  # owners only
    listed = owner.get("/admin/people").text
    assert "dana@example.com" in listed
    # The link worked once.
    with browser(site) as again:
        reused = again.get(LINK.search(answer.text).group(1).removeprefix(site.base_url))  # type: ignore[union-attr]
        assert "/admin" not in str(reused.headers.get("location", ""))


def test_a_crew_person_names_a_crew_member_and_bad_fields_are_refused_beside_them(
    site: Site, shop: Company, owner: httpx.Client
) -> None:
    taken = site.user(shop, Role.DISPATCHER)
    refused = add(owner, email=taken.email.upper(), role="dispatcher")
    assert refused.status_code == 422
    assert "A user with this email exists already." in refused.text
    no_member = add(owner, email="w@example.com", role="crew", crew_member_id="")
    assert no_member.status_code == 422
    assert "Choose the crew member this person is." in no_member.text
    forged = add(owner, email="x@example.com", role="crew", crew_member_id="crew_not_ours")
    assert forged.status_code == 422
    assert "Choose the crew member this person is." in forged.text
    no_role = add(owner, email="y@example.com", role="emperor")
    assert no_role.status_code == 422
    assert "Choose a role." in no_role.text
    job = site.crew_job()  # a member of another company: not one of ours
    other = add(owner, email="z@example.com", role="crew", crew_member_id=job.member_id)
    assert other.status_code == 422
    member = site.add_member(shop, "Sam Crew")
    made = add(owner, email="sam@example.com", name="Sam", role="crew", crew_member_id=member)
    assert made.status_code == 200, made.text
    with follow_link(site, made) as sam:
        assert sam.get("/crew").status_code == 200
        assert sam.get("/admin").status_code == 403


def test_removing_a_person_signs_them_out_and_kills_their_links(
    site: Site, shop: Company, owner: httpx.Client
) -> None:
    dispatcher = site.user(shop, Role.DISPATCHER)
    with signed_in(site, dispatcher.email) as them:
        assert them.get("/admin").status_code == 200
        page = owner.get("/admin/people")
        fresh = owner.post(f"/admin/people/{dispatcher.id}/link", data={"csrf_token": csrf(page)})
        assert fresh.status_code == 200
        link = LINK.search(fresh.text)
        assert link is not None
        confirm = owner.get(f"/admin/people/{dispatcher.id}/remove")
        assert "Remove Olivia Owner?" in confirm.text
        removed = owner.post(
            f"/admin/people/{dispatcher.id}/remove", data={"csrf_token": csrf(confirm)}
        )
        assert removed.status_code in (302, 303)
        after = them.get("/admin")
        assert after.status_code in (302, 303)  # to sign in: the session ended
        assert after.headers["location"].startswith("/sign-in")
    with browser(site) as stranger:
        dead = stranger.get(link.group(1).removeprefix(site.base_url))
        assert "/admin" not in str(dead.headers.get("location", ""))
    assert dispatcher.email not in owner.get("/admin/people").text
    # The same email may be given access again.
    assert add(owner, email=dispatcher.email, role="dispatcher").status_code == 200


def test_nobody_removes_themselves_and_another_companys_people_are_not_found(
    site: Site, shop: Company, owner: httpx.Client
) -> None:
    me = owner.get("/admin").text
    assert "Welcome" in me
    mine = owner.get("/admin/people")
    own_id = re.search(r'id="user-(usr_[A-Za-z0-9]+)"', mine.text)
    assert own_id is not None
    confirm = owner.get(f"/admin/people/{own_id.group(1)}/remove")
    assert "You cannot remove yourself" in confirm.text
    assert f'action="/admin/people/{own_id.group(1)}/remove"' not in confirm.text
    posted = owner.post(f"/admin/people/{own_id.group(1)}/remove", data={"csrf_token": csrf(mine)})
    assert posted.status_code in (302, 303)
    assert owner.get("/admin").status_code == 200  # still signed in: nothing removed
    elsewhere, _ = site.new_company()
    theirs = site.user(elsewhere, Role.DISPATCHER)
    assert owner.get(f"/admin/people/{theirs.id}/remove").status_code == 404
    link = owner.post(f"/admin/people/{theirs.id}/link", data={"csrf_token": csrf(mine)})
    assert link.status_code == 404
    assert "sign-in/link" not in link.text
    with signed_in(site, theirs.email) as them:
        assert them.get("/admin").status_code == 200  # untouched


def test_dispatchers_cannot_open_the_people_page(site: Site, shop: Company) -> None:
    with signed_in(site, site.user(shop, Role.DISPATCHER).email) as dispatcher:
        assert dispatcher.get("/admin/people").status_code == 403
        home = dispatcher.get("/admin").text
        assert 'href="/admin/people"' not in home
