"""Leads (DECISIONS.md, leads) word for word: the field errors of an enquiry at and over its
limits, the refusal to move a won lead, and the contact a folded enquiry adds."""

from __future__ import annotations

import pytest

from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.leads import Enquiry, LeadStage, capture, update
from tests.factories import at

COMPANY = "cmp_acme"


def refusal(enquiry: Enquiry) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as refused:
        capture(enquiry, company_id=COMPANY, candidates=(), new_lead_id="lead_1", at=at(0))
    return refused.value.field_errors


def test_an_enquiry_without_name_or_contact_is_refused_with_both_messages() -> None:
    assert refusal(Enquiry(name=" ")) == {
        "name": "Required, at most 200 characters.",
        "email": "Give an email or a phone number.",
    }


def test_enquiry_fields_over_their_limits_are_refused_naming_the_limit() -> None:
    assert refusal(Enquiry(name="n" * 201, phone_e164="+1" + "2" * 39, message="m" * 2_001)) == {
        "name": "Required, at most 200 characters.",
        "phone": "At most 40 characters.",
        "message": "At most 2000 characters.",
    }


def test_enquiry_fields_at_their_limits_are_accepted() -> None:
    enquiry = Enquiry(name="n" * 200, phone_e164="+1" + "2" * 38, message="m" * 2_000)

    lead, _ = capture(enquiry, company_id=COMPANY, candidates=(), new_lead_id="lead_1", at=at(0))

    assert (len(lead.name), len(lead.phone_e164 or ""), len(lead.message)) == (200, 40, 2_000)


def test_moving_a_won_lead_is_refused_naming_the_lead_and_the_move() -> None:
    lead, _ = capture(
        Enquiry(name="Ada", email="ada@example.com"),
        company_id=COMPANY,
        candidates=(),
        new_lead_id="lead_1",
        at=at(0),
    )
    won = update(lead, at=at(5), stage=LeadStage.WON)

    with pytest.raises(InvalidTransition) as refused:
        update(won, at=at(10), stage=LeadStage.LOST)

    error = refused.value
    assert (error.entity, error.entity_id, error.status, error.action, error.reason) == (
        "lead",
        "lead_1",
        "won",
        "move to lost",
        "a won lead is final.",
    )
    assert error.message == "Cannot move to lost lead lead_1 (won): a won lead is final."


def test_folding_gives_an_email_only_lead_the_phone_of_the_enquiry() -> None:
    email_only, _ = capture(
        Enquiry(name="Ada", email="ada@example.com"),
        company_id=COMPANY,
        candidates=(),
        new_lead_id="lead_1",
        at=at(0),
    )

    folded, was_folded = capture(
        Enquiry(name="Ada", email="ADA@example.com", phone_e164="+12125550100"),
        company_id=COMPANY,
        candidates=(email_only,),
        new_lead_id="lead_2",
        at=at(60),
    )

    assert was_folded
    assert (folded.id, folded.email, folded.phone_e164) == (
        "lead_1",
        "ada@example.com",
        "+12125550100",
    )
