"""Waitlist entries (booking_core.waitlist): SPEC.md section 8's ceilings with the
"At most N characters." message the public API turns into 422, dates from today in the
company's timezone, ranges of at most 62 days, an active service of the catalog."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import attrs
import pytest

from booking_core.demo import demo_catalog
from booking_core.errors import ValidationFailed
from booking_core.waitlist import MAX_RANGE_DAYS, WaitlistRequest, new_entry, request_errors
from tests.factories import email_of_length

TODAY = date(2030, 3, 4)
CATALOG = demo_catalog()
ASKED = WaitlistRequest(
    service_id="svc_standard_clean",
    zip="60601",
    date_from=TODAY + timedelta(days=3),
    name="Ana Pérez",
    email="ana@example.com",
)


def errors_of(**changes: object) -> dict[str, str]:
    return request_errors(attrs.evolve(ASKED, **changes), today=TODAY, catalog=CATALOG)


def test_a_single_date_makes_an_entry_whose_range_is_that_date():
    at = datetime(2030, 3, 4, 15, tzinfo=UTC)
    entry = new_entry(
        attrs.evolve(ASKED, name="  Ana Pérez ", email=" ana@example.com"),
        entry_id="wl_1",
        company_id="cmp_a",
        today=TODAY,
        catalog=CATALOG,
        at=at,
    )
    assert (entry.date_from, entry.date_to, entry.days) == (ASKED.date_from,) * 2 + (1,)
    assert (entry.name, entry.email, entry.frequency_slug) == (
        "Ana Pérez",
        "ana@example.com",
        "one_time",
    )
    assert entry.created_at == at


@pytest.mark.parametrize(
    ("field", "limit"), [("name", 200), ("email", 254), ("phone", 40), ("note", 2_000)]
)
def test_a_field_over_its_ceiling_names_the_limit(field: str, limit: int):
    at_limit = "a" * limit
    if field == "email":
        at_limit = email_of_length(limit)
    assert field not in errors_of(**{field: at_limit})
    assert errors_of(**{field: at_limit + "a"})[field] == f"At most {limit} characters."


def test_a_blank_name_or_a_bad_email_or_zip_is_refused():
    assert errors_of(name="  ") == {"name": "Required."}
    assert errors_of(email="nobody")["email"] == "Not an email address."
    assert errors_of(zip="6060")["zip"] == "A 5-digit US zip code."


def test_the_first_date_is_today_or_later():
    assert errors_of(date_from=TODAY) == {}
    assert "2030-03-04" in errors_of(date_from=TODAY - timedelta(days=1))["date_from"]


def test_a_range_ends_on_or_after_its_start_and_covers_at_most_62_days():
    start = ASKED.date_from
    assert errors_of(date_to=start) == {}
    assert errors_of(date_to=start + timedelta(days=MAX_RANGE_DAYS - 1)) == {}
    assert "62" in errors_of(date_to=start + timedelta(days=MAX_RANGE_DAYS))["date_to"]
    assert "date_to" in errors_of(date_to=start - timedelta(days=1))


def test_the_service_is_an_active_one_of_the_catalog_and_the_frequency_one_of_its():
    assert "service_id" in errors_of(service_id="svc_nothing")
    industry = CATALOG.industries[0]
    retired = attrs.evolve(industry.services[0], active=False)
    catalog = attrs.evolve(
        CATALOG,
        industries=(
            attrs.evolve(industry, services=(retired, *industry.services[1:])),
            *CATALOG.industries[1:],
        ),
    )
    asked = attrs.evolve(ASKED, service_id=retired.id)
    assert "service_id" in request_errors(asked, today=TODAY, catalog=catalog)
    assert "frequency_slug" in errors_of(frequency_slug="hourly")
    assert errors_of(frequency_slug=CATALOG.frequencies[-1].slug) == {}


def test_every_bad_field_is_named_at_once():
    with pytest.raises(ValidationFailed) as refused:
        new_entry(
            attrs.evolve(ASKED, zip="x", name="", date_from=TODAY - timedelta(days=1)),
            entry_id="wl_1",
            company_id="cmp_a",
            today=TODAY,
            catalog=CATALOG,
            at=datetime(2030, 3, 4, tzinfo=UTC),
        )
    assert set(refused.value.field_errors) == {"zip", "name", "date_from"}
