"""The ``booking`` command: serve, migrate, demo data, companies, API keys, users, plans,
the card-processor account and the webhook worker.

Bad input is one clear line on stderr and exit status 2, never a traceback; a fault
outside the caller's control (an unreachable database) is one line and exit status 1.
Long steps report progress on stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO
from urllib.parse import urlsplit

from sqlalchemy.exc import DatabaseError as SqlDatabaseError

from adapters import setup_documents as documents
from adapters.sql import Database
from booking_core import auth
from booking_core.auth import ApiKey, IssuedKey
from booking_core.booking_forms import BookingForm
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.crew import CrewMember
from booking_core.crew_drafts import CrewChanges
from booking_core.errors import DomainError, NotFoundError, ValidationFailed
from booking_core.processor_accounts import ProcessorAccount
from booking_core.services import booking_forms as form_cases
from booking_core.services import companies as cases
from booking_core.services import customers as customer_cases
from booking_core.services import processor as processor_cases
from booking_core.services import setup as setup_cases
from booking_core.services import users as user_cases
from booking_core.services.plan_upkeep import extend_plans
from booking_core.users import User, parse_role, sign_in_link_url
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.logs import configure_logging
from entrypoints.settings import WILDCARD_HOSTS, ConfigError, local_url

EXIT_USAGE = 2
EXIT_FAULT = 1
SELF_MIGRATING = frozenset({"migrate", "demo"})
"""Commands that migrate the database themselves; every other one needs it migrated."""
WORKER_START_SECONDS = 120
"""How long ``serve --workers N`` waits for a worker process to answer its supervisor's
health check before uvicorn replaces it: at start (importing the app takes seconds on a
busy machine), and later too, so a worker that hangs is replaced after two minutes."""


class UsageError(Exception):
    """Bad input from the person at the terminal."""


class PlansNotExtended(Exception):
    """``plans extend`` found plans but could extend none of them (exit status 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _flag(path: str, args: argparse.Namespace | None) -> str:
    """A core field path as the person typed it: ``tax_rate_bps`` -> ``--tax-rate-bps``
    when the command has that flag, else the path as the core names it."""
    if args is not None and path in vars(args):
        return FLAG_NAMES.get(path, "--" + path.replace("_", "-"))
    return path


FLAG_NAMES = {"self_service_cutoff_hours": "--cutoff-hours"}
"""Settings whose documented flag is not their name written with hyphens."""


def _progress(stream: TextIO) -> Callable[[str], None]:
    if not stream.isatty():
        return lambda _: None
    return lambda text: print(f"... {text}", file=stream, flush=True)


def _scopes(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    if text.strip() == "all":
        return frozenset(auth.SCOPES)
    named = frozenset(s.strip() for s in text.split(",") if s.strip())
    if "all" in named:  # a documented value, but of its own
        raise UsageError("--scopes: all stands alone (every scope); or list the scopes")
    return named


def _key_json(key: ApiKey, secret: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": key.id}
    if secret is not None:
        out["key"] = secret
    out.update(
        name=key.name,
        scopes=sorted(key.scopes, key=auth.SCOPES.index),
        rateLimit=key.rate_limit_per_minute,
        status=key.status.value,
        prefix=key.lookup_prefix,
        createdAt=key.created_at.isoformat(),
        revokedAt=key.revoked_at.isoformat() if key.revoked_at else None,
    )
    return out


def _print_key(key: ApiKey, out: TextIO, secret: str | None = None) -> None:
    scopes = ", ".join(sorted(key.scopes, key=auth.SCOPES.index))
    print(f"{key.id}  {key.name}  [{key.status}]  {key.rate_limit_per_minute}/min", file=out)
    print(f"  prefix: {key.lookup_prefix}  scopes: {scopes}", file=out)
    if secret is not None:
        print(f"  key (shown once, store it now): {secret}", file=out)


def _confirm(args: argparse.Namespace, question: str, stdin: TextIO, err: TextIO) -> None:
    if args.yes:
        return
    if not stdin.isatty():
        raise UsageError(f"{question} Pass --yes to confirm when not at a terminal.")
    print(f"{question} [y/N] ", end="", file=err, flush=True)
    if stdin.readline().strip().lower() not in {"y", "yes"}:
        raise UsageError("cancelled")


class Cli:
    """The commands, over one container; streams are injectable for tests."""

    def __init__(
        self,
        container_factory: Callable[[], Container] = bootstrap,
        out: TextIO = sys.stdout,
        err: TextIO = sys.stderr,
        stdin: TextIO = sys.stdin,
        configure_logs: Callable[[], None] = configure_logging,
    ) -> None:
        """``configure_logs`` sets up structlog for commands that log (``worker``)."""
        self._factory = container_factory
        self.out, self.err, self.stdin = out, err, stdin
        self._configure_logs = configure_logs

    def run(self, argv: Sequence[str]) -> int:
        """Parse ``argv`` and run the command; return the exit status."""
        args: argparse.Namespace | None = None
        try:
            for arg in argv:
                if not _is_utf8(arg):
                    raise UsageError(f"not UTF-8 text: {arg!r}")
            args = self.parser().parse_args(argv)
            container = self._factory()
            try:
                if args.command not in SELF_MIGRATING:
                    _require_migrated(container)
                handler: Callable[[Container, argparse.Namespace], None] = args.handler
                handler(container, args)
            finally:
                container.close()
        except DocumentRejected as error:
            for line in error.lines():
                print(f"booking: {line}", file=self.err)
            return EXIT_FAULT
        except CannotListen as error:
            print(f"booking: {error}", file=self.err)
            return EXIT_FAULT
        except (UsageError, ConfigError) as error:
            print(f"booking: {error}", file=self.err)
            return EXIT_USAGE
        except ValidationFailed as error:
            parts = [f"{_flag(path, args)}: {text}" for path, text in error.field_errors.items()]
            # "--slug: ...required; --timezone: ...": one sentence, not "required.; --"
            detail = "; ".join([part.removesuffix(".") for part in parts[:-1]] + parts[-1:])
            print(f"booking: {detail or error.message}", file=self.err)
            return EXIT_USAGE
        except DomainError as error:
            print(f"booking: {error.message}", file=self.err)
            return EXIT_USAGE
        except BrokenPipeError:
            raise  # the reader stopped reading: ``main`` ends quietly
        except Exception as error:
            print(
                f"booking: failed: {type(error).__name__}: {error}".splitlines()[0], file=self.err
            )
            return EXIT_FAULT
        return 0

    def parser(self) -> argparse.ArgumentParser:
        """The argument parser of every command."""
        root = _Parser(prog="booking", description="Booking service administration.")
        commands = root.add_subparsers(dest="command", required=True, parser_class=_Parser)

        serve = commands.add_parser("serve", help="serve the API with uvicorn")
        serve.add_argument("--host", help="default: BOOKING_HOST, else 127.0.0.1")
        serve.add_argument("--port", type=int, help="default: BOOKING_PORT, else 8000")
        serve.add_argument(
            "--workers",
            type=int,
            default=1,
            help="worker processes (default 1); each may take up to two minutes to start",
        )
        serve.set_defaults(handler=self.serve)

        migrate = commands.add_parser("migrate", help="apply database migrations")
        migrate.set_defaults(handler=self.migrate)

        demo = commands.add_parser("demo", help="load two demo companies and print their keys")
        demo.add_argument("--json", action="store_true", help="one JSON object on stdout")
        demo.set_defaults(handler=self.demo)

        company = commands.add_parser("company", help="companies").add_subparsers(
            dest="action", required=True, parser_class=_Parser
        )
        create = company.add_parser("create", help="create a company")
        create.add_argument(
            "--slug", required=True, help="lowercase letters, digits, hyphens: page addresses"
        )
        create.add_argument("--name", required=True, help="the name customers see")
        create.add_argument(
            "--timezone",
            default="America/New_York",
            help="IANA zone, e.g. America/Chicago (default: America/New_York)",
        )
        create.add_argument(
            "--tax-rate-bps", type=int, default=0, help="basis points, 825 = 8.25%% (default 0)"
        )
        create.add_argument(
            "--code-prefix", help="two capital letters of booking codes (default: from the name)"
        )
        create.add_argument("--json", action="store_true", help="one JSON object on stdout")
        create.set_defaults(handler=self.company_create)
        self._company_settings_parser(company)

        plan = commands.add_parser("plans", help="recurring plans").add_subparsers(
            dest="action", required=True, parser_class=_Parser
        )
        extend = plan.add_parser("extend", help="materialise plan visits up to the horizon")
        extend.add_argument("--company", help="company slug (default: every company)")
        extend.add_argument("--json", action="store_true")
        extend.set_defaults(handler=self.plans_extend)

        self._key_parsers(commands)
        self._processor_parsers(commands)
        self._user_parsers(commands)
        self._customer_parsers(commands)
        self._setup_parsers(commands)
        self._forms_parsers(commands)
        worker = commands.add_parser(
            "worker",
            help="deliver webhooks and send email: fan events out and send what is due,"
            " until stopped",
        )
        worker.add_argument(
            "--once", action="store_true", help="deliver and send everything due now, then exit"
        )
        worker.add_argument("--json", action="store_true", help="with --once: the totals as JSON")
        worker.set_defaults(handler=self.worker)
        return root

    def _key_parsers(self, commands: Any) -> None:
        """``booking key create|list|revoke|rotate|edit``."""
        key = commands.add_parser("key", help="API keys").add_subparsers(
            dest="action", required=True, parser_class=_Parser
        )
        key_create = key.add_parser("create", help="issue a key (shown once)")
        key_create.add_argument("--company", required=True, help="company slug")
        key_create.add_argument("--name", required=True, help="the tool that will use the key")
        key_create.add_argument("--scopes", help="comma-separated scopes, or 'all'")
        key_create.add_argument("--rate-limit", type=int, help="requests per minute, 10..6000")
        key_create.add_argument("--json", action="store_true")
        key_create.set_defaults(handler=self.key_create)
        key_list = key.add_parser("list", help="list a company's keys")
        key_list.add_argument("--company", required=True)
        key_list.add_argument("--json", action="store_true")
        key_list.set_defaults(handler=self.key_list)
        for name, handler, text in (
            ("revoke", self.key_revoke, "revoke a key for good"),
            ("rotate", self.key_rotate, "give a key a new secret (shown once)"),
        ):
            sub = key.add_parser(name, help=text)
            sub.add_argument("--company", required=True)
            sub.add_argument("--id", required=True, dest="key_id")
            sub.add_argument("--yes", action="store_true", help="do not ask for confirmation")
            sub.add_argument("--json", action="store_true")
            sub.set_defaults(handler=handler)
        self._key_edit_parser(key)

    def _processor_parsers(self, commands: Any) -> None:
        """``booking processor connect`` and ``booking processor disconnect``."""
        processor = commands.add_parser(
            "processor", help="the company's card-processor (Stripe Connect) account"
        ).add_subparsers(dest="action", required=True, parser_class=_Parser)
        connect = processor.add_parser("connect", help="connect the company to an account")
        connect.add_argument("--company", required=True, help="company slug")
        connect.add_argument("--account", required=True, help="connected account id, acct_...")
        connect.add_argument("--json", action="store_true")
        connect.set_defaults(handler=self.processor_connect)
        disconnect = processor.add_parser(
            "disconnect", help="disconnect the company's account (its money still lands)"
        )
        disconnect.add_argument("--company", required=True, help="company slug")
        disconnect.add_argument("--json", action="store_true")
        disconnect.set_defaults(handler=self.processor_disconnect)

    def _customer_parsers(self, commands: Any) -> None:
        """``booking customer merge``."""
        customer = commands.add_parser("customer", help="customers").add_subparsers(
            dest="action", required=True, parser_class=_Parser
        )
        merge = customer.add_parser(
            "merge", help="merge a customer record into another, with its whole history"
        )
        merge.add_argument("--company", required=True, help="company slug")
        merge.add_argument("--into", required=True, help="the surviving record, cus_...")
        merge.add_argument("merged_id", metavar="cus_MERGED", help="the record merged away")
        merge.add_argument("--json", action="store_true")
        merge.set_defaults(handler=self.customer_merge)

    def _user_parsers(self, commands: Any) -> None:
        """``booking user create`` and ``booking user link``."""
        user = commands.add_parser(
            "user", help="people who sign in to the admin workspace and the crew portal"
        ).add_subparsers(dest="action", required=True, parser_class=_Parser)
        create = user.add_parser("create", help="add a user; prints a one-time sign-in link")
        create.add_argument("--company", required=True, help="company slug")
        create.add_argument("--email", required=True, help="unique across every company")
        create.add_argument("--role", required=True, help="owner, dispatcher or crew")
        create.add_argument("--name", default="")
        create.add_argument("--crew-member", help="the crew member's id (crew users only)")
        create.add_argument(
            "--password-stdin",
            action="store_true",
            help="set a password read from the first line of stdin instead of printing a link",
        )
        create.add_argument("--json", action="store_true")
        create.set_defaults(handler=self.user_create)
        link = user.add_parser("link", help="a fresh one-time sign-in link (15 minutes)")
        link.add_argument("--email", required=True)
        link.add_argument("--json", action="store_true")
        link.set_defaults(handler=self.user_link)

    def _json(self, value: object) -> None:
        print(json.dumps(value, indent=None), file=self.out)

    def serve(self, container: Container, args: argparse.Namespace) -> None:
        """``booking serve``: uvicorn; one line once it accepts connections; SIGTERM
        stops it after the requests in flight finish."""
        import uvicorn

        if not 1 <= args.workers <= 64:
            raise UsageError("--workers takes 1 to 64")
        host = args.host or container.settings.host
        port = container.settings.port if args.port is None else args.port
        if not 1 <= port <= 65535:
            raise UsageError("--port takes 1 to 65535")
        _check_can_listen(host, port)
        # The app is imported by uvicorn (in each worker) and reads its settings from the
        # environment: hand it the address, so its links and OpenAPI `servers` entry name
        # this host and port (unless BOOKING_BASE_URL says otherwise).
        os.environ["BOOKING_HOST"] = host
        os.environ["BOOKING_PORT"] = str(port)
        ready = threading.Thread(
            target=_announce_when_listening,
            args=(WILDCARD_HOSTS.get(host, host), port, local_url(host, port), self.err),
            daemon=True,
        )
        ready.start()
        # uvicorn finishes the requests in flight on SIGTERM, then raises the signal again
        # once its own handler is gone: end with status 0 then, as a clean stop.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        uvicorn.run(
            "entrypoints.asgi:app",
            host=host,
            port=port,
            workers=args.workers,
            http="adapters.http.wire:AutoProtocol",  # malformed requests: the error shape
            log_level="warning",
            timeout_graceful_shutdown=30,
            access_log=False,
            # The client address is the connection's peer (docs/web.md, throttling):
            # uvicorn would take X-Forwarded-For from 127.0.0.1, so anyone reaching a
            # local proxy that passes the header on could pick their address.
            proxy_headers=False,
            # A worker answers the supervisor's pings only once it has imported the app,
            # which takes seconds on a busy machine (11 s and more seen with two cores
            # shared): uvicorn's default of 5 s then kills every worker as it starts,
            # over and over, and the server never serves.
            timeout_worker_healthcheck=WORKER_START_SECONDS,
        )

    def worker(self, container: Container, args: argparse.Namespace) -> None:
        """``booking worker``: the webhook worker until SIGTERM or Ctrl-C (the attempt in
        flight finishes first); ``--once``: everything due now, then a summary line."""
        from adapters.webhooks.sender import WebhookSender
        from entrypoints.web import warn_about_allowed_hosts
        from entrypoints.worker import POLL_INTERVAL, worker_for

        if args.json and not args.once:
            raise UsageError("--json goes with --once")
        self._configure_logs()
        with WebhookSender() as sender:
            worker = worker_for(container, sender)
            if args.once:
                warn_about_allowed_hosts(container.settings)
                done = worker.run_once()
                if args.json:
                    self._json(done.as_json())
                else:
                    print(
                        f"booking: {done.events} events dispatched, {done.deliveries} deliveries"
                        f" queued; {done.attempts} attempts: {done.delivered} delivered,"
                        f" {done.failed} failed; {done.dropped} given up unsent,"
                        f" {done.disabled} endpoints disabled; {done.expired_quotes} quotes"
                        f" expired; {done.messages} emails queued, {done.mails_sent} sent,"
                        f" {done.mail_attempts - done.mails_sent} failed"
                        f" ({done.mails_failed} given up)",
                        file=self.out,
                    )
                return
            stop = threading.Event()
            previous = {
                signum: signal.signal(signum, lambda *_: stop.set())
                for signum in (signal.SIGTERM, signal.SIGINT)
            }
            try:
                print(
                    f"booking: worker delivering webhooks and email (every {POLL_INTERVAL:g} s"
                    " when idle;"
                    " SIGTERM or Ctrl-C stops it)",
                    file=self.err,
                    flush=True,
                )
                warn_about_allowed_hosts(container.settings)
                worker.run(stop)
            finally:
                for signum, handler in previous.items():
                    signal.signal(signum, handler)
            print("booking: worker stopped", file=self.err, flush=True)

    def migrate(self, container: Container, args: argparse.Namespace) -> None:
        """``booking migrate``."""
        database = container.database
        _refuse_newer(database)
        _progress(self.err)("applying migrations")
        before = database.migrate()  # read under the lock: a migration run meanwhile counts
        after = database.revisions()
        shown = ", ".join(sorted(after))
        if after == before:
            print(f"booking: database is up to date (revision {shown})", file=self.err)
        else:
            was = ", ".join(sorted(before)) or "an empty database"
            print(f"booking: database migrated from {was} to revision {shown}", file=self.err)

    def demo(self, container: Container, args: argparse.Namespace) -> None:
        """``booking demo``."""
        from entrypoints.demo_data import load_demo

        _refuse_newer(container.database)
        progress = _progress(self.err)
        progress("applying migrations")
        container.database.migrate()
        made = load_demo(container, progress)
        base = container.settings.base_url
        if args.json:
            self._json(
                {
                    "companies": [
                        {
                            "id": d.company.id,
                            "slug": d.company.slug,
                            "name": d.company.name,
                            "apiKey": d.api_key,
                            "bookingPage": f"{base}/{d.company.slug}/book",
                            "portal": f"{base}/{d.company.slug}/portal",
                            "users": [
                                {
                                    "email": person.user.email,
                                    "role": person.user.role.value,
                                    "signInLink": sign_in_link_url(base, person.link_token),
                                }
                                for person in d.users
                            ],
                        }
                        for d in made
                    ]
                }
            )
            return
        for d in made:
            print(f"{d.company.name} ({d.company.slug}, {d.company.id})", file=self.out)
            print(f"  API key (full access, shown once): {d.api_key}", file=self.out)
            for person in d.users:
                link = sign_in_link_url(base, person.link_token)
                who = f"{person.user.role.value:<5} {person.user.email}"
                print(f"  sign in as {who}: {link}", file=self.out)
            print(f"  customers book at {base}/{d.company.slug}/book", file=self.out)
            print(
                f"  customer portal   {base}/{d.company.slug}/portal",
                file=self.out,
            )
        print(
            f"\nAPI:      {base}/api/v1   (the base URL of every call, with the key above;"
            f" OpenAPI: {base}/api/openapi.json)",
            file=self.out,
        )
        print(f"Docs:     {base}/docs   (the API reference, in the browser)", file=self.out)
        print(
            f"Sign in:  {base}/sign-in   (each link above works once, for 15 minutes;"
            " `booking user link --email E` makes a fresh one)",
            file=self.out,
        )
        print(
            f"Try it:   curl -H 'Authorization: Bearer {made[0].api_key}' {base}/api/v1/services",
            file=self.out,
        )

    def company_create(self, container: Container, args: argparse.Namespace) -> None:
        """``booking company create``."""
        company = cases.create_company(
            cases.CreateCompany(
                slug=args.slug,
                name=args.name,
                timezone=args.timezone,
                tax_rate_bps=args.tax_rate_bps,
                code_prefix=args.code_prefix,
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        if args.json:
            self._json(
                {
                    "id": company.id,
                    "slug": company.slug,
                    "name": company.name,
                    "timezone": company.timezone,
                    "codePrefix": company.code_prefix,
                }
            )
        else:
            base = container.settings.base_url.rstrip("/")
            print(
                f"created {company.slug} ({company.id}), times in {company.timezone}", file=self.out
            )
            print(
                "Next: give it a catalog and crew (docs/setup.md), then someone to sign in:\n"
                f"  booking user create --company {company.slug} --email YOU@EXAMPLE.COM"
                " --role owner\n"
                f"Its booking page will be {base}/{company.slug}/book",
                file=self.out,
            )

    def plans_extend(self, container: Container, args: argparse.Namespace) -> None:
        """``booking plans extend``: add the visits of every plan up to the horizon.

        A plan that cannot be extended is skipped, named on stderr with why, and counted;
        the others are still extended. Exit status 0, unless plans were found and every
        one of them was skipped (then 1: nothing could be done).
        """
        if args.company:
            company_ids = [self._company_id(container, args.company)]
        else:
            with container.reader() as uow:
                company_ids = [c.id for c in uow.companies.list_all()]
        report: list[dict[str, object]] = []
        added = 0
        for company_id in company_ids:
            for result in extend_plans(
                company_id, uow_factory=container.uow, clock=container.clock, drive=container.drive
            ):
                report.append(
                    {
                        "companyId": company_id,
                        "planId": result.plan_id,
                        "added": result.added,
                        "problem": result.problem,
                    }
                )
                added += result.added or 0
        skipped = [r for r in report if r["problem"]]
        for row in skipped:
            print(f"booking: skipped plan {row['planId']}: {row['problem']}", file=self.err)
        if args.json:
            self._json({"plans": report, "added": added, "skipped": len(skipped)})
        else:
            print(
                f"booking: {len(report)} plans checked, {added} visits added, "
                f"{len(skipped)} skipped",
                file=self.out,
            )
        if report and len(skipped) == len(report):
            raise PlansNotExtended(f"none of the {len(report)} plans could be extended")

    def _company_id(self, container: Container, slug: str) -> str:
        try:
            return cases.company_by_slug(slug, uow=container.uow()).id
        except NotFoundError:
            raise UsageError(f"--company: no company with slug {slug!r}") from None

    def _show_issued(self, issued: IssuedKey, as_json: bool) -> None:
        if as_json:
            out = _key_json(issued.key, issued.secret)
            self._json({k: out[k] for k in ("id", "key", "name", "scopes", "rateLimit")})
        else:
            _print_key(issued.key, self.out, issued.secret)

    def key_create(self, container: Container, args: argparse.Namespace) -> None:
        """``booking key create``."""
        issued = cases.create_key(
            cases.CreateKey(
                company_id=self._company_id(container, args.company),
                name=args.name,
                scopes=_scopes(args.scopes),
                rate_limit=args.rate_limit,
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        self._show_issued(issued, args.json)

    def key_list(self, container: Container, args: argparse.Namespace) -> None:
        """``booking key list``."""
        keys = cases.list_keys(self._company_id(container, args.company), uow=container.uow())
        if args.json:
            self._json([_key_json(k) for k in keys])
            return
        for key in keys:
            _print_key(key, self.out)

    def key_revoke(self, container: Container, args: argparse.Namespace) -> None:
        """``booking key revoke``."""
        company_id = self._company_id(container, args.company)
        _confirm(args, f"Revoke key {args.key_id}? It stops working at once.", self.stdin, self.err)
        key = cases.revoke_key(company_id, args.key_id, uow=container.uow(), clock=container.clock)
        if args.json:
            self._json(_key_json(key))
        else:
            _print_key(key, self.out)

    def key_rotate(self, container: Container, args: argparse.Namespace) -> None:
        """``booking key rotate``."""
        company_id = self._company_id(container, args.company)
        _confirm(
            args, f"Rotate key {args.key_id}? The old secret stops working.", self.stdin, self.err
        )
        issued = cases.rotate_key(
            company_id, args.key_id, uow=container.uow(), clock=container.clock
        )
        self._show_issued(issued, args.json)

    def _sign_in_link(self, container: Container, email: str) -> tuple[User, str]:
        try:
            user, issued = user_cases.issue_sign_in_link(
                email, uow=container.uow(), clock=container.clock
            )
        except NotFoundError:
            raise UsageError(f"no user with email {email.strip()!r}") from None
        return user, sign_in_link_url(container.settings.base_url, issued.token)

    def user_create(self, container: Container, args: argparse.Namespace) -> None:
        """``booking user create``: the user, and a one-time sign-in link unless a password
        came on stdin."""
        password = None
        if args.password_stdin:
            password = self.stdin.readline().rstrip("\r\n")
            if not password:
                raise UsageError("--password-stdin: no password on stdin's first line")
            if not _is_utf8(password):
                raise UsageError("--password-stdin: the password is not UTF-8 text")
        command = user_cases.CreateUser(
            company_id=self._company_id(container, args.company),
            email=args.email,
            role=parse_role(args.role),
            name=args.name,
            crew_member_id=args.crew_member,
            password=password,
        )
        try:
            user = user_cases.create_user(
                command, uow=container.uow(), clock=container.clock, hasher=container.hasher
            )
        except ValidationFailed as error:  # the flag is --crew-member
            flags = {"crew_member_id": "crew_member", "password": "password_stdin"}
            errors = {flags.get(path, path): text for path, text in error.field_errors.items()}
            raise ValidationFailed(errors, error.message) from None
        link = None if password is not None else self._sign_in_link(container, user.email)[1]
        if args.json:
            self._json(
                {
                    "id": user.id,
                    "companyId": user.company_id,
                    "email": user.email,
                    "name": user.name,
                    "role": user.role.value,
                    "crewMemberId": user.crew_member_id,
                    "signInLink": link,
                }
            )
            return
        print(f"created {user.email} ({user.id}), {user.role} of {args.company}", file=self.out)
        if link is None:
            base = container.settings.base_url
            print(f"  password set: sign in at {base}/sign-in", file=self.out)
        else:
            print(f"  sign-in link (works once, for 15 minutes): {link}", file=self.out)

    def user_link(self, container: Container, args: argparse.Namespace) -> None:
        """``booking user link``: a fresh one-time sign-in link."""
        user, link = self._sign_in_link(container, args.email)
        if args.json:
            self._json({"id": user.id, "email": user.email, "signInLink": link})
            return
        print(f"sign-in link for {user.email} (works once, for 15 minutes): {link}", file=self.out)

    def processor_connect(self, container: Container, args: argparse.Namespace) -> None:
        """``booking processor connect``."""
        account = processor_cases.connect_account(
            processor_cases.ConnectAccount(
                company_id=self._company_id(container, args.company), account_id=args.account
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        if args.json:
            self._json(_account_json(account))
        else:
            print(f"connected {args.company} to {account.account_id}", file=self.out)

    def processor_disconnect(self, container: Container, args: argparse.Namespace) -> None:
        """``booking processor disconnect``: money still moving on the account lands."""
        try:
            account = processor_cases.disconnect_account(
                processor_cases.DisconnectAccount(
                    company_id=self._company_id(container, args.company)
                ),
                uow=container.uow(),
                clock=container.clock,
            )
        except NotFoundError:
            raise UsageError(f"{args.company} has no processor account connected") from None
        if args.json:
            self._json(_account_json(account))
        else:
            print(
                f"disconnected {account.account_id} from {args.company}; money still moving"
                " on it keeps landing in the ledger",
                file=self.out,
            )

    def customer_merge(self, container: Container, args: argparse.Namespace) -> None:
        """``booking customer merge``: the merged record's bookings, quotes, payments and
        coupon redemptions are re-filed under the survivor, in one transaction."""
        company_id = self._company_id(container, args.company)
        survivor = customer_cases.merge_customers(
            customer_cases.MergeCustomers(
                company_id=company_id, survivor_id=args.into, merged_id=args.merged_id
            ),
            uow=container.uow(),
            clock=container.clock,
        )
        with container.uow() as uow:
            stats, _ = customer_cases.customer_standing(survivor, uow=uow, at=container.clock.now())
        if args.json:
            self._json(
                {
                    "survivorId": survivor.id,
                    "mergedId": args.merged_id,
                    "email": survivor.email,
                    "bookings": stats.bookings,
                    "paidCents": stats.paid_cents,
                }
            )
        else:
            print(
                f"merged {args.merged_id} into {survivor.id} ({survivor.email}): now"
                f" {stats.bookings} bookings and {stats.paid_cents} cents paid on its record",
                file=self.out,
            )

    # --- Setup: catalog and crew documents, company settings, key edit ------------------

    def _company_settings_parser(self, company: Any) -> None:
        """``booking company settings``."""
        settings = company.add_parser(
            "settings", help="show or change a company's settings (each flag is one setting)"
        )
        settings.add_argument("--company", required=True, help="company slug")
        settings.add_argument("--name")
        settings.add_argument("--timezone", help="IANA zone, e.g. America/Chicago")
        settings.add_argument(
            "--cutoff-hours",
            "--self-service-cutoff-hours",
            type=int,
            dest="self_service_cutoff_hours",
            metavar="HOURS",
            help="customers' self-service cutoff, 0..336 hours",
        )
        settings.add_argument("--min-notice-minutes", type=int, help="0..20160 minutes")
        settings.add_argument("--code-prefix", help="two capital letters of booking codes")
        settings.add_argument("--tax-rate-bps", type=int, help="0..10000 basis points")
        settings.add_argument("--custom-domain", help="host name; '' disconnects it")
        settings.add_argument(
            "--brand-color",
            metavar="HEX",
            help="customer pages' colour, #rrggbb dark enough for white text; '' for the default",
        )
        settings.add_argument(
            "--notify-email",
            metavar="ADDRESS",
            help="the company's address: reply-to of its emails, staff notices; '' for none",
        )
        settings.add_argument(
            "--reminder-hours",
            type=int,
            metavar="HOURS",
            help="remind customers this many hours before each visit, 0..336; 0: never",
        )
        settings.add_argument(
            "--referral-discount-cents",
            type=int,
            metavar="CENTS",
            help="off a referred new customer's first visit, 0..100000000; 0: programme off",
        )
        settings.add_argument("--json", action="store_true")
        settings.set_defaults(handler=self.company_settings)

    def _key_edit_parser(self, key: Any) -> None:
        """``booking key edit``."""
        edit = key.add_parser("edit", help="change an active key's scopes and/or rate limit")
        edit.add_argument("--company", required=True, help="company slug")
        edit.add_argument("--id", required=True, dest="key_id")
        edit.add_argument("--scopes", help="comma-separated scopes, or 'all'")
        edit.add_argument("--rate-limit", type=int, help="requests per minute, 10..6000")
        edit.add_argument("--json", action="store_true")
        edit.set_defaults(handler=self.key_edit)

    def _setup_parsers(self, commands: Any) -> None:
        """``booking catalog export|import`` and ``booking crew export|import``."""
        for noun, text in (("catalog", "the company's catalog"), ("crew", "the crew roster")):
            actions = commands.add_parser(
                noun, help=f"{text} as a JSON or YAML document (docs/setup.md)"
            ).add_subparsers(dest="action", required=True, parser_class=_Parser)
            export = actions.add_parser("export", help=f"write {text} as a document")
            export.add_argument("--company", required=True, help="company slug")
            export.add_argument("file", nargs="?", default="-", help="FILE, or - for stdout")
            export.add_argument("--format", choices=documents.FORMATS, help="default: by FILE")
            export.set_defaults(handler=self.setup_export, noun=noun)
            load = actions.add_parser(
                "import", help=f"check a document whole, then write it as {text}"
            )
            load.add_argument("--company", required=True, help="company slug")
            load.add_argument("file", help="FILE, or - for stdin")
            load.add_argument("--format", choices=documents.FORMATS, help="default: by FILE")
            load.add_argument("--dry-run", action="store_true", help="check only; write nothing")
            load.add_argument("--json", action="store_true")
            load.set_defaults(handler=self.setup_import, noun=noun)

    def _forms_parsers(self, commands: Any) -> None:
        """``booking forms export|import|list``."""
        text = "the company's booking forms"
        actions = commands.add_parser(
            "forms", help=f"{text} as a JSON or YAML document (docs/cli.md)"
        ).add_subparsers(dest="action", required=True, parser_class=_Parser)
        export = actions.add_parser("export", help=f"write {text} as a document")
        export.add_argument("--company", required=True, help="company slug")
        export.add_argument("file", nargs="?", default="-", help="FILE, or - for stdout")
        export.add_argument("--format", choices=documents.FORMATS, help="default: by FILE")
        export.set_defaults(handler=self.forms_export)
        load = actions.add_parser(
            "import", help="check a document whole, then add or change the forms it holds"
        )
        load.add_argument("--company", required=True, help="company slug")
        load.add_argument("file", help="FILE, or - for stdin")
        load.add_argument("--format", choices=documents.FORMATS, help="default: by FILE")
        load.add_argument("--dry-run", action="store_true", help="check only; write nothing")
        load.add_argument("--json", action="store_true")
        load.set_defaults(handler=self.forms_import)
        listing = actions.add_parser("list", help=f"list {text}, newest first")
        listing.add_argument("--company", required=True, help="company slug")
        listing.add_argument("--json", action="store_true")
        listing.set_defaults(handler=self.forms_list)

    def forms_export(self, container: Container, args: argparse.Namespace) -> None:
        """``booking forms export``: every form, oldest first, ids included."""
        company_id = self._company_id(container, args.company)
        draft = form_cases.export_forms(company_id, uow=container.uow())
        text = documents.write(draft, args.format or documents.format_of(args.file))
        if args.file == "-":
            self.out.write(text)
            return
        try:
            with open(args.file, "w", encoding="utf-8") as sink:
                sink.write(text)
        except OSError as error:
            raise UsageError(f"cannot write {args.file}: {error.strerror or error}") from None
        print(f"wrote the booking forms of {args.company} to {args.file}", file=self.err)

    def forms_import(self, container: Container, args: argparse.Namespace) -> None:
        """``booking forms import``: every problem of the document one per line (exit
        status 1, nothing written), else what was added, changed and left unchanged."""
        company_id = self._company_id(container, args.company)
        text, fmt = self._document(args)
        try:
            document = documents.read_forms(text, fmt)
            changes = form_cases.import_forms(
                form_cases.ImportForms(
                    company_id=company_id,
                    forms=document,
                    dry_run=args.dry_run,
                ),
                uow=container.uow(),
                clock=container.clock,
            )
        except ValidationFailed as error:
            source = "stdin" if args.file == "-" else args.file
            raise DocumentRejected(source, documents.field_errors(error)) from None
        given = {draft.id for draft in document.forms if draft.id is not None}

        def shown_id(form: BookingForm) -> str | None:
            # A dry run draws no id for a form the document gives none (as crew import).
            return form.id if form.id in given or not args.dry_run else None

        summary = {
            name: [{"id": shown_id(f), "name": f.name} for f in forms]
            for name, forms in (
                ("added", changes.added),
                ("updated", changes.updated),
                ("unchanged", changes.unchanged),
            )
        }
        if args.json:
            self._json({"company": args.company, "dryRun": args.dry_run, **summary})
            return
        counts = ", ".join(f"{len(summary[k])} {k}" for k in ("added", "updated", "unchanged"))
        verb = "checked (dry run: nothing written)" if args.dry_run else "imported"
        print(f"{verb} the booking forms of {args.company}: {counts}", file=self.out)

    def forms_list(self, container: Container, args: argparse.Namespace) -> None:
        """``booking forms list``: one line per form, newest first."""
        company_id = self._company_id(container, args.company)
        with container.uow() as uow:
            forms = form_cases.all_forms(uow, company_id)[::-1]
        if args.json:
            self._json(
                [
                    {
                        "id": f.id,
                        "name": f.name,
                        "active": f.active,
                        "serviceIds": list(f.service_ids),
                        "questions": len(f.questions),
                    }
                    for f in forms
                ]
            )
            return
        for f in forms:
            state = "active" if f.active else "inactive"
            print(f"{f.id}  {state:8}  {len(f.questions):3} questions  {f.name}", file=self.out)
        if not forms:
            print(f"{args.company} has no booking forms", file=self.out)

    def setup_export(self, container: Container, args: argparse.Namespace) -> None:
        """``booking catalog export`` and ``booking crew export``."""
        company_id = self._company_id(container, args.company)
        export = setup_cases.export_catalog if args.noun == "catalog" else setup_cases.export_crew
        draft = export(company_id, uow=container.uow())
        to_stdout = args.file == "-"
        text = documents.write(draft, args.format or documents.format_of(args.file))
        if to_stdout:
            self.out.write(text)
            return
        try:
            with open(args.file, "w", encoding="utf-8") as sink:
                sink.write(text)
        except OSError as error:
            raise UsageError(f"cannot write {args.file}: {error.strerror or error}") from None
        print(f"wrote the {args.noun} of {args.company} to {args.file}", file=self.err)

    def _document(self, args: argparse.Namespace) -> tuple[str, documents.Format]:
        source = "stdin" if args.file == "-" else args.file
        try:
            if args.file == "-":
                text = self.stdin.read()
                if not _is_utf8(text):  # bytes that are not UTF-8 arrive as lone surrogates
                    raise UnicodeDecodeError("utf-8", b"", 0, 0, "not UTF-8")
            else:
                with open(args.file, encoding="utf-8") as document:
                    text = document.read(documents.MAX_DOCUMENT_CHARACTERS + 1)
        except UnicodeDecodeError:
            raise DocumentRejected(source, {documents.ROOT: "Not UTF-8 text."}) from None
        except OSError as error:
            raise UsageError(f"cannot read {args.file}: {error.strerror or error}") from None
        return text, args.format or documents.format_of(args.file, text)

    def setup_import(self, container: Container, args: argparse.Namespace) -> None:
        """``booking catalog import`` and ``booking crew import``: every problem of the
        document one per line (exit status 1, nothing written), else a summary."""
        company_id = self._company_id(container, args.company)
        text, fmt = self._document(args)
        try:
            if args.noun == "catalog":
                catalog = setup_cases.replace_catalog(
                    setup_cases.ReplaceCatalog(
                        company_id=company_id,
                        catalog=documents.read_catalog(text, fmt),
                        dry_run=args.dry_run,
                    ),
                    uow=container.uow(),
                    clock=container.clock,
                )
                summary = _catalog_summary(catalog)
            else:
                changes = setup_cases.import_crew(
                    setup_cases.ImportCrew(
                        company_id=company_id,
                        crew=documents.read_crew(text, fmt),
                        dry_run=args.dry_run,
                    ),
                    uow=container.uow(),
                    clock=container.clock,
                    drive=container.drive,
                )
                summary = _crew_summary(changes, dry_run=args.dry_run)
        except ValidationFailed as error:
            source = "stdin" if args.file == "-" else args.file
            raise DocumentRejected(source, documents.field_errors(error)) from None
        if args.json:
            self._json({"company": args.company, "dryRun": args.dry_run, **summary})
            return
        if args.noun == "catalog":
            counts = (
                f"{summary['industries']} industries, {summary['services']} services"
                f" ({summary['inactiveServices']} inactive), {summary['frequencies']}"
                f" frequencies, {summary['fees']} fees, {summary['coupons']} coupons"
            )
        else:
            counts = ", ".join(f"{len(summary[k])} {k}" for k in ("added", "updated", "unchanged"))
        verb = "checked (dry run: nothing written)" if args.dry_run else "imported"
        print(f"{verb} the {args.noun} of {args.company}: {counts}", file=self.out)
        for held in summary.get("stillBooked", []):
            state = "would be inactive" if args.dry_run else "is inactive"
            print(
                f"note: {held['name']} {state} and still holds {held['scheduledJobs']}"
                " scheduled job(s): give each to someone else on its admin booking page"
                " (or POST /api/v1/bookings/{id}/reschedule with crewIds)",
                file=self.out,
            )

    def company_settings(self, container: Container, args: argparse.Namespace) -> None:
        """``booking company settings``: without a setting to change, shows them."""
        company = setup_cases.update_company_settings(
            setup_cases.UpdateCompanySettings(
                company_id=self._company_id(container, args.company),
                name=args.name,
                timezone=args.timezone,
                tax_rate_bps=args.tax_rate_bps,
                self_service_cutoff_hours=args.self_service_cutoff_hours,
                min_notice_minutes=args.min_notice_minutes,
                code_prefix=args.code_prefix,
                custom_domain=args.custom_domain,
                brand_color=args.brand_color,
                notify_email=args.notify_email,
                reminder_hours=args.reminder_hours,
                referral_discount_cents=args.referral_discount_cents,
                service_host=urlsplit(container.settings.base_url).hostname,
            ),
            uow=container.uow(),
        )
        if args.json:
            self._json(_company_json(company))
            return
        print(f"{company.slug} ({company.id}): {company.name}", file=self.out)
        print(
            f"  timezone: {company.timezone}  code prefix: {company.code_prefix}"
            f"  tax: {company.tax_rate_bps} bps",
            file=self.out,
        )
        print(
            f"  self-service cutoff: {company.self_service_cutoff_hours} h"
            f"  minimum notice: {company.min_notice_minutes} min"
            f"  custom domain: {company.custom_domain or 'none'}",
            file=self.out,
        )
        print(f"  brand colour: {company.brand_color or 'default'}", file=self.out)
        print(
            f"  notify email: {company.notify_email or 'none'}"
            f"  reminders: {company.reminder_hours} h before each visit"
            if company.reminder_hours
            else f"  notify email: {company.notify_email or 'none'}  reminders: off",
            file=self.out,
        )
        cents = company.referral_discount_cents
        print(
            f"  referral discount: ${cents // 100:,}.{cents % 100:02d} off a first visit"
            if cents
            else "  referral programme: off",
            file=self.out,
        )

    def key_edit(self, container: Container, args: argparse.Namespace) -> None:
        """``booking key edit``: SPEC.md section 5 items 6, 7 and 9."""
        if args.scopes is None and args.rate_limit is None:
            raise UsageError("nothing to change: give --scopes and/or --rate-limit")
        key = cases.edit_key(
            self._company_id(container, args.company),
            args.key_id,
            scopes=_scopes(args.scopes),
            rate_limit=args.rate_limit,
            uow=container.uow(),
            clock=container.clock,
        )
        if args.json:
            self._json(_key_json(key))
        else:
            _print_key(key, self.out)


def _account_json(account: ProcessorAccount) -> dict[str, Any]:
    return {
        "companyId": account.company_id,
        "account": account.account_id,
        "connected": account.connected,
        "connectedAt": account.connected_at.isoformat(),
        "disconnectedAt": account.disconnected_at.isoformat() if account.disconnected_at else None,
    }


class DocumentRejected(Exception):
    """A setup document with problems: each is printed on its own line (exit status 1)."""

    def __init__(self, source: str, problems: dict[str, str]) -> None:
        super().__init__(f"{source}: {len(problems)} problems")
        self.source = source
        self.problems = problems

    def lines(self) -> list[str]:
        """One line per problem, ``FILE: path: text``, then how many and that nothing was
        written."""
        count = len(self.problems)
        return [
            *(f"{self.source}: {path}: {text}" for path, text in self.problems.items()),
            f"{self.source}: {count} problem{'s' if count != 1 else ''}; nothing was written",
        ]


def _company_json(company: Company) -> dict[str, Any]:
    return {
        "id": company.id,
        "slug": company.slug,
        "name": company.name,
        "timezone": company.timezone,
        "codePrefix": company.code_prefix,
        "taxRateBps": company.tax_rate_bps,
        "selfServiceCutoffHours": company.self_service_cutoff_hours,
        "minNoticeMinutes": company.min_notice_minutes,
        "customDomain": company.custom_domain,
        "brandColor": company.brand_color,
        "notifyEmail": company.notify_email,
        "reminderHours": company.reminder_hours,
        "referralDiscountCents": company.referral_discount_cents,
    }


def _catalog_summary(catalog: Catalog) -> dict[str, Any]:
    services = list(catalog.services())
    return {
        "industries": len(catalog.industries),
        "services": len(services),
        "inactiveServices": sum(not s.active for s in services),
        "frequencies": len(catalog.frequencies),
        "fees": len(catalog.fees),
        "coupons": len(catalog.coupons),
    }


def _crew_summary(changes: CrewChanges, *, dry_run: bool) -> dict[str, Any]:
    def listed(members: tuple[CrewMember, ...], ids: bool = True) -> list[dict[str, Any]]:
        return [{"id": m.id if ids else None, "name": m.name} for m in members]

    return {
        "added": listed(changes.added, ids=not dry_run),
        "updated": listed(changes.updated),
        "unchanged": listed(changes.unchanged),
        "stillBooked": [
            {"id": m.id, "name": m.name, "scheduledJobs": count}
            for m, count in changes.still_booked
        ],
    }


def _is_utf8(text: str) -> bool:
    """Whether ``text`` came from UTF-8 bytes (others reach it as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse_newer(database: Database) -> None:
    """A database a newer release migrated: this code must not use it, nor migrate it.
    A file that is no database at all is named too (both: status 2)."""
    try:
        newer = database.newer_revisions()
    except SqlDatabaseError as error:
        if database.dialect == "sqlite" and "not a database" in str(error.orig):
            raise UsageError(
                f"{database.location} is not a database this service can read"
            ) from None
        raise
    if newer:
        raise UsageError(
            f"database {database.location} was migrated by a newer release of the service"
            f" (revision {', '.join(sorted(newer))}): run that release, or point"
            " BOOKING_DATABASE_URL at the database you meant"
        )


def _require_migrated(container: Container) -> None:
    database = container.database
    _refuse_newer(database)
    if not database.is_migrated():
        raise UsageError(
            f"database {database.location} is not migrated: run 'booking migrate' to set it"
            " up, or point BOOKING_DATABASE_URL at the database you meant"
        )


class CannotListen(Exception):
    """``serve`` cannot take its address: another server holds it (exit status 1)."""


def _check_can_listen(host: str, port: int) -> None:
    """Raise ``CannotListen`` unless ``host:port`` can be bound now, as uvicorn binds it
    (``SO_REUSEADDR``): "serving" must never be announced for another process's port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as refused:
            raise CannotListen(
                f"cannot serve on {host}:{port}: {refused.strerror or refused}"
                " (another server there? choose --port or BOOKING_PORT)"
            ) from None


def _announce_when_listening(host: str, port: int, address: str, err: TextIO) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                print(f"booking: serving {address} (API {address}/api/v1)", file=err, flush=True)
                return
        except OSError:
            time.sleep(0.1)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``booking`` console script. A reader that stops reading early
    (``booking key list | head``) ends the command quietly, as other commands do, instead
    of a ``BrokenPipeError`` traceback. Ctrl-C at a prompt or while a document is read
    from stdin ends the command with one line, ``booking: cancelled``, and status 130
    (a process ended by SIGINT, as shells report it); a unit of work it interrupted
    rolls back, so nothing is half written."""
    try:
        status = Cli().run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's own advice: point stdout at devnull so the flush at exit does not
        # raise again, and end as a process killed by SIGPIPE would (128 + 13).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("\nbooking: cancelled", file=sys.stderr, flush=True)
        return 130
    return status


if __name__ == "__main__":
    raise SystemExit(main())
