"""One error shape for every failure of ``/api/v1``, and the one table mapping domain
errors to codes.

``{"error": {"code", "message", "fieldErrors"?, "requiredScope"?, "requestId"}}``. The
table is walked along the exception's class hierarchy; anything unmapped is a bug and
answers ``internal_error`` with a generic message: no SQL, ORM, path or stack text ever.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from adapters.http.structuring import RequestInvalid, wire_path
from booking_core.errors import (
    ConflictError,
    DomainError,
    NotFoundError,
    RuleViolation,
    SlotTaken,
    SlotUnavailable,
    ValidationFailed,
)

INTERNAL_MESSAGE = "Something went wrong on our side. It is safe to retry this request."


MAX_FIELD_ERRORS = 100
"""The most field problems one answer lists: a 1 MB body of 50,000 unknown keys was
answered with 3.6 MB of them."""


class ApiError(Exception):
    """An answer other than success, already decided at the HTTP edge."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field_errors: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field_errors = field_errors
        self.headers = headers or {}
        self.extra = extra

    def body(self, request_id: str) -> dict[str, Any]:
        """The JSON body of this error: at most ``MAX_FIELD_ERRORS`` of its field
        problems, the message saying how many there were when there were more."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field_errors:
            problems = self.field_errors
            if len(problems) > MAX_FIELD_ERRORS:
                error["message"] = (
                    f"{self.message} The first {MAX_FIELD_ERRORS} of {len(problems):,}"
                    " problems are listed."
                )
                problems = dict(islice(problems.items(), MAX_FIELD_ERRORS))
            error["fieldErrors"] = problems
        error.update(self.extra)
        error["requestId"] = request_id
        return {"error": error}


# Walked along the MRO: the most specific class that is listed wins.
STATUS_BY_ERROR: dict[type[DomainError], tuple[int, str]] = {
    ValidationFailed: (400, "invalid_request"),
    NotFoundError: (404, "not_found"),
    RuleViolation: (422, "unprocessable"),
    ConflictError: (409, "conflict"),
}


def from_domain(error: DomainError) -> ApiError:
    """The API error for a domain error; unmapped classes are internal errors."""
    for cls in type(error).__mro__:
        if cls in STATUS_BY_ERROR:
            status, code = STATUS_BY_ERROR[cls]
            if isinstance(error, NotFoundError):
                # One text whether the id is a typo, stale, or another company's.
                # It never echoes the id: nothing the caller sent is played back to them.
                return ApiError(status, code, f"No such {error.kind}.")
            field_errors = None
            if isinstance(error, RequestInvalid):
                field_errors = error.field_errors
            elif isinstance(error, ValidationFailed):
                # The core names fields in snake_case; the wire spells them in camelCase.
                field_errors = {wire_path(k): v for k, v in error.field_errors.items()}
            elif isinstance(error, SlotTaken | SlotUnavailable) and error.field is not None:
                # A start other than startIso's (one of several dates) is named by its path.
                path = wire_path(error.field)
                message = f"{path}: {error.message}"
                return ApiError(status, code, message, field_errors={path: error.message})
            return ApiError(status, code, error.message, field_errors=field_errors)
    return internal_error()


def internal_error() -> ApiError:
    """The one answer for a genuine fault."""
    return ApiError(500, "internal_error", INTERNAL_MESSAGE)


def not_found_route() -> ApiError:
    """An address that names no route."""
    return ApiError(404, "not_found", "No such route. See /api/openapi.json.")
