"""Crew assignments: one row per (booking, crew member, day block), and the overlap guard.

A row is ``open`` while its booking is scheduled or in progress. No two open rows of one
member in one company overlap (half-open):

- PostgreSQL enforces it with the exclusion constraint ``ex_booking_assignments_overlap``
  (``EXCLUDE USING gist (company_id WITH =, crew_id WITH =, tstzrange(starts_at, ends_at,
  '[)') WITH &&) WHERE (open)``). An insert that meets an uncommitted overlapping row
  waits for its transaction and fails with SQLSTATE 23P01 if it commits; the repository
  then looks the overlap up to name the member.
- SQLite runs one writing unit of work at a time (``BEGIN IMMEDIATE``), so the rows are
  checked with a query just before they are written, inside the same transaction.

Reading busy blocks stays flat in the size of the history: every query names the open
rows as plain ``open`` (never ``open IS true``, which no partial index matches) and the
time it looks at as a range both indexes can seek (``overlapping``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Connection,
    DateTime,
    String,
    Table,
    any_,
    bindparam,
    delete,
    func,
    literal,
    literal_column,
    select,
    text,
    type_coerce,
)
from sqlalchemy.dialects import postgresql

from adapters.sql.columns import instant_type
from adapters.sql.context import HOLD, translated_errors
from adapters.sql.direct import run_kept
from adapters.sql.tables import booking_assignments
from booking_core.availability import Block
from booking_core.bookings import MAX_DURATION_MINUTES, Booking
from booking_core.errors import SlotTaken

LONGEST_BLOCK = timedelta(minutes=MAX_DURATION_MINUTES)
"""No day block is longer, so a block overlapping ``[start, ...)`` starts after
``start - LONGEST_BLOCK``: a lower bound that lets the busy index seek a narrow range."""

INSERT_CHUNK = 200
"""Rows per INSERT statement (well inside SQLite's limit of bound parameters)."""

SEEK_MEMBERS = 8
"""On PostgreSQL, ``busy`` names at most this many members in its SQL (a booking's chosen
crew); a longer list (a whole roster) is kept as the rows arrive instead, for the GiST
index descends once per listed member, which costs more than reading everyone's few
rows in the window (2 ms against 0.5 ms for 50 members)."""

Spans = dict[tuple[str, str], list[tuple[datetime, datetime]]]
"""Blocks held, by (company id, crew id)."""

_a = booking_assignments
_HALF_OPEN: ColumnElement[str] = literal_column("'[)'")
_AWARE = DateTime(timezone=True)


def rows_of(booking: Booking) -> list[dict[str, Any]]:
    """The assignment rows of a booking: every member, every day."""
    return [
        {
            "company_id": booking.company_id,
            "booking_id": booking.id,
            "crew_id": crew_id,
            "starts_at": start,
            "ends_at": end,
            "zip_code": booking.address.zip,
            "open": booking.is_open,
        }
        for crew_id in dict.fromkeys(booking.crew_ids)
        for start, end in booking.day_blocks()
    ]


def open_blocks(booking: Booking) -> list[tuple[str, datetime, datetime]]:
    """(crew id, start, end) of every block the booking holds; none once it is closed."""
    if not booking.is_open:
        return []
    days = booking.day_blocks()
    return [(crew_id, s, e) for crew_id in dict.fromkeys(booking.crew_ids) for s, e in days]


def first_collision(bookings: Sequence[Booking], held: Spans) -> SlotTaken | None:
    """``SlotTaken`` for the first block of ``bookings`` that overlaps a block in ``held``
    or one of an earlier booking of the batch; None when they all fit."""
    taken: Spans = defaultdict(list, {key: list(spans) for key, spans in held.items()})
    for booking in bookings:
        mine = open_blocks(booking)
        for crew_id, start, end in mine:
            spans = taken[(booking.company_id, crew_id)]
            if any(start < other_end and other_start < end for other_start, other_end in spans):
                local = start.astimezone(booking.zone).isoformat()
                return SlotTaken(local, crew_id)
        for crew_id, start, end in mine:
            taken[(booking.company_id, crew_id)].append((start, end))
    return None


def overlapping(dialect: str, start: datetime, end: datetime) -> list[ColumnElement[bool]]:
    """Rows whose block overlaps ``[start, end)``, in terms the indexes can seek.

    The start bounds let ``ix_booking_assignments_busy`` seek a narrow range once the
    crew is named. On PostgreSQL the overlap is also written as the exclusion
    constraint's own expression, ``tstzrange(starts_at, ends_at, '[)') && ...``, so its
    GiST index (partial: ``WHERE open``) finds the rows of any crew without reading the
    company's whole history; the ``'[)'`` is a constant, as in the index, for a bound
    parameter would not match it.
    """
    conditions = [
        _a.c.starts_at < end,
        _a.c.starts_at > start - LONGEST_BLOCK,
        _a.c.ends_at > start,
    ]
    if dialect == "postgresql":
        asked = func.tstzrange(
            literal(start, instant_type()), literal(end, instant_type()), _HALF_OPEN
        )
        held = func.tstzrange(_a.c.starts_at, _a.c.ends_at, _HALF_OPEN)
        conditions.append(held.op("&&", is_comparison=True)(asked))
    return conditions


def held_elsewhere(connection: Connection, bookings: Sequence[Booking], *, saving: bool) -> Spans:
    """The stored open blocks of the batch's crew members around the batch's blocks;
    when ``saving``, except the batch's own (a booking never collides with itself)."""
    held: Spans = defaultdict(list)
    wanted: dict[str, list[tuple[str, datetime, datetime]]] = defaultdict(list)
    for booking in bookings:
        wanted[booking.company_id].extend(open_blocks(booking))
    for company_id, blocks in wanted.items():
        if not blocks:
            continue
        low = min(start for _, start, _ in blocks)
        high = max(end for _, _, end in blocks)
        conditions = [
            _a.c.company_id == company_id,
            _a.c.crew_id.in_(sorted({crew_id for crew_id, _, _ in blocks})),
            _a.c.open,
            *overlapping(connection.dialect.name, low, high),
        ]
        if saving:
            ids = [b.id for b in bookings if b.company_id == company_id]
            conditions.append(_a.c.booking_id.not_in(ids))
        statement = select(_a.c.crew_id, _a.c.starts_at, _a.c.ends_at).where(*conditions)
        for row in connection.execute(statement):
            held[(company_id, row.crew_id)].append((row.starts_at, row.ends_at))
    return held


def replace_rows(connection: Connection, bookings: Iterable[Booking], *, new: bool) -> None:
    """Write the assignment rows of ``bookings`` (dropping their old rows unless ``new``),
    ordered by member and start so that concurrent writers lock in one order."""
    bookings = list(bookings)
    if not new:
        for company_id in sorted({b.company_id for b in bookings}):
            ids = [b.id for b in bookings if b.company_id == company_id]
            connection.execute(
                delete(_a).where(_a.c.company_id == company_id, _a.c.booking_id.in_(ids))
            )
    rows = [row for booking in bookings for row in rows_of(booking)]
    rows.sort(key=lambda r: (r["company_id"], r["crew_id"], r["starts_at"], r["booking_id"]))
    insert_rows(connection, _a, rows)


def insert_rows(connection: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Multi-row INSERTs of at most ``INSERT_CHUNK`` rows: one statement each rather than
    a driver ``executemany`` (psycopg's pipeline would outlive a refused row noisily)."""
    for start in range(0, len(rows), INSERT_CHUNK):
        connection.execute(table.insert().values(list(rows[start : start + INSERT_CHUNK])))


def busy(
    connection: Connection,
    company_id: str,
    start: datetime,
    end: datetime,
    crew_ids: Collection[str] | None,
    *,
    hold: Sequence[str] = (),
) -> dict[str, list[Block]]:
    """Each member's open blocks overlapping ``[start, end)``, sorted by (start, booking).

    ``hold``: advisory-lock keys (``UnitContext.hold``) to take before reading, on
    PostgreSQL; in the read's own statement (``booking_busy_held``) when it names a few
    members, as a booking's does."""
    dialect = connection.dialect.name
    params: dict[str, Any] = {
        "company_id": company_id,
        "start": start,
        "end": end,
        "after": start - LONGEST_BLOCK,
    }
    found: dict[str, list[Block]] = {}
    keep: set[str] | None = None
    named: Named = "all"
    if crew_ids is not None:
        wanted = sorted(set(crew_ids))
        if not wanted:
            return {}
        found = {crew_id: [] for crew_id in wanted}
        if dialect == "postgresql" and len(wanted) > SEEK_MEMBERS:
            keep = set(wanted)
        elif len(wanted) == 1:
            named = "one"
            params["crew_id"] = wanted[0]
        else:
            named = "some"
            params["crew_ids"] = wanted
    if hold and named != "all":
        params["hold_keys"] = list(hold)
        params["members"] = params.pop("crew_ids", None) or [params.pop("crew_id")]
        statement = _BUSY_HELD
    else:
        if hold:
            with translated_errors("Another request changed the same data; try again."):
                run_kept(connection, HOLD, {"keys": list(hold)})
        statement = _busy_statement(dialect, named=named)
    with translated_errors("Another request changed the same data; try again."):
        rows = run_kept(connection, statement, params).all()
    for crew_id, start_at, end_at, zip_code, booking_id in rows:
        if keep is None or crew_id in keep:
            found.setdefault(crew_id, []).append(Block(start_at, end_at, zip_code, booking_id))
    return found


_BUSY_HELD = text(
    "SELECT crew_id, starts_at, ends_at, zip_code, booking_id FROM booking_busy_held("
    "CAST(:hold_keys AS text[]), :company_id, :start, :end, :after, CAST(:members AS text[]))"
).bindparams(
    bindparam("start", type_=instant_type()),
    bindparam("end", type_=instant_type()),
    bindparam("after", type_=instant_type()),
)
"""``busy``'s read of named members after holding ``hold_keys`` (PostgreSQL, migration
0019): one statement where a hold and a read were two."""

Named = Literal["all", "one", "some"]
"""Whom ``busy``'s query names: every member, one (``crew_id``), or a few (``crew_ids``)."""
_BUSY: dict[tuple[str, Named], Any] = {}


def _busy_statement(dialect: str, *, named: Named) -> Any:
    """``busy``'s query for the dialect, naming no member, one (``crew_id``) or a few
    (``crew_ids``): the conditions of ``overlapping`` with the values as parameters
    (``company_id``, ``start``, ``end``, ``after``), built once and kept. Every booking
    and availability request runs it, and a kept statement skips SQLAlchemy's building
    and cache-key work (``UnitContext.shape``). One member is compared with ``=``: as a
    prepared statement PostgreSQL plans that once, where it plans ``= ANY($1)`` anew on
    every call (0.07 ms, and CPU of the server's own)."""
    key = (dialect, named)
    if (found := _BUSY.get(key)) is not None:
        return found
    start, end = bindparam("start", type_=instant_type()), bindparam("end", type_=instant_type())
    conditions = [
        _a.c.company_id == bindparam("company_id"),
        _a.c.open,
        _a.c.starts_at < end,
        _a.c.starts_at > bindparam("after", type_=instant_type()),
        _a.c.ends_at > start,
    ]
    starts: ColumnElement[datetime] = _a.c.starts_at
    ends: ColumnElement[datetime] = _a.c.ends_at
    if dialect == "postgresql":
        asked = func.tstzrange(start, end, _HALF_OPEN)
        held = func.tstzrange(_a.c.starts_at, _a.c.ends_at, _HALF_OPEN)
        conditions.append(held.op("&&", is_comparison=True)(asked))
        # psycopg already gives aware instants and ``Block`` keeps them in UTC itself:
        # skip the column type's per-value conversion (a fifth of the time per row).
        starts, ends = type_coerce(starts, _AWARE), type_coerce(ends, _AWARE)
    if named == "one":
        conditions.append(_a.c.crew_id == bindparam("crew_id"))
    elif named == "some" and dialect == "postgresql":
        # One array parameter, not an expanding IN: the SQL is then final when built,
        # and runs straight on psycopg (``adapters.sql.direct``).
        members = bindparam("crew_ids", type_=postgresql.ARRAY(String()))
        conditions.append(_a.c.crew_id == any_(members))
    elif named == "some":
        conditions.append(_a.c.crew_id.in_(bindparam("crew_ids", expanding=True)))
    statement = (
        select(_a.c.crew_id, starts, ends, _a.c.zip_code, _a.c.booking_id)
        .where(*conditions)
        .order_by(_a.c.crew_id, _a.c.starts_at, _a.c.booking_id)
    )
    return _BUSY.setdefault(key, statement)
