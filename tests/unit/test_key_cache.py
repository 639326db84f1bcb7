"""A verified key is remembered for under a second, so a revoked key stops working on
every worker within one second; unknown secrets are never remembered."""

from __future__ import annotations

from adapters.http.keycache import TTL_SECONDS, CachedAuthenticator
from tests import factories


class _Storage:
    """Answers like ``authenticate``, counting its lookups; ``revoked`` keys answer None."""

    def __init__(self) -> None:
        self.key = factories.api_key("cmp_1").key
        self.revoked = False
        self.lookups = 0

    def __call__(self, secret: str) -> object:
        self.lookups += 1
        return None if self.revoked or secret != "bsk_good" else self.key


def test_a_verified_key_is_not_looked_up_again_within_the_ttl():
    storage, now = _Storage(), [100.0]
    cached = CachedAuthenticator(storage, clock=lambda: now[0])
    assert cached("bsk_good") is storage.key
    now[0] += TTL_SECONDS / 2
    assert cached("bsk_good") is storage.key
    assert storage.lookups == 1


def test_a_revoked_key_stops_working_once_the_ttl_has_passed():
    storage, now = _Storage(), [100.0]
    cached = CachedAuthenticator(storage, clock=lambda: now[0])
    assert cached("bsk_good") is storage.key
    storage.revoked = True
    now[0] += TTL_SECONDS
    assert cached("bsk_good") is None
    assert TTL_SECONDS < 1.0


def test_an_unknown_secret_is_looked_up_every_time():
    storage = _Storage()
    cached = CachedAuthenticator(storage, clock=lambda: 100.0)
    assert cached("bsk_other") is None
    assert cached("bsk_other") is None
    assert storage.lookups == 2
