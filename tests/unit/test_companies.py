"""Companies (DECISIONS.md, Tenancy and ids): field rules and the default code prefix."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core.companies import RESERVED_SLUGS, Company, default_code_prefix, validate_company
from booking_core.errors import ValidationFailed
from booking_core.plain_text import NOT_ONE_LINE
from tests import factories


def refused_fields(**changes: object) -> set[str]:
    """The fields named when a company with ``changes`` is validated (empty if valid)."""
    try:
        validate_company(attrs.evolve(factories.company(), **changes))
    except ValidationFailed as refused:
        return set(refused.field_errors)
    return set()


def test_valid_company_is_returned_unchanged() -> None:
    company = factories.company()

    assert validate_company(company) is company


def test_new_company_defaults_match_the_decisions() -> None:
    company = Company(
        id="cmp_1",
        slug="sparkle",
        name="Sparkle",
        timezone="America/Chicago",
        code_prefix="SP",
        created_at=factories.T0,
    )

    assert company.self_service_cutoff_hours == 24
    assert company.min_notice_minutes == 120
    assert company.tax_rate_bps == 0
    assert company.custom_domain is None
    assert validate_company(company) is company


@pytest.mark.parametrize(
    "slug", ["a", "sparkle", "sparkle-cleaning", "abc123", "123", "a-b-c", "x" * 63]
)
def test_slug_of_lowercase_letters_digits_and_single_hyphens_is_accepted(slug: str) -> None:
    assert refused_fields(slug=slug) == set()


@pytest.mark.parametrize(
    "slug",
    [
        "",
        "Sparkle",
        "-sparkle",
        "sparkle-",
        "sparkle--cleaning",
        "sparkle_cleaning",
        "sparkle cleaning",
        "café",
        "x" * 64,
        "sparkle\n",
        "sparkle/../admin",
    ],
)
def test_slug_outside_the_address_safe_shape_is_refused(slug: str) -> None:
    assert refused_fields(slug=slug) == {"slug"}


@pytest.mark.parametrize("slug", sorted(RESERVED_SLUGS))
def test_a_slug_that_is_one_of_the_service_s_own_addresses_is_refused(slug: str) -> None:
    # /admin/book would be the workspace's 404 page, /q/book a quote token's
    assert refused_fields(slug=slug) == {"slug"}


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_company_without_a_usable_name_is_refused(name: str) -> None:
    assert refused_fields(name=name) == {"name"}


@pytest.mark.parametrize("name", ["Evil\nBcc: x@y.example", "Tab\there", "a\u202eb", "zw\u200bsp"])
def test_a_company_name_is_one_line_of_plain_text(name: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        validate_company(attrs.evolve(factories.company(), name=name))
    assert refused.value.field_errors == {"name": NOT_ONE_LINE}


def test_company_name_of_200_characters_is_accepted() -> None:
    assert refused_fields(name="n" * 200) == set()


@pytest.mark.parametrize(
    "timezone", ["America/New_York", "Pacific/Honolulu", "Europe/London", "UTC"]
)
def test_iana_timezone_is_accepted(timezone: str) -> None:
    assert refused_fields(timezone=timezone) == set()


@pytest.mark.parametrize(
    "timezone",
    [
        "",
        "Mars/Olympus_Mons",
        "EST5EDT ",
        "America",
        "America/",
        "../etc/passwd",
        "a\x00b",
        "localtime",  # the host's own clock, whatever it is set to
        "Factory",
        "posixrules",
        "posix/America/New_York",
    ],
)
def test_unknown_timezone_is_a_field_error_not_a_crash(timezone: str) -> None:
    assert refused_fields(timezone=timezone) == {"timezone"}


@pytest.mark.parametrize("prefix", ["sc", "S", "SCX", "S1", "S-", "", "SC\n", "ÄB"])
def test_code_prefix_must_be_two_capital_letters(prefix: str) -> None:
    assert refused_fields(code_prefix=prefix) == {"code_prefix"}


@pytest.mark.parametrize("tax", [0, 887, 10_000])
def test_tax_rate_from_0_to_10000_bps_is_accepted(tax: int) -> None:
    assert refused_fields(tax_rate_bps=tax) == set()


@pytest.mark.parametrize("tax", [-1, 10_001])
def test_tax_rate_outside_0_to_10000_bps_is_refused(tax: int) -> None:
    assert refused_fields(tax_rate_bps=tax) == {"tax_rate_bps"}


@pytest.mark.parametrize("domain", ["book.example.com", "example.co", "a-b.example.org"])
def test_custom_domain_host_name_is_accepted(domain: str) -> None:
    assert refused_fields(custom_domain=domain) == set()


@pytest.mark.parametrize(
    "domain",
    [
        "",
        "localhost",
        "Book.Example.com",
        "https://book.example.com",
        "book.example.com/",
        "book.example.com:8443",
        "-book.example.com",
        "book..example.com",
        "book.example.com\n",
        "10.0.0.1",
    ],
)
def test_custom_domain_that_is_not_a_lowercase_host_name_is_refused(domain: str) -> None:
    assert refused_fields(custom_domain=domain) == {"custom_domain"}


@pytest.mark.parametrize(("hours", "ok"), [(0, True), (336, True), (-1, False), (337, False)])
def test_self_service_cutoff_is_0_to_336_hours(hours: int, ok: bool) -> None:
    assert refused_fields(self_service_cutoff_hours=hours) == (
        set() if ok else {"self_service_cutoff_hours"}
    )


@pytest.mark.parametrize(
    ("minutes", "ok"), [(0, True), (20_160, True), (-1, False), (20_161, False)]
)
def test_minimum_notice_is_0_to_20160_minutes(minutes: int, ok: bool) -> None:
    assert refused_fields(min_notice_minutes=minutes) == (set() if ok else {"min_notice_minutes"})


def test_every_invalid_company_field_is_reported_at_once() -> None:
    assert refused_fields(
        slug="Bad Slug",
        name="",
        timezone="Nowhere/City",
        code_prefix="x",
        tax_rate_bps=-5,
        custom_domain="not a domain",
        self_service_cutoff_hours=-1,
        min_notice_minutes=-1,
    ) == {
        "slug",
        "name",
        "timezone",
        "code_prefix",
        "tax_rate_bps",
        "custom_domain",
        "self_service_cutoff_hours",
        "min_notice_minutes",
    }


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("Sparkle Cleaning", "SC"),
        ("sparkle cleaning co", "SC"),
        ("Mr. Clean Home Services", "MC"),
        ("Acme", "AC"),
        ("A", "AX"),
        ("", "XX"),
        ("123", "XX"),
        ("3M Cleaners", "MC"),
        ("O'Brien", "OB"),
        ("\u00c9b\u00e8ne M\u00e9nage", "EM"),
    ],
)
def test_default_code_prefix_is_initials_else_first_letters(name: str, prefix: str) -> None:
    assert default_code_prefix(name) == prefix


@given(name=st.text(max_size=80))
@example(name="Zoë Ørsted")
@example(name="---")
def test_default_code_prefix_is_always_a_valid_code_prefix(name: str) -> None:
    prefix = default_code_prefix(name)

    company = attrs.evolve(factories.company(), code_prefix=prefix)
    assert validate_company(company) is company
