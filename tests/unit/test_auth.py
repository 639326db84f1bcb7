"""API keys (SPEC.md section 5, section 8): scopes, defaults, rate-limit bounds, the key
format with its prefix and checksum, hashing, and edit, rotate and revoke."""

from __future__ import annotations

import hashlib
import zlib
from datetime import timedelta

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core import auth
from booking_core.auth import KeyStatus
from booking_core.errors import InvalidTransition, ValidationFailed
from tests.factories import T0, api_key, at
from tests.strategies import BASE62, key_bodies, scope_sets

SPEC_NO_SCOPES_MESSAGE = (
    "Tick at least one permission — a key with none is refused on every request. "
    "To disable a key, revoke it."
)
SPEC_SCOPES = {
    "catalog:read",
    "bookings:read",
    "bookings:write",
    "customers:read",
    "customers:write",
    "leads:read",
    "leads:write",
    "quotes:read",
    "quotes:write",
    "payments:read",
    "payments:write",
    "crews:read",
    "webhooks:manage",
}
KEY_LENGTH = len("bsk_") + 40 + 6


def reference_checksum(body: str) -> str:
    """CRC32 of the body in six base62 digits, written independently of the module, as a
    secret scanner would."""
    number = zlib.crc32(body.encode("ascii"))
    digits = ""
    for _ in range(6):
        number, digit = divmod(number, 62)
        digits = BASE62[digit] + digits
    return digits


def key_from(body: str) -> str:
    return f"bsk_{body}{reference_checksum(body)}"


VALID_KEY = key_from("A" * 40)


def issue(company_id: str = "cmp_1", **kwargs: object) -> auth.IssuedKey:
    return api_key(company_id, **kwargs)


# --- Scopes, defaults and bounds ------------------------------------------------------------


def test_scopes_are_exactly_the_thirteen_of_the_spec() -> None:
    assert set(auth.SCOPES) == SPEC_SCOPES
    assert len(auth.SCOPES) == len(SPEC_SCOPES)


def test_new_key_defaults_to_three_read_scopes_and_120_per_minute() -> None:
    key = issue().key

    assert key.scopes == {"catalog:read", "bookings:read", "customers:read"}
    assert key.rate_limit_per_minute == 120


def test_issued_key_is_active_with_the_chosen_scopes_and_rate_limit() -> None:
    issued = auth.issue_key(
        key_id="key_1",
        company_id="cmp_1",
        name="Zapier",
        at=T0,
        scopes=["leads:write", "leads:read", "leads:write"],
        rate_limit=600,
    )

    key = issued.key
    assert key.id == "key_1"
    assert key.company_id == "cmp_1"
    assert key.name == "Zapier"
    assert key.scopes == {"leads:read", "leads:write"}
    assert key.rate_limit_per_minute == 600
    assert key.status is KeyStatus.ACTIVE
    assert key.active
    assert key.created_at == key.updated_at == T0
    assert key.revoked_at is None


def test_key_with_no_scopes_is_refused_with_the_spec_message() -> None:
    with pytest.raises(ValidationFailed) as refused:
        issue(scopes=[])

    assert refused.value.message == SPEC_NO_SCOPES_MESSAGE
    assert refused.value.field_errors == {"scopes": SPEC_NO_SCOPES_MESSAGE}


def test_editing_a_key_down_to_no_scopes_is_refused_with_the_spec_message() -> None:
    key = issue().key

    with pytest.raises(ValidationFailed) as refused:
        auth.edit_key(key, at=at(5), scopes=[])

    assert refused.value.message == SPEC_NO_SCOPES_MESSAGE
    assert refused.value.field_errors == {"scopes": SPEC_NO_SCOPES_MESSAGE}


@pytest.mark.parametrize("scope", ["providers:read", "bookings:admin", "CATALOG:READ", ""])
def test_key_with_an_unknown_scope_is_refused_naming_it(scope: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        issue(scopes=["catalog:read", scope])

    assert list(refused.value.field_errors) == ["scopes"]
    assert repr(scope)[1:-1] in refused.value.field_errors["scopes"]


@pytest.mark.parametrize("name", ["", "   ", "\t\n", "x" * 201, "a\nb", "tab\there", "bell\x07"])
def test_key_without_a_usable_name_is_refused(name: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        auth.issue_key(key_id="key_1", company_id="cmp_1", name=name, at=T0)

    assert list(refused.value.field_errors) == ["name"]


def test_a_key_name_too_long_is_told_so_not_that_it_is_missing() -> None:
    with pytest.raises(ValidationFailed) as refused:
        auth.issue_key(key_id="key_1", company_id="cmp_1", name="x" * 201, at=T0)

    assert refused.value.field_errors == {"name": "At most 200 characters (201 given)."}


def test_key_name_of_200_characters_is_accepted_and_trimmed_names_are_kept_trimmed() -> None:
    long = auth.issue_key(key_id="key_1", company_id="cmp_1", name="n" * 200, at=T0)
    padded = auth.issue_key(key_id="key_2", company_id="cmp_1", name="  CRM sync  ", at=T0)

    assert long.key.name == "n" * 200
    assert padded.key.name == "CRM sync"


@pytest.mark.parametrize("rate_limit", [-1, 0, 9, 6_001, 60_000])
def test_rate_limit_outside_10_to_6000_is_refused(rate_limit: int) -> None:
    with pytest.raises(ValidationFailed) as on_create:
        issue(rate_limit=rate_limit)
    with pytest.raises(ValidationFailed) as on_edit:
        auth.edit_key(issue().key, at=at(1), rate_limit=rate_limit)

    assert list(on_create.value.field_errors) == ["rate_limit"]
    assert list(on_edit.value.field_errors) == ["rate_limit"]


@given(rate_limit=st.integers(min_value=10, max_value=6_000))
@example(rate_limit=10)
@example(rate_limit=6_000)
def test_rate_limit_from_10_to_6000_is_accepted(rate_limit: int) -> None:
    issued = issue(rate_limit=rate_limit)

    assert issued.key.rate_limit_per_minute == rate_limit
    assert auth.edit_key(issued.key, at=at(1), rate_limit=rate_limit).rate_limit_per_minute == (
        rate_limit
    )


def test_every_problem_with_a_new_key_is_reported_at_once() -> None:
    with pytest.raises(ValidationFailed) as refused:
        auth.issue_key(key_id="key_1", company_id="cmp_1", name=" ", at=T0, scopes=[], rate_limit=5)

    assert set(refused.value.field_errors) == {"name", "scopes", "rate_limit"}
    assert refused.value.field_errors["scopes"] == SPEC_NO_SCOPES_MESSAGE


@given(scopes=scope_sets)
def test_any_non_empty_set_of_spec_scopes_is_accepted_and_allowed(scopes: frozenset[str]) -> None:
    key = issue(scopes=scopes).key

    assert key.scopes == scopes
    for scope in auth.SCOPES:
        assert key.allows(scope) == (scope in scopes)


# --- The secret: format, checksum, hashing --------------------------------------------------


def test_key_secret_has_a_recognisable_prefix_and_fixed_length() -> None:
    secret = issue().secret

    assert secret.startswith("bsk_")
    assert len(secret) == KEY_LENGTH
    assert all(c in BASE62 for c in secret[4:])


def test_key_checksum_is_crc32_in_base62_so_scanners_can_verify_a_key_offline() -> None:
    for _ in range(20):
        secret = auth.generate_secret()
        assert secret[-6:] == reference_checksum(secret[4:-6])
        assert auth.well_formed(secret)


def test_key_secret_checksum_detects_a_typo() -> None:
    secret = issue().secret
    position = 10
    typo = "a" if secret[position] != "a" else "b"

    assert auth.well_formed(secret)
    assert not auth.well_formed(secret[:position] + typo + secret[position + 1 :])


@given(body=key_bodies)
def test_every_key_with_a_matching_checksum_is_well_formed(body: str) -> None:
    assert auth.well_formed(key_from(body))


@given(
    body=key_bodies,
    position=st.integers(min_value=0, max_value=KEY_LENGTH - 1),
    replacement=st.characters(),
)
@example(body="A" * 40, position=KEY_LENGTH - 1, replacement="é")
@example(body="A" * 40, position=10, replacement="é")
@example(body="A" * 40, position=0, replacement="B")
def test_any_single_character_change_makes_a_key_malformed(
    body: str, position: int, replacement: str
) -> None:
    key = key_from(body)
    changed = key[:position] + replacement + key[position + 1 :]

    assert auth.well_formed(changed) == (changed == key)


@given(text=st.text(max_size=60))
@example(text=VALID_KEY[:-1] + "é")
@example(text=VALID_KEY[:-1] + "\x00")
def test_any_text_is_answered_well_formed_or_not_without_error(text: str) -> None:
    assert auth.well_formed(text) in (True, False)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "bsk_",
        VALID_KEY[:-1],
        VALID_KEY + "0",
        "BSK_" + VALID_KEY[4:],
        "sk_" + VALID_KEY[3:],
        " " + VALID_KEY[1:],
        VALID_KEY[:-1] + " ",
    ],
)
def test_strings_without_the_key_shape_are_not_well_formed(text: str) -> None:
    assert not auth.well_formed(text)


def test_body_outside_base62_is_malformed_even_with_a_matching_checksum() -> None:
    assert not auth.well_formed(key_from("-" * 40))
    assert not auth.well_formed(key_from("A" * 39 + "_"))


def test_storage_keeps_the_sha256_hash_and_a_non_secret_prefix_only() -> None:
    issued = issue()
    secret, key = issued.secret, issued.key

    assert key.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert key.lookup_prefix == secret[:12]
    assert key.lookup_prefix.startswith("bsk_")
    assert auth.lookup_prefix(secret) == key.lookup_prefix
    stored = attrs.asdict(key)
    assert all(secret not in str(value) for value in stored.values())
    # The stored prefix gives away 8 of the 40 random characters, no more.
    assert secret[12:] not in repr(key)


def test_issued_secret_matches_its_own_key_only() -> None:
    first, second = issue(), issue()

    assert auth.matches(first.key, first.secret)
    assert auth.matches(second.key, second.secret)
    assert not auth.matches(first.key, second.secret)
    assert not auth.matches(second.key, first.secret)
    assert not auth.matches(first.key, first.secret[:-1])


def test_every_key_gets_a_fresh_secret() -> None:
    secrets = {issue().secret for _ in range(50)}

    assert len(secrets) == 50
    assert len({auth.lookup_prefix(s) for s in secrets}) == 50


def test_hash_is_deterministic_and_distinct_per_secret() -> None:
    assert auth.hash_secret(VALID_KEY) == auth.hash_secret(VALID_KEY)
    assert auth.hash_secret(VALID_KEY) != auth.hash_secret(key_from("B" * 40))
    assert len(auth.hash_secret(VALID_KEY)) == 64


# --- Edit, rotate, revoke -------------------------------------------------------------------


def test_active_key_scopes_and_rate_limit_can_be_edited() -> None:
    key = issue().key

    edited = auth.edit_key(key, at=at(30), scopes={"payments:read"}, rate_limit=3_000)

    assert edited.scopes == {"payments:read"}
    assert edited.rate_limit_per_minute == 3_000
    assert edited.updated_at == at(30)
    assert edited.created_at == key.created_at
    assert (edited.id, edited.secret_hash, edited.lookup_prefix) == (
        key.id,
        key.secret_hash,
        key.lookup_prefix,
    )


def test_editing_only_the_rate_limit_keeps_the_scopes_and_vice_versa() -> None:
    key = issue(scopes={"leads:read", "leads:write"}, rate_limit=200).key

    limit_only = auth.edit_key(key, at=at(1), rate_limit=50)
    scopes_only = auth.edit_key(key, at=at(1), scopes={"quotes:read"})

    assert limit_only.scopes == {"leads:read", "leads:write"}
    assert limit_only.rate_limit_per_minute == 50
    assert scopes_only.scopes == {"quotes:read"}
    assert scopes_only.rate_limit_per_minute == 200


def test_refused_edit_leaves_the_key_as_it_was() -> None:
    key = issue().key

    with pytest.raises(ValidationFailed):
        auth.edit_key(key, at=at(1), scopes={"catalog:read"}, rate_limit=9)

    assert key.scopes == auth.DEFAULT_SCOPES
    assert key.rate_limit_per_minute == 120


def test_revoke_marks_the_key_revoked_at_that_time() -> None:
    key = issue().key

    revoked = auth.revoke_key(key, at=at(60))

    assert revoked.status is KeyStatus.REVOKED
    assert not revoked.active
    assert revoked.revoked_at == at(60)
    assert revoked.updated_at == at(60)


def test_revoking_a_revoked_key_changes_nothing() -> None:
    revoked = auth.revoke_key(issue().key, at=at(60))

    assert auth.revoke_key(revoked, at=at(120)) == revoked


def test_revoked_key_cannot_be_edited_or_rotated() -> None:
    revoked = auth.revoke_key(issue().key, at=at(60))

    with pytest.raises(InvalidTransition, match="revoked") as on_edit:
        auth.edit_key(revoked, at=at(61), rate_limit=500)
    with pytest.raises(InvalidTransition, match="revoked") as on_rotate:
        auth.rotate_key(revoked, at=at(61))

    assert on_edit.value.action == "edit"
    assert on_rotate.value.action == "rotate"
    assert on_edit.value.entity_id == revoked.id


def test_revoked_key_cannot_be_edited_even_to_the_same_settings() -> None:
    key = issue().key
    revoked = auth.revoke_key(key, at=at(60))

    with pytest.raises(InvalidTransition):
        auth.edit_key(revoked, at=at(61), scopes=key.scopes, rate_limit=key.rate_limit_per_minute)


def test_rotated_key_old_secret_no_longer_matches() -> None:
    issued = issue(scopes={"bookings:write"}, rate_limit=300)

    rotated = auth.rotate_key(issued.key, at=at(90))

    assert not auth.matches(rotated.key, issued.secret)
    assert auth.matches(rotated.key, rotated.secret)
    assert auth.well_formed(rotated.secret)
    assert rotated.secret != issued.secret
    assert rotated.key.lookup_prefix == rotated.secret[:12]


def test_rotation_keeps_the_key_identity_scopes_and_limit() -> None:
    issued = issue(scopes={"bookings:write"}, rate_limit=300)

    rotated = auth.rotate_key(issued.key, at=at(90)).key

    assert rotated.id == issued.key.id
    assert rotated.company_id == issued.key.company_id
    assert rotated.name == issued.key.name
    assert rotated.scopes == {"bookings:write"}
    assert rotated.rate_limit_per_minute == 300
    assert rotated.created_at == T0
    assert rotated.updated_at == at(90)
    assert rotated.active


def test_revoked_key_still_remembers_its_settings_for_the_record() -> None:
    key = issue(scopes={"crews:read"}, rate_limit=10).key

    revoked = auth.revoke_key(key, at=T0 + timedelta(days=1))

    assert revoked.scopes == {"crews:read"}
    assert revoked.rate_limit_per_minute == 10
    assert revoked.secret_hash == key.secret_hash


@pytest.mark.parametrize(
    "name",
    ["Zapier\tsync", "Zapier\nsync", "Zapier\u2028sync", "gpj.\u202eexe", "Zap\u200bier", "x\x7f"],
)
def test_a_key_name_is_one_line_that_reads_as_written(name: str) -> None:
    assert "name" in auth.validate_key_settings(name, None, None)


def test_a_key_name_may_hold_any_letter_or_symbol() -> None:
    assert auth.validate_key_settings("Zoë's site — café (déjà vu) 日本", None, None) == {}
