"""The ``booking`` command on a real SQLite file: in-process for speed, plus a subprocess
check that bad input is one line on stderr and exit status 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from booking_core import auth
from booking_core.services.companies import authenticate
from entrypoints.bootstrap import bootstrap
from entrypoints.cli import Cli
from entrypoints.settings import Settings


class Run:
    def __init__(self, db_url: str) -> None:
        self.settings = Settings(database_url=db_url, redis_url=None, base_url="http://x")

    def __call__(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        cli = Cli(lambda: bootstrap(self.settings), out=out, err=err, stdin=io.StringIO(stdin))
        status = cli.run(list(argv))
        return status, out.getvalue(), err.getvalue()

    def authenticate(self, secret: str) -> auth.ApiKey | None:
        container = bootstrap(self.settings)
        try:
            return authenticate(secret, uow=container.uow())
        finally:
            container.close()


@pytest.fixture
def run(tmp_path: Path) -> Run:
    runner = Run(f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    assert runner("migrate")[0] == 0
    return runner


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def test_demo_json_is_exactly_one_object_with_working_full_scope_keys(run):
    status, out, _ = run("demo", "--json")
    assert status == 0
    payload = json.loads(out)
    assert list(payload) == ["companies"]
    companies = payload["companies"]
    assert [c["slug"] for c in companies] == ["sparkle-cleaning", "handy-helpers"]
    for company in companies:
        assert set(company) == {"id", "slug", "name", "apiKey"}
        key = run.authenticate(company["apiKey"])
        assert key is not None
        assert key.company_id == company["id"]
        assert key.scopes == frozenset(auth.SCOPES)


def test_demo_twice_reuses_the_companies_and_issues_fresh_keys(run):
    first = json.loads(run("demo", "--json")[1])["companies"]
    second = json.loads(run("demo", "--json")[1])["companies"]
    assert [c["id"] for c in first] == [c["id"] for c in second]
    assert first[0]["apiKey"] != second[0]["apiKey"]


def test_key_create_json_has_the_documented_shape_and_defaults(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, out, _ = run("key", "create", "--company", "acme", "--name", "Website", "--json")
    assert status == 0
    created = json.loads(out)
    assert set(created) == {"id", "key", "name", "scopes", "rateLimit"}
    assert created["scopes"] == ["catalog:read", "bookings:read", "customers:read"]
    assert created["rateLimit"] == 120
    assert run.authenticate(created["key"]) is not None


def test_key_with_no_scopes_is_refused_with_the_spec_message(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, _, err = run("key", "create", "--company", "acme", "--name", "x", "--scopes", " , ")
    assert status == 2
    assert auth.NO_SCOPES_MESSAGE in one_line(err)


@pytest.mark.parametrize("limit", ["9", "6001"])
def test_rate_limit_outside_bounds_is_refused(run, limit):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, _, err = run("key", "create", "--company", "acme", "--name", "x", "--rate-limit", limit)
    assert status == 2
    assert "10 and 6000" in one_line(err)


def test_list_never_shows_secrets_and_rotate_then_revoke_work(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    created = json.loads(run("key", "create", "--company", "acme", "--name", "Zap", "--json")[1])
    listed = json.loads(run("key", "list", "--company", "acme", "--json")[1])
    assert [k["id"] for k in listed] == [created["id"]]
    assert "key" not in listed[0]
    assert created["key"] not in json.dumps(listed)

    rotated = json.loads(
        run("key", "rotate", "--company", "acme", "--id", created["id"], "--yes", "--json")[1]
    )
    assert run.authenticate(created["key"]) is None
    assert run.authenticate(rotated["key"]) is not None

    status, out, _ = run(
        "key", "revoke", "--company", "acme", "--id", created["id"], "--yes", "--json"
    )
    assert status == 0
    assert json.loads(out)["status"] == "revoked"
    assert run.authenticate(rotated["key"]) is None


def test_revoke_without_confirmation_off_a_terminal_is_refused(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    created = json.loads(run("key", "create", "--company", "acme", "--name", "Zap", "--json")[1])
    status, _, err = run("key", "revoke", "--company", "acme", "--id", created["id"])
    assert status == 2
    assert "--yes" in one_line(err)
    assert run.authenticate(created["key"]) is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["company", "create", "--slug", "Bad Slug", "--name", "X"],
        ["company", "create", "--slug", "ok", "--name", "X", "--timezone", "Mars/Olympus"],
        ["key", "create", "--company", "nope", "--name", "x"],
        ["key", "revoke", "--company", "nope", "--id", "key_x", "--yes"],
        ["key", "frobnicate"],
        ["--no-such-flag"],
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(run, argv):
    status, _, err = run(*argv)
    assert status == 2
    one_line(err)


def test_taken_slug_is_refused(run):
    assert run("company", "create", "--slug", "acme", "--name", "Acme")[0] == 0
    status, _, err = run("company", "create", "--slug", "acme", "--name", "Acme 2")
    assert status == 2
    assert "taken" in one_line(err)


def test_console_script_reports_bad_input_without_a_traceback(tmp_path):
    env = {"BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'sub.sqlite3'}", "PATH": ""}
    booking = Path(sys.executable).with_name("booking")
    migrated = subprocess.run(
        [str(booking), "migrate"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert migrated.returncode == 0, migrated.stderr
    done = subprocess.run(
        [str(booking), "key", "create", "--company", "nope", "--name", "x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert one_line(done.stderr).startswith("booking: ")
    assert done.stdout == ""
