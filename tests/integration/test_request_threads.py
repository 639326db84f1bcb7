"""``BOOKING_REQUEST_THREADS``: how many API requests of one process do their database
work at once; the rest wait their turn on the event loop (docs/cli.md)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import pytest

from entrypoints.bootstrap import bootstrap
from entrypoints.settings import ConfigError, Settings
from entrypoints.web import http_deps


def test_the_setting_takes_1_to_64_and_defaults_to_4():
    assert Settings.from_env({}).request_threads == 4
    assert Settings.from_env({"BOOKING_REQUEST_THREADS": " 1 "}).request_threads == 1
    assert Settings.from_env({"BOOKING_REQUEST_THREADS": "64"}).request_threads == 64
    for wrong in ("0", "65", "four", "2.5", "-1"):
        with pytest.raises(ConfigError, match="BOOKING_REQUEST_THREADS must be a whole number"):
            Settings.from_env({"BOOKING_REQUEST_THREADS": wrong})


@pytest.mark.parametrize("threads", [1, 3])
def test_no_more_than_that_many_requests_work_in_threads_at_once(tmp_path: Path, threads: int):
    settings = Settings.from_env(
        {
            "BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'threads.sqlite3'}",
            "BOOKING_REQUEST_THREADS": str(threads),
        }
    )
    container = bootstrap(settings)
    try:
        deps = http_deps(container)
        lock = threading.Condition()
        running, most = 0, 0

        def work(n: int) -> int:
            # The first ones wait (up to 30 s) until as many as allowed run at once, so the
            # cap is reached however slowly a loaded machine starts threads; then a moment
            # more, in which one over the cap would show.
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
                lock.notify_all()
                lock.wait_for(lambda: most >= threads, timeout=30)
            time.sleep(0.02)
            with lock:
                running -= 1
            return n

        async def main() -> list[int]:
            done: list[int] = []

            async def one(n: int) -> None:
                done.append(await deps.in_thread(work, n))

            async with anyio.create_task_group() as group:
                for n in range(12):
                    group.start_soon(one, n)
            return done

        # Twice, each on an event loop of its own (as tests that start one per client do).
        for _ in range(2):
            most = 0
            assert sorted(anyio.run(main)) == list(range(12))
            assert most == threads
    finally:
        container.close()
