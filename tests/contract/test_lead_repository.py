from __future__ import annotations

from datetime import date

import pytest

from booking_core import leads
from booking_core.errors import NotFoundError
from booking_core.leads import Enquiry, LeadStage
from booking_core.paging import PageRequest
from tests import factories as f
from tests.contract.paging import assert_paginates


def test_lead_round_trips_with_its_timeline(uow_factory):
    lead = f.lead("cmp_a", email="pat@example.com", phone="+12125550123")
    moved = leads.update(lead, at=f.at(5), stage=LeadStage.CONTACTED, owner="sam", actor="sam")
    with uow_factory() as uow:
        uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow:
        uow.leads.save(moved)
        uow.commit()
    with uow_factory() as uow:
        stored = uow.leads.get("cmp_a", lead.id)
        assert uow.leads.get_for_update("cmp_a", lead.id) == stored
    assert stored == moved
    assert [e.kind for e in stored.timeline] == ["created", "stage_changed", "owner_changed"]


def test_open_matching_finds_open_leads_by_email_or_phone_oldest_first(uow_factory):
    by_email = f.lead("cmp_a", email="Pat@Example.com", minutes=1)
    by_phone = f.lead("cmp_a", phone="+12125550123", minutes=0)
    closed = leads.update(
        f.lead("cmp_a", email="pat@example.com", minutes=2), at=f.at(3), stage=LeadStage.LOST
    )
    elsewhere = f.lead("cmp_b", email="pat@example.com")
    with uow_factory() as uow:
        for lead in (by_email, by_phone, closed, elsewhere):
            uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow:
        found = uow.leads.open_matching("cmp_a", "pat@example.com", "+12125550123")
        assert [lead.id for lead in found] == [by_phone.id, by_email.id]
        assert uow.leads.open_matching("cmp_a", None, None) == []


def test_folded_enquiry_is_kept_on_the_stored_lead(uow_factory):
    lead = f.lead("cmp_a", email="pat@example.com")
    with uow_factory() as uow:
        uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow:
        candidates = uow.leads.open_matching("cmp_a", "PAT@example.com", None)
        folded, was_folded = leads.capture(
            Enquiry(name="Pat", email="PAT@example.com", message="Also the garage"),
            company_id="cmp_a",
            candidates=candidates,
            new_lead_id="lead_unused",
            at=f.at(1),
        )
        assert was_folded
        uow.leads.save(folded)
        uow.commit()
    with uow_factory() as uow:
        stored = uow.leads.get("cmp_a", lead.id)
    assert stored.timeline[-1].details["message"] == "Also the garage"


def test_list_filters_by_stage_and_owner_and_paginates(uow_factory):
    made = [f.lead("cmp_a", minutes=i) for i in range(4)]
    made[1] = leads.update(made[1], at=f.at(9), stage=LeadStage.QUOTED, owner="sam")
    made[2] = leads.update(made[2], at=f.at(9), owner="sam")
    with uow_factory() as uow:
        for lead in made:
            uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow:
        assert_paginates(lambda p: uow.leads.list("cmp_a", p), [made[i].id for i in (3, 2, 1, 0)])
        quoted = uow.leads.list("cmp_a", PageRequest(), stage=LeadStage.QUOTED)
        assert [lead.id for lead in quoted.items] == [made[1].id]
        sams = uow.leads.list("cmp_a", PageRequest(), owner="sam")
        assert [lead.id for lead in sams.items] == [made[2].id, made[1].id]


def test_list_filters_by_follow_up_date(uow_factory):
    made = [f.lead("cmp_a", minutes=i) for i in range(3)]
    made[0] = leads.update(made[0], at=f.at(9), follow_up_on=date(2026, 5, 4))
    made[1] = leads.update(made[1], at=f.at(9), follow_up_on=date(2026, 5, 5))
    with uow_factory() as uow:
        for lead in made:
            uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow:
        due = uow.leads.list("cmp_a", PageRequest(), follow_up_on=date(2026, 5, 5))
        assert [lead.id for lead in due.items] == [made[1].id]
        assert not uow.leads.list("cmp_b", PageRequest(), follow_up_on=date(2026, 5, 5)).items


def test_other_company_lead_is_not_found(uow_factory):
    lead = f.lead("cmp_a")
    with uow_factory() as uow:
        uow.leads.add(lead)
        uow.commit()
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.leads.get("cmp_b", lead.id)
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.leads.get_for_update("cmp_b", lead.id)


def test_enquiries_from_one_contact_at_the_same_moment_make_one_lead(uow_factory):
    """Eight enquiries racing with one email: the contact lock makes them fold."""
    import threading

    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def enquire(index: int) -> None:
        try:
            barrier.wait()
            with uow_factory() as uow:
                uow.leads.lock_contact("cmp_a", ["race@example.com"])
                found = uow.leads.open_matching("cmp_a", "race@example.com", None)
                lead, folded = leads.capture(
                    Enquiry(name=f"Racer {index}", email="race@example.com"),
                    company_id="cmp_a",
                    candidates=found,
                    new_lead_id=f"lead_race_{index}",
                    at=f.at(index),
                )
                (uow.leads.save if folded else uow.leads.add)(lead)
                uow.commit()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=enquire, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with uow_factory() as uow:
        page = uow.leads.list("cmp_a", PageRequest())
    assert len(page.items) == 1
    assert len(page.items[0].timeline) == 8  # created once, then folded seven times
