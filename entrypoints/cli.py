"""The ``booking`` command: serve, migrate, demo data, companies, API keys, plans, the
card-processor account and the webhook worker.

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

from booking_core import auth
from booking_core.auth import ApiKey, IssuedKey
from booking_core.errors import DomainError, NotFoundError, ValidationFailed
from booking_core.processor_accounts import ProcessorAccount
from booking_core.services import companies as cases
from booking_core.services import processor as processor_cases
from booking_core.services.plan_upkeep import extend_plans
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.logs import configure_logging
from entrypoints.settings import WILDCARD_HOSTS, ConfigError, local_url

EXIT_USAGE = 2
EXIT_FAULT = 1
SELF_MIGRATING = frozenset({"migrate", "demo"})
"""Commands that migrate the database themselves; every other one needs it migrated."""


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
        return "--" + path.replace("_", "-")
    return path


def _progress(stream: TextIO) -> Callable[[str], None]:
    if not stream.isatty():
        return lambda _: None
    return lambda text: print(f"... {text}", file=stream, flush=True)


def _scopes(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    if text.strip() == "all":
        return frozenset(auth.SCOPES)
    return frozenset(s.strip() for s in text.split(",") if s.strip())


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
            args = self.parser().parse_args(argv)
            container = self._factory()
            try:
                if args.command not in SELF_MIGRATING:
                    _require_migrated(container)
                handler: Callable[[Container, argparse.Namespace], None] = args.handler
                handler(container, args)
            finally:
                container.close()
        except (UsageError, ConfigError) as error:
            print(f"booking: {error}", file=self.err)
            return EXIT_USAGE
        except ValidationFailed as error:
            detail = "; ".join(
                f"{_flag(path, args)}: {text}" for path, text in error.field_errors.items()
            )
            print(f"booking: {detail or error.message}", file=self.err)
            return EXIT_USAGE
        except DomainError as error:
            print(f"booking: {error.message}", file=self.err)
            return EXIT_USAGE
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
        serve.add_argument("--workers", type=int, default=1)
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
        create.add_argument("--slug", required=True)
        create.add_argument("--name", required=True)
        create.add_argument("--timezone", default="America/New_York")
        create.add_argument("--tax-rate-bps", type=int, default=0)
        create.add_argument("--code-prefix")
        create.add_argument("--json", action="store_true")
        create.set_defaults(handler=self.company_create)

        plan = commands.add_parser("plans", help="recurring plans").add_subparsers(
            dest="action", required=True, parser_class=_Parser
        )
        extend = plan.add_parser("extend", help="materialise plan visits up to the horizon")
        extend.add_argument("--company", help="company slug (default: every company)")
        extend.add_argument("--json", action="store_true")
        extend.set_defaults(handler=self.plans_extend)

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
        self._processor_parsers(commands)
        worker = commands.add_parser(
            "worker", help="deliver webhooks: fan events out and send what is due, until stopped"
        )
        worker.add_argument(
            "--once", action="store_true", help="deliver everything due now, then exit"
        )
        worker.add_argument("--json", action="store_true", help="with --once: the totals as JSON")
        worker.set_defaults(handler=self.worker)
        return root

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

    def _json(self, value: object) -> None:
        print(json.dumps(value, indent=None), file=self.out)

    def serve(self, container: Container, args: argparse.Namespace) -> None:
        """``booking serve``: uvicorn; one line once it accepts connections; SIGTERM
        stops it after the requests in flight finish."""
        import uvicorn

        from entrypoints.web import cursor_secret

        if not 1 <= args.workers <= 64:
            raise UsageError("--workers takes 1 to 64")
        host = args.host or container.settings.host
        port = container.settings.port if args.port is None else args.port
        if not 1 <= port <= 65535:
            raise UsageError("--port takes 1 to 65535")
        cursor_secret()  # one secret in the environment, inherited by every worker
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
            log_level="warning",
            timeout_graceful_shutdown=30,
            access_log=False,
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
                        " expired",
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
                    f"booking: worker delivering webhooks (every {POLL_INTERVAL:g} s when idle;"
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
        _progress(self.err)("applying migrations")
        container.database.migrate()
        print("booking: database is up to date", file=self.err)

    def demo(self, container: Container, args: argparse.Namespace) -> None:
        """``booking demo``."""
        from entrypoints.demo_data import load_demo

        progress = _progress(self.err)
        progress("applying migrations")
        container.database.migrate()
        made = load_demo(container, progress)
        if args.json:
            self._json(
                {
                    "companies": [
                        {
                            "id": d.company.id,
                            "slug": d.company.slug,
                            "name": d.company.name,
                            "apiKey": d.api_key,
                        }
                        for d in made
                    ]
                }
            )
            return
        base = container.settings.base_url
        for d in made:
            print(f"{d.company.name} ({d.company.slug}, {d.company.id})", file=self.out)
            print(f"  API key (full access, shown once): {d.api_key}", file=self.out)
        print(f"\nAPI:      {base}/api/v1   (OpenAPI: {base}/api/openapi.json)", file=self.out)
        print(f"Docs:     {base}/docs   (the API reference, in the browser)", file=self.out)
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
            print(f"created {company.slug} ({company.id})", file=self.out)

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
                company_id, uow_factory=container.uow, clock=container.clock
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
            raise UsageError(f"no company with slug {slug!r}") from None

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


def _account_json(account: ProcessorAccount) -> dict[str, Any]:
    return {
        "companyId": account.company_id,
        "account": account.account_id,
        "connected": account.connected,
        "connectedAt": account.connected_at.isoformat(),
        "disconnectedAt": account.disconnected_at.isoformat() if account.disconnected_at else None,
    }


def _require_migrated(container: Container) -> None:
    database = container.database
    if not database.is_migrated():
        raise UsageError(
            f"database {database.location} is not migrated: run 'booking migrate' to set it"
            " up, or point BOOKING_DATABASE_URL at the database you meant"
        )


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
    """Entry point of the ``booking`` console script."""
    return Cli().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())
