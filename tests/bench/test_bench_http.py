"""``make bench``: authenticated ``GET /api/v1/services`` and ``POST /api/v1/quote``
throughput against a bare Starlette JSON endpoint served the same way in the same run.

Both servers are uvicorn processes with one worker on loopback; the same client (8
threads of keep-alive httpx clients) drives each for a fixed number of requests. The
ratios are printed (target: services at least 0.5 of the bare endpoint), never asserted.
Under ``make test`` each case runs a few requests as a smoke test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import free_port, stop_process, wait_for_port

BIN = Path(sys.executable).parent
FULL_REQUESTS = 3_000
SMOKE_REQUESTS = 16
THREADS = 8
QUOTE_BODY = {
    "serviceId": "svc_standard_clean",
    "frequencySlug": "weekly",
    "parameters": [{"id": "par_bedrooms", "quantity": 3}, {"id": "par_bathrooms", "quantity": 2}],
    "extras": [{"id": "ext_oven"}, {"id": "ext_windows", "quantity": 4}],
    "couponCode": "WELCOME10",
    "zip": "02554",
    "startIso": "2026-12-05T09:00:00-05:00",
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The real app over a demo SQLite file, and the bare app, each on its own port."""
    folder = tmp_path_factory.mktemp("bench_http")
    env = {
        **os.environ,
        "BOOKING_DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
        "BOOKING_LOG_LEVEL": "WARNING",
    }
    env.pop("BOOKING_REDIS_URL", None)
    demo = subprocess.run(
        [str(BIN / "booking"), "demo", "--json"], env=env, capture_output=True, check=True
    )
    del demo
    keys = []
    for name in ("bench services", "bench quote"):
        made = subprocess.run(
            [
                str(BIN / "booking"),
                "key",
                "create",
                "--company",
                "sparkle-cleaning",
                "--name",
                name,
                "--scopes",
                "all",
                "--rate-limit",
                "6000",
                "--json",
            ],
            env=env,
            capture_output=True,
            check=True,
        )
        keys.append(json.loads(made.stdout)["key"])
    real_port, bare_port = free_port(), free_port()
    real = subprocess.Popen(
        [str(BIN / "booking"), "serve", "--port", str(real_port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    bare = subprocess.Popen(
        [
            str(BIN / "uvicorn"),
            "tests.bench.bare_app:app",
            "--port",
            str(bare_port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(real_port, real)
        wait_for_port(bare_port, bare)
        yield {
            "real": f"http://127.0.0.1:{real_port}",
            "bare": f"http://127.0.0.1:{bare_port}",
            "keys": {"GET": keys[0], "POST": keys[1]},
        }
    finally:
        stop_process(real)
        stop_process(bare)


def _throughput(base: str, method: str, path: str, key: str | None, total: int) -> float:
    """Requests per second over ``total`` requests from ``THREADS`` keep-alive clients."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    per_thread = max(1, total // THREADS)
    failures: list[str] = []

    def drive() -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            for _ in range(per_thread):
                reply = client.request(method, path, json=QUOTE_BODY if method == "POST" else None)
                if reply.status_code != 200:
                    failures.append(f"{reply.status_code} {reply.text[:200]}")

    threads = [threading.Thread(target=drive) for _ in range(THREADS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    assert failures == [], failures[:3]
    return per_thread * THREADS / elapsed


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/api/v1/services"), ("POST", "/api/v1/quote")]
)
def test_bench_api_throughput_against_bare_starlette(servers, method, path, benchmark):
    total = FULL_REQUESTS if benchmark.enabled else SMOKE_REQUESTS
    key = str(servers["keys"][method])  # type: ignore[index]
    # Warm both servers (connections, caches) before measuring.
    _throughput(str(servers["real"]), method, path, key, THREADS * 4)
    _throughput(str(servers["bare"]), method, path, None, THREADS * 4)
    real = benchmark.pedantic(
        _throughput, args=(str(servers["real"]), method, path, key, total), rounds=1, iterations=1
    )
    bare = _throughput(str(servers["bare"]), method, path, None, total)
    if benchmark.enabled:
        print(
            f"\n{method} {path}: {real:,.0f} req/s vs bare Starlette {bare:,.0f} req/s; "
            f"ratio {real / bare:.2f} (target for services >= 0.5)"
        )
