"""Changing a customer's record (DECISIONS.md, customers): the contact details, the saved
addresses with their one default, and the exact refusals of merges, as the API shows them."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from booking_core.customers import (
    MAX_MERGE_HOPS,
    Address,
    Customer,
    SavedAddress,
    merge,
    merge_survivor,
    new_customer,
    remove_address,
    replace_address,
    with_contact,
)
from booking_core.errors import RuleViolation, ValidationFailed
from tests.factories import T0, at

HOME = Address("1 Main St", "New York", "NY", "10001")
OFFICE = Address("9 Elm St", "Chicago", "IL", "60614")
CABIN = Address("3 Lake Rd", "Denver", "CO", "80202")


def make(customer_id: str = "cus_1", **changes: object) -> Customer:
    values: dict[str, object] = {
        "customer_id": customer_id,
        "company_id": "cmp_acme",
        "name": "Ada Lovelace",
        "email": f"{customer_id}@example.com",
        "phone": "+12125550100",
        "at": T0,
    }
    values.update(changes)
    return new_customer(**values)  # type: ignore[arg-type]


def with_addresses(*addresses: Address) -> Customer:
    """A customer with ``addresses`` saved as ``adr_1``, ``adr_2``, ...; the first is the
    default."""
    saved = tuple(SavedAddress(f"adr_{i}", a) for i, a in enumerate(addresses, start=1))
    return attrs.evolve(make(), addresses=saved, default_address_id="adr_1")


def field_errors(call: Callable[[], object]) -> dict[str, str]:
    """The field errors ``call`` is refused with."""
    with pytest.raises(ValidationFailed) as refused:
        call()
    return refused.value.field_errors


# --- Field messages at creation --------------------------------------------------------------


def test_new_customer_refusals_name_the_limit() -> None:
    assert field_errors(lambda: make(name=" ", phone="1" * 41)) == {
        "name": "Required, at most 200 characters.",
        "phone": "At most 40 characters.",
    }


def test_address_errors_say_what_each_field_needs() -> None:
    blank = Address(" ", "", "", "1000", line2="x" * 201, access_notes="x" * 2_001)

    assert blank.errors() == {
        "address.line1": "Required.",
        "address.line2": "At most 200 characters.",
        "address.city": "Required.",
        "address.state": "Required.",
        "address.zip": "A 5-digit US zip code.",
        "address.access_notes": "At most 2000 characters.",
    }
    assert attrs.evolve(HOME, city="x" * 121, state="N.Y.").errors() == {
        "address.city": "At most 120 characters.",
        "address.state": "A two-letter state code.",
    }
    # A street or city of zero-width characters would print as nothing on a crew's job.
    assert attrs.evolve(HOME, line1="\u200b", city=" \u200d\ufeff ").errors() == {
        "address.line1": "Required: at least one visible character.",
        "address.city": "Required: at least one visible character.",
    }


# --- Contact details ------------------------------------------------------------------------


def test_with_contact_changes_name_and_phone_and_keeps_the_email() -> None:
    customer = make(email="Ada@Example.com")

    changed = with_contact(customer, name="  Ada King ", phone="+13125550199", at=at(7))

    assert (changed.name, changed.phone, changed.email) == (
        "Ada King",
        "+13125550199",
        "Ada@Example.com",
    )
    assert changed.updated_at == at(7)
    assert changed.created_at == T0


def test_with_contact_without_a_phone_clears_it() -> None:
    assert with_contact(make(), name="Ada", phone=None, at=at(1)).phone is None


def test_with_contact_accepts_fields_at_their_limits() -> None:
    changed = with_contact(make(), name="n" * 200, phone="1" * 40, at=at(1))

    assert (len(changed.name), changed.phone) == (200, "1" * 40)


@pytest.mark.parametrize(
    ("name", "phone", "errors"),
    [
        ("", "+12125550100", {"name": "Required, at most 200 characters."}),
        ("   ", None, {"name": "Required, at most 200 characters."}),
        ("n" * 201, None, {"name": "Required, at most 200 characters."}),
        ("Ada", "1" * 41, {"phone": "At most 40 characters."}),
        (
            "",
            "1" * 41,
            {"name": "Required, at most 200 characters.", "phone": "At most 40 characters."},
        ),
    ],
)
def test_with_contact_refuses_a_missing_or_long_name_and_a_long_phone(
    name: str, phone: str | None, errors: dict[str, str]
) -> None:
    assert field_errors(lambda: with_contact(make(), name=name, phone=phone, at=at(1))) == errors


# --- Replacing a saved address --------------------------------------------------------------


def test_replacing_an_address_changes_only_that_address() -> None:
    customer = with_addresses(HOME, OFFICE, CABIN)
    moved = SavedAddress("adr_2", attrs.evolve(OFFICE, line1="10 Elm St"))

    changed = replace_address(customer, moved, at=at(3), default=False)

    assert changed.addresses == (
        SavedAddress("adr_1", HOME),
        moved,
        SavedAddress("adr_3", CABIN),
    )
    assert changed.default_address_id == "adr_1"
    assert changed.default_address == HOME
    assert changed.updated_at == at(3)


def test_replacing_an_address_as_default_makes_it_the_default() -> None:
    customer = with_addresses(HOME, OFFICE)

    changed = replace_address(customer, SavedAddress("adr_2", CABIN), at=at(3), default=True)

    assert changed.default_address_id == "adr_2"
    assert changed.default_address == CABIN


def test_replacing_the_default_address_keeps_it_the_default() -> None:
    customer = with_addresses(HOME, OFFICE)

    changed = replace_address(customer, SavedAddress("adr_1", CABIN), at=at(3), default=False)

    assert changed.default_address == CABIN
    assert changed.addresses[1] == SavedAddress("adr_2", OFFICE)


def test_replacing_an_address_the_customer_does_not_have_is_refused() -> None:
    customer = with_addresses(HOME, OFFICE)

    with pytest.raises(RuleViolation) as refused:
        replace_address(customer, SavedAddress("adr_9", CABIN), at=at(3), default=True)

    assert refused.value.message == "Customer cus_1 has no saved address adr_9."


def test_replacing_an_address_of_a_customer_without_addresses_is_refused() -> None:
    with pytest.raises(RuleViolation, match="no saved address adr_1"):
        replace_address(make(), SavedAddress("adr_1", HOME), at=at(3), default=False)


def test_replacing_an_address_with_a_bad_one_is_refused_field_by_field() -> None:
    customer = with_addresses(HOME, OFFICE)
    bad = SavedAddress("adr_2", attrs.evolve(OFFICE, zip="6061", state="Illinois"))

    assert field_errors(lambda: replace_address(customer, bad, at=at(3), default=False)) == {
        "address.zip": "A 5-digit US zip code.",
        "address.state": "A two-letter state code.",
    }


# --- Removing a saved address ---------------------------------------------------------------


def test_removing_an_address_that_is_not_the_default_keeps_the_default() -> None:
    customer = with_addresses(HOME, OFFICE, CABIN)

    changed = remove_address(customer, "adr_2", at=at(4))

    assert changed.addresses == (SavedAddress("adr_1", HOME), SavedAddress("adr_3", CABIN))
    assert changed.default_address_id == "adr_1"
    assert changed.updated_at == at(4)


def test_removing_the_default_address_makes_the_first_one_left_the_default() -> None:
    customer = with_addresses(HOME, OFFICE, CABIN)

    changed = remove_address(customer, "adr_1", at=at(4))

    assert changed.default_address_id == "adr_2"
    assert changed.default_address == OFFICE


def test_removing_the_only_address_leaves_no_default() -> None:
    customer = with_addresses(HOME)

    changed = remove_address(customer, "adr_1", at=at(4))

    assert changed.addresses == ()
    assert changed.default_address_id is None
    assert changed.default_address is None
    assert changed.updated_at == at(4)


def test_removing_an_address_the_customer_does_not_have_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        remove_address(with_addresses(HOME), "adr_9", at=at(4))

    assert refused.value.message == "Customer cus_1 has no saved address adr_9."


# --- Refused merges, word for word ----------------------------------------------------------


def test_merging_a_customer_into_itself_is_refused_with_its_message() -> None:
    customer = make()

    with pytest.raises(RuleViolation) as refused:
        merge(customer, customer, at=at(1))

    assert refused.value.message == "A customer cannot be merged into itself."


def test_merging_customers_of_two_companies_is_refused_with_its_message() -> None:
    with pytest.raises(RuleViolation) as refused:
        merge(make(), make("cus_2", company_id="cmp_other"), at=at(1))

    assert refused.value.message == "Customers of different companies cannot be merged."


def test_merging_a_record_already_merged_names_it() -> None:
    _, gone = merge(make(), make("cus_2"), at=at(1))

    with pytest.raises(RuleViolation) as refused:
        merge(make("cus_3"), gone, at=at(2))

    assert refused.value.message == "Customer cus_2 was already merged into another."


def test_a_merge_chain_too_long_to_follow_is_refused_with_advice() -> None:
    people = [make(f"cus_{i}") for i in range(MAX_MERGE_HOPS + 2)]
    for i in range(MAX_MERGE_HOPS + 1):
        people[i] = attrs.evolve(people[i], merged_into=people[i + 1].id)
    by_id = {p.id: p for p in people}

    with pytest.raises(RuleViolation) as refused:
        merge_survivor(people[0], by_id.__getitem__)

    assert refused.value.message == (
        "Customer cus_0 leads through more than 16 merges; merge it into its survivor directly."
    )
