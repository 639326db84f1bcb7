"""Webhook secrets and signatures (Standard Webhooks), checked with the reference
``standardwebhooks`` library as a receiver uses it, and the retry schedule of
DECISIONS.md "Webhooks" with its jitter and ``Retry-After``."""

from __future__ import annotations

import base64
import json
import random
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from booking_core.webhooks import (
    JITTER,
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    envelope,
    headers,
    new_secret,
    next_attempt_at,
    sign,
)

BODY = json.dumps(
    {"id": "evt_1", "type": "booking.created", "data": {"id": "bkg_1", "note": "café"}}
).encode()
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SCHEDULE = [
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
]


def delivery(secrets: list[str], body: bytes = BODY) -> dict[str, str]:
    return headers(secrets, "evt_1", int(time.time()), body)


def test_new_secret_is_whsec_and_the_base64_of_32_random_bytes() -> None:
    first, second = new_secret(), new_secret()
    assert first.startswith("whsec_")
    assert len(base64.b64decode(first.removeprefix("whsec_"), validate=True)) == 32
    assert first != second


def test_signature_matches_the_standard_webhooks_example() -> None:
    """The example of the Standard Webhooks specification, byte for byte."""
    signature = sign(
        ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        b'{"test": 2432232314}',
    )
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_receiver_verifies_our_delivery_with_the_reference_library() -> None:
    secret = new_secret()
    sent = delivery([secret])
    assert sent["content-type"] == "application/json"
    assert sent["webhook-id"] == "evt_1"
    assert Webhook(secret).verify(BODY, sent) == json.loads(BODY)


def test_two_secrets_give_two_signatures_either_receiver_accepts() -> None:
    old, new = new_secret(), new_secret()
    sent = delivery([new, old])
    assert len(sent["webhook-signature"].split(" ")) == 2
    assert Webhook(new).verify(BODY, sent) == json.loads(BODY)
    assert Webhook(old).verify(BODY, sent) == json.loads(BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY, sent)


def test_a_tampered_body_or_id_fails_verification() -> None:
    secret = new_secret()
    sent = delivery([secret])
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace(b"bkg_1", b"bkg_2"), sent)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, {**sent, "webhook-id": "evt_2"})


def test_a_retry_keeps_the_id_and_signs_its_own_timestamp() -> None:
    secret = new_secret()
    first = headers([secret], "evt_1", 1_700_000_000, BODY)
    retry = headers([secret], "evt_1", 1_700_000_300, BODY)
    assert first["webhook-id"] == retry["webhook-id"]
    assert first["webhook-signature"] != retry["webhook-signature"]


@pytest.mark.parametrize(
    "bad", [[], ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], ["whsec_not base64!"], ["whsec_"]]
)
def test_sign_refuses_no_secret_or_a_malformed_one(bad: list[str]) -> None:
    with pytest.raises(ValueError, match="secret"):
        sign(bad, "evt_1", 1, BODY)


def test_sign_refuses_one_secret_given_as_a_string() -> None:
    """A str is a Sequence[str]: each character would otherwise be taken for a secret."""
    with pytest.raises(TypeError):
        sign(new_secret(), "evt_1", 1, BODY)


# -- retry schedule ----------------------------------------------------------------------


def test_schedule_is_the_one_decided() -> None:
    assert list(RETRY_DELAYS) == SCHEDULE
    assert MAX_ATTEMPTS == 8


@pytest.mark.parametrize(("attempt", "wait"), list(enumerate(SCHEDULE, start=1)))
def test_middle_draw_waits_exactly_the_schedule(attempt: int, wait: timedelta) -> None:
    assert next_attempt_at(attempt, NOW, lambda: 0.5) == NOW + wait


def test_no_retry_after_the_last_attempt() -> None:
    assert next_attempt_at(MAX_ATTEMPTS, NOW, lambda: 0.5) is None
    assert next_attempt_at(MAX_ATTEMPTS, NOW, lambda: 0.5, retry_after=60) is None
    assert next_attempt_at(MAX_ATTEMPTS - 1, NOW, lambda: 0.5) is not None


def test_jitter_bounds_are_a_fifth_either_way() -> None:
    assert JITTER == 0.2
    assert next_attempt_at(2, NOW, lambda: 0.0) == NOW + timedelta(minutes=4)
    assert next_attempt_at(2, NOW, lambda: 1.0) == NOW + timedelta(minutes=6)


@given(attempt=st.integers(1, len(SCHEDULE)), seed=st.integers(0, 2**32))
def test_seeded_waits_stay_within_the_jitter(attempt: int, seed: int) -> None:
    when = next_attempt_at(attempt, NOW, random.Random(seed).random)
    assert when is not None
    base = SCHEDULE[attempt - 1]
    assert base * 0.8 <= when - NOW <= base * 1.2


def test_retry_after_postpones_but_never_hastens() -> None:
    assert next_attempt_at(1, NOW, lambda: 0.5, retry_after=120) == NOW + timedelta(minutes=2)
    assert next_attempt_at(2, NOW, lambda: 0.5, retry_after=1) == NOW + timedelta(minutes=5)
    assert next_attempt_at(1, NOW, lambda: 0.5, retry_after=0) == NOW + timedelta(seconds=5)


@pytest.mark.parametrize("asked", [86_400, 1e30, float("inf")])
def test_retry_after_is_capped_at_ten_hours(asked: float) -> None:
    assert next_attempt_at(1, NOW, lambda: 0.5, retry_after=asked) == NOW + timedelta(hours=10)


def test_naive_now_bad_attempt_or_bad_draw_is_a_bug() -> None:
    with pytest.raises(ValueError, match="timezone"):
        next_attempt_at(1, NOW.replace(tzinfo=None), lambda: 0.5)
    with pytest.raises(ValueError, match="from 1"):
        next_attempt_at(0, NOW, lambda: 0.5)
    with pytest.raises(ValueError, match="random"):
        next_attempt_at(1, NOW, lambda: 1.5)


def test_envelope_is_the_documented_four_fields_in_utf8_json() -> None:
    at = datetime(2026, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-5)))
    body = envelope("evt_1", "booking.created", at, {"id": "bkg_1", "note": "café"})
    assert json.loads(body) == {
        "id": "evt_1",
        "type": "booking.created",
        "createdAt": "2026-03-01T07:00:00-05:00",
        "data": {"id": "bkg_1", "note": "café"},
    }
    assert "café".encode() in body  # UTF-8 as is, not \u escapes


def test_envelope_refuses_a_naive_time() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        envelope("evt_1", "webhook.test", datetime(2026, 3, 1), {})
