"""``/bookings`` over real HTTP on both backends: booking of every shape (single, plan,
multi-day, several dates), fetch by id or human code, lists, cancel and reschedule with
their scopes, and converting a quote into a booking.

Every test books in a company of its own with two crew members (``crewed_company``), a
week or two ahead on weekdays in the company's zone, so no test meets another's jobs.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    error_of,
    idem,
    midday_zone,
    unique_email,
    weekday_ahead,
)

NYC = ("10001", "10003", "11201")
STANDARD, DEEP = "svc_standard_clean", "svc_deep_clean"
CODE = re.compile(r"TS-[0-9A-HJKMNP-TV-Z]{5}")
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # 256 random bits, base64url


@pytest.fixture
def shop(stack: Stack) -> Shop:
    """Rosa (Mon-Sat, nearest to 10001) and Sam (Mon-Fri, no deep cleans), 08:00-18:00."""
    return crewed_company(
        stack,
        (
            CrewSpec("Rosa Diaz", "10003", NYC, weekdays=(1, 2, 3, 4, 5, 6)),
            CrewSpec("Sam Lee", "11201", NYC, excluded=(DEEP,)),
        ),
        code_prefix="TS",
    )


@pytest.fixture
def client(stack: Stack, shop: Shop) -> Iterator[httpx.Client]:
    with stack.client(shop.key) as c:
        yield c


@pytest.fixture
def tuesday(shop: Shop) -> date:
    return weekday_ahead(shop.zone, 8, weekday=2)


# --- Helpers ---------------------------------------------------------------------------


def at(shop: Shop, day: date, hhmm: str) -> str:
    return at_local(day, hhmm, shop.zone)


def post(client: httpx.Client, path: str, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"{API}{path}", json=body, headers=idem())


def book(client: httpx.Client, start: str, **fields: Any) -> dict[str, Any]:
    response = post(client, "/bookings", booking_body(start, **fields))
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def fetch(client: httpx.Client, ref: str) -> dict[str, Any]:
    response = client.get(f"{API}/bookings/{ref}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def every(client: httpx.Client, **filters: str) -> list[dict[str, Any]]:
    """Every booking the filters match, page by page (newest first)."""
    found: list[dict[str, Any]] = []
    params: dict[str, str] = {**filters, "limit": "2"}
    while True:
        response = client.get(f"{API}/bookings", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        found.extend(page["data"])
        if not page["hasMore"]:
            return found
        params = {**filters, "limit": "2", "cursor": page["nextCursor"]}


def starts_offered(client: httpx.Client, day: date, crew_id: str) -> set[str]:
    response = client.get(
        f"{API}/availability",
        params={"serviceId": STANDARD, "date": day.isoformat(), "zip": "10001", "crewIds": crew_id},
    )
    assert response.status_code == 200, response.text
    return {s["startIso"] for s in response.json()["data"]}


def cancel(client: httpx.Client, ref: str, **body: Any) -> httpx.Response:
    return post(client, f"/bookings/{ref}/cancel", body)


def reschedule(client: httpx.Client, ref: str, start: str, **body: Any) -> httpx.Response:
    return post(client, f"/bookings/{ref}/reschedule", {"startIso": start, **body})


def parts_sum(price: dict[str, Any]) -> None:
    """A visit's breakdown adds up to its total, to the cent; the referral discount is one
    of its discounts (none here: referral codes are not enabled)."""
    assert sum(line["amountCents"] for line in price["lines"]) == price["subtotalCents"]
    assert sum(d["amountCents"] for d in price["discounts"]) == price["discountCents"]
    assert price["referralDiscountCents"] == sum(
        d["amountCents"] for d in price["discounts"] if d["kind"] == "referral"
    )
    assert sum(f["amountCents"] for f in price["fees"]) == price["feesCents"]
    assert price["subtotalCents"] - price["discountCents"] == price["discountedSubtotalCents"]
    assert (
        price["discountedSubtotalCents"] + price["feesCents"] + price["taxCents"]
        == price["totalCents"]
    )


def local(iso: str, shop: Shop) -> datetime:
    value = datetime.fromisoformat(iso)
    assert value.utcoffset() == value.astimezone(shop.zone).utcoffset(), iso
    return value.astimezone(shop.zone)


# --- Creating --------------------------------------------------------------------------


def test_a_booking_gets_a_human_code_a_secret_tracking_url_and_a_price_that_adds_up(
    stack: Stack, shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    start = at(shop, tuesday, "10:00")
    made = book(client, start, extras=[{"id": "ext_oven", "quantity": 1}], notes="Side door")

    assert made["id"].startswith("bkg_")
    assert CODE.fullmatch(made["code"])
    prefix = f"{stack.base_url}/{shop.company.slug}/track/"
    assert made["trackingUrl"].startswith(prefix)
    assert TOKEN.fullmatch(made["trackingUrl"][len(prefix) :])
    assert (made["status"], made["frequencySlug"], made["days"]) == ("scheduled", "one_time", 1)
    assert (made["planId"], made["groupId"], made["quoteId"]) == (None, None, None)
    assert made["customerId"].startswith("cus_")
    assert made["notes"] == "Side door"
    assert made["address"]["zip"] == "10001"
    # Rosa lives nearer 10001 than Sam, so the best-ranked crew is hers.
    assert made["crewIds"] == [rosa]
    assert made["startIso"] == start
    minutes = made["durationMinutes"]
    assert minutes == made["price"]["durationMinutes"] == 145 + 30
    assert local(made["endIso"], shop) - local(start, shop) == timedelta(minutes=minutes)
    assert "referralDiscountCents" in made["price"]
    assert made["price"]["referralDiscountCents"] == 0
    parts_sum(made["price"])
    assert [line["id"] for line in made["price"]["lines"]][-1] == "ext_oven"
    assert [entry["kind"] for entry in made["activity"]] == ["created"]
    assert [b["id"] for b in made["bookings"]] == [made["id"]]

    other = book(client, at(shop, tuesday, "14:00"))
    assert other["code"] != made["code"]
    assert other["trackingUrl"] != made["trackingUrl"]


def test_a_referral_code_is_refused_while_referrals_are_off(
    shop: Shop, client: httpx.Client, tuesday: date
):
    body = booking_body(at(shop, tuesday, "10:00"), referralCode="FRIEND-1")
    error_of(post(client, "/bookings", body), 422, "unprocessable")
    assert every(client) == []


def test_a_booking_is_found_by_id_and_by_its_code_in_any_case(
    shop: Shop, client: httpx.Client, tuesday: date
):
    made = book(client, at(shop, tuesday, "10:00"))
    for ref in (made["id"], made["code"], made["code"].lower()):
        found = fetch(client, ref)
        assert found["id"] == made["id"], ref
        assert found["trackingUrl"] == made["trackingUrl"]
        assert found["activity"] == made["activity"]
    unknown = "TS-" + ("22222" if made["code"] != "TS-22222" else "33333")
    error_of(client.get(f"{API}/bookings/{unknown}"), 404, "not_found")
    error_of(client.get(f"{API}/bookings/bkg_missing"), 404, "not_found")


def test_a_weekly_booking_makes_a_plan_whose_later_visits_skip_first_visit_extras(
    shop: Shop, client: httpx.Client, tuesday: date
):
    extras = [{"id": "ext_first_deep", "quantity": 1}, {"id": "ext_supplies", "quantity": 1}]
    made = book(client, at(shop, tuesday, "09:00"), frequencySlug="weekly", extras=extras)
    visits = made["bookings"]

    # Materialised eight weeks ahead of the first visit: weeks 0 to 7.
    assert len(visits) == 8
    assert visits[0]["id"] == made["id"]
    assert made["planId"] is not None
    assert made["planId"].startswith("pln_")
    assert {v["planId"] for v in visits} == {made["planId"]}
    assert [v["visitIndex"] for v in visits] == list(range(8))
    assert len({v["code"] for v in visits}) == 8
    assert len({v["trackingUrl"] for v in visits}) == 8
    for index, visit in enumerate(visits):
        start = local(visit["startIso"], shop)
        assert start.date() == tuesday + timedelta(weeks=index)
        assert (start.hour, start.minute) == (9, 0)  # the same wall clock across DST
        assert visit["crewIds"] == made["crewIds"]
        parts_sum(visit["price"])

    first, later = visits[0]["price"], [v["price"] for v in visits[1:]]
    assert first["visit"] == "first"
    assert "ext_first_deep" in [line["id"] for line in first["lines"]]
    assert visits[0]["durationMinutes"] == 145 + 60
    for price in later:
        assert price["visit"] == "later"
        assert "ext_first_deep" not in [line["id"] for line in price["lines"]]
        assert "ext_supplies" in [line["id"] for line in price["lines"]]
        assert price == later[0]
        assert price["totalCents"] < first["totalCents"]
        assert price["durationMinutes"] == 145
    assert all(v["durationMinutes"] == 145 for v in visits[1:])
    assert any(d["kind"] == "frequency" for d in first["discounts"])

    listed = every(client, customerId=made["customerId"])
    assert sorted(b["id"] for b in listed) == sorted(v["id"] for v in visits)


def test_later_visits_are_checked_for_their_own_length_not_the_first_visits(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    # Next week Rosa has a job at 11:45. The plan's first visit (with the first-visit deep
    # clean) is 09:00-12:25, but later visits are 09:00-11:25 and leave her time to drive.
    busy = book(client, at(shop, tuesday + timedelta(weeks=1), "11:45"), crewIds=[rosa])
    extras = [{"id": "ext_first_deep", "quantity": 1}]
    made = book(
        client, at(shop, tuesday, "09:00"), frequencySlug="weekly", extras=extras, crewIds=[rosa]
    )
    visits = made["bookings"]
    assert [v["durationMinutes"] for v in visits[:2]] == [145 + 60, 145]
    assert visits[1]["startIso"] == at(shop, tuesday + timedelta(weeks=1), "09:00")
    # Moving that later visit alone by a quarter hour still fits; by half an hour it does not.
    week1 = tuesday + timedelta(weeks=1)
    moved = reschedule(client, visits[1]["id"], at(shop, week1, "09:15"))
    assert moved.status_code == 200, moved.text
    error_of(reschedule(client, visits[1]["id"], at(shop, week1, "09:30")), 409, "conflict")
    assert fetch(client, busy["id"])["startIso"] == busy["startIso"]


def test_a_two_day_job_holds_its_crew_on_both_days(shop: Shop, client: httpx.Client, tuesday: date):
    rosa, sam = shop.crew_ids
    wednesday = tuesday + timedelta(days=1)
    assert at(shop, wednesday, "09:00") in starts_offered(client, wednesday, rosa)

    made = book(client, at(shop, tuesday, "09:00"), days=2, crewIds=[rosa])
    assert made["days"] == 2
    assert made["crewIds"] == [rosa]
    assert made["startIso"] == at(shop, tuesday, "09:00")

    for day in (tuesday, wednesday):
        assert at(shop, day, "09:00") not in starts_offered(client, day, rosa)
        assert at(shop, day, "09:00") in starts_offered(client, day, sam)
        taken = post(client, "/bookings", booking_body(at(shop, day, "10:00"), crewIds=[rosa]))
        error_of(taken, 409, "conflict")
    # The day after is Rosa's again.
    thursday = tuesday + timedelta(days=2)
    assert at(shop, thursday, "09:00") in starts_offered(client, thursday, rosa)


def test_a_multi_day_job_longer_than_its_plan_interval_is_refused(
    shop: Shop, client: httpx.Client, tuesday: date
):
    body = booking_body(at(shop, tuesday, "09:00"), days=8, frequencySlug="weekly")
    response = post(client, "/bookings", body)
    assert response.status_code in (400, 422), response.text
    assert every(client) == []


def test_several_dates_are_booked_at_once(shop: Shop, client: httpx.Client, tuesday: date):
    starts = [
        at(shop, tuesday, "09:00"),
        at(shop, tuesday + timedelta(days=1), "13:00"),
        at(shop, tuesday + timedelta(days=2), "15:00"),
    ]
    made = book(client, starts[0], additionalStartIsos=starts[1:])
    visits = made["bookings"]
    assert [v["startIso"] for v in visits] == starts
    assert made["groupId"] is not None
    assert {v["groupId"] for v in visits} == {made["groupId"]}
    assert [v["visitIndex"] for v in visits] == [0, 1, 2]
    assert {v["planId"] for v in visits} == {None}
    assert {tuple(v["crewIds"]) for v in visits} == {tuple(made["crewIds"])}
    assert {v["customerId"] for v in visits} == {made["customerId"]}
    assert len(every(client, customerId=made["customerId"])) == 3


@pytest.mark.parametrize(
    ("bad", "status", "code"),
    [
        ("sunday", 422, "unprocessable"),  # nobody works on Sundays
        ("evening", 422, "unprocessable"),  # after working hours
        ("taken", 409, "conflict"),  # the crew's time is already booked
    ],
)
def test_one_bad_date_among_several_books_none_of_them(
    shop: Shop, client: httpx.Client, tuesday: date, bad: str, status: int, code: str
):
    rosa, _ = shop.crew_ids
    thursday = tuesday + timedelta(days=2)
    blockers = (
        [book(client, at(shop, thursday, "11:00"), crewIds=[rosa])["id"]] if bad == "taken" else []
    )
    bad_start = {
        "sunday": at(shop, tuesday + timedelta(days=5), "10:00"),
        "evening": at(shop, thursday, "19:00"),
        "taken": at(shop, thursday, "11:00"),
    }[bad]
    good = [at(shop, tuesday, "09:00"), at(shop, tuesday + timedelta(days=1), "09:00")]
    email = unique_email("all-or-nothing")
    body = booking_body(good[0], crewIds=[rosa], additionalStartIsos=[good[1], bad_start])
    body["customer"]["email"] = email

    error = error_of(post(client, "/bookings", body), status, code)

    # The refusal names the date it is about, by its place in the request.
    assert error["message"].startswith("additionalStartIsos.1: "), error
    assert list(error["fieldErrors"]) == ["additionalStartIsos.1"], error
    if bad == "taken":  # and says why listing again would not help
        assert "every date of a booking goes to the crew of startIso" in error["message"]
    assert [b["id"] for b in every(client)] == blockers
    for start in good:
        day = datetime.fromisoformat(start).astimezone(shop.zone).date()
        assert start in starts_offered(client, day, rosa)
    customers = client.get(f"{API}/customers", params={"search": email}).json()["data"]
    assert customers == []


def test_an_earlier_extra_date_that_every_crew_member_has_taken_is_a_conflict_on_it(
    shop: Shop, client: httpx.Client, tuesday: date
):
    """The extra date may come before startIso: when every member free at startIso is
    busy then, the refusal is 409 on that date (a 500 on PostgreSQL, before)."""
    earlier = at(shop, tuesday, "09:00")
    blockers = [book(client, earlier, crewIds=[member])["id"] for member in shop.crew_ids]
    later = at(shop, tuesday + timedelta(days=1), "09:00")
    body = booking_body(later, additionalStartIsos=[earlier])

    error = error_of(post(client, "/bookings", body), 409, "conflict")

    assert error["message"].startswith("additionalStartIsos.0: "), error
    assert list(error["fieldErrors"]) == ["additionalStartIsos.0"], error
    assert sorted(b["id"] for b in every(client)) == sorted(blockers)


def test_a_bad_phone_is_refused_for_a_known_customer_as_for_a_new_one(
    shop: Shop, client: httpx.Client, tuesday: date
):
    first = book(client, at(shop, tuesday, "09:00"))
    body = booking_body(at(shop, tuesday, "13:00"))
    body["customer"]["phone"] = "abc"
    for email in (unique_email("new-caller"), fetch_customer_email(client, first)):
        body["customer"]["email"] = email
        refused = error_of(post(client, "/bookings", body), 400, "invalid_request")
        assert "customer.phone" in refused["fieldErrors"], email
    assert [b["id"] for b in every(client)] == [first["id"]]


def fetch_customer_email(client: httpx.Client, booking: dict[str, Any]) -> str:
    listed = client.get(f"{API}/customers", params={"limit": 200}).json()["data"]
    return str(next(c["email"] for c in listed if c["id"] == booking["customerId"]))


def test_an_unknown_zip_is_invalid_on_address_zip(shop: Shop, client: httpx.Client, tuesday: date):
    for bad in ("00000", "1234", "ABCDE"):
        response = post(client, "/bookings", booking_body(at(shop, tuesday, "10:00"), bad))
        assert "address.zip" in error_of(response, 400, "invalid_request")["fieldErrors"], bad
    # A real zip that no crew member serves is understood, but there is no slot.
    elsewhere = post(client, "/bookings", booking_body(at(shop, tuesday, "10:00"), "90210"))
    assert "90210" in error_of(elsewhere, 422, "unprocessable")["message"]
    assert every(client) == []


@pytest.mark.parametrize(
    ("when", "reason"),
    [
        ("19:00", "outside working hours"),
        ("07:00", "outside working hours"),
        ("17:00", "outside working hours"),  # 145 minutes do not fit before 18:00
        ("soon", "notice"),
        ("sunday", "no working hours"),
    ],
)
def test_a_start_that_is_not_offered_is_unprocessable(
    shop: Shop, client: httpx.Client, tuesday: date, when: str, reason: str
):
    if when == "past":
        start = at(shop, datetime.now(shop.zone).date() - timedelta(days=3), "10:00")
    elif when == "soon":
        soon = datetime.now(UTC) + timedelta(minutes=45)
        start = soon.replace(minute=soon.minute - soon.minute % 15, second=0, microsecond=0)
        start = (start + timedelta(minutes=15)).astimezone(shop.zone).isoformat()
    elif when == "sunday":
        start = at(shop, tuesday + timedelta(days=5), "10:00")
    else:
        start = at(shop, tuesday, when)
    error = error_of(post(client, "/bookings", booking_body(start)), 422, "unprocessable")
    assert reason in error["message"], error
    assert every(client) == []


@pytest.mark.parametrize(
    ("when", "reason"),
    [("10:07", "quarter hour"), ("10:00:30", "quarter hour"), ("past", "past")],
)
@pytest.mark.parametrize("frequency", ["one_time", "weekly"])
def test_a_start_off_the_grid_or_past_is_invalid_whatever_the_calendar(
    shop: Shop, client: httpx.Client, tuesday: date, when: str, reason: str, frequency: str
):
    # scheduling.md: invalid_request on startIso, as for additionalStartIsos, and named
    # with the other problems found against the catalog (days past the plan's interval),
    # before any crew is looked for.
    day = datetime.now(shop.zone).date() - timedelta(days=3) if when == "past" else tuesday
    body = booking_body(at(shop, day, "10:00" if when == "past" else when))
    body |= {"frequencySlug": frequency}
    error = error_of(post(client, "/bookings", body), 400, "invalid_request")
    assert reason in error["fieldErrors"]["startIso"], error
    if frequency == "weekly":
        body |= {"days": 8}
        error = error_of(post(client, "/bookings", body), 400, "invalid_request")
        assert set(error["fieldErrors"]) == {"startIso", "days"}, error
        assert "cannot repeat every 7 days" in error["fieldErrors"]["days"]
    assert every(client) == []


def test_a_plan_without_crew_goes_to_the_best_ranked_member_free_for_every_visit(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, sam = shop.crew_ids

    def weekly(start: str, **query: str) -> list[str] | None:
        """The crew availability lists for a weekly plan from ``start``; None: not listed."""
        listed = client.get(
            f"{API}/availability",
            params={"serviceId": STANDARD, "date": tuesday.isoformat(), "zip": "10001",
                    "frequencySlug": "weekly", **query},
        )  # fmt: skip
        assert listed.status_code == 200, listed.text
        found = [s["crewIds"] for s in listed.json()["data"] if s["startIso"] == start]
        return found[0] if found else None

    ten, one = at(shop, tuesday, "10:00"), at(shop, tuesday, "13:00")
    assert weekly(ten) == [rosa]  # Rosa ranks first (nearest)
    # Rosa is busy at the plan's second visit: availability and booking both give Sam,
    # who can do every visit, and Rosa alone is not listed.
    book(client, at(shop, tuesday + timedelta(weeks=1), "10:00"), crewIds=[rosa])
    assert weekly(ten) == [sam]
    assert weekly(ten, crewIds=rosa) is None
    plan = book(client, ten, frequencySlug="weekly")
    assert {tuple(v["crewIds"]) for v in plan["bookings"]} == {(sam,)}

    # Nobody free at 13:00 is free for every visit: not listed; booked anyway, a 409 that
    # says to choose another start, and nothing is booked.
    book(client, at(shop, tuesday + timedelta(weeks=1), "13:00"), crewIds=[rosa])
    book(client, at(shop, tuesday + timedelta(weeks=2), "13:00"), crewIds=[sam])
    assert weekly(one) is None
    assert weekly(at(shop, tuesday, "13:00"), frequencySlug="one_time") is not None
    before = len(every(client))
    body = booking_body(at(shop, tuesday, "13:00"), frequencySlug="weekly")
    error = error_of(post(client, "/bookings", body), 409, "conflict")
    assert "choose another start" in error["message"], error
    assert len(every(client)) == before


def test_a_coupon_redeemed_once_per_customer_covers_one_date_not_several(
    shop: Shop, client: httpx.Client, tuesday: date
):
    # FIRSTCLEAN: $20 off, once per customer. Each date of a several-dates booking is a
    # job of its own and one redemption, so three dates cannot all take it.
    extra = [at(shop, tuesday + timedelta(days=1), "13:00"),
             at(shop, tuesday + timedelta(days=2), "13:00")]  # fmt: skip
    body = booking_body(at(shop, tuesday, "09:00"), couponCode="FIRSTCLEAN",
                        additionalStartIsos=extra)  # fmt: skip
    error = error_of(post(client, "/bookings", body), 422, "unprocessable")
    assert "FIRSTCLEAN" in error["message"], error
    assert "3 dates" in error["message"], error
    assert every(client) == []
    # One date takes it; the same customer's next booking with it is refused.
    made = book(client, at(shop, tuesday, "09:00"), couponCode="FIRSTCLEAN",
                customer=body["customer"])  # fmt: skip
    assert made["price"]["discountCents"] == 2_000
    again = booking_body(at(shop, tuesday, "13:00"), couponCode="FIRSTCLEAN",
                         customer=body["customer"])  # fmt: skip
    error_of(post(client, "/bookings", again), 422, "unprocessable")


def test_no_job_is_listed_or_booked_past_2199_the_last_year_a_request_may_name(
    shop: Shop, client: httpx.Client
):
    day = date(2199, 12, 30)  # a Monday; Rosa works Monday to Saturday

    def listed(days: int) -> list[dict[str, Any]]:
        params = {"serviceId": STANDARD, "date": day.isoformat(), "zip": "10001",
                  "days": str(days)}  # fmt: skip
        answer = client.get(f"{API}/availability", params=params)
        assert answer.status_code == 200, answer.text
        found: list[dict[str, Any]] = answer.json()["data"]
        return found

    assert listed(2)  # the 30th and the 31st
    assert listed(3) == []  # its last day would be 1 January 2200
    body = booking_body(at(shop, day, "10:00"), days=3)
    error = error_of(post(client, "/bookings", body), 400, "invalid_request")
    assert "2199-12-31" in error["fieldErrors"]["days"], error
    assert every(client) == []


def test_one_crew_member_cannot_be_booked_twice_for_the_same_time(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, sam = shop.crew_ids
    start = at(shop, tuesday, "10:00")
    first = book(client, start, crewIds=[rosa])

    for when in ("10:00", "10:30", "08:30", "12:00"):  # the job is 10:00-12:25 plus drives
        again = post(client, "/bookings", booking_body(at(shop, tuesday, when), crewIds=[rosa]))
        error = error_of(again, 409, "conflict")
        assert "taken" in error["message"], when
    # Without naming the crew, the best-ranked free member takes the same start...
    second = book(client, start)
    assert second["crewIds"] == [sam]
    # ...and once everyone is busy then, it is a conflict too.
    error_of(post(client, "/bookings", booking_body(start)), 409, "conflict")
    assert sorted(b["id"] for b in every(client)) == sorted([first["id"], second["id"]])


def test_a_lost_race_is_not_kept_against_the_idempotency_key(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    start = at(shop, tuesday, "10:00")
    blocker = book(client, start, crewIds=[rosa])
    body = booking_body(start, crewIds=[rosa])
    key = {"Idempotency-Key": f"lost-race-{secrets.token_hex(4)}"}

    error_of(client.post(f"{API}/bookings", json=body, headers=key), 409, "conflict")
    assert cancel(client, blocker["id"], scope="this").status_code == 200
    # The same key again runs the write again (a 409 conflict is not replayed).
    again = client.post(f"{API}/bookings", json=body, headers=key)
    assert again.status_code == 201, again.text
    assert "idempotent-replayed" not in again.headers
    replay = client.post(f"{API}/bookings", json=body, headers=key)
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["id"] == again.json()["id"]


def test_an_extra_outside_its_plans_is_refused_by_name(
    shop: Shop, client: httpx.Client, tuesday: date
):
    move_out = [{"id": "ext_move_out", "quantity": 1}]
    body = booking_body(at(shop, tuesday, "09:00"), frequencySlug="weekly", extras=move_out)
    error = error_of(post(client, "/bookings", body), 422, "unprocessable")
    assert "ext_move_out" in error["message"]
    assert "weekly" in error["message"]
    assert every(client) == []
    # On a one-time job the same extra is offered.
    made = book(client, at(shop, tuesday, "09:00"), extras=move_out)
    assert "ext_move_out" in [line["id"] for line in made["price"]["lines"]]


def test_an_unknown_service_or_crew_member_is_named(
    shop: Shop, client: httpx.Client, tuesday: date
):
    start = at(shop, tuesday, "10:00")
    response = post(client, "/bookings", booking_body(start, serviceId="svc_nope"))
    assert "serviceId" in error_of(response, 400, "invalid_request")["fieldErrors"]
    response = post(client, "/bookings", booking_body(start, frequencySlug="daily"))
    assert "frequencySlug" in error_of(response, 400, "invalid_request")["fieldErrors"]
    response = post(client, "/bookings", booking_body(start, crewIds=["crew_nope"]))
    assert "crew_nope" in error_of(response, 422, "unprocessable")["message"]
    # Sam does not do deep cleans.
    _, sam = shop.crew_ids
    response = post(client, "/bookings", booking_body(start, serviceId=DEEP, crewIds=[sam]))
    assert DEEP in error_of(response, 422, "unprocessable")["message"]
    assert every(client) == []


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"days": 0}, "days"),
        ({"days": -1}, "days"),
        ({"days": 15}, "days"),
        ({"crewIds": []}, "crewIds"),
        ({"startIso": "2030-01-08T10:00:00"}, "startIso"),  # no offset
        ({"customer": {"name": "No Email"}}, "customer.email"),
        ({"address": {"line1": "1 A St", "city": "NYC", "state": "NY"}}, "address.zip"),
    ],
)
def test_a_malformed_booking_is_invalid_and_names_the_field(
    shop: Shop, client: httpx.Client, tuesday: date, fields: dict[str, Any], named: str
):
    response = post(client, "/bookings", booking_body(at(shop, tuesday, "10:00"), **fields))
    assert named in error_of(response, 400, "invalid_request")["fieldErrors"]
    assert every(client) == []


def test_creating_needs_an_idempotency_key_and_a_replay_books_nothing_new(
    shop: Shop, client: httpx.Client, tuesday: date
):
    body = booking_body(at(shop, tuesday, "10:00"))
    missing = client.post(f"{API}/bookings", json=body)
    assert "Idempotency-Key" in error_of(missing, 400, "invalid_request")["fieldErrors"]
    assert every(client) == []

    key = idem()
    first = client.post(f"{API}/bookings", json=body, headers=key)
    assert first.status_code == 201, first.text
    # The same body (key order does not matter) replays the stored answer.
    shuffled = dict(reversed(list(body.items())))
    replay = client.post(f"{API}/bookings", json=shuffled, headers=key)
    assert replay.status_code == 201
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == first.json()
    changed = client.post(f"{API}/bookings", json={**body, "notes": "Other"}, headers=key)
    error_of(changed, 409, "idempotency_key_reused")
    assert [b["id"] for b in every(client)] == [first.json()["id"]]


# --- Listing ---------------------------------------------------------------------------


def test_bookings_are_listed_by_status_customer_crew_and_start_window(
    shop: Shop, client: httpx.Client, tuesday: date, settled: Callable[[], None]
):
    rosa, sam = shop.crew_ids
    wednesday, thursday = tuesday + timedelta(days=1), tuesday + timedelta(days=2)
    ada = {"name": "Ada", "email": unique_email("ada")}
    first = book(client, at(shop, tuesday, "09:00"), crewIds=[rosa], customer=ada)
    second = book(client, at(shop, wednesday, "09:00"), crewIds=[sam], customer=ada)
    other = book(client, at(shop, thursday, "09:00"), crewIds=[rosa])
    # A poller by change sees the three in the order they were made, then the cancellation.
    since = {"updatedSince": first["createdAt"], "limit": "200"}
    settled()
    polled = client.get(f"{API}/bookings", params=since).json()
    assert [b["id"] for b in polled["data"]] == [first["id"], second["id"], other["id"]]
    assert cancel(client, other["id"]).status_code == 200
    settled()
    polled = client.get(f"{API}/bookings", params={**since, "cursor": polled["nextCursor"]})
    assert [(b["id"], b["status"]) for b in polled.json()["data"]] == [(other["id"], "cancelled")]
    assert first["customerId"] == second["customerId"] != other["customerId"]

    def ids(**filters: str) -> list[str]:
        return [b["id"] for b in every(client, **filters)]

    # Newest first.
    assert ids() == [other["id"], second["id"], first["id"]]
    assert ids(status="cancelled") == [other["id"]]
    assert ids(status="scheduled") == [second["id"], first["id"]]
    assert ids(status="completed") == []
    assert ids(customerId=first["customerId"]) == [second["id"], first["id"]]
    assert ids(customerId="cus_nobody") == []
    assert ids(crewId=rosa) == [other["id"], first["id"]]
    assert ids(crewId=sam) == [second["id"]]
    assert ids(crewId=rosa, status="scheduled") == [first["id"]]
    # ``from`` is inclusive, ``to`` exclusive, both with an offset.
    assert ids(**{"from": at(shop, wednesday, "00:00"), "to": at(shop, thursday, "00:00")}) == [
        second["id"]
    ]
    assert ids(**{"from": first["startIso"], "to": other["startIso"]}) == [
        second["id"],
        first["id"],
    ]
    assert ids(**{"from": at(shop, thursday, "09:15")}) == []

    # One at a time, the pages hold each booking once.
    seen, cursor = [], None
    while True:
        params = {"limit": "1", **({"cursor": cursor} if cursor else {})}
        page = client.get(f"{API}/bookings", params=params).json()
        assert len(page["data"]) == 1
        seen.append(page["data"][0]["id"])
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
    assert seen == [other["id"], second["id"], first["id"]]

    # The customer's record counts the real visits.
    customer = client.get(f"{API}/customers", params={"search": ada["email"]}).json()["data"][0]
    assert customer["lifetime"]["bookings"] == 2
    assert customer["lifetime"]["nextVisitAt"] == first["startIso"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "booked"}, "status"),
        ({"from": "next week"}, "from"),
        ({"from": "2030-01-01T00:00:00"}, "from"),  # no offset
        ({"to": "2030-13-01T00:00:00Z"}, "to"),
        ({"limit": "0"}, "limit"),
        ({"cursor": "forged"}, "cursor"),
    ],
)
def test_a_bad_list_filter_is_named(client: httpx.Client, params: dict[str, str], field: str):
    response = client.get(f"{API}/bookings", params=params)
    assert field in error_of(response, 400, "invalid_request")["fieldErrors"]


def test_another_companys_booking_is_not_found(
    stack: Stack, shop: Shop, client: httpx.Client, tuesday: date
):
    made = book(client, at(shop, tuesday, "10:00"))
    with stack.client(stack.other_key) as other:
        missing = error_of(other.get(f"{API}/bookings/bkg_never"), 404, "not_found")
        for ref in (made["id"], made["code"]):
            error = error_of(other.get(f"{API}/bookings/{ref}"), 404, "not_found")
            assert error["message"].replace(ref, "?") == missing["message"].replace(
                "bkg_never", "?"
            )
        error_of(cancel(other, made["id"]), 404, "not_found")
        later = at(shop, tuesday, "14:00")
        error_of(reschedule(other, made["id"], later), 404, "not_found")
        assert made["id"] not in [b["id"] for b in every(other)]
    assert fetch(client, made["id"])["status"] == "scheduled"
    assert fetch(client, made["id"])["startIso"] == made["startIso"]


def test_the_demo_companys_booked_job_is_listed_and_holds_its_crew(api: httpx.Client):
    demo = [b for b in every(api, status="scheduled") if b["notes"] == "Booked by the demo loader."]
    assert len(demo) == 1, demo
    (job,) = demo
    assert fetch(api, job["code"])["id"] == job["id"]
    start = datetime.fromisoformat(job["startIso"])
    response = api.get(
        f"{API}/availability",
        params={
            "serviceId": job["serviceId"],
            "date": start.date().isoformat(),
            "zip": job["address"]["zip"],
            "crewIds": ",".join(job["crewIds"]),
        },
    )
    assert response.status_code == 200, response.text
    assert job["startIso"] not in {s["startIso"] for s in response.json()["data"]}


# --- Cancelling ------------------------------------------------------------------------


def test_cancelling_a_booking_frees_its_slot(shop: Shop, client: httpx.Client, tuesday: date):
    rosa, _ = shop.crew_ids
    start = at(shop, tuesday, "10:00")
    made = book(client, start, crewIds=[rosa])
    assert start not in starts_offered(client, tuesday, rosa)

    response = cancel(client, made["code"], scope="this", reason="Customer is away")
    assert response.status_code == 200, response.text
    (cancelled,) = response.json()["data"]
    assert cancelled["id"] == made["id"]
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancelReason"] == "Customer is away"
    assert cancelled["cancelledAt"] is not None
    activity = fetch(client, made["id"])["activity"]
    assert [e["kind"] for e in activity] == ["created", "cancelled"]
    assert activity[-1]["details"] == {"scope": "this", "reason": "Customer is away"}

    assert start in starts_offered(client, tuesday, rosa)
    assert book(client, start, crewIds=[rosa])["crewIds"] == [rosa]
    # A cancelled booking cannot be cancelled again, or moved.
    error_of(cancel(client, made["id"]), 422, "unprocessable")
    error_of(reschedule(client, made["id"], at(shop, tuesday, "15:00")), 422, "unprocessable")


def test_cancel_scopes_on_a_plan(shop: Shop, client: httpx.Client, tuesday: date):
    plan = book(client, at(shop, tuesday, "09:00"), frequencySlug="weekly")["bookings"]
    ids = [v["id"] for v in plan]
    assert len(ids) == 8

    def statuses() -> list[str]:
        visits = every(client, customerId=plan[0]["customerId"])
        return [v["status"] for v in sorted(visits, key=lambda v: v["visitIndex"])]

    # This visit only.
    response = cancel(client, ids[1], scope="this")
    assert [v["id"] for v in response.json()["data"]] == [ids[1]]
    assert statuses() == ["scheduled", "cancelled"] + ["scheduled"] * 6

    # End the plan after visit 5's date: visits 6 and 7 go.
    after = local(plan[5]["startIso"], shop).date().isoformat()
    response = cancel(client, ids[0], scope="plan_after", after=after)
    assert response.status_code == 200, response.text
    assert [v["id"] for v in response.json()["data"]] == ids[6:]
    assert statuses() == ["scheduled", "cancelled"] + ["scheduled"] * 4 + ["cancelled"] * 2
    # The plan's end is shown on the visits the cancel changed, left unset on the others.
    assert {v["planEndsOn"] for v in response.json()["data"]} == {after}
    assert fetch(client, ids[5])["planEndsOn"] is None

    # This and future from visit 3: visits 3 to 5 go; 0 and 2 stay. The last visit, already
    # cancelled, is neither changed nor listed.
    last = fetch(client, ids[7])
    response = cancel(client, ids[3], scope="this_and_future", reason="Moving away")
    assert response.status_code == 200, response.text
    changed = response.json()["data"]
    assert [v["id"] for v in changed] == ids[3:6]
    assert {v["status"] for v in changed} == {"cancelled"}
    assert statuses() == ["scheduled", "cancelled", "scheduled"] + ["cancelled"] * 5
    assert fetch(client, ids[4])["cancelReason"] == "Moving away"
    assert fetch(client, ids[7]) == last


def test_cancel_scope_fields_are_checked(shop: Shop, client: httpx.Client, tuesday: date):
    single = book(client, at(shop, tuesday, "10:00"))
    plan = book(client, at(shop, tuesday, "14:00"), frequencySlug="biweekly")
    after = (tuesday + timedelta(days=20)).isoformat()
    for ref, body, field in (
        (plan["id"], {"scope": "plan_after"}, "after"),
        (plan["id"], {"scope": "this", "after": after}, "after"),
        (plan["id"], {"scope": "everything"}, "scope"),
        (plan["id"], {"scope": "plan_after", "after": "soon"}, "after"),
        (single["id"], {"scope": "this", "reason": "x" * 501}, "reason"),
    ):
        response = cancel(client, ref, **body)
        assert field in error_of(response, 400, "invalid_request")["fieldErrors"], body
    error_of(cancel(client, single["id"], scope="plan_after", after=after), 422, "unprocessable")
    missing = client.post(f"{API}/bookings/{single['id']}/cancel", json={"scope": "this"})
    assert "Idempotency-Key" in error_of(missing, 400, "invalid_request")["fieldErrors"]
    assert {b["status"] for b in every(client)} == {"scheduled"}
    # A reason may be as long as the booking's cancelReason holds (500 characters).
    reason = "r" * 500
    assert cancel(client, single["id"], scope="this", reason=reason).status_code == 200
    assert fetch(client, single["id"])["cancelReason"] == reason


def test_cancelling_this_and_future_on_a_single_booking_cancels_it(
    shop: Shop, client: httpx.Client, tuesday: date
):
    made = book(client, at(shop, tuesday, "10:00"))
    response = cancel(client, made["id"], scope="this_and_future")
    assert [(v["id"], v["status"]) for v in response.json()["data"]] == [(made["id"], "cancelled")]


# --- Rescheduling ----------------------------------------------------------------------


def test_rescheduling_moves_a_booking_and_writes_it_in_the_activity_log(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    old, new = at(shop, tuesday, "10:00"), at(shop, tuesday, "14:00")
    made = book(client, old, crewIds=[rosa])

    key = idem()
    response = client.post(
        f"{API}/bookings/{made['id']}/reschedule", json={"startIso": new}, headers=key
    )
    assert response.status_code == 200, response.text
    (moved,) = response.json()["data"]
    # A retry with the same key replays the answer and moves (and logs) nothing more.
    replay = client.post(
        f"{API}/bookings/{made['id']}/reschedule", json={"startIso": new}, headers=key
    )
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == response.json()
    assert (moved["id"], moved["startIso"], moved["crewIds"]) == (made["id"], new, [rosa])
    assert local(moved["endIso"], shop) - local(new, shop) == timedelta(minutes=145)
    assert moved["code"] == made["code"]
    assert moved["trackingUrl"] == made["trackingUrl"]
    entry = moved["activity"][-1]
    assert entry["kind"] == "rescheduled"
    assert entry["details"] == {"scope": "this", "from": old, "to": new, "insideCutoff": False}
    assert fetch(client, made["code"])["startIso"] == new
    assert [e["kind"] for e in fetch(client, made["id"])["activity"]] == ["created", "rescheduled"]

    # The old time is free again, the new one is not.
    offered = starts_offered(client, tuesday, rosa)
    assert old in offered
    assert new not in offered
    # Moving to another member checks that member's time, and says so in the log.
    _, sam = shop.crew_ids
    response = reschedule(client, made["id"], new, crewIds=[sam])
    assert response.status_code == 200, response.text
    (handed,) = response.json()["data"]
    assert handed["crewIds"] == [sam]
    assert handed["activity"][-1]["details"]["crewIds"] == sam


def test_a_reschedule_crew_list_is_checked_as_a_booking_crew_list_is(
    shop: Shop, client: httpx.Client, tuesday: date
):
    """A member named twice, or no member at all, is refused on ``crewIds``: neither is
    read as "these members" (a team losing a member) nor as "keep the crew"."""
    rosa, sam = shop.crew_ids
    made = book(client, at(shop, tuesday, "10:00"), crewIds=[rosa, sam])
    new = at(shop, tuesday, "14:00")
    for crew, errors in (
        ([sam, sam], {"crewIds.1": "Listed twice."}),
        ([rosa, sam, rosa], {"crewIds.2": "Listed twice."}),
        ([], {"crewIds": "At least one crew member."}),
    ):
        response = reschedule(client, made["id"], new, crewIds=crew)
        assert error_of(response, 400, "invalid_request")["fieldErrors"] == errors, crew
    after = fetch(client, made["id"])
    assert sorted(made["crewIds"]) == sorted([rosa, sam])
    assert (after["startIso"], after["crewIds"]) == (made["startIso"], made["crewIds"])
    assert [e["kind"] for e in after["activity"]] == ["created"]


def test_a_booking_may_move_onto_part_of_its_own_time(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    made = book(client, at(shop, tuesday, "10:00"), crewIds=[rosa])
    # 10:30-12:55 overlaps the booking's own 10:00-12:25, which does not block it.
    response = reschedule(client, made["id"], at(shop, tuesday, "10:30"))
    assert response.status_code == 200, response.text
    assert response.json()["data"][0]["startIso"] == at(shop, tuesday, "10:30")
    assert response.json()["data"][0]["crewIds"] == [rosa]


def test_moving_onto_a_taken_slot_is_a_conflict_and_changes_nothing(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    morning = book(client, at(shop, tuesday, "09:00"), crewIds=[rosa])
    afternoon = book(client, at(shop, tuesday, "14:00"), crewIds=[rosa])
    for when in ("09:00", "10:00", "08:15"):
        response = reschedule(client, afternoon["id"], at(shop, tuesday, when))
        error_of(response, 409, "conflict")
    after = fetch(client, afternoon["id"])
    assert after["startIso"] == afternoon["startIso"]
    assert [e["kind"] for e in after["activity"]] == ["created"]
    assert fetch(client, morning["id"])["startIso"] == morning["startIso"]


@pytest.mark.parametrize(
    ("when", "reason"),
    [
        ("20:00", "outside working hours"),
        ("sunday", "no working hours"),
    ],
)
def test_moving_onto_a_closed_time_is_unprocessable(
    shop: Shop, client: httpx.Client, tuesday: date, when: str, reason: str
):
    made = book(client, at(shop, tuesday, "10:00"))
    if when == "sunday":
        start = at(shop, tuesday + timedelta(days=5), "10:00")
    else:
        start = at(shop, tuesday, when)
    error = error_of(reschedule(client, made["id"], start), 422, "unprocessable")
    assert reason in error["message"]
    assert fetch(client, made["id"])["startIso"] == made["startIso"]


@pytest.mark.parametrize(
    ("when", "problem"),
    [("10:05", "Must be on the quarter hour"), ("past", "Must not be in the past.")],
)
def test_a_move_off_the_quarter_hour_or_into_the_past_is_invalid_as_when_booking(
    shop: Shop, client: httpx.Client, tuesday: date, when: str, problem: str
):
    made = book(client, at(shop, tuesday, "10:00"))
    if when == "past":
        start = at(shop, datetime.now(shop.zone).date() - timedelta(days=2), "10:00")
    else:
        start = at(shop, tuesday, when)
    for attempt in (
        reschedule,
        lambda c, _id, s: c.post(f"{API}/bookings", json=booking_body(s), headers=idem()),
    ):
        error = error_of(attempt(client, made["id"], start), 400, "invalid_request")
        assert error["fieldErrors"]["startIso"].startswith(problem)
    assert fetch(client, made["id"])["startIso"] == made["startIso"]


def test_rescheduling_this_and_future_moves_the_rest_of_the_plan(
    shop: Shop, client: httpx.Client, tuesday: date
):
    plan = book(client, at(shop, tuesday, "09:00"), frequencySlug="weekly")["bookings"]
    ids = [v["id"] for v in plan]

    # Visit 0 alone, to Wednesday afternoon.
    alone = at(shop, tuesday + timedelta(days=1), "13:00")
    response = reschedule(client, ids[0], alone, scope="this")
    assert [v["id"] for v in response.json()["data"]] == [ids[0]]

    # Visit 2 and every later one, two hours later on their own days.
    target = local(plan[2]["startIso"], shop).date()
    response = reschedule(client, ids[2], at(shop, target, "11:00"), scope="this_and_future")
    assert response.status_code == 200, response.text
    moved = response.json()["data"]
    assert [v["id"] for v in moved] == ids[2:]
    for visit in moved[1:]:
        assert visit["activity"][-1]["details"]["targetId"] == ids[2]
        assert visit["activity"][-1]["details"]["scope"] == "this_and_future"

    now = {
        v["id"]: local(v["startIso"], shop) for v in every(client, customerId=plan[0]["customerId"])
    }
    assert now[ids[0]].isoformat() == alone
    assert (now[ids[1]].date(), now[ids[1]].hour) == (tuesday + timedelta(weeks=1), 9)
    for index in range(2, 8):
        assert (now[ids[index]].date(), now[ids[index]].hour) == (
            tuesday + timedelta(weeks=index),
            11,
        )


def test_rescheduling_this_and_future_checks_every_moved_visit(
    shop: Shop, client: httpx.Client, tuesday: date
):
    rosa, _ = shop.crew_ids
    plan = book(client, at(shop, tuesday, "09:00"), frequencySlug="weekly", crewIds=[rosa])
    ids = [v["id"] for v in plan["bookings"]]
    # Three weeks on, Rosa has a noon job in Brooklyn, 12 minutes' drive from the plan's
    # 10001: the plan's visit that day (145 minutes) may start at 09:15 but not at 09:30.
    week3 = tuesday + timedelta(weeks=3)
    brooklyn = book(client, at(shop, week3, "12:00"), zip_code="11201", crewIds=[rosa])

    # Visit 3 itself cannot move to 09:30...
    error_of(reschedule(client, ids[3], at(shop, week3, "09:30")), 409, "conflict")
    # ...but moving it and the later ones would leave Rosa no time to reach Brooklyn.
    response = reschedule(
        client, ids[1], at(shop, tuesday + timedelta(weeks=1), "09:30"), scope="this_and_future"
    )
    error_of(response, 409, "conflict")
    assert fetch(client, ids[3])["startIso"] == at(shop, week3, "09:00")
    assert fetch(client, brooklyn["id"])["startIso"] == at(shop, week3, "12:00")
    # A quarter hour earlier fits every week.
    response = reschedule(
        client, ids[1], at(shop, tuesday + timedelta(weeks=1), "09:15"), scope="this_and_future"
    )
    assert response.status_code == 200, response.text
    assert fetch(client, ids[3])["startIso"] == at(shop, week3, "09:15")


def test_a_move_inside_the_self_service_cutoff_is_allowed_and_noted(stack: Stack):
    zone = midday_zone()
    shop = crewed_company(
        stack,
        (
            CrewSpec(
                "Any-hour Ike",
                "10001",
                NYC,
                weekdays=(1, 2, 3, 4, 5, 6, 7),
                hours=("00:00", "23:59"),
            ),
        ),
        timezone=zone.key,
    )
    # Three hours from now, on the quarter hour: after the two hours' notice, well inside
    # the 24-hour self-service cutoff.
    soon = datetime.now(zone) + timedelta(hours=3)
    soon = soon.replace(minute=soon.minute - soon.minute % 15, second=0, microsecond=0)
    far = soon + timedelta(days=9)
    with stack.client(shop.key) as client:
        near = book(client, soon.isoformat())
        later = book(client, far.isoformat())

        response = reschedule(client, near["id"], (soon + timedelta(hours=3)).isoformat())
        assert response.status_code == 200, response.text
        assert response.json()["data"][0]["activity"][-1]["details"]["insideCutoff"] is True
        # Moving a far job into the cutoff is noted too, and so is moving it out again;
        # a move between two far times is not.
        response = reschedule(client, later["id"], (soon + timedelta(hours=6)).isoformat())
        assert response.json()["data"][0]["activity"][-1]["details"]["insideCutoff"] is True
        response = reschedule(client, later["id"], far.isoformat())
        assert response.json()["data"][0]["activity"][-1]["details"]["insideCutoff"] is True
        response = reschedule(client, later["id"], (far + timedelta(hours=1)).isoformat())
        assert response.json()["data"][0]["activity"][-1]["details"]["insideCutoff"] is False


def test_reschedule_fields_are_checked(shop: Shop, client: httpx.Client, tuesday: date):
    made = book(client, at(shop, tuesday, "10:00"))
    for body, field in (
        ({}, "startIso"),
        ({"startIso": "2030-01-08T10:00:00"}, "startIso"),
        ({"startIso": at(shop, tuesday, "14:00"), "scope": "plan_after"}, "scope"),
    ):
        response = post(client, f"/bookings/{made['id']}/reschedule", body)
        assert field in error_of(response, 400, "invalid_request")["fieldErrors"], body
    assert fetch(client, made["id"])["startIso"] == made["startIso"]


# --- Converting a quote ----------------------------------------------------------------


ADDRESS = {"line1": "9 Quote Lane", "city": "New York", "state": "NY", "zip": "10003"}


def customer_with_address(client: httpx.Client) -> dict[str, Any]:
    body = {"name": "Quoted Customer", "email": unique_email("convert"), "address": ADDRESS}
    response = client.post(f"{API}/customers", json=body)
    assert response.status_code in (200, 201), response.text
    customer: dict[str, Any] = response.json()
    return customer


def new_quote(client: httpx.Client, customer_id: str, **fields: Any) -> dict[str, Any]:
    body = {"customerId": customer_id, "send": True, **fields}
    response = post(client, "/quotes", body)
    assert response.status_code == 201, response.text
    quote: dict[str, Any] = response.json()
    return quote


def act(client: httpx.Client, quote_id: str, action: str, **fields: Any) -> httpx.Response:
    return post(client, f"/quotes/{quote_id}", {"action": action, **fields})


CATALOG_QUOTE = {"serviceId": STANDARD, "parameters": [{"id": "par_bedrooms", "quantity": 2}]}


def test_an_accepted_quote_converts_into_a_booking_at_the_default_address(
    shop: Shop, client: httpx.Client, tuesday: date
):
    customer = customer_with_address(client)
    quote = new_quote(client, customer["id"], **CATALOG_QUOTE)
    assert act(client, quote["id"], "accept").json()["status"] == "accepted"
    start = at(shop, tuesday, "10:00")

    response = act(client, quote["id"], "convert", startIso=start)
    assert response.status_code == 200, response.text
    converted = response.json()
    assert (converted["id"], converted["status"]) == (quote["id"], "converted")
    booking = fetch(client, converted["bookingId"])
    assert booking["quoteId"] == quote["id"]
    assert booking["customerId"] == customer["id"]
    assert (booking["serviceId"], booking["startIso"]) == (STANDARD, start)
    assert {k: booking["address"][k] for k in ADDRESS} == ADDRESS
    assert booking["price"]["totalCents"] == quote["totalCents"]
    assert booking["durationMinutes"] == 145 + 30
    parts_sum(booking["price"])
    assert client.get(f"{API}/quotes/{quote['id']}").json()["bookingId"] == booking["id"]

    # A converted quote converts no more, and books nothing more.
    again = act(client, quote["id"], "convert", startIso=at(shop, tuesday, "14:00"))
    error_of(again, 422, "unprocessable")
    assert [b["id"] for b in every(client, customerId=customer["id"])] == [booking["id"]]


def test_a_sent_quote_in_date_is_accepted_and_converted_in_one_step(
    shop: Shop, client: httpx.Client, tuesday: date
):
    customer = customer_with_address(client)
    expires = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    quote = new_quote(client, customer["id"], expiresAt=expires, **CATALOG_QUOTE)
    assert quote["status"] == "sent"
    response = act(client, quote["id"], "convert", startIso=at(shop, tuesday, "11:00"))
    assert response.status_code == 200, response.text
    converted = response.json()
    assert converted["status"] == "converted"
    assert converted["acceptedAt"] is not None
    assert fetch(client, converted["bookingId"])["quoteId"] == quote["id"]


def test_a_refused_convert_leaves_no_booking(shop: Shop, client: httpx.Client, tuesday: date):
    customer = customer_with_address(client)
    quote = new_quote(client, customer["id"], **CATALOG_QUOTE)
    for fields, status in (
        ({"startIso": at(shop, tuesday, "19:00")}, 422),  # after working hours
        ({"startIso": at(shop, tuesday + timedelta(days=5), "10:00")}, 422),  # Sunday
        ({"startIso": at(shop, tuesday, "10:00"), "manualFeeIds": ["fee_weekend"]}, 422),
        ({"startIso": at(shop, tuesday, "10:00"), "serviceId": DEEP}, 400),
    ):
        response = act(client, quote["id"], "convert", **fields)
        assert response.status_code == status, (fields, response.text)
        after = client.get(f"{API}/quotes/{quote['id']}").json()
        assert (after["status"], after["bookingId"]) == ("sent", None)
    assert every(client) == []
    # A slot taken by the quoted crew's only free member is a conflict, and also books none.
    rosa, sam = shop.crew_ids
    book(client, at(shop, tuesday, "10:00"), crewIds=[rosa])
    book(client, at(shop, tuesday, "10:00"), crewIds=[sam])
    error_of(
        act(client, quote["id"], "convert", startIso=at(shop, tuesday, "10:00")), 409, "conflict"
    )
    assert client.get(f"{API}/quotes/{quote['id']}").json()["status"] == "sent"
    assert every(client, customerId=customer["id"]) == []


def test_a_hand_priced_quote_converts_only_with_a_service(
    shop: Shop, client: httpx.Client, tuesday: date
):
    customer = customer_with_address(client)
    lines = [{"description": "Post-renovation clean", "amountCents": 42000}]
    quote = new_quote(client, customer["id"], manualLines=lines)
    assert quote["handPriced"] is True
    start = at(shop, tuesday, "10:00")

    refused = act(client, quote["id"], "convert", startIso=start)
    assert "serviceId" in error_of(refused, 422, "unprocessable")["message"]
    assert client.get(f"{API}/quotes/{quote['id']}").json()["status"] == "sent"
    assert every(client) == []

    response = act(
        client, quote["id"], "convert", startIso=start, serviceId=DEEP, manualFeeIds=["fee_pets"]
    )
    assert response.status_code == 200, response.text
    booking = fetch(client, response.json()["bookingId"])
    assert booking["serviceId"] == DEEP
    # Priced as quoted, by hand, plus the fee added on convert; as long as a bare deep clean.
    assert [line["amountCents"] for line in booking["price"]["lines"]] == [42000]
    assert [fee["id"] for fee in booking["price"]["fees"]] == ["fee_pets"]
    parts_sum(booking["price"])
    assert booking["durationMinutes"] == 180 + 30 + 25
    # Sam does not do deep cleans; Rosa does.
    assert booking["crewIds"] == [shop.crew_ids[0]]


def test_the_deprecated_booking_id_form_links_a_booking_made_separately(
    shop: Shop, client: httpx.Client, tuesday: date
):
    customer = customer_with_address(client)
    quote = new_quote(client, customer["id"], **CATALOG_QUOTE)
    # Made separately, for the quote's own customer (another's booking is refused).
    who = {"name": customer["name"], "email": customer["email"]}
    made = book(client, at(shop, tuesday, "10:00"), customer=who)
    assert made["customerId"] == customer["id"]
    response = act(client, quote["id"], "convert", bookingId=made["id"])
    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["bookingId"]) == ("converted", made["id"])
    assert len(every(client)) == 1
    # A booking id that names nothing is not found, and links nothing.
    other = new_quote(client, customer["id"], **CATALOG_QUOTE)
    error_of(act(client, other["id"], "convert", bookingId="bkg_missing"), 404, "not_found")
    assert client.get(f"{API}/quotes/{other['id']}").json()["status"] == "sent"


def test_converting_needs_bookings_write_too(
    stack: Stack, shop: Shop, client: httpx.Client, tuesday: date
):
    customer = customer_with_address(client)
    quote = new_quote(client, customer["id"], **CATALOG_QUOTE)
    key = stack.issue_key(frozenset({"quotes:read", "quotes:write"}), company_id=shop.company.id)
    with stack.client(key.secret) as quotes_only:
        response = act(quotes_only, quote["id"], "convert", startIso=at(shop, tuesday, "10:00"))
        error = error_of(response, 403, "insufficient_scope")
        assert error["requiredScope"] == "bookings:write"
        assert "bookings:write" in error["message"]
        # Other actions need only quotes:write.
        assert act(quotes_only, quote["id"], "pause").status_code == 200
    assert client.get(f"{API}/quotes/{quote['id']}").json()["status"] == "sent"
    assert every(client) == []
