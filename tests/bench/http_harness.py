"""``make bench-http``: the real server on PostgreSQL under load, next to a reference
measured in the same run, in alternating rounds (issue 9's figures, reproducible).

Run as ``python -m tests.bench.http_harness``. PostgreSQL comes from
``BOOKING_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
the harness keeps everything in a schema and a pgbench database of its own and drops
both at the end. The load generator is wrk (installed with apt when missing), else an
asyncio client in this process; the output names the one used.

Scenarios, each over ``BENCH_HTTP_ROUNDS`` rounds (default 3, at least 3) of
``BENCH_HTTP_SECONDS`` (default 10) per side, the two sides' order swapped each round:

- ``bookings_vs_pgbench``: ``POST /api/v1/bookings`` from 32 connections to
  ``booking serve --workers 2`` (each request a distinct crew member and slot, a fresh
  ``Idempotency-Key``, one of 60 keys), against ``pgbench -N -c 32 -j 2`` at scale 10.
  Then p99 latency, and the double bookings found by the overlap query (must be 0).
  Each round also measures the floor (``bare_app.py``'s ``POST /api/v1/bookings``:
  pgbench's own transaction behind bare Starlette under uvicorn with as many workers,
  sent the same requests): ``floor_vs_pgbench`` is what HTTP and Python alone leave of
  pgbench's rate, ``bookings_vs_floor`` how much of that the booking keeps.
- ``services_vs_bare``, ``quote_vs_bare``: ``GET /api/v1/services`` and ``POST
  /api/v1/quote`` on one worker, 32 connections rotating 60 keys, against bare Starlette
  (``bare_app.py``) serving the bytes the real server answered.
- ``availability_N_crew``: p50 of ``GET /api/v1/availability`` for one busy day over one
  connection, for 5, 50, 200 and 450 crew (10,000 past bookings each; see
  ``calendar_seed.py``). ``BENCH_HTTP_1M=1`` adds a 50-crew company with 1,000,000 past
  bookings (``availability_50_crew_1m`` and its ratio to the 10,000 one).

``BENCH_HTTP_ONLY`` (a comma-separated list of ``bookings``, ``services``, ``quote``,
``availability``; default all) runs only those scenarios and seeds only what they need.

Every answer other than the expected status is reported and makes the exit status 1.
The last lines are one per figure: ``ratio <scenario> <median>`` (``floor_vs_pgbench``
and ``bookings_vs_floor`` too), ``p50_ms <scenario> <median>``, ``p99_ms bookings
<median>``, ``double_bookings bookings <count>``, and ``cpu_ms <side> <median>``: the
CPU milliseconds per 201 answer spent in each round by the server (``bookings_server``,
``floor_server``: the process and its workers) and by the PostgreSQL processes of the
machine (``bookings_postgres``, ``floor_postgres``; left out when PostgreSQL runs
elsewhere), read from ``/proc``; and ``cpu_us <side> <median>``: the CPU microseconds
per 200 answer of the reads, by the real server (``services_server``, ``quote_server``)
and by bare Starlette (``services_bare``, ``quote_bare``). On a shared machine CPU per
answer moves less from run to run than answers per second do.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import func, select, text

from adapters.sql import Database
from adapters.sql.tables import ALL_TABLES, bookings
from adapters.system import SystemClock
from booking_core import auth
from booking_core.services import companies as company_cases
from tests.bench.calendar_seed import busy_company
from tests.bench.loadgen import LoadGenerator, Outcome, Request, installed
from tests.bench.pg_bench import (
    OVERLAPPING_OPEN_PAIRS,
    SERVICE,
    ZONE,
    booking_body,
    pgbench_init,
    pgbench_tps,
    seed_company,
    slot_start,
    throwaway_database,
)
from tests.bench.test_bench_http import QUOTE_BODY
from tests.services import free_port, stop_process, wait_for_port

BIN = Path(sys.executable).parent
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
ROUNDS = max(3, int(os.environ.get("BENCH_HTTP_ROUNDS", "3")))
SECONDS = float(os.environ.get("BENCH_HTTP_SECONDS", "10"))
AVAILABILITY_SECONDS = 5.0
CONNECTIONS = 32
KEYS = 60
BOOKING_WORKERS = 2
CREW = 32
"""Crew of the booking company: one per connection, as in ``test_bench_bookings.py``."""
POOL_PER_SECOND = 3_000
"""Distinct bookings prepared per second of a round: far past what two cores commit."""
PGBENCH_SCALE = 10
CREW_COUNTS = (5, 50, 200, 450)
HISTORY = 10_000
MILLION = 1_000_000
AVAILABILITY_KEYS = 8
"""Keys per availability company: 48,000 requests a minute before any 429."""
SCENARIOS = ("bookings", "services", "quote", "availability")
ONLY = frozenset(
    name.strip() for name in os.environ.get("BENCH_HTTP_ONLY", "").split(",") if name.strip()
) or frozenset(SCENARIOS)
"""The scenarios this run measures (``BENCH_HTTP_ONLY``; default every one)."""


def say(line: str) -> None:
    """Progress, as it happens."""
    print(line, flush=True)


def _keys(db: Database, company_id: str, count: int) -> list[str]:
    clock = SystemClock()
    return [
        company_cases.create_key(
            company_cases.CreateKey(
                company_id=company_id,
                name=f"bench-http {n}",
                scopes=frozenset(auth.SCOPES),
                rate_limit=auth.MAX_RATE_LIMIT,
            ),
            uow=db.uow(),
            clock=clock,
        ).secret
        for n in range(count)
    ]


SERVED: dict[str, int] = {}
"""The process id of each server ``serving`` runs, by base URL (its workers are its
children)."""


@contextmanager
def serving(command: list[str], env: dict[str, str], log: Path) -> Iterator[str]:
    """``command`` (given ``--port`` last) running until the block ends; its base URL."""
    port = free_port()
    with log.open("ab") as sink:
        proc = subprocess.Popen(
            [*command, "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=sink
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, proc, lambda: log.read_text()[-2000:])
        SERVED[base] = proc.pid
        yield base
    finally:
        SERVED.pop(base, None)
        stop_process(proc)


Ticks = dict[int, int]


def cpu_now(base: str) -> tuple[Ticks, Ticks]:
    """CPU ticks (user and system, from ``/proc``) spent so far by each process of the
    server at ``base`` (it and its workers, its child processes), and by each PostgreSQL
    process of this machine (the database the harness loads)."""
    pid = SERVED[base]
    server: Ticks = {}
    postgres: Ticks = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name, fields = (entry / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue  # ended meanwhile
        parts = fields.split()
        ticks = int(parts[11]) + int(parts[12])
        if int(entry.name) == pid or int(parts[1]) == pid:
            server[int(entry.name)] = ticks
        elif name.endswith("(postgres"):
            postgres[int(entry.name)] = ticks
    return server, postgres


def cpu_seconds(before: Ticks, after: Ticks) -> float:
    """The CPU seconds spent between two readings by the processes alive at the second
    (one that began meanwhile counts whole; one that ended meanwhile is not counted)."""
    ticks = sum(spent - before.get(pid, 0) for pid, spent in after.items())
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_per_answer(
    base: str, status: int, run: Callable[[], Outcome]
) -> tuple[Outcome, dict[str, float]]:
    """``run()``, and the CPU seconds per ``status`` answer it cost the server at ``base``
    and PostgreSQL, as ``{"server": s, "postgres": s}``."""
    before = cpu_now(base)
    outcome = run()
    after = cpu_now(base)
    answered = max(outcome.answers[status], 1)
    spent = {
        side: cpu_seconds(then, now) / answered
        for side, then, now in zip(("server", "postgres"), before, after, strict=True)
    }
    return outcome, spent


class Harness:
    """One run: the database, the load generator, the figures and the problems seen."""

    def __init__(self, url: str, folder: Path, pgbench_url: str) -> None:
        self.folder = folder
        self.pgbench_url = pgbench_url
        self.schema = f"bench_http_{os.getpid()}"
        self.db = Database.from_url(url, schema=self.schema)
        self.load = LoadGenerator(installed("wrk", "wrk"), folder)
        self.env = {
            **os.environ,
            "BOOKING_DATABASE_URL": url,
            "BOOKING_DATABASE_SCHEMA": self.schema,
            "BOOKING_LOG_LEVEL": "WARNING",
            "BOOKING_BENCH_BARE_BODIES": str(folder),
        }
        for unused in ("BOOKING_REDIS_URL", "BOOKING_OSRM_URL", "BOOKING_BASE_URL"):
            self.env.pop(unused, None)
        self.log = folder / "server.log"
        self.figures: list[str] = []
        self.problems: list[str] = []
        self.day = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=10)
        self.availability: dict[str, list[Request]] = {}

    def check(self, scenario: str, outcome: Outcome, status: int) -> None:
        """Record anything but ``status`` answers as a problem of ``scenario``."""
        if wrong := outcome.unexpected(status):
            self.problems.append(f"{scenario}: {wrong}")
            say(f"  !! {scenario}: {wrong}")

    def seed(self, with_million: bool) -> None:
        """Companies, crew, keys and calendars; pgbench's tables."""
        started = time.perf_counter()
        self.db.drop_schema()  # left over from a run that was killed
        self.db.migrate()
        self.company_id, self.crew = seed_company(self.db, slug="bench-http", members=CREW)
        self.keys = _keys(self.db, self.company_id, KEYS)
        companies = {f"availability_{n}_crew": (n, HISTORY) for n in CREW_COUNTS}
        if "availability" not in ONLY:
            companies = {}
        elif with_million:
            companies["availability_50_crew_1m"] = (50, MILLION)
        for name, (members, history) in companies.items():
            slug = name.replace("_", "-")
            found, took = busy_company(
                self.db, slug=slug, members=members, day=self.day, history=history
            )
            say(f"seeded {name}: {members} crew, {history:,} past bookings in {took:.1f} s")
            path = f"/api/v1/availability?serviceId={SERVICE}&date={self.day}&zip=10011"
            self.availability[name] = [
                Request("GET", path, {"Authorization": f"Bearer {key}"})
                for key in _keys(self.db, found, AVAILABILITY_KEYS)
            ]
        with self.db.engine.begin() as connection:  # fresh statistics, this schema only
            for table in ALL_TABLES:
                connection.execute(text(f'ANALYZE "{self.schema}"."{table.name}"'))
        if "bookings" in ONLY:
            pgbench_init(self.pgbench_url, scale=PGBENCH_SCALE)
        say(f"seeding took {time.perf_counter() - started:.0f} s")

    def alternate(
        self,
        scenario: str,
        real: Callable[[], float],
        reference: Callable[[], float],
        floor: Callable[[], float] | None = None,
    ) -> None:
        """``ROUNDS`` rounds of both sides, order swapped each round; the median ratio.
        With ``floor`` (the booking scenario's), each round measures it too, and the
        medians of ``floor_vs_pgbench`` and ``bookings_vs_floor`` follow."""
        sides = {"real": real, "reference": reference} | ({"floor": floor} if floor else {})
        ratios: dict[str, list[float]] = {scenario: [], "floor_vs_pgbench": [], "vs_floor": []}
        for n in range(ROUNDS):
            order = list(sides) if n % 2 == 0 else list(sides)[::-1]
            rate = {name: sides[name]() for name in order}
            ours, theirs = rate["real"], rate["reference"]
            ratios[scenario].append(ours / theirs)
            line = f"  round {n + 1}: {ours:,.1f} vs {theirs:,.1f} per second"
            line += f", ratio {ratios[scenario][-1]:.3f}"
            if floor is not None:
                ratios["floor_vs_pgbench"].append(rate["floor"] / theirs)
                ratios["vs_floor"].append(ours / rate["floor"])
                line += f"; floor {rate['floor']:,.1f} per second"
            say(line)
        self.figures.append(f"ratio {scenario} {statistics.median(ratios[scenario]):.3f}")
        if floor is not None:
            floor_ratio = statistics.median(ratios["floor_vs_pgbench"])
            self.figures.append(f"ratio floor_vs_pgbench {floor_ratio:.3f}")
            vs_floor = statistics.median(ratios["vs_floor"])
            self.figures.append(f"ratio bookings_vs_floor {vs_floor:.3f}")

    def bookings(self) -> None:
        """``bookings_vs_pgbench``, p99 and double bookings."""
        say(f"bookings_vs_pgbench: {CONNECTIONS} connections, --workers {BOOKING_WORKERS}")
        first_day = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=2)

        def request(n: int) -> Request:
            body = booking_body(n % CREW, self.crew[n % CREW], slot_start(first_day, n // CREW))
            headers = {
                "Authorization": f"Bearer {self.keys[n % KEYS]}",
                "Content-Type": "application/json",
                "Idempotency-Key": f"bench-http-{os.getpid()}-{n}",
            }
            return Request("POST", "/api/v1/bookings", headers, json.dumps(body))

        command = [str(BIN / "booking"), "serve", "--workers", str(BOOKING_WORKERS)]
        floor_command = [
            str(BIN / "uvicorn"),
            "tests.bench.bare_app:app",
            "--workers",
            str(BOOKING_WORKERS),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        floor_env = self.env | {
            "BOOKING_BENCH_FLOOR_URL": self.pgbench_url,
            "BOOKING_BENCH_FLOOR_SCALE": str(PGBENCH_SCALE),
        }
        with (
            serving(command, self.env, self.log) as base,
            serving(floor_command, floor_env, self.log) as floor_base,
        ):
            # One booking per client first, one at a time: each creates its customer, which
            # later bookings reuse (as test_bench_bookings.py's warm-up does).
            with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
                for n in range(CREW):
                    r = request(n)
                    reply = client.post(r.path, content=r.body, headers=r.headers)
                    if reply.status_code != 201:
                        raise RuntimeError(f"warm-up booking: {reply.status_code} {reply.text}")
            unused = CREW  # the first request number no round has sent
            created = CREW  # 201 answers
            p99: list[float] = []
            cpu: dict[str, list[float]] = {}

            def recorded(at: str, name: str, run: Callable[[], Outcome]) -> Outcome:
                """``run()``, recording the server's and PostgreSQL's CPU ms per 201."""
                outcome, spent = cpu_per_answer(at, 201, run)
                for side, seconds in spent.items():
                    cpu.setdefault(f"{name}_{side}", []).append(seconds * 1000)
                return outcome

            def book(seconds: float = SECONDS, record: bool = True) -> float:
                nonlocal unused, created
                pool = [request(n) for n in range(unused, unused + int(seconds * POOL_PER_SECOND))]

                def run() -> Outcome:
                    return self.load.run(
                        base, pool, connections=CONNECTIONS, seconds=seconds, cycle=False
                    )

                outcome = recorded(base, "bookings", run) if record else run()
                unused += outcome.used
                created += outcome.answers[201]
                if record:
                    self.check("bookings_vs_pgbench", outcome, 201)
                    p99.append(outcome.p99_ms)
                return outcome.rate(201)

            def pgbench() -> float:
                return pgbench_tps(
                    self.pgbench_url, clients=CONNECTIONS, threads=2, seconds=int(SECONDS)
                )

            floor_pool = [request(n) for n in range(CREW)]  # the floor reads bodies only

            def floor(seconds: float = SECONDS, record: bool = True) -> float:
                def run() -> Outcome:
                    return self.load.run(
                        floor_base, floor_pool, connections=CONNECTIONS, seconds=seconds, cycle=True
                    )

                outcome = recorded(floor_base, "floor", run) if record else run()
                if record:
                    self.check("floor_vs_pgbench", outcome, 201)
                return outcome.rate(201)

            book(seconds=3, record=False)  # warm: connections, pools, caches
            floor(seconds=3, record=False)
            self.alternate("bookings_vs_pgbench", book, pgbench, floor)
        with self.db.engine.connect() as connection:
            overlaps = connection.execute(text(OVERLAPPING_OPEN_PAIRS)).scalar_one()
            made = connection.execute(
                select(func.count()).where(bookings.c.company_id == self.company_id)
            ).scalar_one()
        # Requests still in flight when a round ends may commit unanswered: more bookings
        # than 201s is expected, fewer is a 201 that booked nothing.
        say(f"  {created:,} answered 201, {made:,} booked, {overlaps} double bookings")
        if overlaps:
            self.problems.append(f"bookings_vs_pgbench: {overlaps} double bookings")
        if made < created:
            self.problems.append(f"bookings_vs_pgbench: {created} answered 201, {made} booked")
        self.figures.append(f"p99_ms bookings {statistics.median(p99):.0f}")
        self.figures.append(f"double_bookings bookings {overlaps}")
        for name, spent in cpu.items():
            if not any(spent):  # PostgreSQL runs elsewhere (another machine, a container)
                continue
            say(f"  cpu per 201, {name}: " + ", ".join(f"{ms:.2f} ms" for ms in spent))
            self.figures.append(f"cpu_ms {name} {statistics.median(spent):.2f}")

    def reads(self) -> None:
        """``services_vs_bare``, ``quote_vs_bare`` and the availability latencies."""
        services = [
            Request("GET", "/api/v1/services", {"Authorization": f"Bearer {key}"})
            for key in self.keys
        ]
        quotes = [
            Request(
                "POST",
                "/api/v1/quote",
                {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                json.dumps(QUOTE_BODY),
            )
            for key in self.keys
        ]
        with serving([str(BIN / "booking"), "serve"], self.env, self.log) as base:
            with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
                for name, r in (("services.json", services[0]), ("quote.json", quotes[0])):
                    reply = client.request(r.method, r.path, content=r.body, headers=r.headers)
                    if reply.status_code != 200:
                        raise RuntimeError(f"{r.path}: {reply.status_code} {reply.text}")
                    (self.folder / name).write_bytes(reply.content)
            bare_command = [
                str(BIN / "uvicorn"),
                "tests.bench.bare_app:app",
                "--log-level",
                "warning",
                "--no-access-log",
            ]
            with serving(bare_command, self.env, self.log) as bare:
                cpu: dict[str, list[float]] = {}  # microseconds per 200, by side
                for scenario, pool in (("services_vs_bare", services), ("quote_vs_bare", quotes)):
                    if scenario.split("_")[0] not in ONLY:
                        continue
                    say(f"{scenario}: 1 worker, {CONNECTIONS} connections, {KEYS} keys")

                    def throughput(
                        at: str, pool: list[Request] = pool, name: str = scenario
                    ) -> float:
                        outcome, spent = cpu_per_answer(
                            at,
                            200,
                            lambda: self.load.run(
                                at, pool, connections=CONNECTIONS, seconds=SECONDS, cycle=True
                            ),
                        )
                        self.check(name, outcome, 200)
                        which = "server" if at == base else "bare"
                        side = f"{name.removesuffix('_vs_bare')}_{which}"
                        cpu.setdefault(side, []).append(spent["server"] * 1e6)
                        return outcome.rate(200)

                    for at in (base, bare):  # warm both
                        self.load.run(at, pool, connections=CONNECTIONS, seconds=2, cycle=True)
                    self.alternate(scenario, lambda: throughput(base), lambda: throughput(bare))
                for name, spent in cpu.items():
                    say(f"  cpu per 200, {name}: " + ", ".join(f"{us:.0f} us" for us in spent))
                    self.figures.append(f"cpu_us {name} {statistics.median(spent):.0f}")
            if "availability" in ONLY:
                self.latencies(base)

    def latencies(self, base: str) -> None:
        """p50 of availability for each company, one connection, companies in turn."""
        names = list(self.availability)
        say(f"availability: one day, one connection, {AVAILABILITY_SECONDS:.0f} s per company")
        with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
            for name in names:
                r = self.availability[name][0]
                reply = client.get(r.path, headers=r.headers)
                slots = len(reply.json()["data"]) if reply.status_code == 200 else 0
                say(f"  {name}: {reply.status_code}, {slots} slots offered")
                if not slots:  # an empty answer would time a shortcut, not the search
                    self.problems.append(f"{name}: {reply.status_code}, no slot offered")
        p50: dict[str, list[float]] = {name: [] for name in names}
        for n in range(ROUNDS):
            order = names if n % 2 == 0 else names[::-1]
            for name in order:
                outcome = self.load.run(
                    base,
                    self.availability[name],
                    connections=1,
                    seconds=AVAILABILITY_SECONDS,
                    cycle=True,
                )
                self.check(name, outcome, 200)
                p50[name].append(outcome.p50_ms)
            say(
                "  round " + f"{n + 1}: " + ", ".join(f"{k} {v[-1]:.1f} ms" for k, v in p50.items())
            )
        for name in names:
            self.figures.append(f"p50_ms {name} {statistics.median(p50[name]):.1f}")
        if "availability_50_crew_1m" in p50:
            ratios = [
                big / small
                for big, small in zip(
                    p50["availability_50_crew_1m"], p50["availability_50_crew"], strict=True
                )
            ]
            self.figures.append(f"ratio availability_1m_vs_10k {statistics.median(ratios):.2f}")


def main() -> int:
    """Run every scenario; print the figures last; 1 if any answer was not as expected."""
    url = os.environ.get("BOOKING_TEST_POSTGRES_URL") or DEFAULT_URL
    if "bookings" in ONLY and installed("pgbench", "postgresql-client") is None:
        say("bench-http: pgbench is not installed and could not be (postgresql-client)")
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="bench_http_") as folder,
        throwaway_database(url, f"bench_http_pgbench_{os.getpid()}") as pgbench_url,
    ):
        harness = Harness(url, Path(folder), pgbench_url)
        say(
            f"bench-http: load generator {harness.load.tool}, {ROUNDS} rounds of {SECONDS:g} s,"
            f" schema {harness.schema}"
        )
        try:
            harness.seed(with_million=os.environ.get("BENCH_HTTP_1M") == "1")
            if "bookings" in ONLY:
                harness.bookings()
            if ONLY & {"services", "quote", "availability"}:
                harness.reads()
        except Exception:
            if harness.log.exists():
                say(f"server log (last lines):\n{harness.log.read_text()[-3000:]}")
            raise
        finally:
            harness.db.drop_schema()
            harness.db.dispose()
    for problem in harness.problems:
        say(f"problem: {problem}")
    for line in harness.figures:
        print(line)
    return 1 if harness.problems else 0


if __name__ == "__main__":
    sys.exit(main())
