"""``GET /api/v1/crew``: the roster as SPEC.md's 2026-10-13 change log describes it."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from booking_core.crew import deactivate
from booking_core.services import setup
from tests.e2e.support import API, CrewSpec, Stack, crewed_company

ALL_SERVICES = ["svc_standard_clean", "svc_deep_clean", "svc_handyman_hour"]


def test_crew_lists_active_members_with_exclusions_and_the_full_deprecated_service_list(
    stack: Stack,
):
    shop = crewed_company(
        stack,
        (
            CrewSpec("Rosa", "10001", ("10001", "10003")),
            CrewSpec("Sam", "11201", ("11201",), excluded=("svc_deep_clean",)),
            CrewSpec("Gone", "10025", ("10025",)),
        ),
    )
    rosa, sam, gone = shop.crew_ids
    with stack.container.uow() as uow:
        uow.crew.save(
            deactivate(uow.crew.get(shop.company.id, gone), at=stack.container.clock.now())
        )
        uow.commit()
    with stack.client(shop.key) as client:
        reply = client.get(f"{API}/crew")
    assert reply.status_code == 200, reply.text
    members = {m["id"]: m for m in reply.json()["data"]}
    assert set(members) == {rosa, sam}  # the inactive member is not listed
    assert members[rosa]["serviceAreas"] == ["10001", "10003"]
    assert members[rosa]["excludedServiceIds"] == []
    # serviceIds lists every active service the member may be given, in full (never "[]
    # means all", as before 2026-10-13).
    assert members[rosa]["serviceIds"] == ALL_SERVICES
    assert members[sam]["excludedServiceIds"] == ["svc_deep_clean"]
    assert members[sam]["serviceIds"] == [s for s in ALL_SERVICES if s != "svc_deep_clean"]
    assert all("kind" not in m for m in members.values())  # removed from crew records


def test_crew_needs_the_crews_read_scope(stack: Stack):
    shop = crewed_company(stack, (CrewSpec("Rosa", "10001", ("10001",)),))
    key = stack.issue_key(company_id=shop.company.id, scopes={"catalog:read"}).secret
    with stack.client(key) as client:
        reply = client.get(f"{API}/crew")
    assert reply.status_code == 403
    assert reply.json()["error"]["requiredScope"] == "crews:read"


def test_a_service_retired_or_brought_back_shows_every_member_it_changes_to_a_poller(
    stack: Stack, settled: Callable[[], None]
):
    """``serviceIds`` follows the catalog, so a poller of ``updatedSince`` is shown each
    member whose list a catalog change altered, with the new list and ``updatedAt``; a
    member it does not change (who never did the service) is not shown."""
    shop = crewed_company(
        stack,
        (
            CrewSpec("Rosa", "10001", ("10001",)),
            CrewSpec("Sam", "11201", ("11201",), excluded=("svc_handyman_hour",)),
        ),
    )
    rosa, sam = shop.crew_ids
    since = "2000-01-01T00:00:00Z"
    with stack.client(shop.key) as client:
        settled()  # on PostgreSQL a change is listed once earlier writers have ended
        first = client.get(f"{API}/crew", params={"updatedSince": since}).json()
        assert {m["id"] for m in first["data"]} == {rosa, sam}
        cursor = first["nextCursor"]
        draft = setup.export_catalog(shop.company.id, uow=stack.container.uow())
        industries = tuple(
            attrs.evolve(
                industry,
                services=tuple(
                    attrs.evolve(s, active=s.id != "svc_handyman_hour") for s in industry.services
                ),
            )
            for industry in draft.industries
        )
        setup.replace_catalog(
            setup.ReplaceCatalog(
                company_id=shop.company.id, catalog=attrs.evolve(draft, industries=industries)
            ),
            uow=stack.container.uow(),
            clock=stack.container.clock,
        )
        settled()
        polled = client.get(f"{API}/crew", params={"updatedSince": since, "cursor": cursor})
    assert polled.status_code == 200, polled.text
    (changed,) = polled.json()["data"]  # Sam never did handyman work: unchanged
    assert changed["id"] == rosa
    assert changed["serviceIds"] == [s for s in ALL_SERVICES if s != "svc_handyman_hour"]
    before = next(m for m in first["data"] if m["id"] == rosa)
    assert changed["updatedAt"] > before["updatedAt"]
