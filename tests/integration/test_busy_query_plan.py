"""PostgreSQL reads busy blocks through an index, however long the history.

The table holds a company's years of jobs (open and closed, as ``INSERT ... SELECT
generate_series`` writes them) with fresh statistics; the statements ``busy`` really
runs are captured and explained (``EXPLAIN (FORMAT JSON)``, no planner switches set).
A whole-company read must come through the exclusion constraint's GiST index, which is
partial (``WHERE open``) and keyed by the job's time range: written as ``open IS true``
or without the range, the same read is a sequential scan of every row.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, text

from adapters.sql import Database
from adapters.sql.tables import OVERLAP_CONSTRAINT
from tests.integration.conftest import migrated
from tests.services import postgres_url

COMPANY = "cmp_history"
CREW = 40
DAYS = 400
"""Two one-hour jobs a member a day: 32,000 rows, the older half closed."""
FIRST_DAY = datetime(2025, 1, 1, 14, tzinfo=UTC)
ASKED = FIRST_DAY + timedelta(days=300)

_SEED = text(
    """
    INSERT INTO booking_assignments
        (company_id, booking_id, crew_id, starts_at, ends_at, zip_code, open)
    SELECT :company, 'bkg_' || g, 'crew_' || (g % :crew),
        CAST(:first AS timestamptz) + (g / (:crew * 2)) * interval '1 day'
            + ((g / :crew) % 2) * interval '3 hours',
        CAST(:first AS timestamptz) + (g / (:crew * 2)) * interval '1 day'
            + ((g / :crew) % 2) * interval '3 hours' + interval '1 hour',
        '10001', g >= :rows / 2
    FROM generate_series(0, :rows - 1) AS g
    """
)


@pytest.fixture(scope="module")
def history() -> Iterator[Database]:
    """A migrated database holding the company's history, analysed (seeded once)."""
    db = Database.from_url(postgres_url(), schema=f"it_plan_{os.getpid()}")
    with migrated(db) as ready:
        with ready.engine.begin() as connection:
            rows = CREW * DAYS * 2
            values = {"company": COMPANY, "crew": CREW, "first": FIRST_DAY, "rows": rows}
            connection.execute(_SEED, values)
            connection.execute(text("ANALYZE booking_assignments"))
        yield ready


@contextmanager
def captured(db: Database) -> Iterator[list[tuple[str, Any]]]:
    """The (SQL, parameters) of every statement the engine runs meanwhile."""
    seen: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", keep)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", keep)


def plan_of(db: Database, crew_ids: list[str] | None) -> tuple[dict[str, Any], int]:
    """The plan of the one statement ``busy`` runs, and how many members it answered."""
    with captured(db) as seen, db.reader() as uow:
        found = uow.bookings.busy(COMPANY, ASKED, ASKED + timedelta(days=1), crew_ids)
    [(statement, parameters)] = [s for s in seen if "booking_assignments" in s[0]]
    with db.engine.connect() as connection:
        explained = connection.exec_driver_sql(
            "EXPLAIN (FORMAT JSON) " + statement, parameters
        ).scalar_one()
    document = explained if isinstance(explained, list) else json.loads(explained)
    return document[0]["Plan"], sum(len(blocks) for blocks in found.values() if blocks)


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from nodes(child)


def test_the_whole_companys_busy_blocks_come_through_the_partial_range_index(history):
    plan, blocks = plan_of(history, None)
    kinds = [node["Node Type"] for node in nodes(plan)]
    indexes = {node.get("Index Name") for node in nodes(plan)}
    assert blocks == CREW * 2  # every member's two jobs that day, nothing older
    assert "Seq Scan" not in kinds, kinds
    assert OVERLAP_CONSTRAINT in indexes, kinds


def test_a_whole_rosters_busy_blocks_come_through_an_index(history):
    roster = [f"crew_{n}" for n in range(CREW)]
    plan, blocks = plan_of(history, roster)
    kinds = [node["Node Type"] for node in nodes(plan)]
    assert blocks == CREW * 2
    assert "Seq Scan" not in kinds, kinds


def test_a_named_members_busy_blocks_come_through_an_index(history):
    plan, blocks = plan_of(history, ["crew_7"])
    kinds = [node["Node Type"] for node in nodes(plan)]
    assert blocks == 2
    assert "Seq Scan" not in kinds, kinds


def test_a_few_named_members_busy_blocks_come_through_an_index(history):
    plan, blocks = plan_of(history, ["crew_3", "crew_7", "crew_11"])
    kinds = [node["Node Type"] for node in nodes(plan)]
    assert blocks == 6
    assert "Seq Scan" not in kinds, kinds
