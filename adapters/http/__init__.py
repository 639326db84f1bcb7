"""The Starlette HTTP layer: routes, auth, rate limits, idempotency, errors, OpenAPI."""
