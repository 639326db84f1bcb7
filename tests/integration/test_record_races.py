"""Changes racing on one record keep each other, on both SQL backends: every use case
that reads a record to write it back reads it locked (``get_for_update``), so none
writes back what it read before another change to it committed."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from booking_core.clock import FixedClock
from booking_core.customers import Address
from booking_core.leads import LeadStage
from booking_core.services import companies
from booking_core.services import customers as customer_cases
from booking_core.services import leads as lead_cases
from booking_core.services import users as user_cases
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from booking_core.users import Role
from tests.integration.test_booking_races import race

CLOCK = FixedClock(datetime(2026, 7, 1, 16, tzinfo=UTC))
PHONES = PhonenumbersNormalizer()
ROUNDS = 8
HOME = Address(line1="1 Main St", city="New York", state="NY", zip="10001")


def company_id(db: Database, slug: str) -> str:
    made = companies.create_company(
        companies.CreateCompany(slug=slug, name=slug.title()), uow=db.uow(), clock=CLOCK
    )
    return made.id


def test_a_customers_new_name_and_a_new_address_racing_are_both_kept(database: Database):
    cid = company_id(database, "names")
    customer, _ = customer_cases.create_customer(
        customer_cases.CreateCustomer(company_id=cid, name="Ada", email="ada@example.com"),
        uow=database.uow(),
        clock=CLOCK,
        phones=PHONES,
    )
    for round_ in range(ROUNDS):

        def change(i: int, round_: int = round_) -> None:
            if i == 0:
                customer_cases.update_customer(
                    customer_cases.UpdateCustomer(
                        company_id=cid, customer_id=customer.id, name=f"Ada {round_}"
                    ),
                    uow=database.uow(),
                    clock=CLOCK,
                    phones=PHONES,
                )
            else:
                customer_cases.save_customer_address(
                    customer_cases.SaveAddress(
                        company_id=cid, customer_id=customer.id, address=HOME
                    ),
                    uow=database.uow(),
                    clock=CLOCK,
                )

        assert race(2, change) == [None, None]
        with database.uow() as uow:
            stored = uow.customers.get(cid, customer.id)
        assert stored.name == f"Ada {round_}", f"round {round_}: the new name was lost"
        assert len(stored.addresses) == round_ + 1, f"round {round_}: an address was lost"


def test_a_leads_stage_and_owner_changed_at_once_are_both_kept(database: Database):
    cid = company_id(database, "leads")
    for round_ in range(ROUNDS):
        lead, _ = lead_cases.capture_lead(
            lead_cases.CaptureLead(company_id=cid, name="Grace", email=f"g{round_}@example.com"),
            uow=database.uow(),
            clock=CLOCK,
            phones=PHONES,
        )

        def change(i: int, lead_id: str = lead.id) -> None:
            update = (
                lead_cases.UpdateLead(company_id=cid, lead_id=lead_id, stage=LeadStage.CONTACTED)
                if i == 0
                else lead_cases.UpdateLead(company_id=cid, lead_id=lead_id, owner="sam")
            )
            lead_cases.update_lead(update, uow=database.uow(), clock=CLOCK)

        assert race(2, change) == [None, None]
        with database.uow() as uow:
            stored = uow.leads.get(cid, lead.id)
        assert (stored.stage, stored.owner) == (LeadStage.CONTACTED, "sam"), f"round {round_}"


def test_two_settings_changed_at_once_are_both_kept(database: Database):
    cid = company_id(database, "settings")
    for round_ in range(ROUNDS):

        def change(i: int, round_: int = round_) -> None:
            update = (
                UpdateCompanySettings(company_id=cid, name=f"Settings {round_}")
                if i == 0
                else UpdateCompanySettings(company_id=cid, min_notice_minutes=60 + round_)
            )
            update_company_settings(update, uow=database.uow())

        assert race(2, change) == [None, None]
        with database.uow() as uow:
            stored = uow.companies.get_for_update(cid)
        assert (stored.name, stored.min_notice_minutes) == (f"Settings {round_}", 60 + round_)


class QuickHasher:
    """A password hasher without argon2's deliberate cost, so that the two changes below
    really overlap (argon2 would make the password change start long after the other)."""

    def hash(self, password: str) -> str:
        return f"quick:{password}"

    def verify(self, password_hash: str, password: str) -> bool:
        return password_hash == f"quick:{password}"

    def needs_rehash(self, password_hash: str) -> bool:
        return False


def test_a_new_password_and_a_sign_out_everywhere_at_once_are_both_kept(database: Database):
    hasher = QuickHasher()
    cid = company_id(database, "people")
    user = user_cases.create_user(
        user_cases.CreateUser(company_id=cid, email="owner@example.com", role=Role.OWNER),
        uow=database.uow(),
        clock=CLOCK,
    )
    for round_ in range(ROUNDS):
        password = f"a new password {round_}"

        def change(i: int, password: str = password) -> None:
            if i == 0:
                user_cases.set_password(user.id, password, uow=database.uow(), hasher=hasher)
            else:
                user_cases.sign_out_everywhere(user.id, uow=database.uow())

        assert race(2, change) == [None, None]
        with database.uow() as uow:
            stored = uow.users.get(user.id)
        # The new password stands, and each change moved the session epoch on once.
        assert stored.password_hash is not None
        assert hasher.verify(stored.password_hash, password), f"round {round_}: password lost"
        assert stored.session_epoch == user.session_epoch + 2 * (round_ + 1), f"round {round_}"
