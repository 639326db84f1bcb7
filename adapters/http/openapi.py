"""The OpenAPI 3.1 description, generated from the endpoint table, the request body
classes the code structures with, and the view classes the code answers with
(``adapters.http.views``; never a hand-kept copy).

Every view's schema carries a ``title`` and becomes ``components/schemas/<title>``,
referred to by ``$ref`` wherever it appears, so a shared piece (a price breakdown, a
saved address) is described once.

The top-level ``webhooks`` key lists every event type of ``booking_core.events`` as the
POST a receiver gets: the Standard Webhooks headers and the envelope ``{id, type,
createdAt, data}``, whose ``data`` refers to the schema of the resource it carries."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Sequence
from typing import Any

import attrs

from adapters.http.endpoint import Endpoint
from adapters.http.jsonschema import SCHEMA_METADATA, request_schema, type_schema, view_schema
from adapters.http.public import EXPOSE_HEADERS
from adapters.http.reading import MAX_BODY_BYTES
from adapters.http.structuring import camel
from adapters.http.views.bookings import BookingWithActivityView
from adapters.http.views.customers import CustomerMergeView, CustomerView
from adapters.http.views.leads import LeadWithTimelineView
from adapters.http.views.payments import PaymentView
from adapters.http.views.quotes import QuoteWithFollowUpsView
from adapters.http.views.waitlist import WaitlistEntryView
from booking_core.events import DESCRIPTIONS, EventType

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "requestId"],
            "properties": {
                "code": {"type": "string", "description": "Stable, machine-readable."},
                "message": {"type": "string", "description": "Safe to show a person."},
                "fieldErrors": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Dotted field path (address.zip) to what is wrong with it.",
                },
                "requiredScope": {"type": "string", "description": "On insufficient_scope."},
                "requestId": {"type": "string", "description": "Also the x-request-id header."},
            },
        }
    },
}

ERRORS = {
    "400": "invalid_request: fields missing or invalid (fieldErrors says which)",
    "401": "unauthorized: no valid key (no rate-limit headers)",
    "403": "insufficient_scope: the key lacks the scope named in requiredScope",
    "404": "not_found: the id names nothing this company owns",
    "409": "idempotency_key_reused, idempotency_key_in_use, or conflict",
    "422": "unprocessable: understood but refused by a rule",
    "429": "rate_limited: retry after the retry-after header's seconds",
    "500": "internal_error: a genuine fault; the only code worth retrying",
}
"""The refusals every ``/api/v1`` operation may answer."""

TOO_LARGE = (
    f"payload_too_large: the body is over {MAX_BODY_BYTES:,} bytes, counted while it "
    "streams (chunked or not); a body sent with a read, which is not used, is counted too"
)
"""The refusal of every operation: a body over the limit, read or not."""

WRONG_METHOD = "the path does not take the method used; the allow header lists those it does"
"""What a 405 means. OpenAPI describes operations, and a 405 answers a method no
operation of the path has: it is listed on each operation of the path instead."""

ALLOW_HEADER = {
    "allow": {
        "schema": {"type": "string"},
        "description": "The methods the path takes, comma-separated (GET, POST, ...).",
    }
}

DEPRECATION_HEADERS = {
    "deprecation": {
        "schema": {"type": "string"},
        "description": "RFC 9745: @<unix seconds> the form used here was deprecated.",
    },
    "sunset": {
        "schema": {"type": "string"},
        "description": "RFC 8594: the HTTP date after which the deprecated form is gone.",
    },
}

RATE_HEADERS = {
    name: {"schema": {"type": "integer"}, "description": text}
    for name, text in (
        (
            "x-ratelimit-limit",
            "Requests allowed per minute (for this key, or on /api/public"
            " for this client address and company).",
        ),
        ("x-ratelimit-remaining", "Requests left in the current window."),
        ("x-ratelimit-reset", "Whole seconds until the window resets."),
    )
}
"""On every answer counted against a rate limit: on ``/api/v1`` every answer but a 401."""

REQUEST_ID_HEADER = {
    "x-request-id": {
        "required": True,
        "schema": {"type": "string"},
        "description": "The request's id: yours when you sent a sane one (at most 64"
        " characters of A-Z a-z 0-9 . _ -), else a fresh one; a refusal's error.requestId.",
    }
}
"""On every answer under ``/api``."""

RETRY_AFTER_HEADER = {
    "retry-after": {
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
        "description": "Whole seconds to wait before calling again.",
    }
}
"""On every 429."""

REPLAY_HEADERS = {
    "idempotent-replayed": {
        "schema": {"type": "string", "const": "true"},
        "description": "Present on a replay: the stored answer of the first request with"
        " this Idempotency-Key and body, given again; nothing happened again.",
    }
}
"""On the answers a write with an ``Idempotency-Key`` stores and replays."""

ORIGINAL_REQUEST_ID_HEADER = {
    "original-request-id": {
        "schema": {"type": "string"},
        "description": "On a replayed refusal: the request id of the first request, whose"
        " answer this is (error.requestId and x-request-id are this request's).",
    }
}

REPLAYED_REFUSALS = ("400", "404", "422")
"""The refusals a write with an ``Idempotency-Key`` stores, so replays: those of the
write itself. Those given before the key is claimed (401, 403, 405, 413, 429, and 400 for
the body's shape or the header) are not stored, nor a 409 (the key's own, or a lost race),
nor a 5xx (docs/api.md, "Idempotency")."""

BEFORE_THE_BODY = ("401", "405", "413", "429")
"""Answers given before a body is read, or without reading it: they cannot tell which
form a body uses, so a deprecated form of a body is not announced on them."""


EVENT_DATA: dict[str, type] = {
    "booking": BookingWithActivityView,
    "customer": CustomerView,
    "lead": LeadWithTimelineView,
    "quote": QuoteWithFollowUpsView,
    "payment": PaymentView,
    "waitlist": WaitlistEntryView,
    "customer.merged": CustomerMergeView,
}
"""The view whose schema an event's ``data`` has, by the event type (or else its first
word): the answer of the resource's own ``GET`` (``adapters/webhooks/render.py`` renders
with it); ``customer.merged`` carries the two ids of the merge."""

WEBHOOK_TEST_DATA: dict[str, Any] = {
    "type": "object",
    "required": ["webhookId"],
    "properties": {"webhookId": {"type": "string", "description": "The endpoint tested."}},
    "additionalProperties": False,
}

DELIVERY_HEADERS = [
    {
        "name": name,
        "in": "header",
        "required": True,
        "schema": {"type": "string"},
        "description": text,
    }
    for name, text in (
        ("webhook-id", "The event id (evt_...), the same on every retry: deduplicate by it."),
        ("webhook-timestamp", "This attempt's time, whole seconds since the Unix epoch."),
        (
            "webhook-signature",
            "v1,<base64 HMAC-SHA256 of id.timestamp.body>, one per valid secret,"
            " space-separated (docs/webhooks.md).",
        ),
    )
]


def hoist(node: Any, components: dict[str, Any]) -> Any:
    """``node`` with every titled schema replaced by a ``$ref`` into ``components``."""
    if isinstance(node, list):
        return [hoist(item, components) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: hoist(value, components) for key, value in node.items()}
    title = node.get("title")
    # A property named "title" maps to a schema (a dict); only a string is a schema's name.
    if not isinstance(title, str):
        return out
    if components.setdefault(title, out) != out:
        raise ValueError(f"two different response schemas are both named {title!r}")
    return {"$ref": f"#/components/schemas/{title}"}


def query_parameters(cls: type | None) -> list[dict[str, Any]]:
    """The query parameters an endpoint's query class reads; lists are comma-separated."""
    if cls is None:
        return []
    hints = typing.get_type_hints(cls, include_extras=True)
    out: list[dict[str, Any]] = []
    for field in attrs.fields(cls):
        # ``X | None``: in a query string, leaving the parameter out is how one says none.
        options = [a for a in typing.get_args(hints[field.name]) if a is not type(None)]
        optional = typing.get_origin(hints[field.name]) in (typing.Union, types.UnionType)
        schema = type_schema(options[0] if optional else hints[field.name], answer=False)
        if (keywords := field.metadata.get(SCHEMA_METADATA)) is not None:
            schema = {**schema, **keywords.values}
        if field.default is not attrs.NOTHING and field.default is not None:
            default = field.default
            schema = {**schema, "default": list(default) if isinstance(default, tuple) else default}
        parameter: dict[str, Any] = {
            "name": camel(field.name),
            "in": "query",
            "required": field.default is attrs.NOTHING,
            "schema": schema,
        }
        if schema.get("type") == "array":
            parameter.update(style="form", explode=False)
        if field.metadata.get("description"):
            parameter["description"] = field.metadata["description"]
        out.append(parameter)
    return out


def _operation(endpoint: Endpoint, components: dict[str, Any]) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", endpoint.path)
    ]
    parameters += query_parameters(endpoint.query)
    if endpoint.idempotent:
        parameters.append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": True,
                "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                "description": "Same key and body replays the first answer; kept 24 hours.",
            }
        )
    response = view_schema(endpoint.response) if endpoint.response else {"type": "object"}
    success = hoist(response, components)
    if endpoint.listed:
        success = {"type": "array", "items": success}
    if endpoint.paginated:
        success = {
            "type": "object",
            "required": ["data", "hasMore", "nextCursor"],
            "properties": {
                "data": {"type": "array", "items": success},
                "hasMore": {"type": "boolean"},
                "nextCursor": {
                    "type": "string",
                    "description": "Pass as cursor for the next page. Newest first: an "
                    'empty string "" on the last page. With updatedSince: set on the last '
                    "page too (where the poll ended: keep it and pass it to the next poll); "
                    'an empty page hands back the cursor it was given ("" without one).',
                },
            },
            "additionalProperties": False,
        }
    responses: dict[str, Any] = {
        str(status): {
            "description": text,
            "content": {"application/json": {"schema": success}},
        }
        for status, text in {endpoint.success_status: "Success", **endpoint.also}.items()
    }
    refusals = {**ERRORS, "405": f"method_not_allowed: {WRONG_METHOD}", "413": TOO_LARGE}
    for status, text in sorted(refusals.items()):
        responses[status] = {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    for status, answer in responses.items():
        answer["headers"] = api_headers(endpoint, status)
    operation: dict[str, Any] = {
        "operationId": re.sub(r"\W+", "_", f"{endpoint.method}_{endpoint.path}").strip("_"),
        "summary": endpoint.summary,
        "tags": [endpoint.tag],
        "parameters": parameters,
        "responses": responses,
        "security": [{"bearerAuth": []}, {"apiKeyHeader": []}],
        "x-required-scope": endpoint.scope,
        "description": f"Requires the `{endpoint.scope}` scope.",
    }
    if endpoint.body is not None:
        body = request_schema(endpoint.body)
        operation["requestBody"] = {
            # A body whose every field has a default may be left out (e.g. a plain cancel).
            "required": bool(body.get("required"))
            if endpoint.body_required is None
            else endpoint.body_required,
            "content": {"application/json": {"schema": body}},
        }
    return operation


def _required(headers: dict[str, Any], required: bool) -> dict[str, Any]:
    return {name: {**header, "required": required} for name, header in headers.items()}


def _shared_headers(endpoint: Endpoint, status: str) -> dict[str, Any]:
    """What ``/api/v1`` and ``/api/public`` alike add to an answer of ``endpoint``: the
    request id, the replay headers of a write with an ``Idempotency-Key``, the
    deprecation headers of a deprecated form, and ``allow`` on a 405."""
    headers: dict[str, Any] = dict(REQUEST_ID_HEADER)
    if endpoint.idempotent and (status.startswith("2") or status in REPLAYED_REFUSALS):
        headers.update(REPLAY_HEADERS)
        if status in REPLAYED_REFUSALS:
            headers.update(ORIGINAL_REQUEST_ID_HEADER)
    # A route without a body announces its deprecation on every answer it gives itself;
    # one with a body, on the answers given once the body was read.
    announced = endpoint.body is None or status not in BEFORE_THE_BODY
    if endpoint.deprecation and status != "405" and announced:
        headers.update(DEPRECATION_HEADERS)
    if status == "405":
        headers.update(_required(ALLOW_HEADER, True))
    if status == "429":
        headers.update(RETRY_AFTER_HEADER)
    return headers


def api_headers(endpoint: Endpoint, status: str) -> dict[str, Any]:
    """The headers an ``/api/v1`` answer of ``endpoint`` with ``status`` carries: those
    of ``_shared_headers`` and the ``x-ratelimit-*`` headers on all but a 401 (SPEC.md
    section 8; a 500 that escaped every handler may lack them)."""
    headers = _shared_headers(endpoint, status)
    if status != "401":
        headers.update(_required(RATE_HEADERS, status != "500"))
    return headers


def event_data_schema(event_type: EventType, components: dict[str, Any]) -> dict[str, Any]:
    """The schema of an event's ``data``: a ``$ref`` to the resource's view schema."""
    if event_type is EventType.WEBHOOK_TEST:
        return WEBHOOK_TEST_DATA
    view = EVENT_DATA.get(event_type.value) or EVENT_DATA[event_type.value.partition(".")[0]]
    data: dict[str, Any] = hoist(view_schema(view), components)
    return data


def webhook_operations(components: dict[str, Any]) -> dict[str, Any]:
    """The ``webhooks`` key: one POST per event type, as a receiver gets it."""
    out: dict[str, Any] = {}
    for event_type in EventType:
        envelope = {
            "type": "object",
            "required": ["id", "type", "createdAt", "data"],
            "properties": {
                "id": {"type": "string", "description": "evt_...; also the webhook-id header."},
                "type": {"type": "string", "const": event_type.value},
                "createdAt": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When it happened, in the company's timezone, with offset.",
                },
                "data": event_data_schema(event_type, components),
            },
            "additionalProperties": False,
        }
        out[event_type.value] = {
            "post": {
                "operationId": "event_" + re.sub(r"\W+", "_", event_type.value),
                "summary": event_type.value,
                "description": DESCRIPTIONS[event_type],
                "tags": ["events"],
                "parameters": DELIVERY_HEADERS,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": envelope}},
                },
                "responses": {
                    "2XX": {"description": "Received. Any other answer is retried."},
                    "410": {
                        "description": "Gone: the endpoint is turned off; nothing more is sent."
                    },
                },
            }
        }
    return out


PUBLIC_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string", "description": "Safe to show a person."}},
    "additionalProperties": False,
}
PUBLIC_ERRORS = {
    "400": "fields missing or invalid (the message names each)",
    "404": "no company has this slug",
    "405": WRONG_METHOD,
    "409": "the slot is taken by another job, the Idempotency-Key is reused or busy, or "
    "another write held the same data too long (retry)",
    "413": "the body is over 64 KB (a body sent with a read is counted too)",
    "422": "a field over its ceiling (the message names the field and the limit), "
    "or understood but refused by a rule",
    "429": "rate limit of the client address exceeded: retry after retry-after seconds",
    "500": "a genuine fault; worth retrying",
}
CORS_HEADERS = {
    "access-control-allow-origin": {
        "required": True,
        "schema": {"type": "string", "const": "*"},
        "description": "On every public answer: any website may call.",
    },
    "access-control-expose-headers": {
        "required": True,
        "schema": {"type": "string", "const": EXPOSE_HEADERS},
        "description": "The headers of the answer a page on another origin may read.",
    },
}


def _public_operation(endpoint: Endpoint, components: dict[str, Any]) -> dict[str, Any]:
    """A public route (``adapters.http.public``): no key, the public error shape, CORS."""
    operation = _operation(endpoint, components)
    operation["operationId"] = "public_" + operation["operationId"]
    operation["security"] = []
    del operation["x-required-scope"]
    for parameter in operation["parameters"]:
        if parameter["name"] == "Idempotency-Key":
            parameter["required"] = False
            parameter["description"] = (
                "Optional. Given, the same key and body replays the first answer (kept 24 "
                "hours); absent, the request simply runs."
            )
    operation["description"] = (
        "No key. CORS: any origin, no credentials. Rate-limited per client address."
    )
    responses = {
        status: answer
        for status, answer in operation["responses"].items()
        if status.startswith("2")
    }
    statuses = set(PUBLIC_ERRORS)  # 413 too: a body sent with a read is counted all the same
    if not endpoint.scope.endswith(":write"):  # only a write can meet another head-on
        statuses -= {"409"}
    for status in sorted(statuses):
        responses[status] = {
            "description": PUBLIC_ERRORS[status],
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/PublicError"}}
            },
        }
    for status, answer in responses.items():
        answer["headers"] = public_headers(endpoint, status)
    operation["responses"] = responses
    return operation


def public_headers(endpoint: Endpoint, status: str) -> dict[str, Any]:
    """The headers a public answer of ``endpoint`` with ``status`` carries: CORS, those
    of ``_shared_headers``, and the ``x-ratelimit-*`` headers of the client address's
    count, on all but a 405 (the 404 of a path that names no route, and a 500 that
    escaped every handler, lack them too)."""
    headers = {**CORS_HEADERS, **_shared_headers(endpoint, status)}
    if status != "405":
        headers.update(_required(RATE_HEADERS, status not in {"404", "500"}))
    return headers


def openapi_document(
    endpoints: Sequence[Endpoint], *, server: str, public: Sequence[Endpoint] = ()
) -> dict[str, Any]:
    """The whole OpenAPI 3.1 document for ``endpoints`` and the ``public`` ones (under
    ``/api/public``, tag ``public``), and the webhooks it sends."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for endpoint in endpoints:
        paths.setdefault(f"/api/v1{endpoint.path}", {})[endpoint.method.lower()] = _operation(
            endpoint, schemas
        )
    if public:
        schemas["PublicError"] = PUBLIC_ERROR_SCHEMA
    for endpoint in public:
        paths.setdefault(f"/api/public{endpoint.path}", {})[endpoint.method.lower()] = (
            _public_operation(endpoint, schemas)
        )
    webhooks = webhook_operations(schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Booking and Scheduling Service",
            "version": "1.0.0",
            "description": "Authenticated API for websites, automations and internal tools. "
            "See docs/api.md for authentication, errors, pagination, idempotency and limits.",
        },
        "servers": [{"url": server}],
        "paths": paths,
        "webhooks": webhooks,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer"},
                "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            },
        },
    }
