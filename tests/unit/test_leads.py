"""Leads (SPEC.md section 2, DECISIONS.md): stages, capture that folds an enquiry into the
oldest matching open lead, updates recorded on the timeline, won is final, lost reopens."""

from __future__ import annotations

from datetime import date

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.phone import PhonenumbersNormalizer
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.leads import (
    OPEN_STAGES,
    Enquiry,
    Lead,
    LeadStage,
    TimelineKind,
    capture,
    update,
)
from tests import factories
from tests.factories import at

COMPANY = "cmp_acme"
ADA = Enquiry(name="Ada Lovelace", email="ada@example.com", phone_e164="+12125550100")


def start(
    enquiry: Enquiry = ADA, *, lead_id: str = "lead_1", minutes: int = 0, company: str = COMPANY
) -> Lead:
    lead, folded = capture(
        enquiry, company_id=company, candidates=(), new_lead_id=lead_id, at=at(minutes)
    )
    assert not folded
    return lead


def enquire(enquiry: Enquiry, *candidates: Lead, minutes: int = 60) -> tuple[Lead, bool]:
    return capture(
        enquiry, company_id=COMPANY, candidates=candidates, new_lead_id="lead_new", at=at(minutes)
    )


def at_stage(lead: Lead, stage: LeadStage) -> Lead:
    return attrs.evolve(lead, stage=stage)


# --- Stages ---------------------------------------------------------------------------------


def test_lead_stages_are_those_of_the_decisions_and_the_first_three_are_open() -> None:
    assert [s.value for s in LeadStage] == ["new", "contacted", "quoted", "won", "lost"]
    assert {s for s in LeadStage if s.open} == OPEN_STAGES
    assert {LeadStage.NEW, LeadStage.CONTACTED, LeadStage.QUOTED} == OPEN_STAGES


# --- Capture --------------------------------------------------------------------------------


def test_first_enquiry_starts_a_new_lead_with_a_created_entry() -> None:
    enquiry = Enquiry(
        name="  Ada Lovelace ",
        email=" ada@example.com ",
        phone_e164="+12125550100",
        message="Two-bedroom deep clean",
        source="website",
        service_id="svc_deep",
    )

    lead, folded = enquire(enquiry)

    assert not folded
    assert lead.id == "lead_new"
    assert lead.company_id == COMPANY
    assert lead.stage is LeadStage.NEW
    assert (lead.name, lead.email, lead.phone_e164) == (
        "Ada Lovelace",
        "ada@example.com",
        "+12125550100",
    )
    assert (lead.message, lead.source, lead.service_id) == (
        "Two-bedroom deep clean",
        "website",
        "svc_deep",
    )
    assert lead.owner is None
    assert lead.follow_up_on is None
    assert lead.created_at == lead.updated_at == at(60)
    [entry] = lead.timeline
    assert entry.kind is TimelineKind.CREATED
    assert entry.at == at(60)
    assert entry.details["message"] == "Two-bedroom deep clean"
    assert entry.details["source"] == "website"
    assert entry.details["serviceId"] == "svc_deep"


def test_enquiry_needs_a_name_and_an_email_or_phone() -> None:
    with pytest.raises(ValidationFailed) as refused:
        enquire(Enquiry(name=" "))

    assert set(refused.value.field_errors) == {"name", "email"}


@pytest.mark.parametrize(
    ("enquiry", "field"),
    [
        (Enquiry(name="n" * 201, email="a@example.com"), "name"),
        (Enquiry(name="Ada", email="not-an-email"), "email"),
        (Enquiry(name="Ada", email="a" * 243 + "@example.com"), "email"),
        (Enquiry(name="Ada", phone_e164="+1" + "2" * 39), "phone"),
        (Enquiry(name="Ada", email="a@example.com", message="m" * 2_001), "message"),
    ],
)
def test_enquiry_field_over_its_limit_or_malformed_is_refused(enquiry: Enquiry, field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        enquire(enquiry)

    assert set(refused.value.field_errors) == {field}


def test_enquiry_with_only_a_phone_or_only_an_email_is_accepted() -> None:
    by_phone, _ = enquire(Enquiry(name="Ada", phone_e164="+12125550100", message="m" * 2_000))
    by_email, _ = enquire(Enquiry(name="Ada", email="ada@example.com"))

    assert (by_phone.email, by_phone.phone_e164) == (None, "+12125550100")
    assert (by_email.email, by_email.phone_e164) == ("ada@example.com", None)


def test_enquiry_with_matching_email_folds_into_open_lead() -> None:
    lead = start(Enquiry(name="Ada Lovelace", email="ada@example.com"))
    again = Enquiry(name="Ada L.", email="  ADA@Example.com ", message="Any news?")

    folded, was_folded = enquire(again, lead)

    assert was_folded
    assert folded.id == lead.id
    assert folded.updated_at == at(60)
    assert folded.created_at == lead.created_at
    assert [e.kind for e in folded.timeline] == [TimelineKind.CREATED, TimelineKind.FOLDED]
    entry = folded.timeline[-1]
    assert entry.at == at(60)
    assert entry.details == {
        "name": "Ada L.",
        "email": "  ADA@Example.com ",
        "message": "Any news?",
        "source": "api",
    }


def test_enquiry_with_matching_phone_folds_into_open_lead() -> None:
    lead = start(Enquiry(name="Ada", phone_e164="+12125550100"))

    folded, was_folded = enquire(
        Enquiry(name="Ada", email="x@example.com", phone_e164="+12125550100"), lead
    )

    assert was_folded
    assert folded.id == lead.id
    assert folded.timeline[-1].details["phone"] == "+12125550100"


def test_enquiry_with_a_different_email_and_phone_starts_a_new_lead() -> None:
    lead = start()

    new, was_folded = enquire(
        Enquiry(name="Ada", email="ada2@example.com", phone_e164="+12125550101"), lead
    )

    assert not was_folded
    assert new.id == "lead_new"


@pytest.mark.parametrize("stage", [LeadStage.NEW, LeadStage.CONTACTED, LeadStage.QUOTED])
def test_enquiry_folds_into_a_lead_at_any_open_stage(stage: LeadStage) -> None:
    lead = at_stage(start(), stage)

    folded, was_folded = enquire(ADA, lead)

    assert was_folded
    assert folded.stage is stage


@pytest.mark.parametrize("stage", [LeadStage.WON, LeadStage.LOST])
def test_enquiry_matching_only_a_closed_lead_starts_a_new_one(stage: LeadStage) -> None:
    closed = at_stage(start(), stage)

    new, was_folded = enquire(ADA, closed)

    assert not was_folded
    assert new.id == "lead_new"
    assert new.stage is LeadStage.NEW
    assert closed.timeline == start().timeline


def test_enquiry_matching_only_a_lost_lead_starts_a_new_one() -> None:
    lost = update(start(), at=at(10), stage=LeadStage.LOST)

    new, was_folded = enquire(ADA, lost)

    assert not was_folded
    assert new.id != lost.id


def test_enquiry_folds_into_the_oldest_matching_open_lead() -> None:
    by_phone = start(Enquiry(name="Ada", phone_e164="+12125550100"), lead_id="lead_b", minutes=5)
    by_email = start(Enquiry(name="Ada", email="ada@example.com"), lead_id="lead_a", minutes=10)
    older_but_lost = at_stage(start(ADA, lead_id="lead_c", minutes=0), LeadStage.LOST)

    folded, _ = enquire(ADA, by_email, older_but_lost, by_phone)

    assert folded.id == "lead_b"


def test_among_equally_old_matching_leads_the_smallest_id_wins() -> None:
    first = start(lead_id="lead_1")
    second = start(lead_id="lead_2")

    folded, _ = enquire(ADA, second, first)

    assert folded.id == "lead_1"


def test_leads_of_another_company_are_never_folded_into() -> None:
    theirs = start(company="cmp_other")

    new, was_folded = enquire(ADA, theirs)

    assert not was_folded
    assert new.company_id == COMPANY


def test_folding_fills_in_a_missing_contact_detail_trimmed() -> None:
    phone_only = start(Enquiry(name="Ada", phone_e164="+12125550100"))

    folded, _ = enquire(
        Enquiry(name="Ada", email=" ada@example.com ", phone_e164="+12125550100"), phone_only
    )

    assert folded.email == "ada@example.com"
    assert folded.phone_e164 == "+12125550100"


@pytest.mark.parametrize("email_lead_first", [False, True])
def test_folding_never_copies_a_contact_another_open_lead_holds(email_lead_first: bool) -> None:
    """An enquiry matching one open lead by phone and another by email folds into the
    older one, and fills neither detail from the other's contact."""
    by_phone = start(
        Enquiry(name="P", phone_e164="+12125550931"),
        lead_id="lead_p",
        minutes=10 if email_lead_first else 0,
    )
    by_email = start(
        Enquiry(name="E", email="fill2@example.com"),
        lead_id="lead_e",
        minutes=0 if email_lead_first else 10,
    )
    enquiry = Enquiry(name="F", email=" FILL2@example.com ", phone_e164="+12125550931")

    folded, was_folded = enquire(enquiry, by_phone, by_email)

    assert was_folded
    oldest = by_email if email_lead_first else by_phone
    assert folded.id == oldest.id
    assert (folded.email, folded.phone_e164) == (oldest.email, oldest.phone_e164)
    assert folded.timeline[-1].details["email"] == " FILL2@example.com "
    assert folded.timeline[-1].details["phone"] == "+12125550931"


def test_folding_fills_a_detail_no_other_open_lead_holds() -> None:
    by_phone = start(Enquiry(name="P", phone_e164="+12125550931"), lead_id="lead_p")
    closed = at_stage(
        start(Enquiry(name="E", email="fill2@example.com"), lead_id="lead_e"), LeadStage.LOST
    )

    folded, _ = enquire(
        Enquiry(name="F", email="fill2@example.com", phone_e164="+12125550931"), by_phone, closed
    )

    assert (folded.id, folded.email) == ("lead_p", "fill2@example.com")


def test_folding_keeps_the_lead_name_stage_owner_contacts_and_message() -> None:
    lead = update(start(), at=at(5), stage=LeadStage.CONTACTED, owner="usr_sam")

    folded, _ = enquire(
        Enquiry(
            name="Someone Else", email="ada@example.com", phone_e164="+12125550199", message="Hi"
        ),
        lead,
    )

    assert folded.name == lead.name
    assert folded.stage is LeadStage.CONTACTED
    assert folded.owner == "usr_sam"
    assert folded.phone_e164 == "+12125550100"
    assert folded.message == lead.message


def test_every_folded_enquiry_is_on_the_timeline() -> None:
    lead = start()
    for minutes in (10, 20, 30):
        lead, _ = enquire(ADA, lead, minutes=minutes)

    assert [e.kind for e in lead.timeline] == [TimelineKind.CREATED] + [TimelineKind.FOLDED] * 3
    assert [e.at for e in lead.timeline] == [at(0), at(10), at(20), at(30)]


def test_phone_numbers_typed_differently_fold_together_once_normalised() -> None:
    phones = PhonenumbersNormalizer("US")
    lead = start(Enquiry(name="Ada", phone_e164=phones.e164("(212) 555-0100")))

    folded, was_folded = enquire(
        Enquiry(name="Ada", phone_e164=phones.e164("+1 212.555.0100")), lead
    )

    assert was_folded
    assert folded.id == lead.id


def test_factory_leads_do_not_fold_into_each_other() -> None:
    first = factories.lead(COMPANY)
    second = factories.lead(COMPANY)

    assert not first.matches(second.email, second.phone_e164)


# --- Update ---------------------------------------------------------------------------------


def test_every_lead_change_is_on_the_timeline() -> None:
    lead = start()

    moved = update(lead, at=at(10), stage=LeadStage.CONTACTED, actor="usr_sam")
    assigned = update(moved, at=at(20), owner="usr_kim", actor="usr_sam")
    scheduled = update(assigned, at=at(30), follow_up_on=date(2026, 11, 9), actor="usr_kim")

    assert [(e.kind, e.at, e.details) for e in scheduled.timeline[1:]] == [
        (TimelineKind.STAGE_CHANGED, at(10), {"from": "new", "to": "contacted", "by": "usr_sam"}),
        (TimelineKind.OWNER_CHANGED, at(20), {"to": "usr_kim", "by": "usr_sam"}),
        (TimelineKind.FOLLOW_UP_SET, at(30), {"to": "2026-11-09", "by": "usr_kim"}),
    ]
    assert scheduled.stage is LeadStage.CONTACTED
    assert scheduled.owner == "usr_kim"
    assert scheduled.follow_up_on == date(2026, 11, 9)
    assert scheduled.updated_at == at(30)


def test_several_changes_at_once_are_each_on_the_timeline() -> None:
    lead = start()

    changed = update(
        lead, at=at(10), stage=LeadStage.QUOTED, owner="usr_kim", follow_up_on=date(2026, 11, 9)
    )

    assert [e.kind for e in changed.timeline[1:]] == [
        TimelineKind.STAGE_CHANGED,
        TimelineKind.OWNER_CHANGED,
        TimelineKind.FOLLOW_UP_SET,
    ]
    assert all(e.at == at(10) for e in changed.timeline[1:])


def test_clearing_the_owner_or_follow_up_is_on_the_timeline() -> None:
    lead = update(start(), at=at(10), owner="usr_kim", follow_up_on=date(2026, 11, 9))

    cleared = update(lead, at=at(20), owner=None, follow_up_on=None)

    assert cleared.owner is None
    assert cleared.follow_up_on is None
    assert [(e.kind, e.details) for e in cleared.timeline[-2:]] == [
        (TimelineKind.OWNER_CHANGED, {"from": "usr_kim"}),
        (TimelineKind.FOLLOW_UP_SET, {"from": "2026-11-09"}),
    ]


def test_update_that_changes_nothing_leaves_the_lead_untouched() -> None:
    lead = update(start(), at=at(10), stage=LeadStage.CONTACTED, owner="usr_kim")

    assert update(lead, at=at(20)) is lead
    assert update(lead, at=at(20), stage=LeadStage.CONTACTED, owner="usr_kim") is lead


def test_won_lead_is_final() -> None:
    won = update(start(), at=at(10), stage=LeadStage.WON)

    for stage in (LeadStage.NEW, LeadStage.CONTACTED, LeadStage.QUOTED, LeadStage.LOST):
        with pytest.raises(InvalidTransition, match="won lead is final"):
            update(won, at=at(20), stage=stage)


def test_refused_move_of_a_won_lead_changes_nothing_else_either() -> None:
    won = update(start(), at=at(10), stage=LeadStage.WON)

    with pytest.raises(InvalidTransition):
        update(won, at=at(20), stage=LeadStage.LOST, owner="usr_kim")

    assert won.owner is None


def test_won_lead_can_still_be_reassigned_and_given_a_follow_up() -> None:
    won = update(start(), at=at(10), stage=LeadStage.WON)

    changed = update(won, at=at(20), owner="usr_kim", follow_up_on=date(2026, 12, 1))

    assert changed.stage is LeadStage.WON
    assert changed.owner == "usr_kim"


@pytest.mark.parametrize(
    "stage", [LeadStage.NEW, LeadStage.CONTACTED, LeadStage.QUOTED, LeadStage.WON]
)
def test_lost_lead_may_be_reopened(stage: LeadStage) -> None:
    lost = update(start(), at=at(10), stage=LeadStage.LOST)

    reopened = update(lost, at=at(20), stage=stage)

    assert reopened.stage is stage
    assert reopened.timeline[-1].details == {"from": "lost", "to": stage.value}


def test_a_lost_lead_is_not_reopened_while_another_lead_of_its_contact_is_open() -> None:
    lost = update(start(), at=at(10), stage=LeadStage.LOST)
    newer, folded = enquire(ADA, lost, minutes=30)  # the lost lead takes no enquiry
    assert not folded

    with pytest.raises(InvalidTransition, match=newer.id):
        update(lost, at=at(40), stage=LeadStage.NEW, open_twins=[newer])
    # Once the newer lead is closed too, the old one may come back; closing is not blocked.
    closed = update(newer, at=at(50), stage=LeadStage.LOST, open_twins=[newer])
    assert update(lost, at=at(60), stage=LeadStage.NEW).stage is LeadStage.NEW
    assert closed.stage is LeadStage.LOST


def test_reopened_lead_takes_enquiries_again() -> None:
    lost = update(start(), at=at(10), stage=LeadStage.LOST)
    reopened = update(lost, at=at(20), stage=LeadStage.CONTACTED)

    folded, was_folded = enquire(ADA, reopened)

    assert was_folded
    assert folded.id == reopened.id


_OWNERS = st.sampled_from([None, "usr_kim", "usr_sam"])
_DATES = st.sampled_from([None, date(2026, 11, 9), date(2026, 12, 1)])
_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "stage": st.sampled_from(LeadStage),
        "owner": _OWNERS,
        "follow_up_on": _DATES,
    },
)


@given(changes=st.lists(_CHANGES, max_size=12))
def test_every_change_adds_exactly_one_timeline_entry(changes: list[dict[str, object]]) -> None:
    lead = start()
    for step, change in enumerate(changes, start=1):
        before = lead
        try:
            lead = update(lead, at=at(step), **change)  # type: ignore[arg-type]
        except InvalidTransition:
            assert before.stage is LeadStage.WON
            assert change["stage"] is not LeadStage.WON
            continue
        expected = [
            kind
            for name, kind in (
                ("stage", TimelineKind.STAGE_CHANGED),
                ("owner", TimelineKind.OWNER_CHANGED),
                ("follow_up_on", TimelineKind.FOLLOW_UP_SET),
            )
            if name in change and change[name] != getattr(before, name)
        ]
        assert [e.kind for e in lead.timeline[len(before.timeline) :]] == expected
        assert lead.timeline[: len(before.timeline)] == before.timeline
        assert lead.updated_at == (at(step) if expected else before.updated_at)
        for name, value in change.items():
            assert getattr(lead, name) == value
    assert lead.timeline[0].kind is TimelineKind.CREATED
    assert [e.at for e in lead.timeline] == sorted(e.at for e in lead.timeline)
