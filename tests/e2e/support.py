"""Helpers of the end-to-end suite: a live uvicorn server, clients, the stack."""

from __future__ import annotations

import secrets
import socket
import threading
import time
from typing import Any

import attrs
import httpx
import uvicorn
from starlette.applications import Starlette

from adapters.http.app import create_app
from adapters.http.deps import HttpDeps
from adapters.http.ratelimit import RateLimiter
from adapters.http.routes import all_endpoints
from booking_core import auth
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.demo import demo_catalog
from booking_core.services import companies as company_cases
from entrypoints.bootstrap import Container
from entrypoints.demo_data import DemoCompany
from entrypoints.web import http_deps

API = "/api/v1"
FULL_SCOPES = frozenset(auth.SCOPES)


def free_socket() -> socket.socket:
    """A listening-ready TCP socket bound to a free loopback port."""
    # IPPROTO_TCP said explicitly: asyncio sets TCP_NODELAY only on sockets whose proto is
    # TCP, and with proto 0 every reused connection waits ~40 ms on Nagle's algorithm.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class LiveServer:
    """An ASGI app under uvicorn in a background thread, on a socket bound beforehand."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        host, port = sock.getsockname()[:2]
        self.base_url = f"http://{host}:{port}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def start(self, app: Starlette) -> LiveServer:
        """Serve ``app`` and return once uvicorn accepts connections."""
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=5,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to finish and wait for its thread."""
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=15)
            assert not self.thread.is_alive(), "uvicorn did not stop"
        self.sock.close()


def client(base_url: str, key: str | None = None, **headers: str) -> httpx.Client:
    """An httpx client for ``base_url``, sending ``key`` as a Bearer token if given.

    ``trust_env=False``: a proxy configured in the environment must not see loopback calls.
    """
    if key is not None:
        headers.setdefault("authorization", f"Bearer {key}")
    return httpx.Client(base_url=base_url, headers=headers, timeout=30, trust_env=False)


@attrs.define
class Stack:
    """One backend's database, demo data and live server."""

    backend: str
    container: Container
    server: LiveServer
    demo: list[DemoCompany]
    deps: HttpDeps

    @property
    def base_url(self) -> str:
        """Where the server listens, e.g. ``http://127.0.0.1:54321``."""
        return self.server.base_url

    @property
    def key(self) -> str:
        """A full-access key of the first demo company (sparkle-cleaning)."""
        return self.demo[0].api_key

    @property
    def other_key(self) -> str:
        """A full-access key of the second demo company (handy-helpers)."""
        return self.demo[1].api_key

    @property
    def company(self) -> Company:
        """The first demo company."""
        return self.demo[0].company

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        """A client of this server (anonymous unless ``key`` is given)."""
        return client(self.base_url, key, **headers)

    def issue_key(
        self,
        scopes: frozenset[str] | set[str] = FULL_SCOPES,
        rate_limit: int = auth.MAX_RATE_LIMIT,
        company_id: str | None = None,
    ) -> auth.IssuedKey:
        """A fresh key (its own rate-limit counter) of the first demo company by default."""
        return company_cases.create_key(
            company_cases.CreateKey(
                company_id=company_id or self.company.id,
                name=f"e2e {secrets.token_hex(3)}",
                scopes=frozenset(scopes),
                rate_limit=rate_limit,
            ),
            uow=self.container.uow(),
            clock=self.container.clock,
        )

    def new_key(self, *scopes: str, rate_limit: int = auth.MAX_RATE_LIMIT) -> str:
        """The secret of a fresh key with ``scopes`` (all when none are named)."""
        return self.issue_key(frozenset(scopes) or FULL_SCOPES, rate_limit).secret

    def new_company(self, catalog: Catalog | None = None) -> tuple[Company, str]:
        """A company of its own (demo catalog) and a full-access key: an empty slate."""
        slug = f"e2e-{secrets.token_hex(4)}"
        company = company_cases.create_company(
            company_cases.CreateCompany(
                slug=slug,
                name=f"E2E {slug}",
                timezone="America/New_York",
                tax_rate_bps=887,
                code_prefix="EE",
                catalog=catalog or demo_catalog(),
            ),
            uow=self.container.uow(),
            clock=self.container.clock,
        )
        return company, self.issue_key(company_id=company.id).secret

    def app(self, base_url: str, rate_limiter: RateLimiter | None = None) -> Starlette:
        """Another instance of the application over the same database."""
        return create_app(
            attrs.evolve(
                http_deps(self.container, rate_limiter or RateLimiter()), base_url=base_url
            ),
            all_endpoints(),
        )


def idem() -> dict[str, str]:
    """A fresh ``Idempotency-Key`` header."""
    return {"Idempotency-Key": f"e2e-{secrets.token_hex(8)}"}


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The ``error`` object of a failure answer, after checking status, code and shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    assert error["message"]
    assert error["requestId"] == response.headers["x-request-id"]
    return error


def unique_email(name: str = "e2e") -> str:
    """An address no other test uses."""
    return f"{name}-{secrets.token_hex(5)}@example.com"


# --- Scheduling: companies with crew, local dates, the overlap check -------------------
# (Imports here, not at the top, so that this block stays an addition at the end.)

from datetime import date, datetime, timedelta  # noqa: E402
from datetime import time as wall_time  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

from booking_core.crew import WorkingHours, new_crew_member  # noqa: E402
from booking_core.ids import new_id  # noqa: E402


@attrs.frozen
class CrewSpec:
    """A crew member of a test company: home zip, service areas, excluded services, and
    working hours (``"HH:MM"`` to ``"HH:MM"``, company local time) on ISO ``weekdays``."""

    name: str
    home_zip: str
    areas: tuple[str, ...]
    excluded: tuple[str, ...] = ()
    weekdays: tuple[int, ...] = (1, 2, 3, 4, 5)
    hours: tuple[str, str] = ("08:00", "18:00")


@attrs.frozen
class Shop:
    """A company of a test's own (demo catalog, no jobs yet): its crew ids in the order
    they were given and a full-access key."""

    company: Company
    key: str
    crew_ids: tuple[str, ...]

    @property
    def zone(self) -> ZoneInfo:
        """The company's timezone."""
        return ZoneInfo(self.company.timezone)


def crewed_company(
    stack: Stack,
    crew: tuple[CrewSpec, ...],
    *,
    timezone: str = "America/New_York",
    code_prefix: str = "TS",
    min_notice_minutes: int | None = None,
) -> Shop:
    """A fresh company with ``crew``: availability and lists with exactly known contents."""
    container = stack.container
    slug = f"e2e-{secrets.token_hex(4)}"
    company = company_cases.create_company(
        company_cases.CreateCompany(
            slug=slug,
            name=f"E2E {slug}",
            timezone=timezone,
            tax_rate_bps=887,
            code_prefix=code_prefix,
            catalog=demo_catalog(timezone=timezone),
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    at = container.clock.now()
    ids: list[str] = []
    with container.uow() as uow:
        if min_notice_minutes is not None:
            company = attrs.evolve(company, min_notice_minutes=min_notice_minutes)
            uow.companies.save(company)
        for spec in crew:
            start, end = (wall_time.fromisoformat(h) for h in spec.hours)
            member = new_crew_member(
                member_id=new_id("crew"),
                company_id=company.id,
                name=spec.name,
                home_zip=spec.home_zip,
                at=at,
                service_areas=spec.areas,
                excluded_service_ids=spec.excluded,
                working_hours=tuple(WorkingHours(day, start, end) for day in spec.weekdays),
            )
            uow.crew.add(member)
            ids.append(member.id)
        uow.commit()
    return Shop(company, stack.issue_key(company_id=company.id).secret, tuple(ids))


def weekday_ahead(zone: ZoneInfo, days: int, weekday: int = 1) -> date:
    """The first ISO ``weekday`` at least ``days`` local dates after today in ``zone``."""
    day = datetime.now(zone).date() + timedelta(days=days)
    return day + timedelta(days=(weekday - day.isoweekday()) % 7)


def at_local(day: date, hhmm: str, zone: ZoneInfo) -> str:
    """``day`` at wall-clock ``hhmm`` in ``zone``, as ISO 8601 with that moment's offset."""
    return datetime.combine(day, wall_time.fromisoformat(hhmm), tzinfo=zone).isoformat()


def overlapping_assignments(stack: Stack, company_id: str) -> int:
    """Pairs of open crew assignments of one member that overlap (half-open), straight
    from the stack's database: a double booking, which must never exist."""
    from sqlalchemy import text

    query = text(
        "SELECT count(*) FROM booking_assignments a JOIN booking_assignments b"
        " ON a.company_id = b.company_id AND a.crew_id = b.crew_id"
        " AND a.booking_id < b.booking_id"
        " AND a.starts_at < b.ends_at AND b.starts_at < a.ends_at"
        " WHERE a.company_id = :company AND a.open AND b.open"
    )
    with stack.container.database.engine.connect() as connection:
        return int(connection.execute(query, {"company": company_id}).scalar_one())


MIDDAY_ZONES = (
    "Pacific/Honolulu",
    "America/Anchorage",
    "America/Los_Angeles",
    "America/Denver",
    "America/Chicago",
    "America/New_York",
    "America/Sao_Paulo",
    "America/Noronha",
    "Atlantic/Azores",
    "Europe/London",
    "Europe/Paris",
    "Europe/Athens",
    "Europe/Moscow",
    "Asia/Dubai",
    "Asia/Karachi",
    "Asia/Kolkata",
    "Asia/Dhaka",
    "Asia/Bangkok",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Noumea",
    "Pacific/Auckland",
    "Pacific/Tongatapu",
    "Pacific/Kiritimati",
)
"""Timezones a whole hour or less apart around the clock."""


def midday_zone(hour: float = 10.5) -> ZoneInfo:
    """The zone whose local time now is nearest ``hour``: a company there can be booked
    within the next hours (minimum notice, the self-service cutoff) without meeting
    midnight, whenever the suite runs."""

    def distance(name: str) -> float:
        now = datetime.now(ZoneInfo(name))
        return abs(now.hour + now.minute / 60 - hour)

    return ZoneInfo(min(MIDDAY_ZONES, key=distance))


def booking_body(start: str, zip_code: str = "10001", **fields: Any) -> dict[str, Any]:
    """A one-time standard clean at ``start`` for a new customer, with ``fields`` on top."""
    return {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "one_time",
        "startIso": start,
        "customer": {"name": "Booked Customer", "email": unique_email("booked")},
        "address": {"line1": "12 Test St", "city": "New York", "state": "NY", "zip": zip_code},
        **fields,
    }


# --- The ledger and quotes: real bookings, written straight through the unit of work ---
# (Imports here, not at the top, so that this block stays an addition at the end.)

import itertools  # noqa: E402

from booking_core.booking_orders import BookingOrder, catalog_pricer, new_booking  # noqa: E402
from booking_core.customers import Address, Customer, SavedAddress, new_customer  # noqa: E402
from booking_core.pricing import Selection, Visit  # noqa: E402
from booking_core.services.scheduling import active_crew, store_new  # noqa: E402

DEMO_CUSTOMER_EMAIL = "ada@example.com"
"""Ada Lovelace, a customer of both demo companies, with a default address."""
FAR_AHEAD = date(2040, 1, 2)
"""Bookings ``add_booking`` writes start here at 10:00 local, each on a later date of its
own: far past any date a scheduling test lists, so none takes a slot a test expects."""
_FAR_DATES = itertools.count()


def demo_customer_id(stack: Stack, company_id: str | None = None) -> str:
    """The id of the demo customer Ada Lovelace in a demo company (the first by default)."""
    with stack.container.uow() as uow:
        found = uow.customers.by_email(company_id or stack.company.id, DEMO_CUSTOMER_EMAIL)
    assert found is not None, "the demo loads Ada Lovelace into every demo company"
    return found.id


def _customer_for_booking(uow: Any, company_id: str, at: datetime) -> Customer:
    """Ada Lovelace if the company has her (a demo company), else a new customer."""
    found: Customer | None = uow.customers.by_email(company_id, DEMO_CUSTOMER_EMAIL)
    if found is not None:
        return found
    made = new_customer(
        customer_id=new_id("cus"),
        company_id=company_id,
        name="Booked Customer",
        email=unique_email("booked"),
        phone=None,
        at=at,
        address=SavedAddress(new_id("adr"), Address("12 Test St", "New York", "NY", "10001")),
    )
    uow.customers.add(made)
    return made


def add_booking(container: Container, company_id: str, customer_id: str | None = None) -> str:
    """The id of a new booking of ``company_id``, stored as the scheduler stores one, for
    ``customer_id`` (default: Ada Lovelace in a demo company, else a new customer) at that
    customer's default address.

    A one-time visit of the first active service, priced from the company's catalog, done
    by its first active crew member (a company with no crew gets one) on a date far ahead
    of its own. Availability is not consulted: cheap, and it takes no slot a test expects.
    """
    at = container.clock.now()
    with container.uow() as uow:
        company = uow.companies.get(company_id)
        catalog = uow.catalogs.get(company_id)
        if customer_id is None:
            customer = _customer_for_booking(uow, company_id, at)
        else:
            customer = uow.customers.get(company_id, customer_id)
        address = customer.default_address
        assert address is not None, f"customer {customer.id} has no default address"
        crew = active_crew(uow, company_id)
        if not crew:
            crew = [
                new_crew_member(
                    member_id=new_id("crew"),
                    company_id=company_id,
                    name="E2E Crew",
                    home_zip=address.zip,
                    at=at,
                    service_areas=(address.zip,),
                    working_hours=tuple(
                        WorkingHours(day, wall_time(8), wall_time(18)) for day in range(1, 8)
                    ),
                )
            ]
            uow.crew.add(crew[0])
        service = next(s for s in catalog.services() if s.active)
        day = FAR_AHEAD + timedelta(days=next(_FAR_DATES))
        start = datetime.combine(day, wall_time(10), tzinfo=ZoneInfo(company.timezone))
        order = BookingOrder(
            company_id=company_id,
            code_prefix=company.code_prefix,
            timezone=company.timezone,
            customer_id=customer.id,
            selection=Selection(service.id),
            address=address,
            crew_ids=(crew[0].id,),
            notes="Written by the e2e suite.",
        )
        visit = catalog_pricer(catalog, order, at=at)(start, Visit.FIRST)
        (booking,) = store_new(uow, [new_booking(order, start=start, price=visit, at=at)])
        uow.commit()
    return booking.id


def bookings_of(c: httpx.Client, customer_id: str) -> list[str]:
    """The ids of every booking of a customer, through ``GET /bookings?customerId=``."""
    found: list[str] = []
    params: dict[str, Any] = {"customerId": customer_id, "limit": 200}
    while True:
        response = c.get(f"{API}/bookings", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        found.extend(b["id"] for b in page["data"])
        if not page["hasMore"]:
            return found
        params["cursor"] = page["nextCursor"]
