"""The customer portal's use cases (``services.portal``) over the memory unit of work: a
link is made and queued as a ``portal.sign_in`` message only for a customer of the
company, it is claimed once, for 15 minutes, in its own company only; the overview holds
the customer's own jobs, plans, quotes and receipts; and a customer's details and saved
addresses are updated with every field problem at once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta

import pytest

from adapters.notifications import JinjaComposer
from adapters.phone import PhonenumbersNormalizer
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.errors import RuleViolation, ValidationFailed
from booking_core.notifications import MessageKind, MessageStatus
from booking_core.paging import PageRequest
from booking_core.services import portal
from booking_core.services.customers import (
    SaveAddress,
    UpdateCustomer,
    remove_customer_address,
    save_customer_address,
    update_customer,
)
from booking_core.users import SignInRefused
from tests.unit.test_service_events import World, tuesday_at

BASE = "https://book.example.com"
LINK = re.compile(r"https://book\.example\.com/acme/portal/link/([A-Za-z0-9_-]{43})")


class PlainComposer:
    """Writes the link into the text, as a real composer's template does."""

    def compose(
        self, kind: MessageKind, company: Company, context: Mapping[str, object]
    ) -> tuple[str, str, str]:
        return f"Sign in to {company.name}", f"Open {context['link_url']}", "<p>html</p>"


@pytest.fixture
def world() -> World:
    made = World()
    made.recorded()
    return made


def ask(world: World, email: str, company_id: str | None = None) -> bool:
    return portal.request_portal_link(
        company_id or world.company.id,
        email,
        uow=world.uow(),
        clock=world.clock,
        composer=PlainComposer(),
        base_url=BASE,
    )


def messages(world: World, company_id: str | None = None):
    with world.uow() as uow:
        page = uow.messages.list(company_id or world.company.id, PageRequest(50))
    return page.items


def token_of(world: World) -> str:
    (message,) = messages(world)
    found = LINK.search(message.text)
    assert found is not None, message.text
    return found.group(1)


def test_a_customer_s_email_queues_one_sign_in_message_with_a_link_to_that_address(
    world: World,
):
    (booking,) = world.book(tuesday_at(9), email="ada@example.com")
    assert ask(world, "  ADA@example.com ") is True
    (message,) = messages(world)
    assert message.kind is MessageKind.PORTAL_SIGN_IN
    assert message.to == "ada@example.com"
    assert message.subject == "Sign in to Acme Maids"
    assert message.subject_id == booking.customer_id
    assert message.status is MessageStatus.PENDING
    assert message.next_attempt_at == world.clock.now()
    assert message.dedupe_key.startswith("portal.sign_in:pln_")
    assert LINK.search(message.text)


def test_an_unknown_email_or_another_company_s_customer_queues_nothing(world: World):
    world.book(tuesday_at(9), email="ada@example.com")
    other = world.add_company("other")
    assert ask(world, "grace@example.com") is False
    assert ask(world, "ada@example.com", company_id=other.id) is False
    assert messages(world) == ()
    assert messages(world, other.id) == ()


def test_a_malformed_email_is_a_field_error_and_nothing_is_looked_up(world: World):
    with pytest.raises(ValidationFailed) as failed:
        ask(world, "not an email")
    assert failed.value.field_errors == {"email": "Not an email address."}


def test_a_link_opens_the_portal_once(world: World):
    (booking,) = world.book(tuesday_at(9))
    ask(world, "ada@example.com")
    token = token_of(world)
    world.clock.current += timedelta(minutes=14)
    customer = portal.claim_portal_link(world.company.id, token, uow=world.uow(), clock=world.clock)
    assert customer.id == booking.customer_id
    with pytest.raises(SignInRefused):
        portal.claim_portal_link(world.company.id, token, uow=world.uow(), clock=world.clock)


def test_a_link_ends_after_15_minutes_and_never_opens_another_company_s_portal(world: World):
    world.book(tuesday_at(9))
    other = world.add_company("other")
    ask(world, "ada@example.com")
    token = token_of(world)
    with pytest.raises(SignInRefused):
        portal.claim_portal_link(other.id, token, uow=world.uow(), clock=world.clock)
    world.clock.current += timedelta(minutes=15)
    with pytest.raises(SignInRefused) as refused:
        portal.claim_portal_link(world.company.id, token, uow=world.uow(), clock=world.clock)
    assert "expired or was already used" in refused.value.message


def test_the_overview_holds_the_customer_s_own_visits_and_plans_only(world: World):
    (mine,) = world.book(tuesday_at(9))
    plan = world.book(tuesday_at(9) + timedelta(days=1), frequency="weekly")
    world.book(tuesday_at(9) + timedelta(days=2), email="grace@example.com")
    overview = portal.portal_overview(
        world.company.id, mine.customer_id, uow=world.uow(), at=world.clock.now()
    )
    assert overview.upcoming[0] == mine
    assert {b.id for b in overview.upcoming} == {mine.id, *(b.id for b in plan)}
    assert overview.past == ()
    (summary,) = overview.plans
    assert summary.plan_id == plan[0].plan_id
    assert summary.next_visit == plan[0]
    assert summary.visits_ahead == len(plan)
    assert overview.quotes == ()
    assert overview.receipts == ()


def test_contact_details_are_updated_with_every_field_problem_at_once(world: World):
    (booking,) = world.book(tuesday_at(9))
    phones = PhonenumbersNormalizer()
    change = UpdateCustomer(
        company_id=world.company.id, customer_id=booking.customer_id, name="", phone="12"
    )
    with pytest.raises(ValidationFailed) as failed:
        update_customer(change, uow=world.uow(), clock=world.clock, phones=phones)
    assert set(failed.value.field_errors) == {"name", "phone"}
    done = update_customer(
        UpdateCustomer(
            company_id=world.company.id,
            customer_id=booking.customer_id,
            name=" Ada King ",
            phone="(212) 555-0199",
        ),
        uow=world.uow(),
        clock=world.clock,
        phones=phones,
    )
    assert (done.name, done.phone, done.email) == ("Ada King", "+12125550199", "ada@example.com")


def test_saved_addresses_are_added_replaced_and_removed(world: World):
    (booking,) = world.book(tuesday_at(9))
    ids = {"company_id": world.company.id, "customer_id": booking.customer_id}
    cabin = Address("1 Lake Rd", "Hudson", "NY", "12534")
    with pytest.raises(ValidationFailed) as failed:
        save_customer_address(
            SaveAddress(**ids, address=Address("", "Hudson", "NY", "1253")),
            uow=world.uow(),
            clock=world.clock,
        )
    assert set(failed.value.field_errors) == {"address.line1", "address.zip"}
    added = save_customer_address(
        SaveAddress(**ids, address=cabin, default=True), uow=world.uow(), clock=world.clock
    )
    new_id = added.addresses[-1].id
    assert added.default_address == cabin
    moved = Address("2 Lake Rd", "Hudson", "NY", "12534")
    replaced = save_customer_address(
        SaveAddress(**ids, address=moved, address_id=new_id), uow=world.uow(), clock=world.clock
    )
    assert replaced.default_address == moved
    assert len(replaced.addresses) == len(added.addresses)
    left = remove_customer_address(**ids, address_id=new_id, uow=world.uow(), clock=world.clock)
    assert new_id not in {a.id for a in left.addresses}
    assert left.default_address_id == (left.addresses[0].id if left.addresses else None)
    with pytest.raises(RuleViolation):
        remove_customer_address(**ids, address_id=new_id, uow=world.uow(), clock=world.clock)


def test_the_sign_in_email_escapes_the_customer_s_name_and_carries_the_link(world: World):
    subject, text, html = JinjaComposer().compose(
        MessageKind.PORTAL_SIGN_IN,
        world.company,
        {
            "customer_name": '<img src=x onerror="alert(1)">',
            "link_url": f"{BASE}/acme/portal/link/{'t' * 43}",
            "minutes": 15,
        },
    )
    assert subject == "Your sign-in link for Acme Maids"
    assert "<img" not in html
    assert "&lt;img src=x" in html
    assert f'href="{BASE}/acme/portal/link/{"t" * 43}"' in html
    assert LINK.search(text)
    assert "once, for 15 minutes" in text
