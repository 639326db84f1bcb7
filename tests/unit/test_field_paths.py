"""The core names fields in snake_case; only the HTTP edge spells them as the wire does.

Each case below makes the core refuse many fields at once. Its paths must carry no
capital letter, and the edge's ``wire_path`` must turn them back into the camelCase
paths the API has always answered with.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs
import pytest

from adapters.http.fieldpaths import merged, shown_key
from adapters.http.reading import parse_json
from adapters.http.routes.catalog import PriceRequest
from adapters.http.structuring import RequestInvalid, structure, structure_query, wire_path
from booking_core import auth, quotes
from booking_core.card_money import card_payment
from booking_core.companies import validate_company
from booking_core.crew import new_crew_member
from booking_core.customers import Address
from booking_core.errors import ValidationFailed
from booking_core.ledger import BookingLedger, Kind, Method, record_by_hand
from booking_core.pricing import Selection, price
from booking_core.quotes import ManualLine
from tests import factories
from tests.unit.bookings_support import AT, CATALOG, booked, local, order


def _company() -> None:
    validate_company(
        attrs.evolve(
            factories.company(),
            code_prefix="x",
            tax_rate_bps=-5,
            custom_domain="not a domain",
            self_service_cutoff_hours=-1,
            min_notice_minutes=-1,
            brand_color="#ffff00",
        )
    )


def _key() -> None:
    auth.issue_key(key_id="key_1", company_id="cmp_1", name=" ", at=AT, scopes=[], rate_limit=5)


def _quote() -> None:
    quotes.create_quote(
        company_id="cmp_1",
        at=AT,
        manual_lines=(ManualLine(" ", -1),),
        expires_at=datetime(2026, 7, 1, 12, 0),
    )


def _multi_date_booking() -> None:
    made = order(
        days=0,
        address=Address("1 Main St", "New York", "NY", "1000", access_notes="x" * 2_001),
        crew_ids=("crew_a", "crew_a"),
    )
    booked(made, start=datetime(2026, 3, 3, 9), additional_starts=[local(2026, 3, 4, 9, 5)])


def _crew_member() -> None:
    new_crew_member(
        member_id="crw_1",
        company_id="cmp_1",
        name="Ada",
        home_zip="1",
        service_areas=("10001", "x"),
        at=AT,
    )


def _hand_payment() -> None:
    record_by_hand(
        BookingLedger("cmp_1", None),
        entry_id="pay_1",
        kind=Kind.PAYMENT,
        amount_cents=-1,
        method=Method.CARD,
        at=AT,
    )


def _card_payment() -> None:
    card_payment(
        entry_id="pay_1",
        company_id="cmp_1",
        booking_id="bkg_1",
        customer_id="cus_1",
        amount_cents=0,
        payment_ref="pi_1",
        at=AT,
    )


def _unknown_frequency() -> None:
    price(CATALOG, Selection("svc_clean", "daily"), at=AT)


def _unknown_manual_fee() -> None:
    price(CATALOG, Selection("svc_clean", manual_fee_ids=("fee_nope",)), at=AT)


def _negative_referral() -> None:
    price(CATALOG, Selection("svc_clean", referral_discount_cents=-1), at=AT)


def _naive_priced_start() -> None:
    price(CATALOG, Selection("svc_clean", start=datetime(2026, 3, 3, 9)), at=AT)


REFUSALS: dict[str, tuple[Callable[[], None], dict[str, str]]] = {
    "company": (
        _company,
        {
            "code_prefix": "codePrefix",
            "tax_rate_bps": "taxRateBps",
            "custom_domain": "customDomain",
            "self_service_cutoff_hours": "selfServiceCutoffHours",
            "min_notice_minutes": "minNoticeMinutes",
            "brand_color": "brandColor",
        },
    ),
    "api key": (_key, {"name": "name", "scopes": "scopes", "rate_limit": "rateLimit"}),
    "quote": (
        _quote,
        {
            "customer_id": "customerId",
            "manual_lines.0.description": "manualLines.0.description",
            "manual_lines.0.amount_cents": "manualLines.0.amountCents",
            "expires_at": "expiresAt",
        },
    ),
    "multi-date booking": (
        _multi_date_booking,
        {
            "days": "days",
            "address.zip": "address.zip",
            "address.access_notes": "address.accessNotes",
            "crew_ids.1": "crewIds.1",
            "start_iso": "startIso",
            "additional_start_isos.0": "additionalStartIsos.0",
        },
    ),
    "crew member": (
        _crew_member,
        {"home_zip": "homeZip", "service_areas.1": "serviceAreas.1"},
    ),
    "hand payment": (
        _hand_payment,
        {"booking_id": "bookingId", "amount_cents": "amountCents", "method": "method"},
    ),
    "card payment": (_card_payment, {"amount_cents": "amountCents"}),
    "unknown frequency": (_unknown_frequency, {"frequency_slug": "frequencySlug"}),
    "unknown manual fee": (_unknown_manual_fee, {"manual_fee_ids.0": "manualFeeIds.0"}),
    "negative referral": (_negative_referral, {"referral_discount_cents": "referralDiscountCents"}),
    "naive start": (_naive_priced_start, {"start_iso": "startIso"}),
}


def _refused_paths(refuse: Callable[[], None]) -> set[str]:
    with pytest.raises(ValidationFailed) as caught:
        refuse()
    return set(caught.value.field_errors)


@pytest.mark.parametrize("case", REFUSALS)
def test_core_field_paths_are_snake_case(case: str) -> None:
    refuse, expected = REFUSALS[case]

    paths = _refused_paths(refuse)

    assert paths == set(expected)
    assert [path for path in paths if path != path.lower()] == []


@pytest.mark.parametrize("case", REFUSALS)
def test_the_edge_spells_core_field_paths_as_the_wire_always_has(case: str) -> None:
    refuse, expected = REFUSALS[case]

    assert {wire_path(path) for path in _refused_paths(refuse)} == set(expected.values())


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("serviceId", "serviceId"),
        ("Zoë café 東京", "Zoë café 東京"),  # letters of any script, as sent
        ("a b\u00a0c", "a b\u00a0c"),  # spaces are shown
        ("a\x00", "a\\u0000"),
        ("\ud800", "\\ud800"),
        ("tab\there\x7f", "tab\\u0009here\\u007f"),
        ("\u202eevil", "\\u202eevil"),  # a bidi override would reorder the message
        ("line\u2028break", "line\\u2028break"),
        ("tag\U000e0041", "tag\\U000e0041"),  # a format character past U+FFFF
    ],
)
def test_a_clients_key_is_shown_as_sent_but_for_characters_no_answer_carries(
    key: str, shown: str
) -> None:
    assert shown_key(key) == shown
    assert shown_key(key).encode("utf-8").decode("utf-8") == shown  # always UTF-8 text


def test_problems_of_one_path_from_several_checks_are_all_kept() -> None:
    assert merged({"a": "One.", "b": "Two."}, {"a": "Three.", "b": "Two."}) == {
        "a": "One. Three.",
        "b": "Two.",
    }


def test_each_bad_key_of_an_object_is_named_under_its_own_escaped_path() -> None:
    raw = b'{"serviceId": "svc", "\\ud800": 1, "a\\u0000": 2, "n": {"b\\u0000": 3}}'

    data, found = parse_json(raw)
    with pytest.raises(RequestInvalid) as caught:
        structure(data, PriceRequest)

    assert found == {
        "\\ud800": "The key must be valid Unicode text (no lone surrogates).",
        "a\\u0000": "The key may not contain NUL characters.",
        "n.b\\u0000": "The key may not contain NUL characters.",
    }
    assert caught.value.field_errors == {
        "\\ud800": "Unknown field.",
        "a\\u0000": "Unknown field.",
        "n": "Unknown field.",
    }


def test_a_query_parameter_name_is_shown_escaped() -> None:
    with pytest.raises(RequestInvalid) as caught:
        structure_query([("a\x00", "1"), ("b\x1b", "2")], None)

    assert caught.value.field_errors == {
        "a\\u0000": "Unknown query parameter.",
        "b\\u001b": "Unknown query parameter.",
    }
