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


class _Feed:
    """A change feed's key stamp, moved by hand; None while it cannot tell."""

    def __init__(self) -> None:
        self.stamp: object = 1

    def __call__(self) -> object:
        return self.stamp


def test_with_a_change_feed_a_verified_key_is_trusted_until_a_key_changes():
    storage, feed, now = _Storage(), _Feed(), [100.0]
    cached = CachedAuthenticator(storage, stamp=feed, clock=lambda: now[0])
    assert cached("bsk_good") is storage.key
    now[0] += 3600  # no time limit while the feed vouches for it
    assert cached("bsk_good") is storage.key
    assert cached.known("bsk_good") is storage.key
    assert storage.lookups == 1
    storage.revoked = True
    feed.stamp = 2
    assert cached.known("bsk_good") is None
    assert cached("bsk_good") is None
    assert storage.lookups == 2


def test_while_the_feed_cannot_tell_keys_are_trusted_for_under_a_second_only():
    storage, feed, now = _Storage(), _Feed(), [100.0]
    cached = CachedAuthenticator(storage, stamp=feed, clock=lambda: now[0])
    assert cached("bsk_good") is storage.key
    feed.stamp = None
    now[0] += TTL_SECONDS / 2
    assert cached.known("bsk_good") is storage.key
    now[0] += TTL_SECONDS
    assert cached.known("bsk_good") is None


def test_known_never_looks_a_secret_up():
    storage = _Storage()
    cached = CachedAuthenticator(storage, stamp=_Feed())
    assert cached.known("bsk_good") is None
    assert storage.lookups == 0
