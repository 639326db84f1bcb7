"""Secrets kept in the database (``Database.kept_secret``, migration 0018): with no
``BOOKING_SECRET_KEY`` or ``BOOKING_SESSION_SECRET`` set, every process of a database
signs cursors and session cookies with the same secret, so a poller's kept cursor and a
signed-in user outlive a restart of ``booking serve``, on both SQL backends."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest

from adapters.http.cursors import CursorCodec
from adapters.sql import Database
from booking_core.paging import Position
from entrypoints.settings import Settings
from entrypoints.web import SECRET_ENV, SESSION_SECRET_ENV, cursor_secret, session_secret


@pytest.fixture
def again(database: Database) -> Iterator[Callable[[], Database]]:
    """Another process's view of the same database (as after a restart), each time."""
    url = database.engine.url.render_as_string(hide_password=False)
    made: list[Database] = []

    def view() -> Database:
        made.append(Database.from_url(url, schema=database.schema))
        return made[-1]

    yield view
    for each in made:
        each.dispose()


def test_one_secret_per_name_is_made_once_and_kept(database: Database, again):
    first = database.kept_secret("cursors")
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert database.kept_secret("cursors") == first
    assert again().kept_secret("cursors") == first
    assert database.kept_secret("sessions") not in (first, "")


def test_processes_asking_at_once_for_a_new_secret_all_get_the_one_kept(again):
    views = [again() for _ in range(6)]
    got: list[str] = []
    barrier = threading.Barrier(len(views))

    def ask(view: Database) -> None:
        barrier.wait()
        got.append(view.kept_secret("cursors"))

    threads = [threading.Thread(target=ask, args=(view,)) for view in views]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(got) == len(views)
    assert len(set(got)) == 1


def test_a_cursor_signed_before_a_restart_is_taken_after_it(
    database: Database, again, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.delenv(SESSION_SECRET_ENV, raising=False)
    settings = Settings(database_url="unused", redis_url=None, base_url="http://x")
    before = CursorCodec(cursor_secret(database))
    after = CursorCodec(cursor_secret(again()))
    scope = CursorCodec.scope_of("leads", True, {})
    position = Position(datetime(2026, 11, 24, 12, tzinfo=UTC), "lead_1", 42)
    assert after.decode(before.encode(position, scope), scope) == position
    assert session_secret(settings, database) == session_secret(settings, again())
    # A configured secret still wins.
    monkeypatch.setenv(SECRET_ENV, "configured")
    assert cursor_secret(database) == b"configured"
