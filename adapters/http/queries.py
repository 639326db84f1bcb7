"""Query strings as attrs classes, structured like bodies (``structure_query``): one way
to read enums, dates, instants, whole numbers and comma-separated lists on every route.

List endpoints extend ``PageQuery``; a parameter the class does not name is refused."""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from adapters.http.structuring import Cursor, Limit
from booking_core.paging import DEFAULT_LIMIT


@frozen(kw_only=True)
class PageQuery:
    """``limit``, ``cursor`` and ``updatedSince``: what every list reads."""

    limit: Limit = field(default=DEFAULT_LIMIT, metadata={"description": "rows per page"})
    cursor: Cursor | None = field(
        default=None, metadata={"description": "nextCursor of the previous page"}
    )
    updated_since: datetime | None = field(
        default=None, metadata={"description": "changes from this instant on, oldest first"}
    )
