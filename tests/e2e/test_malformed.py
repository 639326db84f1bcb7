"""Malformed requests, table-driven, on SQLite and PostgreSQL: each is a 400
``invalid_request`` naming the field (or a 413), never a 500, and writes nothing."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from attrs import frozen

from tests.e2e.support import API, Stack, error_of, idem, unique_email

STANDARD = "svc_standard_clean"
GOOD_ADDRESS = {"line1": "1 Main St", "city": "New York", "state": "NY", "zip": "10001"}


@frozen
class Case:
    """One malformed request and the field paths its answer must name."""

    name: str
    method: str
    path: str
    fields: frozenset[str]
    body: Any = None
    raw: bytes | None = None
    params: dict[str, str] | None = None
    headers: dict[str, str] | None = None


def _customer(**fields: Any) -> dict[str, Any]:
    return {"name": "Malformed Case", "email": unique_email("malformed"), **fields}


def _booking(**fields: Any) -> dict[str, Any]:
    return {
        "serviceId": STANDARD,
        "frequencySlug": "one_time",
        "startIso": "2030-01-08T10:00:00-05:00",
        "customer": {"name": "Malformed Case", "email": unique_email("malformed")},
        "address": GOOD_ADDRESS,
        **fields,
    }


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


CASES = [
    # A wrong JSON type anywhere: nothing is coerced, a string is never split.
    Case("address array", "POST", "/customers", frozenset({"address"}), _customer(address=[])),
    Case("address string", "POST", "/customers", frozenset({"address"}), _customer(address="x")),
    Case(
        "customer and address strings",
        "POST",
        "/bookings",
        frozenset({"customer", "address"}),
        _booking(customer="Ann", address="1 Main St"),
    ),
    Case(
        "extras string",
        "POST",
        "/quote",
        frozenset({"extras"}),
        {"serviceId": STANDARD, "extras": "abc"},
    ),
    Case(
        "extras items strings",
        "POST",
        "/quote",
        frozenset({"extras.0"}),
        {"serviceId": STANDARD, "extras": ["ext_fridge"]},
    ),
    Case(
        "parameters object",
        "POST",
        "/quote",
        frozenset({"parameters"}),
        {"serviceId": STANDARD, "parameters": {"id": "par_bedrooms"}},
    ),
    Case(
        "manual lines items strings",
        "POST",
        "/quotes",
        frozenset({"manualLines.0"}),
        {"customerId": "cus_x", "manualLines": ["Deep clean"]},
    ),
    Case(
        "crew ids string", "POST", "/bookings", frozenset({"crewIds"}), _booking(crewIds="crew_a")
    ),
    Case(
        "quantity string",
        "POST",
        "/quote",
        frozenset({"parameters.0.quantity"}),
        {"serviceId": STANDARD, "parameters": [{"id": "par_bedrooms", "quantity": "2"}]},
    ),
    # Text a database cannot store.
    Case("NUL in name", "POST", "/customers", frozenset({"name"}), _customer(name="A\x00B")),
    Case(
        "lone surrogate in name",
        "POST",
        "/customers",
        frozenset({"name"}),
        raw=b'{"name": "A\\ud800", "email": "surrogate@example.com"}',
    ),
    Case(
        "NUL in a key",
        "POST",
        "/customers",
        frozenset({"x\\u0000"}),
        raw=b'{"name": "A", "email": "nulkey@example.com", "x\\u0000": 1}',
    ),
    # Nesting, numbers, dates.
    Case(
        "nested 40 deep",
        "POST",
        "/quote",
        frozenset({"serviceId", "serviceId" + ".0" * 31}),
        {"serviceId": _nested(40)},
    ),
    Case("nested 5000 deep", "POST", "/quote", frozenset({"body"}), raw=b"[" * 5000 + b"]" * 5000),
    Case(
        "quantity beyond 64 bits",
        "POST",
        "/quote",
        frozenset({"parameters.0.quantity"}),
        {"serviceId": STANDARD, "parameters": [{"id": "par_bedrooms", "quantity": 2**64}]},
    ),
    Case(
        "quantity of 4,301 digits, and another problem beside it",
        "POST",
        "/quote",
        frozenset({"parameters.0.quantity", "frequencySlug"}),
        raw=(
            b'{"serviceId": "svc_standard_clean", "frequencySlug": 7, "parameters":'
            b' [{"id": "par_bedrooms", "quantity": -' + b"9" * 4301 + b"}]}"
        ),
    ),
    Case(
        "cents over the ceiling",
        "POST",
        "/payments",
        frozenset({"amountCents"}),
        {"bookingId": "bkg_x", "kind": "PAYMENT", "method": "CASH", "amountCents": 10**9},
    ),
    Case(
        "cents beyond 64 bits",
        "POST",
        "/payments",
        frozenset({"amountCents"}),
        {"bookingId": "bkg_x", "kind": "PAYMENT", "method": "CASH", "amountCents": 2**70},
    ),
    Case(
        "a float for a whole number", "POST", "/bookings", frozenset({"days"}), _booking(days=1.0)
    ),
    Case("NaN", "POST", "/quote", frozenset({"body"}), raw=b'{"serviceId": NaN}'),
    Case(
        "year 1",
        "POST",
        "/bookings",
        frozenset({"startIso"}),
        _booking(startIso="0001-01-01T10:00:00+00:00"),
    ),
    Case(
        "year 9999",
        "POST",
        "/bookings",
        frozenset({"startIso"}),
        _booking(startIso="9999-12-31T10:00:00+00:00"),
    ),
    Case(
        "2199 as written, 2200 as an instant",
        "POST",
        "/bookings",
        frozenset({"startIso"}),
        _booking(startIso="2199-12-31T23:00:00-14:00"),
    ),
    Case(
        "an offset with seconds",
        "POST",
        "/bookings",
        frozenset({"startIso"}),
        _booking(startIso="2030-01-08T10:00:00-05:00:30"),
    ),
    Case(
        "naive time",
        "POST",
        "/bookings",
        frozenset({"startIso"}),
        _booking(startIso="2030-01-08T10:00:00"),
    ),
    # Query strings.
    Case(
        "Arabic-Indic digit limit",
        "GET",
        "/customers",
        frozenset({"limit"}),
        params={"limit": "\u0663"},
    ),
    Case("limit zero", "GET", "/customers", frozenset({"limit"}), params={"limit": "0"}),
    Case("limit huge", "GET", "/customers", frozenset({"limit"}), params={"limit": "9" * 40}),
    Case(
        "availability on year 1",
        "GET",
        "/availability",
        frozenset({"date"}),
        params={"serviceId": STANDARD, "date": "0001-01-01", "zip": "10001"},
    ),
    Case(
        "availability on 9999-12-31",
        "GET",
        "/availability",
        frozenset({"date"}),
        params={"serviceId": STANDARD, "date": "9999-12-31", "zip": "10001"},
    ),
    Case(
        "availability zip in other digits",
        "GET",
        "/availability",
        frozenset({"zip"}),
        params={
            "serviceId": STANDARD,
            "date": "2030-01-08",
            "zip": "\u0661\u0660\u0660\u0660\u0661",
        },
    ),
    Case(
        "bookings from year 9999",
        "GET",
        "/bookings",
        frozenset({"from"}),
        params={"from": "9999-12-31T23:59:59-12:00"},
    ),
    Case(
        "updatedSince year 1",
        "GET",
        "/customers",
        frozenset({"updatedSince"}),
        params={"updatedSince": "0001-01-01T00:00:00+14:00"},
    ),
    Case(
        "updatedSince 1970 as written, 1969 as an instant",
        "GET",
        "/customers",
        frozenset({"updatedSince"}),
        params={"updatedSince": "1970-01-01T00:00:00+14:00"},
    ),
    Case(
        "misspelt filter", "GET", "/bookings", frozenset({"stauts"}), params={"stauts": "cancelled"}
    ),
    Case(
        "unknown parameter on the catalog", "GET", "/services", frozenset({"x"}), params={"x": "1"}
    ),
    Case("NUL in a filter", "GET", "/customers", frozenset({"search"}), params={"search": "a\x00"}),
    Case("bad enum filter", "GET", "/quotes", frozenset({"status"}), params={"status": "lost"}),
    # The body's envelope.
    Case(
        "form-encoded body",
        "POST",
        "/customers",
        frozenset({"Content-Type"}),
        raw=b"name=A&email=form@example.com",
        headers={"content-type": "application/x-www-form-urlencoded"},
    ),
    Case(
        "JSON in another charset",
        "POST",
        "/customers",
        frozenset({"Content-Type"}),
        _customer(),
        headers={"content-type": "application/json; charset=utf-16"},
    ),
    Case(
        "a compressed body",
        "POST",
        "/customers",
        frozenset({"Content-Encoding"}),
        _customer(),
        headers={"content-encoding": "gzip"},
    ),
    Case(
        "duplicate keys",
        "POST",
        "/customers",
        frozenset({"name"}),
        raw=b'{"name": "A", "name": "B", "email": "dup@example.com"}',
    ),
    # Booking forms, and a booking's form and answers.
    Case(
        "form questions object",
        "POST",
        "/booking-forms",
        frozenset({"questions"}),
        {"name": "F", "serviceIds": [STANDARD], "questions": {"label": "Gate code"}},
    ),
    Case(
        "form service ids string",
        "POST",
        "/booking-forms",
        frozenset({"serviceIds"}),
        {"name": "F", "serviceIds": STANDARD},
    ),
    Case(
        "form choice a number",
        "POST",
        "/booking-forms",
        frozenset({"questions.0.choices.0"}),
        {
            "name": "F",
            "serviceIds": [STANDARD],
            "questions": [{"label": "Pets", "kind": "choice", "choices": [1]}],
        },
    ),
    Case(
        "NUL in a form name, lone surrogate in a label",
        "POST",
        "/booking-forms",
        frozenset({"name", "questions.0.label"}),
        raw=b'{"name": "F\\u0000", "serviceIds": ["svc_standard_clean"],'
        b' "questions": [{"label": "\\ud800"}]}',
    ),
    Case(
        "form name twice",
        "POST",
        "/booking-forms",
        frozenset({"name"}),
        raw=b'{"name": "F", "serviceIds": ["svc_standard_clean"], "name": "G"}',
    ),
    Case(
        "form patch with a bad question id and a string for a bool",
        "PATCH",
        "/booking-forms/bf_x",
        frozenset({"questions.0.id", "active"}),
        {"questions": [{"id": "Bad id!", "label": "x"}], "active": "yes"},
    ),
    Case(
        "answers object",
        "POST",
        "/bookings",
        frozenset({"answers"}),
        _booking(formId="bf_x", answers={"questionId": "gate-code", "answer": "1"}),
    ),
    Case(
        "form id number and answer a number",
        "POST",
        "/bookings",
        frozenset({"formId", "answers.0.answer"}),
        _booking(formId=7, answers=[{"questionId": "gate-code", "answer": 1234}]),
    ),
    Case("waitlist limit twice", "GET", "/waitlist?limit=1&limit=2", frozenset({"limit"})),
    Case(
        "booking forms cursor with NUL",
        "GET",
        "/booking-forms",
        frozenset({"cursor"}),
        params={"cursor": "a\x00"},
    ),
    # Every field problem in one answer.
    Case(
        "too-long name and bad email together",
        "POST",
        "/customers",
        frozenset({"name", "email"}),
        {"name": "x" * 201, "email": "not-an-email"},
    ),
    Case(
        "too-long customer name and bad email in a booking",
        "POST",
        "/bookings",
        frozenset({"customer.name", "customer.email"}),
        _booking(customer={"name": "x" * 201, "email": "nope"}),
    ),
]


def _send(client: httpx.Client, case: Case) -> httpx.Response:
    headers = {**idem(), **(case.headers or {})}
    if case.raw is not None:
        headers.setdefault("content-type", "application/json")
        content = case.raw
    elif case.body is not None:
        headers.setdefault("content-type", "application/json")
        content = json.dumps(case.body).encode()
    else:
        content = None
    return client.request(
        case.method, f"{API}{case.path}", content=content, params=case.params, headers=headers
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_malformed_request_is_invalid_request_naming_the_field(api: httpx.Client, case: Case):
    response = _send(api, case)
    error = error_of(response, 400, "invalid_request")
    assert set(error["fieldErrors"]) == case.fields, error


def _stored(api: httpx.Client) -> dict[str, list[str]]:
    """The ids of what a malformed write could leave behind."""
    pages = {
        path: api.get(f"{API}{path}", params={"limit": "200"}).json()["data"]
        for path in ("/customers", "/bookings", "/booking-forms")
    }
    return {path: [item["id"] for item in items] for path, items in pages.items()}


def test_malformed_writes_leave_nothing_behind(api: httpx.Client):
    before = _stored(api)
    for case in CASES:
        if case.method in ("POST", "PATCH"):
            assert _send(api, case).status_code == 400, case.name
    assert _stored(api) == before


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_body_over_the_limit_is_413_while_it_streams(api: httpx.Client, chunked: bool):
    big = b'{"serviceId": "' + b"a" * 1_100_000 + b'"}'

    def stream():  # httpx sends a generator with Transfer-Encoding: chunked
        for start in range(0, len(big), 65_536):
            yield big[start : start + 65_536]

    response = api.post(
        f"{API}/quote",
        content=stream() if chunked else big,
        headers={"content-type": "application/json"},
    )
    error_of(response, 413, "payload_too_large")


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_body_over_the_limit_on_a_read_is_413_too(api: httpx.Client, chunked: bool):
    """A read uses no body, but one over 1 MB is refused as on any endpoint; a small one
    is ignored."""
    big = b"x" * 1_100_000

    def stream():
        for start in range(0, len(big), 65_536):
            yield big[start : start + 65_536]

    response = api.request("GET", f"{API}/services", content=stream() if chunked else big)
    error_of(response, 413, "payload_too_large")
    small = api.request("GET", f"{API}/services", content=b"ignored")
    assert small.status_code == 200, small.text


def _answer_without_sending_the_body(stack: Stack, headers: dict[str, str]) -> bytes:
    """Send only the head of a POST announcing a large body, and read what comes back: a
    server that waited for the body would time out here."""
    url = httpx.URL(stack.base_url)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(
            f"POST {API}/customers HTTP/1.1\r\nHost: {url.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 900000\r\n{head}\r\n".encode()
        )
        return sock.recv(65_536)


def test_an_unauthenticated_request_is_refused_before_its_body_is_read(stack: Stack):
    answer = _answer_without_sending_the_body(stack, {})
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


def test_a_declared_length_over_the_limit_is_413_before_the_body_is_read(stack: Stack):
    url = httpx.URL(stack.base_url)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(
            f"POST {API}/customers HTTP/1.1\r\nHost: {url.host}\r\n"
            f"Authorization: Bearer {stack.key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 5000000\r\n\r\n".encode()
        )
        answer = sock.recv(65_536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_missing_id_a_stale_id_and_a_foreign_id_answer_one_text(stack: Stack, api: httpx.Client):
    with stack.client(stack.other_key) as other:
        theirs = other.post(f"{API}/customers", json=_customer()).json()["id"]
    answers = [
        api.get(f"{API}/bookings/{ident}").json()["error"]["message"]
        for ident in ("bkg_nope", "SC-ZZZZZ", "bkg_" + "0" * 24, "%00", "a%0Ab", "a%0Db")
    ]
    assert len(set(answers)) == 1
    assert all("bkg_nope" not in text for text in answers)
    lead = api.get(f"{API}/leads/lead_nope").json()["error"]
    foreign = api.get(f"{API}/leads/{theirs}").json()["error"]
    assert lead["message"] == foreign["message"]
    assert lead["code"] == "not_found"
    route = api.get(f"{API}/no-such-route")
    assert error_of(route, 404, "not_found")


def test_a_wrong_method_lists_every_method_the_path_takes(api: httpx.Client):
    response = api.delete(f"{API}/bookings")
    error_of(response, 405, "method_not_allowed")
    assert {m.strip() for m in response.headers["allow"].split(",")} >= {"GET", "POST"}
    response = api.put(f"{API}/leads/lead_x")
    error_of(response, 405, "method_not_allowed")
    error_of(api.delete(f"{API}/bookings/a%0Ab"), 405, "method_not_allowed")  # a line feed too
    assert {m.strip() for m in response.headers["allow"].split(",")} >= {"GET", "PATCH"}


def test_refusals_found_while_reading_the_body_carry_rate_limit_headers(api: httpx.Client):
    """SPEC.md section 8: every authenticated answer, refusals included, has them."""
    form = api.post(
        f"{API}/customers",
        content=b"name=A",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    big = api.post(
        f"{API}/quote",
        content=b"{" + b" " * 1_100_000 + b"}",
        headers={"content-type": "application/json"},
    )
    for response, status in ((form, 400), (big, 413)):
        assert response.status_code == status
        for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
            assert name in response.headers, (status, name)


def _strict(response: httpx.Response) -> Any:
    """The body, read as a strict parser reads it: UTF-8, and no string holding a lone
    surrogate (``\\ud800`` is valid JSON syntax but no text)."""
    body = json.loads(response.content.decode("utf-8"))
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    return body


def test_keys_no_answer_can_carry_are_named_escaped_each_with_every_problem(
    stack: Stack, api: httpx.Client
):
    """A lone surrogate, NUL or another control character in a key is named ``\\uXXXX``:
    the answer stays UTF-8 text, and each bad key keeps all its problems."""
    raw = b'{"serviceId": "svc_handyman_hour", "\\ud800": 1, "a\\u0000": 2, "b\\u0007": 3}'
    headers = {"content-type": "application/json"}
    refused = api.post(f"{API}/quote", content=raw, headers=headers)
    assert refused.status_code == 400, refused.text
    problems = _strict(refused)["error"]["fieldErrors"]
    assert set(problems) == {"\\ud800", "a\\u0000", "b\\u0007"}, problems
    assert problems["\\ud800"].startswith("Unknown field.")
    assert "lone surrogate" in problems["\\ud800"]
    assert problems["a\\u0000"].startswith("Unknown field.")
    assert "NUL" in problems["a\\u0000"]
    assert problems["b\\u0007"] == "Unknown field."
    with stack.client() as anonymous:
        public = anonymous.post(
            f"/api/public/{stack.company.slug}/quote", content=raw, headers=headers
        )
    assert public.status_code == 400, public.text
    message = _strict(public)["error"]
    for name in ("\\ud800", "a\\u0000", "b\\u0007", "lone surrogate", "NUL"):
        assert name in message, message


def test_a_bad_key_given_twice_and_a_bad_query_name_are_named_escaped(api: httpx.Client):
    raw = b'{"name": "A", "email": "twice@example.com", "\\ud800": 1, "\\ud800": 2}'
    twice = api.post(f"{API}/customers", content=raw, headers={"content-type": "application/json"})
    assert twice.status_code == 400, twice.text
    problem = _strict(twice)["error"]["fieldErrors"]["\\ud800"]
    assert "Given more than once" in problem
    assert "lone surrogate" in problem
    query = api.get(f"{API}/customers?a%00=1&b%1b=2")
    assert query.status_code == 400, query.text
    assert set(_strict(query)["error"]["fieldErrors"]) == {"a\\u0000", "b\\u001b"}


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("search=caf%E9", "search"),  # Latin-1 é: not UTF-8
        ("crewId=crew_%FF", "crewId"),
        ("%E9=1&search=caf%C3%A9", "%E9"),  # a name that is not UTF-8, named as sent
    ],
)
def test_a_query_parameter_that_is_not_utf8_is_refused_under_its_name(
    api: httpx.Client, query: str, named: str
) -> None:
    """Never read with replacement characters (an empty list for a search nobody made)."""
    path = "/bookings" if "crewId" in query else "/customers"
    response = api.get(f"{API}{path}?{query}")
    error = error_of(response, 400, "invalid_request")
    assert error["fieldErrors"] == {named: error["fieldErrors"][named]}
    assert "UTF-8" in error["fieldErrors"][named]
    # The same text written as UTF-8 is read.
    assert api.get(f"{API}/customers?search=caf%C3%A9").status_code == 200


@pytest.mark.parametrize("digits", [20, 4301])
def test_a_query_number_past_64_bits_is_out_of_range_however_long(api: httpx.Client, digits):
    """As in a body: digits 0-9 past 64 bits are out of range, not 'not digits'; zeros in
    front of a number do not count."""
    response = api.get("/api/v1/customers", params={"limit": "9" * digits})
    assert error_of(response, 400, "invalid_request")["fieldErrors"] == {
        "limit": "Outside the 64-bit range."
    }
    for zeros in (30, 4400):  # past 4,300 digits int() refused to read it: "Invalid value."
        padded = api.get("/api/v1/customers", params={"limit": "0" * zeros + "1"})
        assert padded.status_code == 200, padded.text


def test_an_answer_lists_at_most_a_hundred_problems_and_says_how_many(api: httpx.Client):
    """50,000 unknown keys were 50,000 paths (3.6 MB) in one answer."""
    raw = ("{" + ",".join(f'"k{i}": 1' for i in range(5_000)) + "}").encode()
    response = api.post(
        f"{API}/customers", content=raw, headers={"content-type": "application/json"}
    )
    error = error_of(response, 400, "invalid_request")
    assert len(error["fieldErrors"]) == 100
    assert error["message"].endswith("The first 100 of 5,002 problems are listed."), error


def test_an_encoded_slash_is_part_of_its_segment_not_a_slash(api: httpx.Client):
    """The server decodes the whole path: ``%2F`` was routed as ``/``."""
    whole = api.get(f"{API}%2Fservices")
    assert error_of(whole, 404, "not_found")["message"].startswith("No such route")
    # Not the cancel route of booking "a": the route of one booking, "a/cancel", read only.
    cancel = api.post(f"{API}/bookings/a%2Fcancel", json={"scope": "this"}, headers=idem())
    error_of(cancel, 405, "method_not_allowed")
    read = api.get(f"{API}/bookings/a%2Fb")
    assert error_of(read, 404, "not_found")["message"] == "No such booking."
