"""The OpenAPI 3.1 description, generated from the endpoint table, the request body
classes the code structures with, and the response schemas of ``adapters.http.schemas``
(never a hand-kept copy).

Every response schema that carries a ``title`` becomes ``components/schemas/<title>`` and
is referred to by ``$ref`` wherever it appears, so a shared piece (a price breakdown, a
saved address) is described once."""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import attrs

from adapters.http.endpoint import Endpoint
from adapters.http.structuring import MAX_LENGTHS, Zip, camel

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

RATE_HEADERS = {
    name: {"schema": {"type": "integer"}, "description": text}
    for name, text in (
        ("x-ratelimit-limit", "Requests allowed per minute for this key."),
        ("x-ratelimit-remaining", "Requests left in the current window."),
        ("x-ratelimit-reset", "Whole seconds until the window resets."),
    )
}


def schema_of(tp: Any) -> dict[str, Any]:
    """JSON Schema of a type the structuring converter accepts."""
    if tp is Zip:
        return {"type": "string", "pattern": "^[0-9]{5}$"}
    if tp in MAX_LENGTHS:
        return {"type": "string", "maxLength": MAX_LENGTHS[tp]}
    simple = {str: "string", int: "integer", bool: "boolean", float: "number"}
    if tp in simple:
        return {"type": simple[tp]}
    if tp is datetime:
        return {"type": "string", "format": "date-time", "description": "ISO 8601 with offset"}
    if tp is date:
        return {"type": "string", "format": "date"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [m.value for m in tp]}
    if attrs.has(tp):
        return object_schema(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [schema_of(a) for a in args if a is not type(None)]
        schema = options[0] if len(options) == 1 else {"anyOf": options}
        if type(None) in args:
            return {"anyOf": [schema, {"type": "null"}]}
        return schema
    if origin in (list, tuple, Sequence, frozenset, set):
        return {"type": "array", "items": schema_of(args[0]) if args else {}}
    if origin is typing.Literal:
        return {"enum": list(args)}
    return {}


def object_schema(cls: type) -> dict[str, Any]:
    """Schema of an attrs request class: camelCase properties, no unknown fields."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in attrs.fields(cls):
        name = camel(field.name)
        properties[name] = schema_of(hints[field.name])
        if field.metadata.get("description"):
            properties[name]["description"] = field.metadata["description"]
        if field.default is attrs.NOTHING:
            required.append(name)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    if cls.__doc__:
        schema["description"] = cls.__doc__.strip().splitlines()[0]
    return schema


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


def _operation(endpoint: Endpoint, components: dict[str, Any]) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", endpoint.path)
    ]
    if endpoint.paginated:
        parameters += [
            {
                "name": "limit",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
            },
            {
                "name": "cursor",
                "in": "query",
                "schema": {"type": "string"},
                "description": "nextCursor of the previous page",
            },
            {
                "name": "updatedSince",
                "in": "query",
                "schema": {"type": "string", "format": "date-time"},
                "description": "changes from this instant, oldest first",
            },
        ]
    parameters += [
        {"name": p.name, "in": "query", "schema": dict(p.schema), "description": p.description}
        for p in endpoint.query
    ]
    if endpoint.idempotent:
        parameters.append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": True,
                "schema": {"type": "string", "maxLength": 255},
                "description": "Same key and body replays the first answer; kept 24 hours.",
            }
        )
    success = hoist(dict(endpoint.response) or {"type": "object"}, components)
    if endpoint.paginated:
        success = {
            "type": "object",
            "required": ["data", "hasMore", "nextCursor"],
            "properties": {
                "data": {"type": "array", "items": success},
                "hasMore": {"type": "boolean"},
                "nextCursor": {
                    "type": ["string", "null"],
                    "description": "Pass as cursor for the next page; null on the last.",
                },
            },
            "additionalProperties": False,
        }
    responses: dict[str, Any] = {
        str(status): {
            "description": text,
            "headers": RATE_HEADERS,
            "content": {"application/json": {"schema": success}},
        }
        for status, text in {endpoint.success_status: "Success", **endpoint.also}.items()
    }
    for status, text in ERRORS.items():
        responses[status] = {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
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
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": object_schema(endpoint.body)}},
        }
    return operation


def openapi_document(endpoints: Sequence[Endpoint], *, server: str) -> dict[str, Any]:
    """The whole OpenAPI 3.1 document for ``endpoints``."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for endpoint in endpoints:
        paths.setdefault(f"/api/v1{endpoint.path}", {})[endpoint.method.lower()] = _operation(
            endpoint, schemas
        )
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
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer"},
                "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            },
        },
    }
