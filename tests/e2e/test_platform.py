"""The platform every ``/api/v1`` route shares, as a caller sees it over HTTP:
authentication, scopes, tenancy, the one error shape, request ids, unknown routes and
methods, and no CORS."""

from __future__ import annotations

import re
import time

import httpx
import pytest
import structlog

from adapters.http.routes import all_endpoints
from booking_core import auth
from booking_core.services import companies as company_cases
from tests.e2e.support import API, FULL_SCOPES, Stack, error_of, idem

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")
ENDPOINTS = all_endpoints()


def assert_no_rate_headers(response: httpx.Response) -> None:
    present = [h for h in RATE_HEADERS if h in response.headers]
    assert not present, f"401 carried {present}"


def path_of(endpoint_path: str) -> str:
    return API + re.sub(r"{\w+}", "x_does_not_exist", endpoint_path)


# -- authentication -------------------------------------------------------------------


def test_bearer_token_authenticates(anon: httpx.Client, stack: Stack):
    response = anon.get(f"{API}/services", headers={"Authorization": f"Bearer {stack.key}"})
    assert response.status_code == 200
    assert "industries" in response.json()


def test_x_api_key_header_authenticates(anon: httpx.Client, stack: Stack):
    response = anon.get(f"{API}/services", headers={"x-api-key": stack.key})
    assert response.status_code == 200


def test_bearer_is_preferred_when_both_headers_are_sent(anon: httpx.Client, stack: Stack):
    # Bearer names the cleaning company, x-api-key the handyman company.
    response = anon.get(
        f"{API}/services",
        headers={"Authorization": f"Bearer {stack.key}", "x-api-key": stack.other_key},
    )
    assert response.status_code == 200
    industries = {i["id"] for i in response.json()["industries"]}
    assert "ind_cleaning" in industries

    unknown_bearer = anon.get(
        f"{API}/services",
        headers={"Authorization": f"Bearer {auth.generate_secret()}", "x-api-key": stack.key},
    )
    error_of(unknown_bearer, 401, "unauthorized")


def _with_last_changed(key: str) -> str:
    """``key`` with its last (checksum) character replaced by a different one."""
    return key[:-1] + ("y" if key.endswith("x") else "x")


def _revoked_key(stack: Stack) -> str:
    issued = stack.issue_key()
    company_cases.revoke_key(
        issued.key.company_id, issued.key.id, uow=stack.container.uow(), clock=stack.container.clock
    )
    return issued.secret


def _rotated_away_key(stack: Stack) -> str:
    issued = stack.issue_key()
    company_cases.rotate_key(
        issued.key.company_id, issued.key.id, uow=stack.container.uow(), clock=stack.container.clock
    )
    return issued.secret


CREDENTIALS = {
    "missing": lambda stack: {},
    "unknown": lambda stack: {"Authorization": f"Bearer {auth.generate_secret()}"},
    "unknown x-api-key": lambda stack: {"x-api-key": auth.generate_secret()},
    "malformed": lambda stack: {"Authorization": "Bearer not-a-key"},
    "wrong checksum": lambda stack: {"Authorization": f"Bearer {_with_last_changed(stack.key)}"},
    "empty bearer": lambda stack: {"Authorization": "Bearer"},
    "basic scheme": lambda stack: {"Authorization": f"Basic {stack.key}"},
    "non-ascii": lambda stack: {"x-api-key": "bsk_\u00e9t\u00e9"},
    "revoked": lambda stack: {"Authorization": f"Bearer {_revoked_key(stack)}"},
    "rotated away": lambda stack: {"Authorization": f"Bearer {_rotated_away_key(stack)}"},
}


@pytest.mark.parametrize("kind", list(CREDENTIALS))
def test_a_request_without_a_valid_key_is_401_without_rate_limit_headers(
    anon: httpx.Client, stack: Stack, kind: str
):
    headers = {
        name: value.encode() if not value.isascii() else value
        for name, value in CREDENTIALS[kind](stack).items()
    }
    response = anon.get(f"{API}/customers", headers=headers)
    error = error_of(response, 401, "unauthorized")
    assert "fieldErrors" not in error
    assert_no_rate_headers(response)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/nope"), ("GET", "/providers"), ("DELETE", "/services"), ("GET", "/services/")],
)
def test_unknown_routes_and_wrong_methods_still_demand_a_key(
    anon: httpx.Client, method: str, path: str
):
    response = anon.request(method, f"{API}{path}")
    error_of(response, 401, "unauthorized")
    assert_no_rate_headers(response)


def test_the_company_comes_from_the_key_not_the_address(anon: httpx.Client, stack: Stack):
    response = anon.get(
        f"{API}/services",
        headers={
            "Authorization": f"Bearer {stack.other_key}",
            "Host": "sparkle-cleaning.example.com",
            "x-company": stack.company.slug,
        },
    )
    assert response.status_code == 200
    assert {i["id"] for i in response.json()["industries"]} == {"ind_handyman"}
    # Naming a company in the query string is no way in either: it is an unknown parameter.
    response = anon.get(
        f"{API}/services",
        headers={"Authorization": f"Bearer {stack.other_key}"},
        params={"company": stack.company.slug, "companyId": stack.company.id},
    )
    assert error_of(response, 400, "invalid_request")["fieldErrors"] == {
        "company": "Unknown query parameter.",
        "companyId": "Unknown query parameter.",
    }


@pytest.mark.parametrize("resource", ["leads", "quotes"])
def test_another_companys_id_answers_exactly_like_an_id_that_never_existed(
    stack: Stack, api: httpx.Client, resource: str
):
    with stack.client(stack.other_key) as other:
        if resource == "leads":
            theirs = other.post(f"{API}/leads", json={"name": "Their lead", "email": "t@x.com"})
        else:
            customer = other.post(
                f"{API}/customers", json={"name": "Their customer", "email": "their@x.com"}
            ).json()
            theirs = other.post(
                f"{API}/quotes",
                json={
                    "customerId": customer["id"],
                    "manualLines": [{"description": "Gutters", "amountCents": 9000}],
                },
                headers=idem(),
            )
        assert theirs.status_code in (200, 201), theirs.text
        their_id = theirs.json()["id"]
        assert other.get(f"{API}/{resource}/{their_id}").status_code == 200

    never_id = their_id[:-6] + "000000"
    foreign = error_of(api.get(f"{API}/{resource}/{their_id}"), 404, "not_found")
    missing = error_of(api.get(f"{API}/{resource}/{never_id}"), 404, "not_found")
    assert foreign["message"].replace(their_id, "ID") == missing["message"].replace(never_id, "ID")
    assert set(foreign) == set(missing)


# -- scopes ---------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[f"{e.method} {e.path}" for e in ENDPOINTS])
def test_a_key_without_the_endpoints_scope_is_refused_naming_the_scope(stack: Stack, endpoint):
    key = stack.new_key(*sorted(FULL_SCOPES - {endpoint.scope}))  # every scope but its own
    with stack.client(key) as c:
        response = c.request(endpoint.method, path_of(endpoint.path), json={}, headers=idem())
    error = error_of(response, 403, "insufficient_scope")
    assert error["requiredScope"] == endpoint.scope
    assert endpoint.scope in error["message"]
    assert all(h in response.headers for h in RATE_HEADERS)


def test_a_key_with_the_scope_passes_the_scope_check(stack: Stack):
    key = stack.new_key("customers:read")
    with stack.client(key) as c:
        assert c.get(f"{API}/customers").status_code == 200
        refused = c.post(f"{API}/customers", json={"name": "N", "email": "n@example.com"})
    assert error_of(refused, 403, "insufficient_scope")["requiredScope"] == "customers:write"


def test_converting_a_quote_also_needs_bookings_write(stack: Stack, api: httpx.Client):
    customer = api.post(f"{API}/customers", json={"name": "Conv", "email": "conv@example.com"})
    quote = api.post(
        f"{API}/quotes",
        json={
            "customerId": customer.json()["id"],
            "serviceId": "svc_standard_clean",
            "send": True,
        },
        headers=idem(),
    ).json()
    key = stack.new_key("quotes:read", "quotes:write")
    with stack.client(key) as c:
        response = c.post(
            f"{API}/quotes/{quote['id']}",
            json={"action": "convert", "startIso": "2030-01-07T10:00:00-05:00"},
            headers=idem(),
        )
        error = error_of(response, 403, "insufficient_scope")
        assert error["requiredScope"] == "bookings:write"
        assert "bookings:write" in error["message"]
        # The missing scope is the answer whatever else is wrong with the body.
        for body in (
            {"action": "convert", "startIso": "tomorrow", "bogus": 1},
            {"action": "convert", "startIso": 12345},
        ):
            refused = c.post(f"{API}/quotes/{quote['id']}", json=body, headers=idem())
            assert error_of(refused, 403, "insufficient_scope")["requiredScope"] == "bookings:write"
        # The same key may still act on the quote in every other way.
        paused = c.post(f"{API}/quotes/{quote['id']}", json={"action": "pause"}, headers=idem())
    assert paused.status_code == 200
    assert paused.json()["followUpsPaused"] is True


# -- the one error shape, request ids --------------------------------------------------


def test_a_sane_caller_request_id_is_echoed_in_header_and_body(api: httpx.Client):
    sane = "order-42_retry.1"
    ok = api.get(f"{API}/services", headers={"x-request-id": sane})
    assert ok.headers["x-request-id"] == sane
    failed = api.get(f"{API}/leads/lead_nope", headers={"x-request-id": sane})
    assert error_of(failed, 404, "not_found")["requestId"] == sane


@pytest.mark.parametrize(
    "insane",
    ["x" * 65, "has space", "semi;colon", "new\\nline", "<script>", "caf\u00e9"],
)
def test_an_insane_request_id_is_replaced_by_a_fresh_one(anon: httpx.Client, insane: str):
    value = insane.encode() if not insane.isascii() else insane
    response = anon.get(f"{API}/services", headers={"x-request-id": value})
    generated = response.headers["x-request-id"]
    assert generated != insane
    assert re.fullmatch(r"[A-Za-z0-9._-]{1,64}", generated)
    assert error_of(response, 401, "unauthorized")["requestId"] == generated


def test_every_answer_gets_its_own_request_id(api: httpx.Client):
    ids = {api.get(f"{API}/services").headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3


@pytest.mark.parametrize(
    "path",
    ["/nope", "/providers", "/services/", "/services/extra", "", "/", "/v2/services"],
)
def test_unknown_api_routes_are_404_in_the_error_shape_with_rate_headers(
    api: httpx.Client, path: str
):
    response = api.get(f"{API}{path}")
    error_of(response, 404, "not_found")
    assert all(h in response.headers for h in RATE_HEADERS)


def test_unknown_routes_under_api_are_404_in_the_error_shape(anon: httpx.Client):
    error_of(anon.get("/api/openapi.json/"), 404, "not_found")
    error_of(anon.get("/api/v2/services"), 404, "not_found")
    error_of(anon.get("/definitely-not-here"), 404, "not_found")


def test_unknown_addresses_of_the_pages_are_the_404_page(anon: httpx.Client):
    page = anon.get("/definitely/not/here")  # read as /{slug}/...: a customer page
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/services"), ("PUT", "/customers"), ("PATCH", "/quotes"), ("GET", "/quote")],
)
def test_a_wrong_method_is_405_method_not_allowed(api: httpx.Client, method: str, path: str):
    response = api.request(method, f"{API}{path}")
    error = error_of(response, 405, "method_not_allowed")
    assert method in error["message"]
    assert "allow" in response.headers
    assert all(h in response.headers for h in RATE_HEADERS)


def test_no_cors_headers_on_the_authenticated_api(api: httpx.Client, anon: httpx.Client):
    origin = {"Origin": "https://shop.example.com"}
    answers = [
        api.get(f"{API}/services", headers=origin),
        anon.get(f"{API}/services", headers=origin),
        api.options(
            f"{API}/services",
            headers={**origin, "Access-Control-Request-Method": "GET"},
        ),
        anon.options(
            f"{API}/customers",
            headers={**origin, "Access-Control-Request-Method": "POST"},
        ),
    ]
    for response in answers:
        cors = [h for h in response.headers if h.lower().startswith("access-control-")]
        assert not cors, (response.request.method, response.status_code, cors)
    assert answers[2].status_code == 405


def test_each_request_logs_one_line_with_ids_and_never_the_key(api: httpx.Client, stack: Stack):
    def lines() -> list[dict[str, object]]:
        return [e for e in logs if e.get("request_id") == "log-check-1" and e["event"] == "request"]

    with structlog.testing.capture_logs() as logs:
        response = api.get(f"{API}/leads", headers={"x-request-id": "log-check-1"})
        # The line is written once the answer has gone out; give the server a moment.
        deadline = time.monotonic() + 5
        while not lines() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert response.status_code == 200
    assert len(lines()) == 1
    line = lines()[0]
    assert line["status"] == 200
    assert line["company_id"] == stack.company.id
    assert line["key_id"].startswith("key_")
    assert line["route"] == "/api/v1/leads"
    assert isinstance(line["duration_ms"], float)
    assert stack.key not in repr(logs)


@pytest.mark.parametrize("change", ["revoke", "rotate"])
def test_a_key_in_use_stops_working_within_one_second_of_being_revoked_or_rotated(
    anon: httpx.Client, stack: Stack, change: str
):
    issued = stack.issue_key()
    headers = {"Authorization": f"Bearer {issued.secret}"}
    assert anon.get(f"{API}/services", headers=headers).status_code == 200
    act = company_cases.revoke_key if change == "revoke" else company_cases.rotate_key
    act(
        issued.key.company_id, issued.key.id, uow=stack.container.uow(), clock=stack.container.clock
    )
    changed_at = time.monotonic()
    time.sleep(1.0)
    response = anon.get(f"{API}/services", headers=headers)
    assert time.monotonic() - changed_at >= 1.0
    error_of(response, 401, "unauthorized")
