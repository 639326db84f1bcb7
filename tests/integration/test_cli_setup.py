"""Setting a company up from the command line (docs/setup.md) on SQLite and PostgreSQL: a
company made empty takes bookings over ``/api/v1`` once its catalog and crew documents
are imported; a bad document writes nothing and names every problem; ``company
settings`` and ``key edit``."""

from __future__ import annotations

import io
import json
import os
import secrets
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from adapters.sql import Database
from booking_core import auth
from entrypoints.bootstrap import bootstrap
from entrypoints.cli import Cli
from entrypoints.settings import Settings
from entrypoints.web import web_app
from tests import setup_examples
from tests.e2e.support import LiveServer, client, free_socket
from tests.services import postgres_url

NY = ZoneInfo("America/New_York")


class Run:
    """The ``booking`` command, in process, on one database."""

    def __init__(self, settings: Settings, folder: Path) -> None:
        self.settings = settings
        self.folder = folder

    def __call__(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        cli = Cli(lambda: bootstrap(self.settings), out=out, err=err, stdin=io.StringIO(stdin))
        status = cli.run(list(argv))
        return status, out.getvalue(), err.getvalue()

    def ok(self, *argv: str, stdin: str = "") -> str:
        status, out, err = self(*argv, stdin=stdin)
        assert status == 0, err
        return out

    def file(self, name: str, text: str) -> str:
        path = self.folder / name
        path.write_text(text, encoding="utf-8")
        return str(path)


@pytest.fixture(params=["sqlite", "postgres"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Run]:
    """The command on a freshly migrated database of each backend."""
    if request.param == "sqlite":
        settings = Settings(
            database_url=f"sqlite:///{tmp_path / 'setup.sqlite3'}", redis_url=None, base_url="x"
        )
    else:
        schema = f"it_setup_{os.getpid()}_{secrets.token_hex(3)}"
        settings = Settings(
            database_url=postgres_url(), redis_url=None, base_url="x", database_schema=schema
        )
    runner = Run(settings, tmp_path)
    runner.ok("migrate")
    try:
        yield runner
    finally:
        if request.param == "postgres":
            database = Database.from_url(postgres_url(), schema=settings.database_schema)
            database.drop_schema()
            database.dispose()


@pytest.fixture
def brightside(run: Run) -> Run:
    """An empty company, ``brightside``, with the docs/setup.md catalog and crew imported."""
    run.ok("company", "create", "--slug", "brightside", "--name", "Brightside Cleaning")
    run.ok("catalog", "import", "--company", "brightside", run.file("c.yaml", catalog_text()))
    run.ok("crew", "import", "--company", "brightside", run.file("crew.yaml", crew_text()))
    return run


def catalog_text() -> str:
    return setup_examples.document("catalog.yaml")


def crew_text() -> str:
    return setup_examples.document("crew.yaml")


def next_wednesday() -> str:
    day = datetime.now(NY).date() + timedelta(days=3)
    return (day + timedelta(days=(3 - day.isoweekday()) % 7)).isoformat()


def test_an_empty_company_takes_bookings_once_its_documents_are_imported(brightside):
    key = json.loads(
        brightside.ok(
            "key", "create", "--company", "brightside", "--name", "Website",
            "--scopes", "catalog:read,bookings:read,bookings:write", "--json",
        )
    )["key"]  # fmt: skip
    container = bootstrap(brightside.settings)
    server = LiveServer(free_socket()).start(web_app(container))
    try:
        with client(server.base_url, key) as api:
            quoted = api.post("/api/v1/quote", json=setup_examples.quote_request())
            assert quoted.status_code == 200, quoted.text
            totals = (quoted.json()["firstVisit"], quoted.json()["laterVisits"])
            assert tuple(t["totalCents"] for t in totals) == setup_examples.stated_totals()

            slots = api.get(
                "/api/v1/availability",
                params={"serviceId": "svc_standard", "date": next_wednesday(), "zip": "10003"},
            )
            assert slots.status_code == 200, slots.text
            assert slots.json()["data"], "no open slot"
            slot = slots.json()["data"][0]

            booked = api.post(
                "/api/v1/bookings",
                headers={"Idempotency-Key": secrets.token_hex(8)},
                json={
                    "serviceId": "svc_standard",
                    "frequencySlug": "one_time",
                    "startIso": slot["startIso"],
                    "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
                    "address": {
                        "line1": "12 Analytical Way",
                        "city": "New York",
                        "state": "NY",
                        "zip": "10003",
                    },
                    "extras": [{"id": "ext_oven"}],
                },
            )
            assert booked.status_code == 201, booked.text
            booking: dict[str, Any] = booked.json()
            assert booking["crewIds"] == slot["crewIds"]
            # 12000 base + 1 bedroom (its minimum) 2500 + oven 3000, and 8 % tax: 18900.
            assert booking["price"]["totalCents"] == 18_900

            # Exported, edited and imported again while the server runs: priced at once.
            dearer = catalog_text().replace("basePriceCents: 12000", "basePriceCents: 13000")
            path = brightside.file("dearer.yaml", dearer)
            brightside.ok("catalog", "import", "--company", "brightside", path)
            # The server hears of the change through its change feed (docs/storage.md:
            # milliseconds, longer on a loaded machine): priced anew once it has.
            deadline = time.monotonic() + 30
            while True:
                again = api.post("/api/v1/quote", json=setup_examples.quote_request())
                subtotal = again.json()["firstVisit"]["subtotalCents"]
                if subtotal != 28_500 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert subtotal == 29_500
    finally:
        server.stop()
        container.close()


def test_a_bad_document_names_every_problem_and_writes_nothing(brightside):
    before = brightside.ok("catalog", "export", "--company", "brightside", "--format", "json")
    bad = (
        catalog_text()
        .replace("taxRateBps: 800", "taxRateBps: 80000")
        .replace("priceCents: 3000", "priceCents: -3000")
        .replace("  - weekly\n", "  - monthly\n")
        .replace("percentBps: 1000", "percentBps: 0")
    )

    path = brightside.file("bad.yaml", bad)

    status, out, err = brightside("catalog", "import", "--company", "brightside", path)

    assert status == 1
    assert out == ""
    assert err.splitlines() == [
        f"booking: {path}: taxRateBps: A whole number from 0 to 10000.",
        f"booking: {path}: industries.0.services.0.extras.0.priceCents: A whole number"
        " from 0 to 100000000.",
        f"booking: {path}: industries.0.services.0.extras.2.frequencySlugs.0: No frequency"
        " 'monthly' in this catalog.",
        f"booking: {path}: coupons.0.percentBps: A whole number from 1 to 10000.",
        f"booking: {path}: 4 problems; nothing was written",
    ]
    assert brightside.ok("catalog", "export", "--company", "brightside", "--format", "json") == (
        before
    )


def test_wrong_types_are_named_before_anything_is_checked_or_written(run):
    run.ok("company", "create", "--slug", "acme", "--name", "Acme")
    document = '{"taxRateBps": "8%", "industries": [{"id": "i", "name": "I", "extra": 1}]}'

    status, _, err = run("catalog", "import", "--company", "acme", "-", stdin=document)

    assert status == 1
    assert err.splitlines() == [
        "booking: stdin: taxRateBps: Expected a whole number.",
        "booking: stdin: industries.0.extra: Unknown field.",
        "booking: stdin: 2 problems; nothing was written",
    ]
    assert json.loads(run.ok("catalog", "export", "--company", "acme", "--format", "json")) == {
        "taxRateBps": 0,
        "frequencies": [],
        "industries": [],
        "fees": [],
        "coupons": [],
    }


def test_a_dry_run_checks_the_whole_document_and_writes_nothing(run):
    run.ok("company", "create", "--slug", "acme", "--name", "Acme")

    out = run.ok(
        "catalog", "import", "--company", "acme", run.file("c.yaml", catalog_text()), "--dry-run"
    )

    assert out.startswith("checked (dry run: nothing written) the catalog of acme: 1 industries")
    exported = json.loads(run.ok("catalog", "export", "--company", "acme", "--format", "json"))
    assert exported["industries"] == []


def test_catalog_and_crew_export_and_import_again_without_a_change(brightside):
    path = str(brightside.folder / "exported.yaml")
    brightside.ok("catalog", "export", "--company", "brightside", path)
    assert Path(path).read_text(encoding="utf-8") == catalog_text().split("\n", 1)[1]

    crew = brightside.ok("crew", "export", "--company", "brightside")
    again = json.loads(
        brightside.ok("crew", "import", "--company", "brightside", "-", "--json", stdin=crew)
    )

    assert (again["added"], again["updated"]) == ([], [])
    assert sorted(m["name"] for m in again["unchanged"]) == ["Rosa Diaz", "Sam Lee"]


def test_crew_with_unknown_zips_and_services_is_refused_whole(brightside):
    document = json.dumps(
        {
            "members": [
                {"name": "Ok Person", "homeZip": "10003"},
                {"name": "Bo", "homeZip": "00000", "excludedServiceIds": ["svc_gone"]},
            ]
        }
    )

    status, _, err = brightside("crew", "import", "--company", "brightside", "-", stdin=document)

    assert status == 1
    assert err.splitlines() == [
        "booking: stdin: members.1.homeZip: Unknown US zip code '00000'.",
        "booking: stdin: members.1.excludedServiceIds.0: No service 'svc_gone' in the catalog.",
        "booking: stdin: 2 problems; nothing was written",
    ]
    roster = json.loads(
        brightside.ok("crew", "export", "--company", "brightside", "--format", "json")
    )
    assert "Ok Person" not in [m["name"] for m in roster["members"]]


def test_company_settings_are_shown_changed_and_refused_by_flag(run):
    run.ok("company", "create", "--slug", "acme", "--name", "Acme")

    changed = json.loads(
        run.ok(
            "company", "settings", "--company", "acme", "--cutoff-hours", "48",
            "--min-notice-minutes", "240", "--code-prefix", "AQ", "--timezone",
            "America/Chicago", "--json",
        )
    )  # fmt: skip
    status, _, err = run(
        "company", "settings", "--company", "acme", "--cutoff-hours", "400", "--code-prefix", "q"
    )

    assert (changed["selfServiceCutoffHours"], changed["minNoticeMinutes"]) == (48, 240)
    assert (changed["codePrefix"], changed["timezone"]) == ("AQ", "America/Chicago")
    assert status == 2
    assert err == (
        "booking: --code-prefix: Two capital letters, e.g. SC; --cutoff-hours:"
        " Between 0 and 336 hours.\n"
    )
    assert "self-service cutoff: 48 h" in run.ok("company", "settings", "--company", "acme")


def test_the_referral_discount_is_off_for_a_new_company_and_set_by_its_flag(run):
    created = json.loads(run.ok("company", "create", "--slug", "acme", "--name", "Acme", "--json"))
    shown = json.loads(run.ok("company", "settings", "--company", "acme", "--json"))
    assert "referral programme: off" in run.ok("company", "settings", "--company", "acme")

    changed = json.loads(
        run.ok(
            "company", "settings", "--company", "acme", "--referral-discount-cents", "2500",
            "--json",
        )
    )  # fmt: skip
    status, _, err = run(
        "company", "settings", "--company", "acme", "--referral-discount-cents", "100000001"
    )

    assert shown["id"] == created["id"]
    assert shown["referralDiscountCents"] == 0
    assert changed["referralDiscountCents"] == 2500
    assert "referral discount: $25.00 off a first visit" in run.ok(
        "company", "settings", "--company", "acme"
    )
    assert status == 2
    assert err == (
        "booking: --referral-discount-cents: A whole number of cents from 0 to 100000000.\n"
    )


def test_key_edit_follows_the_rules_of_the_api_keys_page(run):
    run.ok("company", "create", "--slug", "acme", "--name", "Acme")
    key = json.loads(run.ok("key", "create", "--company", "acme", "--name", "Zap", "--json"))

    none_ticked = run("key", "edit", "--company", "acme", "--id", key["id"], "--scopes", "")
    too_fast = run("key", "edit", "--company", "acme", "--id", key["id"], "--rate-limit", "6001")
    edited = json.loads(
        run.ok(
            "key", "edit", "--company", "acme", "--id", key["id"], "--scopes",
            "bookings:read,crews:read", "--rate-limit", "10", "--json",
        )
    )  # fmt: skip
    run.ok("key", "revoke", "--company", "acme", "--id", key["id"], "--yes")
    revoked = run("key", "edit", "--company", "acme", "--id", key["id"], "--rate-limit", "50")

    assert none_ticked[0] == 2
    assert none_ticked[2] == f"booking: --scopes: {auth.NO_SCOPES_MESSAGE}\n"
    assert too_fast[0] == 2
    assert "--rate-limit: 10 to 6,000 requests per minute" in too_fast[2]
    assert (edited["scopes"], edited["rateLimit"]) == (["bookings:read", "crews:read"], 10)
    assert revoked[0] == 2
    assert "revoked" in revoked[2]
