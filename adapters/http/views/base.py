"""What every view shares: the company's render context, the page of a list, and the
annotated field types whose JSON Schema keywords (bounds, formats, descriptions) the
OpenAPI document takes from the view classes themselves."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Annotated, Generic, TypeVar, overload
from zoneinfo import ZoneInfo

import attrs
from attrs import AttrsInstance, frozen

from adapters.http.jsonschema import Keywords
from booking_core.bookings import tracking_url
from booking_core.quotes import public_url

V = TypeVar("V")
R = TypeVar("R")
A = TypeVar("A", bound=AttrsInstance)

Cents = Annotated[int, Keywords(description="US cents.")]
"""Money, possibly negative (a discount line is positive, a refund negative)."""
Price = Annotated[int, Keywords(description="US cents.", minimum=0)]
"""A catalog price: never negative."""
Bps = Annotated[int, Keywords(minimum=0, maximum=10_000, description="Basis points.")]
Count = Annotated[int, Keywords(minimum=0)]
Minutes = Annotated[int, Keywords(minimum=0)]
Positive = Annotated[int, Keywords(minimum=1)]
Url = Annotated[str, Keywords(format="uri")]
ZipCode = Annotated[str, Keywords(pattern="^[0-9]{5}$")]


@frozen
class RenderContext:
    """What shapes a company's answers (never what is stored): its timezone, for times
    with the company's offset, and its public addresses."""

    zone: ZoneInfo
    base_url: str
    slug: str
    custom_domain: str | None

    @overload
    def time(self, value: datetime) -> datetime: ...
    @overload
    def time(self, value: None) -> None: ...
    @overload
    def time(self, value: datetime | None) -> datetime | None: ...
    def time(self, value: datetime | None) -> datetime | None:
        """``value`` in the company's timezone (written ISO 8601 with that offset)."""
        return value.astimezone(self.zone) if value is not None else None

    def quote_url(self, token: str) -> str:
        """The page a customer reads a quote on (the company's own domain if connected)."""
        return public_url(
            base_url=self.base_url,
            company_slug=self.slug,
            custom_domain=self.custom_domain,
            token=token,
        )

    def tracking_url(self, token: str) -> str:
        """The customer's page tracking a booking."""
        return tracking_url(self.base_url, self.slug, token)


@frozen
class PageView(Generic[V]):
    """One page of a list, in SPEC.md's shape; the OpenAPI document describes it inline
    around the endpoint's item view."""

    data: tuple[V, ...]
    has_more: bool
    next_cursor: str


def extend(view: AttrsInstance, richer: Callable[..., R], **more: object) -> R:
    """``view`` as ``richer``, a subclass of its class adding the fields ``more`` gives
    (a lead with its timeline, a booking with its activity)."""
    return richer(**attrs.asdict(view, recurse=False), **more)


def copied(view: type[A], value: object, **given: object) -> A:
    """``view`` (a view class) filled from ``value``'s attributes of the same names, the
    fields in ``given`` excepted: most views show a domain value field for field."""
    names = _field_names(view)
    if not given:
        return view(**{n: getattr(value, n) for n in names})
    return view(**{n: given[n] if n in given else getattr(value, n) for n in names})


@cache
def _field_names(view: type) -> tuple[str, ...]:
    """The field names of a view class (asked on every answer, so worked out once)."""
    return tuple(f.name for f in attrs.fields(view))
