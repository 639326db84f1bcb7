"""Cursor pagination: ``limit`` bounds and default, opaque tamper-evident cursors, walking
``nextCursor`` over every row once, and ``updatedSince`` polling that never misses a change
that committed late. (On PostgreSQL a test polls once the transactions open on the server
have ended, which other test runs may hold a moment: ``tests.polling``.)"""

from __future__ import annotations

import string
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

from booking_core import leads
from booking_core.leads import LeadStage
from booking_core.services.customers import CreateCustomer, create_customer
from tests.e2e.support import API, Stack, error_of
from tests.polling import settle

ROWS = 55
EPOCH = "2000-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def paged(stack: Stack) -> Iterator[httpx.Client]:
    """A client of a company of its own with exactly ``ROWS`` customers."""
    company, key = stack.new_company()
    for n in range(ROWS):
        create_customer(
            CreateCustomer(company_id=company.id, name=f"Row {n:02}", email=f"row{n:02}@x.com"),
            uow=stack.container.uow(),
            clock=stack.container.clock,
            phones=stack.container.phones,
        )
    settle(stack.container.database)  # so that lists by change show every row at once
    with stack.client(key) as c:
        yield c


def walk(c: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        page = c.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        assert set(body) == {"data", "hasMore", "nextCursor"}
        rows += body["data"]
        if not body["hasMore"]:
            if "updatedSince" not in params:
                assert body["nextCursor"] == ""  # a string, as SPEC.md types it
            return rows
        cursor = body["nextCursor"]
        assert isinstance(cursor, str)
    raise AssertionError("the walk never ended")


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_limit_defaults_to_50(paged: httpx.Client):
    body = paged.get(f"{API}/customers").json()
    assert len(body["data"]) == 50
    assert body["hasMore"] is True
    assert body["nextCursor"]


@pytest.mark.parametrize(("limit", "count"), [("1", 1), ("200", ROWS), ("55", ROWS)])
def test_limit_within_1_to_200_is_honoured(paged: httpx.Client, limit: str, count: int):
    body = paged.get(f"{API}/customers", params={"limit": limit}).json()
    assert len(body["data"]) == count
    assert body["hasMore"] is (count < ROWS)


@pytest.mark.parametrize("limit", ["0", "201", "-1", "abc", "1.5", "", "1e2", " 5"])
def test_limit_outside_1_to_200_is_invalid_request_on_limit(paged: httpx.Client, limit: str):
    response = paged.get(f"{API}/customers", params={"limit": limit})
    error = error_of(response, 400, "invalid_request")
    assert set(error["fieldErrors"]) == {"limit"}


def test_walking_next_cursor_visits_every_row_once_newest_first(paged: httpx.Client):
    rows = walk(paged, f"{API}/customers", limit=7)
    ids = [r["id"] for r in rows]
    assert len(ids) == ROWS
    assert len(set(ids)) == ROWS
    assert {r["email"] for r in rows} == {f"row{n:02}@x.com" for n in range(ROWS)}
    keys = [(instant(r["createdAt"]), r["id"]) for r in rows]
    assert keys == sorted(keys, reverse=True)


def _cursor_of(c: httpx.Client, path: str, **params: Any) -> str:
    cursor: str = c.get(path, params={"limit": 1, **params}).json()["nextCursor"]
    assert cursor
    return cursor


URLSAFE = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def _same_data(a: str, b: str) -> bool:
    """True when two last characters of a 16-byte base64 part carry the same two bits."""
    return URLSAFE.index(a) >> 4 == URLSAFE.index(b) >> 4


def _flip(text: str, at: int) -> str:
    return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :]


def test_an_empty_cursor_is_the_first_page(paged: httpx.Client):
    first = paged.get(f"{API}/customers", params={"limit": 3}).json()
    empty = paged.get(f"{API}/customers", params={"limit": 3, "cursor": ""}).json()
    assert [c["id"] for c in empty["data"]] == [c["id"] for c in first["data"]]


def test_a_tampered_cursor_is_invalid_request_on_cursor(paged: httpx.Client):
    cursor = _cursor_of(paged, f"{API}/customers")
    body = cursor.partition(".")[0]
    bad = [
        _flip(cursor, 3),
        _flip(cursor, len(body) + 2),
        body,
        f"{body}.",
        cursor + "x",
        "not-a-cursor",
        "e30.e30",
        # The same bytes spelled another way: padded, +/ for -_, spare bits of the
        # signature's last character set (16 bytes: 22 characters, 4 bits spare).
        cursor + "==",
        cursor.translate(str.maketrans("-_", "+/")),
        *(cursor[:-1] + c for c in URLSAFE if c != cursor[-1] and _same_data(c, cursor[-1])),
    ]
    bad = [b for b in bad if b != cursor]
    assert len(bad) > 20
    for tampered in bad:
        response = paged.get(f"{API}/customers", params={"cursor": tampered})
        error = error_of(response, 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"cursor"}, tampered


def test_a_cursor_from_another_list_order_filter_or_company_is_refused(
    paged: httpx.Client, stack: Stack, api: httpx.Client
):
    foreign = {
        "another list": _cursor_of(api, f"{API}/leads"),
        "another order": _cursor_of(paged, f"{API}/customers", updatedSince=EPOCH),
        "another filter": _cursor_of(paged, f"{API}/customers", search="row"),
        "another company": _cursor_of(api, f"{API}/customers"),
    }
    for what, cursor in foreign.items():
        response = paged.get(f"{API}/customers", params={"cursor": cursor})
        error = error_of(response, 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"cursor"}, what


def test_a_cursor_continues_with_updated_since_written_at_any_offset(paged: httpx.Client):
    """The same instant is the same filter: ``Z``, ``+00:00`` or New York's offset."""
    cursor = _cursor_of(paged, f"{API}/customers", updatedSince=EPOCH)
    first = paged.get(f"{API}/customers", params={"cursor": cursor, "updatedSince": EPOCH})
    assert first.status_code == 200, first.text
    for same in ("2000-01-01T00:00:00+00:00", "1999-12-31T19:00:00-05:00"):
        again = paged.get(f"{API}/customers", params={"cursor": cursor, "updatedSince": same})
        assert again.status_code == 200, (same, again.text)
        assert again.json()["data"] == first.json()["data"]
    later = paged.get(
        f"{API}/customers", params={"cursor": cursor, "updatedSince": "2000-01-01T00:00:01Z"}
    )
    assert "cursor" in error_of(later, 400, "invalid_request")["fieldErrors"]


def test_filters_carry_through_the_walk(paged: httpx.Client):
    rows = walk(paged, f"{API}/customers", limit=2, search="row1")
    assert sorted(r["email"] for r in rows) == [f"row1{n}@x.com" for n in range(10)]
    spaced = walk(paged, f"{API}/customers", limit=2, search="  ROW1 ")  # as typed in a box
    assert sorted(r["email"] for r in spaced) == [f"row1{n}@x.com" for n in range(10)]


# -- updatedSince -----------------------------------------------------------------------


@pytest.fixture
def fresh(stack: Stack) -> Iterator[tuple[str, httpx.Client]]:
    """A company of its own (its id) and a client holding its key."""
    company, key = stack.new_company()
    with stack.client(key) as c:
        yield company.id, c


def poll(c: httpx.Client, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One by-change page of leads after ``cursor``: its rows, and the cursor to keep."""
    params = {"updatedSince": EPOCH, **({"cursor": cursor} if cursor else {})}
    page = c.get(f"{API}/leads", params=params)
    assert page.status_code == 200, page.text
    body = page.json()
    assert isinstance(body["nextCursor"], str)
    if not body["data"]:  # an empty poll hands back the cursor it was given
        assert body["nextCursor"] == (cursor or "")
    return body["data"], body["nextCursor"] or cursor


def _lead(c: httpx.Client, name: str) -> dict[str, Any]:
    response = c.post(f"{API}/leads", json={"name": name, "email": f"{name}@leads.example"})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_updated_since_lists_ascending_by_change(
    fresh: tuple[str, httpx.Client], settled: Callable[[], None]
):
    _, c = fresh
    made = [_lead(c, f"poll{n}")["id"] for n in range(4)]
    settled()
    rows = walk(c, f"{API}/leads", updatedSince=EPOCH, limit=3)
    assert [r["id"] for r in rows] == made
    times = [instant(r["updatedAt"]) for r in rows]
    assert times == sorted(times)

    # A change moves the row to the end of the by-change order.
    moved = c.patch(f"{API}/leads/{made[0]}", json={"stage": "contacted"})
    assert moved.status_code == 200
    settled()
    rows = walk(c, f"{API}/leads", updatedSince=EPOCH, limit=3)
    assert [r["id"] for r in rows] == [*made[1:], made[0]]
    # Without updatedSince the order is newest created first, changes or not.
    assert [r["id"] for r in walk(c, f"{API}/leads")] == made[::-1]


def test_polling_from_the_last_seen_updated_at_finds_a_change_made_after_it(
    fresh: tuple[str, httpx.Client], settled: Callable[[], None]
):
    _, c = fresh
    first, second = _lead(c, "watch1"), _lead(c, "watch2")
    settled()
    seen = walk(c, f"{API}/leads", updatedSince=EPOCH)
    last_seen = seen[-1]["updatedAt"]

    changed = c.patch(f"{API}/leads/{first['id']}", json={"owner": "sam"})
    assert changed.status_code == 200
    third = _lead(c, "watch3")

    settled()
    polled = walk(c, f"{API}/leads", updatedSince=last_seen)
    ids = [r["id"] for r in polled]
    assert first["id"] in ids
    assert third["id"] in ids
    assert ids.index(first["id"]) < ids.index(third["id"])
    assert next(r for r in polled if r["id"] == first["id"])["owner"] == "sam"
    # Rows at the boundary instant may come again; a poller dedupes by id.
    assert set(ids) <= {first["id"], second["id"], third["id"]}


def test_the_last_page_by_change_gives_a_cursor_to_resume_polling_from(
    fresh: tuple[str, httpx.Client], settled: Callable[[], None]
):
    _, c = fresh
    first, second = _lead(c, "resume1"), _lead(c, "resume2")
    settled()
    page = c.get(f"{API}/leads", params={"updatedSince": EPOCH}).json()
    assert [r["id"] for r in page["data"]] == [first["id"], second["id"]]
    assert page["hasMore"] is False
    resume = page["nextCursor"]
    assert resume

    nothing = c.get(f"{API}/leads", params={"updatedSince": EPOCH, "cursor": resume}).json()
    assert nothing["data"] == []
    assert nothing["hasMore"] is False

    c.patch(f"{API}/leads/{first['id']}", json={"stage": "lost"})
    third = _lead(c, "resume3")
    settled()
    later = c.get(f"{API}/leads", params={"updatedSince": EPOCH, "cursor": resume}).json()
    assert [r["id"] for r in later["data"]] == [first["id"], third["id"]]
    assert later["data"][0]["stage"] == "lost"
    # The cursor belongs to that updatedSince: another one is another list.
    other = c.get(f"{API}/leads", params={"updatedSince": "2001-01-01T00:00:00Z", "cursor": resume})
    assert set(error_of(other, 400, "invalid_request")["fieldErrors"]) == {"cursor"}


def test_a_change_that_commits_late_is_not_missed_by_a_poller(
    stack: Stack, fresh: tuple[str, httpx.Client], settled: Callable[[], None]
):
    """A change made before another but committed after it still comes after the cursor
    of a poll made in between: on SQLite rows are stamped in commit order, one writer at
    a time; on PostgreSQL a poll shows nothing a transaction still running may precede."""
    company_id, c = fresh
    slow = _lead(c, "slow")
    settled()
    _, cursor = poll(c, None)
    clock = stack.container.clock

    uow = stack.container.uow()
    with uow:
        current = uow.leads.get(company_id, slow["id"])
        uow.leads.save(leads.update(current, at=clock.now(), stage=LeadStage.CONTACTED))
        # While that change is made but not committed, another lead is captured.
        fast: dict[str, Any] = {}
        writer = threading.Thread(target=lambda: fast.update(_lead(c, "fast")))
        writer.start()
        writer.join(timeout=5 if stack.backend == "postgres" else 0.2)
        if stack.backend == "postgres":
            # The other write commits at once; a poller is shown neither change yet.
            assert not writer.is_alive()
            assert fast
            rows, cursor = poll(c, cursor)
            assert rows == []
        else:
            # SQLite runs one writer at a time: the other write waits for this one.
            assert writer.is_alive()
        uow.commit()
    writer.join(timeout=15)
    assert fast

    settled()
    rows, _ = poll(c, cursor)
    assert [r["id"] for r in rows] == [slow["id"], fast["id"]]
    assert rows[0]["stage"] == "contacted"
