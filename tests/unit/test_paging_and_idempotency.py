"""Keyset pages (DECISIONS.md, Pagination) and idempotency fingerprints (DECISIONS.md,
Idempotency): limits, has-more and continuation, canonical JSON and its fingerprint."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core import idempotency
from booking_core.idempotency import canonical_json, fingerprint
from booking_core.paging import DEFAULT_LIMIT, MAX_LIMIT, Page, PageRequest, Position, page_of
from tests.factories import T0, at
from tests.strategies import json_values

# --- Paging ---------------------------------------------------------------------------------


def rows(count: int) -> list[tuple[Position, str]]:
    """``count`` rows newest first, as a repository hands them to ``page_of``."""
    return [(Position(at(-i), f"row_{i:04d}"), f"row_{i:04d}") for i in range(count)]


def test_page_request_defaults_to_50_rows_newest_first() -> None:
    request = PageRequest()

    assert request.limit == DEFAULT_LIMIT == 50
    assert request.after is None
    assert not request.by_change


def test_page_request_with_updated_since_is_ordered_by_change() -> None:
    assert PageRequest(updated_since=T0).by_change


@pytest.mark.parametrize("limit", [1, 50, 200])
def test_limit_from_1_to_200_is_accepted(limit: int) -> None:
    assert PageRequest(limit=limit).limit == limit


@pytest.mark.parametrize("limit", [-1, 0, 201, 10_000])
def test_limit_outside_1_to_200_is_refused(limit: int) -> None:
    assert MAX_LIMIT == 200
    with pytest.raises(ValueError, match=r"within 1\.\.200"):
        PageRequest(limit=limit)


def test_short_list_is_one_page_without_a_cursor() -> None:
    page = page_of(rows(3), PageRequest(limit=5))

    assert page.items == ("row_0000", "row_0001", "row_0002")
    assert not page.has_more
    assert page.next_after is None


def test_list_of_exactly_the_limit_has_no_more() -> None:
    page = page_of(rows(5), PageRequest(limit=5))

    assert len(page.items) == 5
    assert not page.has_more
    assert page.next_after is None


def test_one_row_past_the_limit_means_more_and_continues_after_the_last_shown() -> None:
    fetched = rows(6)

    page = page_of(fetched, PageRequest(limit=5))

    assert page.items == tuple(row for _, row in fetched[:5])
    assert page.has_more
    assert page.next_after == fetched[4][0]


def test_empty_list_is_an_empty_last_page() -> None:
    assert page_of([], PageRequest()) == Page(items=(), has_more=False, next_after=None)


@given(
    count=st.integers(min_value=0, max_value=120),
    limit=st.integers(min_value=1, max_value=MAX_LIMIT),
)
@example(count=0, limit=1)
@example(count=50, limit=50)
@example(count=120, limit=MAX_LIMIT)
def test_walking_every_page_yields_every_row_once_in_order(count: int, limit: int) -> None:
    everything = rows(count)
    request = PageRequest(limit=limit)
    seen: list[str] = []
    for _ in range(count + 1):
        after = request.after
        # What a repository does: rows strictly after the position, at most limit + 1.
        rest = [r for r in everything if after is None or (r[0].at, r[0].id) < (after.at, after.id)]
        page = page_of(rest[: limit + 1], request)
        assert len(page.items) <= limit
        seen.extend(page.items)
        if not page.has_more:
            break
        assert page.next_after is not None
        request = PageRequest(limit=limit, after=page.next_after)

    assert seen == [row for _, row in everything]


# --- Idempotency ----------------------------------------------------------------------------

BODY = {"startIso": "2026-11-03T09:00:00-05:00", "customer": {"name": "Ada", "email": "a@x.io"}}


def test_idempotency_keys_are_kept_24_hours_and_at_most_255_characters() -> None:
    assert timedelta(hours=24) == idempotency.RETENTION
    assert idempotency.KEY_MAX == 255


def test_canonical_json_sorts_keys_at_every_depth_and_drops_whitespace() -> None:
    assert canonical_json({"b": 1, "a": {"d": [3, 1], "c": None}}) == (
        b'{"a":{"c":null,"d":[3,1]},"b":1}'
    )


def test_canonical_json_keeps_non_ascii_text_as_utf8() -> None:
    assert canonical_json({"name": "Zoë"}) == '{"name":"Zoë"}'.encode()


def test_fingerprint_ignores_key_order_and_whitespace() -> None:
    compact = '{"startIso":"2026-11-03T09:00:00-05:00","customer":{"name":"Ada","email":"a@x.io"}}'
    spread = """
        {
          "customer" : { "email" : "a@x.io",  "name" : "Ada" },
          "startIso" : "2026-11-03T09:00:00-05:00"
        }
    """

    assert fingerprint("POST", "/api/v1/bookings", json.loads(compact)) == fingerprint(
        "POST", "/api/v1/bookings", json.loads(spread)
    )


def test_fingerprint_tells_a_different_body_apart() -> None:
    changed = {**BODY, "startIso": "2026-11-03T09:15:00-05:00"}

    assert fingerprint("POST", "/api/v1/bookings", BODY) != fingerprint(
        "POST", "/api/v1/bookings", changed
    )


def test_fingerprint_tells_list_order_and_value_types_apart() -> None:
    path = "/api/v1/bookings"

    assert fingerprint("POST", path, {"a": [1, 2]}) != fingerprint("POST", path, {"a": [2, 1]})
    assert fingerprint("POST", path, {"a": 1}) != fingerprint("POST", path, {"a": "1"})
    assert fingerprint("POST", path, {"a": None}) != fingerprint("POST", path, {})


def test_fingerprint_tells_method_and_path_apart_but_not_method_case() -> None:
    base = fingerprint("POST", "/api/v1/bookings", BODY)

    assert fingerprint("post", "/api/v1/bookings", BODY) == base
    assert fingerprint("PATCH", "/api/v1/bookings", BODY) != base
    assert fingerprint("POST", "/api/v1/quotes", BODY) != base


def test_fingerprint_parts_cannot_run_into_each_other() -> None:
    assert fingerprint("POST", "/a", {}) != fingerprint("POS", "T/a", {})
    assert fingerprint("POST", "/a", "b") != fingerprint("POST", '/a"', "")


def test_fingerprint_is_a_sha256_hex_digest() -> None:
    digest = fingerprint("POST", "/api/v1/payments", BODY)

    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")


def test_body_with_a_lone_surrogate_escape_still_gets_a_fingerprint() -> None:
    """``"\\ud800"`` is valid JSON text and parses to a lone surrogate; it must not crash."""
    odd = json.loads('{"note": "\\ud800"}')

    assert fingerprint("POST", "/api/v1/payments", odd) != fingerprint(
        "POST", "/api/v1/payments", {"note": ""}
    )


def shuffled(value: object, rng: random.Random) -> object:
    """The same JSON value with every object's keys in another order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: shuffled(inner, rng) for key, inner in items}
    if isinstance(value, list):
        return [shuffled(inner, rng) for inner in value]
    return value


@given(body=json_values, rng=st.randoms(use_true_random=False), indent=st.sampled_from([None, 2]))
@example(body={"b": "\ud800", "a": ["Zoë", {"y": 1, "x": 2}]}, rng=random.Random(1), indent=2)
def test_fingerprint_is_invariant_under_key_order_and_layout(
    body: object, rng: random.Random, indent: int | None
) -> None:
    reordered = json.loads(json.dumps(shuffled(body, rng), indent=indent))

    assert canonical_json(reordered) == canonical_json(body)
    assert fingerprint("POST", "/api/v1/quotes", reordered) == fingerprint(
        "POST", "/api/v1/quotes", body
    )


@given(first=json_values, second=json_values)
def test_fingerprints_are_equal_exactly_when_canonical_bodies_are(
    first: object, second: object
) -> None:
    same_body = canonical_json(first) == canonical_json(second)
    same_print = fingerprint("POST", "/p", first) == fingerprint("POST", "/p", second)

    assert same_print == same_body


@given(body=json_values)
def test_canonical_json_is_valid_json_of_the_same_value(body: object) -> None:
    text = canonical_json(body)

    assert canonical_json(json.loads(text)) == text
