"""The ``booking`` command on a real SQLite file: in-process for speed, plus a subprocess
check that bad input is one line on stderr and exit status 2."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from booking_core import auth
from booking_core.services.companies import authenticate
from entrypoints.bootstrap import bootstrap
from entrypoints.cli import Cli
from entrypoints.settings import Settings
from tests.services import free_port, stop_process, wait_for_port


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
        assert set(company) == {"id", "slug", "name", "apiKey", "bookingPage", "portal", "users"}
        slug = company["slug"]
        assert company["bookingPage"] == f"http://x/{slug}/book"
        assert company["portal"] == f"http://x/{slug}/portal"
        assert [u["role"] for u in company["users"]] == ["owner", "crew"]
        key = run.authenticate(company["apiKey"])
        assert key is not None
        assert key.company_id == company["id"]
        assert key.scopes == frozenset(auth.SCOPES)


def test_demo_twice_reuses_the_companies_and_issues_fresh_keys(run):
    first = json.loads(run("demo", "--json")[1])["companies"]
    second = json.loads(run("demo", "--json")[1])["companies"]
    assert [c["id"] for c in first] == [c["id"] for c in second]
    assert first[0]["apiKey"] != second[0]["apiKey"]


def test_company_create_says_its_timezone_and_how_someone_signs_in(run):
    """A new company's owner could not sign in: nothing said ``booking user create``, and
    a company created without ``--timezone`` was silently New York's."""
    status, out, _ = run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    assert status == 0
    assert out.splitlines()[0].endswith("times in America/New_York")
    assert "booking user create --company acme --email YOU@EXAMPLE.COM --role owner" in out
    assert "http://x/acme/book" in out


def test_key_create_json_has_the_documented_shape_and_defaults(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, out, _ = run("key", "create", "--company", "acme", "--name", "Website", "--json")
    assert status == 0
    created = json.loads(out)
    assert set(created) == {"id", "key", "name", "scopes", "rateLimit"}
    assert created["scopes"] == ["catalog:read", "bookings:read", "customers:read"]
    assert created["rateLimit"] == 120
    assert run.authenticate(created["key"]) is not None


def test_all_among_other_scopes_is_told_it_stands_alone(run):
    # It was "Unknown scope(s): all.", though all is a documented value.
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, _, err = run(
        "key", "create", "--company", "acme", "--name", "x", "--scopes", "all,catalog:read"
    )
    assert status == 2
    assert "--scopes: all stands alone" in one_line(err)


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
    assert one_line(err).startswith("booking: --rate-limit: ")
    assert "10 to 6,000" in err


def test_bad_company_field_is_named_by_its_flag(run):
    status, _, err = run(
        "company", "create", "--slug", "acme", "--name", "A", "--tax-rate-bps", "-5"
    )
    assert status == 2
    assert one_line(err) == "booking: --tax-rate-bps: Between 0 and 10000 basis points."


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
        ["key", "create", "--company", "nope", "--name", "\udcff\udcfe"],  # bytes not UTF-8
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


def demo_database(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An SQLite file with the demo companies in it: the environment naming it (and no
    PATH), and the ``booking`` command to run against it."""
    env = {"BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}", "PATH": ""}
    booking = Path(sys.executable).with_name("booking")
    demo = subprocess.run(
        [str(booking), "demo", "--json"], capture_output=True, env=env, timeout=120, check=False
    )
    assert demo.returncode == 0, demo.stderr
    return env, booking


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """``booking key list | head``: the pipe closed before the command writes is the end
    of the command (status 141, as SIGPIPE gives), never a failure line or a traceback."""
    env, booking = demo_database(tmp_path)
    listing = subprocess.Popen(
        [str(booking), "key", "list", "--company", "sparkle-cleaning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert listing.stdout is not None
    assert listing.stderr is not None
    listing.stdout.close()  # the reader is gone before the command starts writing
    err = listing.stderr.read().decode()
    listing.stderr.close()
    assert listing.wait(timeout=60) == 141, err
    assert err == ""


# The first ten minutes: a chosen port shows in every link, and a command run where no
# database was migrated says which database it looked at and how to migrate it.

BOOKING = Path(sys.executable).with_name("booking")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any BOOKING_ setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOKING_")}
    return {**env, **extra}


@contextmanager
def serving(tmp_path: Path, name: str) -> Iterator[int]:
    """``booking serve --port`` on a migrated SQLite file of ``tmp_path``: its port."""
    env = clean_env(BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / name}")
    subprocess.run([str(BOOKING), "migrate"], env=env, capture_output=True, check=True)
    port = free_port()
    server = subprocess.Popen(
        [str(BOOKING), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, server)
        yield port
    finally:
        stop_process(server)


def test_serve_on_a_chosen_port_names_that_port_in_openapi_servers(tmp_path):
    with serving(tmp_path, "port.sqlite3") as port:
        document = httpx.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=10).json()
        assert document["servers"][0]["url"] == f"http://127.0.0.1:{port}"


def test_serve_takes_its_port_from_booking_port_when_no_flag_is_given(tmp_path):
    port = free_port()
    env = clean_env(
        BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / 'env.sqlite3'}", BOOKING_PORT=str(port)
    )
    subprocess.run([str(BOOKING), "migrate"], env=env, capture_output=True, check=True)
    server = subprocess.Popen(
        [str(BOOKING), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, server)
        document = httpx.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=10).json()
        assert document["servers"][0]["url"] == f"http://127.0.0.1:{port}"
    finally:
        stop_process(server)


def demo_output(tmp_path: Path, **env: str) -> str:
    settings = Settings.from_env(
        {"BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}", **env}
    )
    out = io.StringIO()
    status = Cli(lambda: bootstrap(settings), out=out, err=io.StringIO()).run(["demo"])
    assert status == 0
    return out.getvalue()


def test_demo_prints_its_links_on_the_port_it_is_told(tmp_path):
    out = demo_output(tmp_path, BOOKING_PORT="8123")
    assert "http://127.0.0.1:8123/api/v1" in out
    assert "http://127.0.0.1:8123/api/openapi.json" in out
    assert "http://127.0.0.1:8123/api/v1/services" in out
    assert "customers book at http://127.0.0.1:8123/sparkle-cleaning/book" in out
    assert ":8000" not in out


def test_demo_links_on_every_interface_point_at_loopback(tmp_path):
    out = demo_output(tmp_path, BOOKING_HOST="0.0.0.0", BOOKING_PORT="8124")
    assert "http://127.0.0.1:8124/api/v1" in out
    assert "0.0.0.0" not in out


def test_demo_links_follow_booking_base_url_over_host_and_port(tmp_path):
    out = demo_output(tmp_path, BOOKING_BASE_URL="https://book.example.com/", BOOKING_PORT="8125")
    assert "https://book.example.com/api/v1/services" in out
    assert "8125" not in out


@pytest.mark.parametrize("port", ["http", "0", "65536"])
def test_a_port_setting_that_is_no_port_is_one_line_and_exit_status_2(tmp_path, port):
    env = clean_env(BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / 'bad.sqlite3'}", BOOKING_PORT=port)
    done = subprocess.run(
        [str(BOOKING), "migrate"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "BOOKING_PORT" in one_line(done.stderr)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("BOOKING_BASE_URL", "not a url"),
        ("BOOKING_BASE_URL", "ftp://book.example.com"),
        ("BOOKING_BASE_URL", "https://book.example.com/?x=1"),
        ("BOOKING_BASE_URL", "https://book.example.com?"),
        ("BOOKING_BASE_URL", "https://book.example.com#"),
        ("BOOKING_BASE_URL", "https://book.example.com:99999"),
        ("BOOKING_BASE_URL", "https://book.example.com:abc"),
        ("BOOKING_BASE_URL", "http://[::1"),
        ("BOOKING_BASE_URL", "https://user:pw@book.example.com"),
        ("BOOKING_SESSION_SECRET", " " * 40),
        ("BOOKING_SESSION_SECRET", "abc"),
        ("BOOKING_MAIL_TEMPLATES", "/no/such/folder"),
        ("BOOKING_LOG_LEVEL", "BOGUS"),
        ("BOOKING_REDIS_URL", "foo://x"),
        ("BOOKING_REDIS_URL", "127.0.0.1:6379"),
    ],
)
def test_a_setting_the_service_cannot_use_is_refused_at_start_naming_it(tmp_path, setting, value):
    """A short session secret would sign cookies weakly, a base address that is no http
    address would print links that do not open, a templates folder or log level that is
    not one would be ignored without a word: each is one line and exit status 2."""
    env = clean_env(BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / 'x.sqlite3'}", **{setting: value})
    done = booking(env, "migrate")
    assert done.returncode == 2
    assert one_line(done.stderr).startswith(f"booking: {setting} must ")
    assert not (tmp_path / "x.sqlite3").exists()  # nothing was done


def test_settings_the_service_can_use_are_taken():
    from entrypoints.settings import Settings

    settings = Settings.from_env(
        {
            "BOOKING_BASE_URL": " https://book.example.com:8443/app/ ",
            "BOOKING_SESSION_SECRET": "s" * 32,
            "BOOKING_LOG_LEVEL": "warning",
        }
    )
    assert settings.base_url == "https://book.example.com:8443/app"
    assert Settings.from_env({"BOOKING_BASE_URL": "http://[::1]:8000"}).base_url == (
        "http://[::1]:8000"
    )
    assert settings.session_secret == "s" * 32
    assert settings.log_level == "WARNING"


def booking(env: dict[str, str], *argv: str, cwd: Path | None = None):
    """``booking argv`` as a console script: its exit status, stdout and stderr."""
    return subprocess.run(
        [str(BOOKING), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_command_run_elsewhere_names_the_database_and_how_to_migrate_it(tmp_path):
    done = booking(clean_env(), "key", "list", "--company", "acme", cwd=tmp_path)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert str(tmp_path / "booking.sqlite3") in line
    assert "booking migrate" in line
    assert "no such table" not in line
    assert not (tmp_path / "booking.sqlite3").exists()


def test_a_database_in_a_folder_not_yet_made_makes_no_folder_until_migrated(tmp_path):
    path = tmp_path / "new" / "sub" / "booking.sqlite3"
    done = booking(
        clean_env(BOOKING_DATABASE_URL=f"sqlite:///{path}"), "key", "list", "--company", "x",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"database {path} is not migrated" in one_line(done.stderr)
    assert not (tmp_path / "new").exists()
    migrated = booking(clean_env(BOOKING_DATABASE_URL=f"sqlite:///{path}"), "migrate", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert path.is_file()


@pytest.mark.parametrize("url", ["sqlite:", "sqlite:/x", "postgresql://u:secret@h:abc/db"])
def test_a_database_url_that_does_not_parse_is_named_with_status_2(tmp_path, url):
    done = booking(clean_env(BOOKING_DATABASE_URL=url), "key", "list", "--company", "x",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith("booking: BOOKING_DATABASE_URL: not a database URL")
    assert "secret" not in line


def test_serve_without_a_migrated_database_refuses_to_start(tmp_path):
    done = booking(clean_env(), "serve", "--port", str(free_port()), cwd=tmp_path)
    assert done.returncode == 2
    assert "booking migrate" in one_line(done.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        ["company", "create", "--slug", "acme", "--name", "Acme"],
        ["key", "create", "--company", "acme", "--name", "x"],
        ["key", "list", "--company", "acme"],
        ["key", "rotate", "--company", "acme", "--id", "key_x", "--yes"],
        ["key", "revoke", "--company", "acme", "--id", "key_x", "--yes"],
        ["plans", "extend"],
    ],
)
def test_every_command_needing_tables_says_to_migrate_an_unmigrated_database(tmp_path, argv):
    path = tmp_path / "fresh.sqlite3"
    status, out, err = Run(f"sqlite:///{path}")(*argv)
    assert status == 2
    assert out == ""
    line = one_line(err)
    assert f"database {path} is not migrated" in line
    assert "run 'booking migrate'" in line


def at_revision(path: Path, revision: str) -> Run:
    """A migrated database whose version table then says ``revision``, and a runner."""
    run = Run(f"sqlite:///{path}")
    assert run("migrate")[0] == 0
    container = bootstrap(run.settings)
    try:
        with container.database.engine.begin() as connection:
            connection.exec_driver_sql(
                "UPDATE alembic_version SET version_num = :revision", {"revision": revision}
            )
    finally:
        container.close()
    return run


def test_a_database_behind_the_newest_migration_is_refused_until_migrated(tmp_path):
    run = at_revision(tmp_path / "behind.sqlite3", "0001_initial")
    status, _, err = run("key", "list", "--company", "acme")
    assert status == 2
    assert "booking migrate" in one_line(err)


def test_a_database_a_newer_release_migrated_is_named_so_and_never_migrated_back(tmp_path):
    run = at_revision(tmp_path / "ahead.sqlite3", "0099_future")
    for argv in (("key", "list", "--company", "acme"), ("migrate",), ("demo",)):
        status, _, err = run(*argv)
        assert status == 2
        line = one_line(err)
        assert "was migrated by a newer release of the service (revision 0099_future)" in line
        assert "booking migrate" not in line


def test_a_file_that_is_no_database_is_named_with_status_2(tmp_path):
    path = tmp_path / "notes.sqlite3"
    path.write_text("shopping list\n" * 100)
    for argv in (("key", "list", "--company", "acme"), ("migrate",), ("demo",)):
        status, _, err = Run(f"sqlite:///{path}")(*argv)
        assert status == 2
        assert one_line(err) == f"booking: {path} is not a database this service can read"


def test_serve_on_a_port_another_server_holds_says_so_and_never_serving(tmp_path):
    env = clean_env(BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / 'held.sqlite3'}")
    subprocess.run([str(BOOKING), "migrate"], env=env, capture_output=True, check=True)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = booking(env, "serve", "--port", str(port))
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith(f"booking: cannot serve on 127.0.0.1:{port}: ")
    assert "serving" not in done.stderr


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("BOOKING_DATABASE_URL", "nonsense://x"),
        ("BOOKING_DATABASE_SCHEMA", "Not-A-Schema"),
    ],
)
def test_a_database_setting_the_service_cannot_use_is_one_line_and_exit_status_2(
    tmp_path, setting, value
):
    env = clean_env(
        **{"BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}", setting: value}
    )
    done = booking(env, "key", "list", "--company", "acme")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith(f"booking: {setting}: ")
    assert "Error" not in line  # no Python exception class


def test_ctrl_c_while_a_document_is_read_ends_with_one_line_and_writes_nothing(tmp_path):
    """Ctrl-C (SIGINT) while ``catalog import -`` waits for its document on stdin: one
    line, ``booking: cancelled``, status 130, no traceback, and the catalog as it was."""
    import signal
    import time

    env, booking = demo_database(tmp_path)
    before = subprocess.run(
        [str(booking), "catalog", "export", "--company", "sparkle-cleaning"],
        capture_output=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    importing = subprocess.Popen(
        [str(booking), "catalog", "import", "--company", "sparkle-cleaning", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert importing.stdin is not None
    importing.stdin.write(b"services:\n")  # half a document; the rest never comes
    importing.stdin.flush()
    waiting = Path(f"/proc/{importing.pid}/wchan")
    deadline = time.monotonic() + 60
    while "pipe_read" not in waiting.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "pipe_read" in waiting.read_text(), "never waited for stdin"
    importing.send_signal(signal.SIGINT)
    out, err = importing.communicate(timeout=60)
    assert importing.returncode == 130, err
    assert err.decode().strip() == "booking: cancelled"
    assert out == b""
    after = subprocess.run(
        [str(booking), "catalog", "export", "--company", "sparkle-cleaning"],
        capture_output=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert after == before


def test_stdin_that_is_not_utf8_is_named_as_such_with_nothing_written(tmp_path):
    env = clean_env(BOOKING_DATABASE_URL=f"sqlite:///{tmp_path / 'bytes.sqlite3'}")
    assert booking(env, "migrate").returncode == 0
    assert booking(env, "company", "create", "--slug", "acme", "--name", "Acme").returncode == 0

    def fed(data: bytes, *argv: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [str(BOOKING), *argv], env=env, input=data, capture_output=True, timeout=60, check=False
        )

    password = fed(
        b"a-long-enough-password-\xe9\n",
        "user", "create", "--company", "acme", "--email", "p@acme.example",
        "--role", "dispatcher", "--password-stdin",
    )  # fmt: skip
    assert password.returncode == 2
    assert one_line(password.stderr.decode()) == (
        "booking: --password-stdin: the password is not UTF-8 text"
    )
    assert booking(env, "user", "link", "--email", "p@acme.example").returncode != 0
    for fmt in ("yaml", "json"):
        document = fed(
            b"members: []\n# caf\xe9\n", "crew", "import", "--company", "acme", "--format", fmt, "-"
        )
        assert document.returncode == 1
        assert document.stderr.decode().splitlines() == [
            "booking: stdin: document: Not UTF-8 text.",  # as from a file
            "booking: stdin: 1 problem; nothing was written",
        ]


def test_ctrl_c_while_the_command_is_still_loading_ends_it_with_one_line():
    # The console script's first module holds Ctrl-C while the service's modules load:
    # here the SIGINT comes as entrypoints.cli starts to import.
    script = (
        "import builtins, os, signal, sys\n"
        "import entrypoints.launch as launch\n"
        "real = builtins.__import__\n"
        "def importing(name, *args, **kwargs):\n"
        "    if name == 'entrypoints.cli':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = importing\n"
        "sys.exit(launch.main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 130
    assert one_line(done.stderr) == "booking: cancelled"


def test_migrate_says_which_revisions_it_went_from_and_to(tmp_path):
    """It said "database is up to date" whether it had applied migrations or not."""
    from adapters.sql import Database
    from tests.integration.test_referral_migration import downgrade_to

    path = tmp_path / "upgrade.sqlite3"
    runner = Run(f"sqlite:///{path}")
    status, _, err = runner("migrate")
    assert status == 0
    fresh = err.strip().splitlines()[-1]
    assert fresh.startswith("booking: database migrated from an empty database to revision ")
    head = fresh.rsplit(" ", 1)[-1]
    database = Database.from_url(f"sqlite:///{path}")
    try:
        downgrade_to(database, "0018_service_secrets")
    finally:
        database.engine.dispose()
    status, _, err = runner("migrate")
    assert err.strip().splitlines()[-1] == (
        f"booking: database migrated from 0018_service_secrets to revision {head}"
    )
    status, _, err = runner("migrate")
    assert one_line(err) == f"booking: database is up to date (revision {head})"


def test_two_migrations_at_once_on_postgresql_say_who_migrated_and_who_found_it_done():
    """The second of two ``booking migrate`` processes waits on the first's lock; it read
    the revisions before taking it, and so said "migrated from an empty database" too."""
    import secrets

    from adapters.sql import Database
    from tests.services import postgres_url

    schema = f"cli_race_{secrets.token_hex(4)}"
    env = clean_env(BOOKING_DATABASE_URL=postgres_url(), BOOKING_DATABASE_SCHEMA=schema)
    try:
        runs = [
            subprocess.Popen([str(BOOKING), "migrate"], env=env, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        said = [run_.communicate(timeout=180)[1].strip().splitlines()[-1] for run_ in runs]
        assert [run_.returncode for run_ in runs] == [0, 0]
    finally:
        database = Database.from_url(postgres_url(), schema=schema)
        try:
            with database.engine.begin() as connection:
                connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            database.engine.dispose()
    assert sum(s.startswith("booking: database migrated from an empty database") for s in said) == 1
    assert sum(s.startswith("booking: database is up to date") for s in said) == 1


def test_serve_counts_sign_ins_by_the_connections_address_not_x_forwarded_for(tmp_path):
    """docs/web.md: the client address is the connection's peer. uvicorn trusted
    X-Forwarded-For from 127.0.0.1, so a made-up header escaped the per-address limit."""
    from adapters.web.throttle import PER_ADDRESS
    from tests.browser.test_brand_http import csrf

    with (
        serving(tmp_path, "peer.sqlite3") as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as browser,
    ):
        token = csrf(browser.get("/sign-in"))
        for n in range(PER_ADDRESS):  # a new email each time: the address's count
            form = {"csrf_token": token, "email": f"n{n}@x.example", "password": "x" * 12}
            assert browser.post("/sign-in", data=form).status_code != 429, n
        form = {"csrf_token": token, "email": "late@x.example", "password": "x" * 12}
        assert browser.post("/sign-in", data=form).status_code == 429
        spoofed = browser.post("/sign-in", data=form, headers={"x-forwarded-for": "1.2.3.4"})
        assert spoofed.status_code == 429
