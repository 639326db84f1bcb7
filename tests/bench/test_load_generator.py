"""The load generator of ``make bench-http`` (``loadgen.py``), against the bare app for a
second: both tools count answers by status and never send a ``once`` pool's line twice.
A smoke test of the harness's measuring part (the harness itself is no test)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bench.loadgen import LoadGenerator, Request
from tests.services import free_port, stop_process, wait_for_port

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def bare() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(BIN / "uvicorn"), "tests.bench.bare_app:app", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


@pytest.fixture(params=["wrk", "python"])
def generator(request: pytest.FixtureRequest, tmp_path: Path) -> LoadGenerator:
    wrk = shutil.which("wrk") if request.param == "wrk" else None
    if request.param == "wrk" and wrk is None:
        pytest.skip("wrk is not installed (make bench-http installs it)")
    return LoadGenerator(wrk, tmp_path)


def test_a_cycled_pool_is_counted_by_status(bare, generator):
    pool = [
        Request("GET", "/api/v1/services", {"Authorization": "Bearer one"}),
        Request("POST", "/api/v1/quote", {"Content-Type": "application/json"}, '{"a": 1}'),
        Request("GET", "/no/such/page", {}),
    ]
    outcome = generator.run(bare, pool, connections=2, seconds=1, cycle=True)
    assert outcome.answers[200] > 10
    assert outcome.answers[404] > 5
    assert set(outcome.answers) == {200, 404}
    assert "x 404" in outcome.unexpected(200)
    assert 0 < outcome.p50_ms <= outcome.p99_ms
    assert outcome.exhausted is False


def test_a_once_pool_is_never_repeated_and_its_end_is_reported(bare, generator):
    pool = [Request("GET", f"/api/v1/services?n={n}", {}) for n in range(10)]
    outcome = generator.run(bare, pool, connections=2, seconds=1, cycle=False)
    assert outcome.exhausted is True
    assert outcome.used == 10
    assert outcome.answers[200] <= 10
    assert "pool used up" in outcome.unexpected(200)
