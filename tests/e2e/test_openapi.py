"""``GET /api/openapi.json``: a valid OpenAPI 3.1 document describing every route the app
serves, generated from the same endpoint table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate
from starlette.routing import Mount, Route

from adapters.http.public import PUBLIC_ENDPOINTS, PUBLIC_PREFIX
from adapters.http.routes import all_endpoints
from booking_core.events import DESCRIPTIONS, EventType
from tests.e2e.support import API, Stack, error_of, idem, unique_email

METHODS = {"get", "post", "put", "patch", "delete"}
DEPRECATED = {("GET", f"{API}/crew"), ("POST", f"{API}/quotes/{{id}}")}
"""Operations some of whose replies carry Deprecation and Sunset headers."""
IDEMPOTENT = {(e.method, API + e.path) for e in all_endpoints() if e.idempotent}
"""Operations whose answers may be replays (``idempotent-replayed``)."""


@pytest.fixture(scope="module")
def document(stack: Stack) -> dict[str, Any]:
    with stack.client() as c:  # no key needed
        response = c.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method.upper(), path, operation


def served_routes(stack: Stack) -> set[tuple[str, str]]:
    """(method, path) of every route of a freshly built app, HEAD aside."""
    app = stack.app(stack.base_url)
    found: set[tuple[str, str]] = set()

    def visit(routes: Any, prefix: str) -> None:
        for route in routes:
            if isinstance(route, Mount):
                visit(route.routes, prefix + route.path)
            elif isinstance(route, Route):
                for method in route.methods or ():
                    if method != "HEAD":
                        found.add((method, prefix + route.path))

    visit(app.routes, "")
    return found


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]):
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_the_document_lists_every_route_the_app_serves(stack: Stack, document: dict[str, Any]):
    # CORS preflights of the public API are not operations a client calls.
    served = {(m, p) for m, p in served_routes(stack) if not (m == "OPTIONS" and public(p))}
    described = {(method, path) for method, path, _ in operations(document)}
    pages = {("GET", "/api/openapi.json"), ("GET", "/docs"), ("GET", "/docs/start.js")}
    assert served - pages == described
    assert all(path.startswith(API) or public(path) for _, path in described)
    assert ("GET", f"{API}/providers") not in described


def test_the_document_names_this_server(stack: Stack, document: dict[str, Any]):
    assert document["servers"] == [{"url": stack.base_url}]


def public(path: str) -> bool:
    return path.startswith(f"{PUBLIC_PREFIX}/")


def test_each_operation_states_its_scope_security_and_errors(document: dict[str, Any]):
    scopes = {(e.method, API + e.path): e.scope for e in all_endpoints()}
    error_ref = {"$ref": "#/components/schemas/Error"}
    for method, path, operation in operations(document):
        if public(path):
            continue  # test_public_operations_need_no_key_and_answer_the_public_error
        assert operation["x-required-scope"] == scopes[(method, path)]
        assert scopes[(method, path)] in operation["description"]
        assert {"bearerAuth": []} in operation["security"]
        assert {"apiKeyHeader": []} in operation["security"]
        for status in ("400", "401", "403", "404", "429", "500"):
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == error_ref, (method, path, status)
        # The headers each answer carries (SPEC.md sections 7 and 8; docs/api.md).
        responses = operation["responses"]
        success = next(s for s in responses if s.startswith("2"))
        rate = {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"}
        deprecated = {"deprecation", "sunset"} if (method, path) in DEPRECATED else set()
        replayed = {"idempotent-replayed"} if (method, path) in IDEMPOTENT else set()
        assert set(responses[success]["headers"]) == {"x-request-id"} | rate | deprecated | (
            replayed
        ), (method, path)
        assert all("x-request-id" in answer["headers"] for answer in responses.values())
        assert not rate & set(responses["401"]["headers"]), (method, path)
        assert set(responses["429"]["headers"]) >= {"retry-after", *rate}, (method, path)
        for status, answer in responses.items():
            if status not in {"401", "500"}:
                assert all(answer["headers"][name]["required"] for name in rate), (path, status)
        if replayed:
            assert {"idempotent-replayed", "original-request-id"} <= set(
                responses["422"]["headers"]
            )


def test_public_operations_need_no_key_and_answer_the_public_error(document: dict[str, Any]):
    described = {(m, p): op for m, p, op in operations(document) if public(p)}
    assert set(described) == {(e.method, PUBLIC_PREFIX + e.path) for e in PUBLIC_ENDPOINTS}
    assert {("GET", "/api/public/{slug}/days"), ("POST", "/api/public/{slug}/quote")} <= set(
        described
    )
    error_ref = {"$ref": "#/components/schemas/PublicError"}
    for (method, path), operation in described.items():
        assert operation["tags"] == ["public"]
        assert operation["security"] == []
        assert "x-required-scope" not in operation
        statuses = {"400", "404", "422", "429", "500"} | ({"413"} if method == "POST" else set())
        for status in statuses:
            answer = operation["responses"][status]
            assert answer["content"]["application/json"]["schema"] == error_ref, (path, status)
            assert {
                "access-control-allow-origin",
                "access-control-expose-headers",
                "x-request-id",
                "x-ratelimit-limit",
            } <= set(answer["headers"]), (path, status)
        assert "retry-after" in operation["responses"]["429"]["headers"]
        assert not {"401", "403"} & set(operation["responses"])


def test_idempotent_writes_require_the_idempotency_key_header(document: dict[str, Any]):
    idempotent = {(e.method, API + e.path) for e in all_endpoints() if e.idempotent}
    assert idempotent == {  # the writes SPEC.md section 4 names, and a merge (docs/api.md)
        ("POST", f"{API}/bookings"),
        ("POST", f"{API}/bookings/{{id}}/cancel"),
        ("POST", f"{API}/bookings/{{id}}/reschedule"),
        ("POST", f"{API}/quotes"),
        ("POST", f"{API}/quotes/{{id}}"),
        ("POST", f"{API}/payments"),
        ("PATCH", f"{API}/payments"),
        ("POST", f"{API}/customers/{{id}}/merge"),
    }
    # Public ``book`` takes the key too, optionally (DECISIONS.md, "Public API and pages").
    optional = {(e.method, PUBLIC_PREFIX + e.path) for e in PUBLIC_ENDPOINTS if e.idempotent}
    assert optional == {("POST", f"{PUBLIC_PREFIX}/{{slug}}/book")}
    for method, path, operation in operations(document):
        headers = [p for p in operation["parameters"] if p["in"] == "header"]
        if (method, path) in idempotent | optional:
            assert headers[0]["name"] == "Idempotency-Key"
            assert headers[0]["required"] is ((method, path) in idempotent)
            assert headers[0]["schema"]["maxLength"] == 255
        else:
            assert headers == []


NEWEST_FIRST_ONLY = {
    f"{API}/webhooks",
    f"{API}/webhooks/{{id}}/deliveries",
    f"{API}/waitlist",
    f"{API}/booking-forms",
    f"{API}/messages",
}
"""Lists of records with no change stamps: no ``updatedSince`` (docs/api.md, Pagination)."""


def test_lists_describe_limit_cursor_and_updated_since(document: dict[str, Any]):
    lists = {API + e.path for e in all_endpoints() if e.paginated}
    assert lists >= {f"{API}/{name}" for name in ("customers", "leads", "quotes", "payments")}
    assert lists >= NEWEST_FIRST_ONLY
    for method, path, operation in operations(document):
        if method != "GET" or path not in lists:
            continue
        params = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
        assert params["limit"]["schema"] == {
            "type": "integer",
            "minimum": 1,
            "maximum": 200,
            "default": 50,
        }
        assert "cursor" in params, path
        assert ("updatedSince" in params) is (path not in NEWEST_FIRST_ONLY), path
        schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema["required"] == ["data", "hasMore", "nextCursor"]


def test_request_bodies_carry_their_ceilings_enums_and_refuse_unknown_fields(
    document: dict[str, Any],
):
    def body(method: str, path: str) -> dict[str, Any]:
        operation = document["paths"][API + path][method]
        schema: dict[str, Any] = operation["requestBody"]["content"]["application/json"]["schema"]
        return schema

    customer = body("post", "/customers")
    assert customer["additionalProperties"] is False
    assert set(customer["required"]) == {"name", "email"}
    assert customer["properties"]["name"]["maxLength"] == 200
    assert customer["properties"]["email"]["maxLength"] == 254
    address = customer["properties"]["address"]["anyOf"][0]
    assert address["properties"]["city"]["maxLength"] == 120
    assert address["properties"]["line1"]["maxLength"] == 200
    assert address["properties"]["accessNotes"]["maxLength"] == 2000
    assert address["properties"]["zip"]["pattern"] == "^[0-9]{5}$"

    payment = body("post", "/payments")
    assert set(payment["properties"]["kind"]["enum"]) >= {"PAYMENT", "TIP", "REFUND"}
    action = body("post", "/quotes/{id}")
    assert set(action["properties"]["action"]["enum"]) == {
        "send",
        "accept",
        "reject",
        "convert",
        "pause",
        "resume",
    }
    price = body("post", "/quote")
    assert price["properties"]["couponCode"]["maxLength"] == 100
    assert price["properties"]["couponCode"]["type"] == ["string", "null"]
    assert price["properties"]["startIso"]["format"] == "date-time"


def test_live_errors_match_the_documented_error_schema(
    stack: Stack, api: httpx.Client, document: dict[str, Any]
):
    schema = {**document["components"]["schemas"]["Error"], "components": document["components"]}
    validator = OAS31Validator(schema)
    with stack.client() as anon:
        answers = [
            anon.get(f"{API}/services"),
            api.get(f"{API}/nope"),
            api.delete(f"{API}/services"),
            api.post(f"{API}/customers", json={"name": 1}),
            api.post(f"{API}/quotes", json={}),
            api.post(f"{API}/quotes", json={}, headers=idem()),
            api.get(f"{API}/leads/lead_missing"),
        ]
    for response in answers:
        assert response.status_code >= 400
        validator.validate(response.json())


def _parameters(document: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in document["paths"][path]["get"]["parameters"]}


def test_query_parameters_say_what_they_are(document: dict[str, Any]):
    availability = _parameters(document, f"{API}/availability")
    assert {n for n, p in availability.items() if p.get("required")} == {
        "serviceId",
        "date",
        "zip",
    }
    assert availability["days"]["schema"]["type"] == "integer"
    assert availability["crewIds"]["schema"]["type"] == "array"
    assert availability["crewIds"]["explode"] is False
    bookings = _parameters(document, f"{API}/bookings")
    assert bookings["limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
        "default": 50,
    }
    assert bookings["status"]["schema"]["enum"] == [
        "scheduled",
        "in_progress",
        "completed",
        "cancelled",
    ]
    assert bookings["from"]["schema"]["format"] == "date-time"


def test_every_event_type_is_listed_under_webhooks_with_its_envelope(document: dict[str, Any]):
    webhooks = document["webhooks"]
    assert list(webhooks) == [t.value for t in EventType]
    carried = {  # what each resource's own GET answers
        "booking": "BookingWithActivity",
        "customer": "Customer",
        "lead": "LeadWithTimeline",
        "quote": "QuoteWithFollowUps",
        "payment": "PaymentEntry",
        "waitlist": "WaitlistEntry",
        "customer.merged": "CustomerMerge",  # the two ids of the merge
    }
    schemas = document["components"]["schemas"]
    for event_type in EventType:
        operation = webhooks[event_type.value]["post"]
        assert operation["description"] == DESCRIPTIONS[event_type]
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
        envelope = operation["requestBody"]["content"]["application/json"]["schema"]
        assert envelope["required"] == ["id", "type", "createdAt", "data"]
        assert envelope["additionalProperties"] is False
        assert envelope["properties"]["type"]["const"] == event_type.value
        data = envelope["properties"]["data"]
        kind = event_type.value if event_type.value in carried else event_type.value.split(".")[0]
        if event_type is EventType.WEBHOOK_TEST:
            assert data["required"] == ["webhookId"]
        else:
            assert data == {"$ref": f"#/components/schemas/{carried[kind]}"}
            assert carried[kind] in schemas
    reference = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text("utf-8")
    assert all(f"`{t.value}`" in reference for t in EventType), "docs/api.md lists them all"
    refund = webhooks["payment.refunded"]["post"]["requestBody"]["content"]["application/json"]
    entry = schemas["PaymentEntry"]["properties"]
    assert {"bookingId", "amountCents", "note", "kind", "reverses"} <= set(entry)
    assert refund["schema"]["properties"]["data"]["$ref"].endswith("/PaymentEntry")


def test_webhook_bodies_list_the_event_types_and_their_ceilings(document: dict[str, Any]):
    paths = document["paths"]
    create = paths[f"{API}/webhooks"]["post"]["requestBody"]
    assert create["required"] is True
    body = create["content"]["application/json"]["schema"]
    assert body["additionalProperties"] is False
    assert set(body["required"]) == {"url", "events"}
    assert body["properties"]["url"]["maxLength"] == 2000
    assert body["properties"]["description"]["maxLength"] == 500
    names = set(body["properties"]["events"]["items"]["enum"])
    assert names == {"*"} | {t.value for t in EventType} - {"webhook.test"}
    patch = paths[f"{API}/webhooks/{{id}}"]["patch"]["requestBody"]
    assert patch["required"] is False
    assert set(patch["content"]["application/json"]["schema"]["properties"]) == {
        "url",
        "events",
        "active",
        "description",
    }
    secret = document["components"]["schemas"]["WebhookEndpointWithSecret"]["properties"]
    assert "secret" in secret
    assert "secret" not in document["components"]["schemas"]["WebhookEndpoint"]["properties"]
    assert "202" in paths[f"{API}/webhooks/{{id}}/test"]["post"]["responses"]


def test_the_docs_page_renders_the_document_from_packaged_files(stack: Stack):
    with stack.client() as c:
        page = c.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        # No CDN: every script and stylesheet is served by this server.
        for asset in ("/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css",
                      "/docs/start.js"):  # fmt: skip
            assert asset in page.text
            served = c.get(asset)
            assert served.status_code == 200
            # Every file of it carries the pages' headers: no other site may frame it.
            assert served.headers["x-content-type-options"] == "nosniff"
            assert served.headers["x-frame-options"] == "DENY"
        assert "/api/openapi.json" in c.get("/docs/start.js").text
        assert "https://" not in page.text
        # The page where a key is pasted into "Authorize" runs no inline script and is
        # never framed (it had none of the pages' headers).
        policy = page.headers["content-security-policy"]
        assert "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["referrer-policy"] == "same-origin"
        assert "<script>" not in page.text


def _body_schema(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    operation = document["paths"][path][method]
    found: dict[str, Any] = operation["requestBody"]["content"]["application/json"]["schema"]
    while "$ref" in found:  # "#/components/schemas/Name"
        found = document["components"]["schemas"][found["$ref"].rsplit("/", 1)[1]]
    return found


def test_rules_across_fields_are_in_the_request_schemas(document: dict[str, Any]):
    # An enquiry needs an email or a phone; a booking form books at least one service.
    lead = _body_schema(document, "post", "/api/v1/leads")
    needs = [option["required"] for option in lead["anyOf"]]
    assert needs == [["email"], ["phone"]]
    form = _body_schema(document, "post", "/api/v1/booking-forms")
    assert form["properties"]["serviceIds"]["minItems"] == 1
    # An address has a street and a city that are not blank, and a two-letter state.
    customer = _body_schema(document, "post", "/api/v1/customers")
    address = customer["properties"]["address"]
    while "$ref" in address or "anyOf" in address:
        if "anyOf" in address:
            address = next(a for a in address["anyOf"] if a.get("type") != "null")
            continue
        address = document["components"]["schemas"][address["$ref"].rsplit("/", 1)[1]]
    assert address["properties"]["state"]["pattern"] == "^[A-Za-z]{2}$"
    assert address["properties"]["line1"]["pattern"] == address["properties"]["city"]["pattern"]


def test_booking_bodies_describe_the_dates_and_crew_lists_the_server_takes(
    document: dict[str, Any],
):
    # At most 20 further dates (the core's "At most 20 dates.", not the 200 of any array),
    # on the public body too.
    booking = _body_schema(document, "post", f"{API}/bookings")
    public = _body_schema(document, "post", f"{PUBLIC_PREFIX}/{{slug}}/book")
    for body in (booking, public):
        assert body["properties"]["additionalStartIsos"]["maxItems"] == 20
    # crewIds, when given, names at least one member and none twice, when booking and
    # when rescheduling alike ([] is not "keep the crew").
    reschedule = _body_schema(document, "post", f"{API}/bookings/{{id}}/reschedule")
    for body in (booking, reschedule):
        crew = body["properties"]["crewIds"]
        assert (crew["minItems"], crew["uniqueItems"]) == (1, True)
        assert "null" in crew["type"]
    assert "crewIds" not in public["properties"]


def test_a_hand_priced_quote_line_is_documented_as_the_server_takes_it(
    document: dict[str, Any], api: httpx.Client
):
    # quotes.md: amountCents >= 0, and the server refuses a negative line.
    quote = _body_schema(document, "post", f"{API}/quotes")
    line = quote["properties"]["manualLines"]["items"]
    while "$ref" in line:
        line = document["components"]["schemas"][line["$ref"].rsplit("/", 1)[1]]
    amount = line["properties"]["amountCents"]
    assert (amount["minimum"], amount["maximum"]) == (0, 100_000_000)

    customer = api.post(f"{API}/customers", json={"name": "Line Test", "email": unique_email()})
    for cents in (amount["minimum"], amount["minimum"] - 1):
        body = {
            "customerId": customer.json()["id"],
            "manualLines": [{"description": "Windows", "amountCents": cents}],
        }
        answered = api.post(f"{API}/quotes", json=body, headers=idem())
        if cents < amount["minimum"]:
            errors = error_of(answered, 400, "invalid_request")["fieldErrors"]
            assert set(errors) == {"manualLines.0.amountCents"}
        else:
            assert answered.status_code == 201, answered.text


def test_every_operation_documents_405_and_413(
    stack: Stack, api: httpx.Client, document: dict[str, Any]
):
    """The server answers a wrong method with 405 on every path, and a body over 1 MB
    with 413 on every operation, a read's too (a public one's over 64 KB): both are
    documented, in the answers' real shape."""
    error_ref = {"$ref": "#/components/schemas/Error"}
    public_ref = {"$ref": "#/components/schemas/PublicError"}
    for method, path, operation in operations(document):
        responses = operation["responses"]
        ref = public_ref if public(path) else error_ref
        refused = responses["405"]
        assert refused["content"]["application/json"]["schema"] == ref, (method, path)
        assert "allow" in refused["headers"], (method, path)
        # A read counts a body sent with it too (413 over 1 MB, over 64 KB on public).
        too_large = responses["413"]
        assert too_large["content"]["application/json"]["schema"] == ref, (method, path)
    schema = {**document["components"]["schemas"]["Error"], "components": document["components"]}
    validator = OAS31Validator(schema)
    big = b'{"serviceId": "' + b"a" * 1_000_001 + b'"}'
    answers = [
        (api.delete(f"{API}/services"), 405),
        (api.post(f"{API}/quote", content=big, headers={"content-type": "application/json"}), 413),
        (api.request("GET", f"{API}/services", content=big), 413),
    ]
    for response, status in answers:
        assert response.status_code == status
        validator.validate(response.json())


def test_an_enum_that_may_be_null_lists_null_among_its_values(document: dict[str, Any]):
    """``PATCH /leads/{id}`` takes ``"stage": null`` (no change): its schema says so, as
    does every other enum the service takes or gives as null."""
    found: list[tuple[str, Any]] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if "enum" in node:
                found.append((where, node))
            for name, child in node.items():
                walk(child, f"{where}/{name}")
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{where}/{index}")

    walk(document, "#")
    assert found
    for where, schema in found:
        kinds = schema.get("type", [])
        may_be_null = "null" in kinds if isinstance(kinds, list) else kinds == "null"
        assert may_be_null == (None in schema["enum"]), where
    patch = document["paths"]["/api/v1/leads/{id}"]["patch"]
    body = patch["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    assert None in body["properties"]["stage"]["enum"]


def test_the_scopes_table_of_api_md_names_every_endpoint_with_the_scope_it_needs():
    """docs/api.md, "Scopes": "each endpoint needs one"; the table is what a developer
    reads, so it lists every endpoint, each with the scope the server checks."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text("utf-8")
    table = text.split("\n## Scopes\n", 1)[1].split("\n## ", 1)[0]
    listed: dict[tuple[str, str], str] = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if not row.startswith("|") or len(cells) != 2 or "`" not in cells[1]:
            continue  # not a row, or the table's head
        scope = cells[1].split("`")[1]
        if cells[0] == "every `/webhooks` route":
            listed |= {(e.method, e.path): scope for e in all_endpoints() if "/webhooks" in e.path}
            continue
        for endpoint in cells[0].split(", "):
            method, path = endpoint.strip("`").split(" ")
            listed[(method, path.replace(":id", "{id}"))] = scope
    served = {(e.method, e.path): e.scope for e in all_endpoints()}
    assert listed == served


def test_crew_ids_in_a_query_say_none_twice_and_a_quote_says_its_body_is_required(
    document: dict[str, Any],
):
    """The server refuses a member listed twice in ``crewIds`` (docs/scheduling.md) and a
    quote without a body: the description says so, as for the bodies' ``crewIds``."""
    ops = {(method, path): op for method, path, op in operations(document)}
    for path in (f"{API}/availability", f"{PUBLIC_PREFIX}/{{slug}}/slots"):
        (crew,) = [p for p in ops[("GET", path)]["parameters"] if p["name"] == "crewIds"]
        assert crew["schema"]["uniqueItems"] is True, path
    assert ops[("POST", f"{API}/quotes")]["requestBody"]["required"] is True
    assert ops[("POST", f"{API}/bookings/{{id}}/cancel")]["requestBody"]["required"] is False
