"""How a page request is served, once for every page.

``page(deps, handler, ...)`` makes a Starlette endpoint that reads the session cookie
(a fresh anonymous session when there is none, or it is forged or expired), reads a
POSTed form (``application/x-www-form-urlencoded``, at most 64 KB), sends a visitor who is
not signed in to ``/sign-in``, refuses a signed-in user of another role (403 page),
checks the form's CSRF token on every POST (403 page), and then calls the page's handler
in a worker thread with a ``Visit``: the request, the form, the session, and the signed-in
user and their company. Whatever the handler answers leaves with the session cookie
(rewritten when the session changed) and the security headers of every page.

Refusals are HTML pages, never the API's JSON: a ``PageError`` carries status, title and
message; ``NotFoundError`` is the 404 page (one page for an unknown id and another
company's, as in the API).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import structlog
from attrs import define, field
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from adapters import phone
from adapters.http.redaction import error_fields
from adapters.notifications.composer import end_sentence
from adapters.web.deps import WebDeps
from adapters.web.nav import entries_for, return_path
from adapters.web.sessions import COOKIE, LIFETIME, Session, new_session, with_flash
from booking_core.companies import SLUG_PATTERN, Company
from booking_core.errors import NotFoundError
from booking_core.paging import Page, Position
from booking_core.services.scheduling import active_crew
from booking_core.services.users import session_user
from booking_core.users import Role, User

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
FIRST_DATE = date(1970, 1, 1)
LAST_DATE = date(2999, 12, 31)
"""The dates the workspace's forms and addresses take (docs/web.md): far enough for any
business, and an instant on them moves to any timezone without leaving what Python's
dates hold (year 1 or 9999 would overflow)."""
FORM_MAX_BYTES = 64 * 1024
FORM_MAX_FIELDS = 200
CSRF_FIELD = "csrf_token"
SESSION_ENDED = "Your session has ended. Please sign in again."

SECURITY_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self';"
        " frame-ancestors 'none'; base-uri 'none'"
    ),
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
}
"""Every page: never cached (pages show a company's data), no script at all, no framing."""

log = structlog.get_logger("booking.web")

templates = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
"""Every template is autoescaped: a name or note typed by anyone is shown as text."""


templates.filters["end_sentence"] = end_sentence  # the emails' filter, one rule
templates.filters["phone"] = phone.shown  # E.164 as stored, shown as people write it

_NAMED_ID = re.compile(r"\b(?:crew|svc)_[A-Za-z0-9_-]+")


def roster_names(deps: WebDeps, company_id: str, *, services: bool = False) -> dict[str, str]:
    """The company's active crew members' names by id (and with ``services``, its
    services' names by id too, for ``crew_named``)."""
    with deps.reader() as uow:
        names = {m.id: m.name for m in active_crew(uow, company_id)}
        if services:
            names |= {s.id: s.name for s in uow.catalogs.get(company_id).services()}
    return names


def crew_named(text: str, names: Mapping[str, str]) -> str:
    """``text`` (a refusal's reason) with each crew member's and service's id replaced by
    its name in ``names``, since a person reading a page knows the name, not the id."""
    return _NAMED_ID.sub(lambda found: names.get(found.group(0), found.group(0)), text)


def asset_version(name: str) -> str:
    """A short digest of a static file: its address changes whenever its content does."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


ASSET_VERSION = asset_version("app.css")


class PageError(Exception):
    """A refusal shown as a page: status, a short title and a sentence saying what to do."""

    def __init__(
        self,
        status: int,
        title: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        home_button: bool = True,
    ) -> None:
        super().__init__(title)
        self.status = status
        self.title = title
        self.message = message
        self.headers = dict(headers or {})
        self.home_button = home_button
        """False when the refusal is the page its button would go to (the booking page's
        own, the crew portal's): the button would loop."""


def forbidden_form() -> PageError:
    """The CSRF refusal."""
    return PageError(
        403,
        "This form could not be accepted",
        "It has expired or did not come from this site. Go back, reload the page and try again.",
    )


@define
class Visit:
    """One page request as a handler sees it."""

    request: Request
    deps: WebDeps
    session: Session
    form: dict[str, str]
    cookie_changed: bool = False
    user: User | None = None
    company: Company | None = None
    flash: str | None = field(default=None)
    frameable: bool = False
    """The answer may be framed by any site (the booking page's embed): no
    ``X-Frame-Options``; the handler's own ``content-security-policy`` says
    ``frame-ancestors``."""

    @property
    def signed_in_user(self) -> User:
        """The user (the page's guard made sure there is one)."""
        if self.user is None:
            raise RuntimeError("this page is for signed-in users only")
        return self.user

    @property
    def signed_in_company(self) -> Company:
        """The user's company (the page's guard made sure there is one)."""
        if self.company is None:
            raise RuntimeError("this page is for signed-in users only")
        return self.company

    @property
    def client_address(self) -> str:
        """The connection's peer address (no forwarding header is read), for throttles."""
        client = self.request.client
        return client.host if client is not None else "unknown"

    def field(self, name: str) -> str:
        """A form field's value ("" when absent)."""
        return self.form.get(name, "")

    def replace_session(self, session: Session) -> None:
        """Answer with ``session`` in the cookie (a sign-in, a sign-out, a message)."""
        self.session = session
        self.cookie_changed = True

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        """The template with the context every page has: company, user, top bar, CSRF
        token, the message the session carried (shown once), the stylesheet's version."""
        if self.session.flash is not None:
            self.flash = self.session.flash
            self.replace_session(with_flash(self.session, None))
        common = {
            "company": self.company,
            "user": self.user,
            "nav": entries_for(self.user.role) if self.user else (),
            "path": self.request.url.path,
            "csrf_token": self.deps.sessions.csrf_token(self.session),
            "csrf_field": CSRF_FIELD,
            "flash": self.flash,
            "asset_version": ASSET_VERSION,
        }
        html = templates.get_template(template).render({**common, **context})
        return HTMLResponse(html, status_code=status)

    def redirect(self, path: str, flash: str | None = None) -> Response:
        """303 See Other to ``path`` (after a POST, or away from a page), with an optional
        message for the next page."""
        if flash is not None:
            self.replace_session(with_flash(self.session, flash))
        return RedirectResponse(path, status_code=303)

    def error_page(self, error: PageError) -> Response:
        """The refusal as a page. On a company's customer page (``/{slug}/...``) its one
        button goes to that company's booking page, never to sign-in, even when the
        refusal came before the page's handler found the company (a form too large or
        holding a NUL, a bad CSRF token)."""
        slug = str(self.request.path_params.get("slug", ""))
        customer = (
            bool(slug) and self.user is None and self.request.url.path.split("/")[1:2] == [slug]
        )
        if customer and self.company is None:
            self.company = _company_named(self.deps, slug)
        response = self.render(
            "error.html",
            status=error.status,
            code=error.status,
            title=error.title,
            message=error.message,
            customer_page=customer,
            home_button=error.home_button,
        )
        response.headers.update(error.headers)
        return response


def _company_named(deps: WebDeps, slug: str) -> Company | None:
    """The company of a customer page's slug, or None for an unknown or malformed one."""
    if not 1 <= len(slug) <= 63 or not SLUG_PATTERN.match(slug):
        return None
    with deps.reader() as uow:
        return uow.companies.by_slug(slug)


Handler = Callable[[Visit], Response]
CsrfCheck = Callable[[Visit], bool]
"""Whether a POST's CSRF token is good, for a page whose token is not its session's."""


async def read_form(request: Request) -> dict[str, str]:
    """A POSTed form's fields (the first value of each); {} for any other body. A form
    over 64 KB is a 413 page, one holding a NUL character or text that is not UTF-8 once
    percent-decoded (a lone surrogate included) a 400 page."""
    if request.method != "POST":
        return {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return {}
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MAX_BYTES:
            raise PageError(413, "Too much to send", "That form is larger than 64 KB.")
    try:  # never read with a replacement character, as in the API
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            max_num_fields=FORM_MAX_FIELDS,
            errors="strict",
        )
    except UnicodeDecodeError:
        raise PageError(
            400,
            "That form could not be read",
            "It holds text that is not UTF-8 (or half of an emoji). Type it again and send.",
        ) from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if "\x00" in name or "\x00" in value:  # no text is stored with one, as in the API
            raise PageError(
                400,
                "That form could not be read",
                "It holds a NUL character, which no text may hold. Remove it and send again.",
            )
        form.setdefault(name, value)
    return form


ANY_METHOD = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
"""A page route takes every method and refuses the ones it does not serve with a 405 page
(Starlette's own refusal would be the API's JSON)."""


def page(
    path: str,
    deps: WebDeps,
    handler: Handler,
    *,
    methods: Collection[str] = ("GET",),
    roles: frozenset[Role] | None = None,
    csrf: CsrfCheck | None = None,
) -> Route:
    """The route of a page at ``path`` served by ``handler``; ``roles``: only signed-in
    users of these roles (None: anyone, signed in or not); ``csrf``: how a POST's token
    is checked (None: it must be the session's)."""
    return Route(path, _endpoint(deps, handler, methods, roles, csrf), methods=ANY_METHOD)


def _endpoint(
    deps: WebDeps,
    handler: Handler,
    methods: Collection[str],
    roles: frozenset[Role] | None,
    csrf: CsrfCheck | None = None,
) -> Callable[[Request], Awaitable[Response]]:
    allowed = frozenset(methods) | ({"HEAD"} if "GET" in methods else set())

    async def endpoint(request: Request) -> Response:
        refusal = None
        try:
            form = await read_form(request)
        except PageError as error:
            form, refusal = {}, error
        except ValueError:  # more fields than a form of ours has
            form = {}
            refusal = PageError(400, "That form could not be read", "Reload it and try again.")
        return await run_in_threadpool(
            _serve, request, deps, handler, allowed, roles, form, refusal, csrf
        )

    return endpoint


def _serve(
    request: Request,
    deps: WebDeps,
    handler: Handler,
    allowed: frozenset[str],
    roles: frozenset[Role] | None,
    form: dict[str, str],
    refusal: PageError | None,
    csrf: CsrfCheck | None = None,
) -> Response:
    now = deps.clock.now()
    loaded = deps.sessions.load(request.cookies.get(COOKIE), now)
    visit = Visit(request, deps, loaded or new_session(now), form, cookie_changed=loaded is None)
    try:
        if refusal is not None:  # the body could not be read
            raise refusal
        response = _answer(visit, handler, allowed, roles, csrf)
    except PageError as error:
        response = visit.error_page(error)
    except NotFoundError:
        response = visit.error_page(
            PageError(404, "Not found", "There is nothing here, or it is not yours to see.")
        )
    except Exception as error:
        log.error(
            "unhandled_error",
            request_id=getattr(request.state, "request_id", None),
            # The route's template, never the path: a sign-in link's token is in its path.
            route=getattr(request.scope.get("route"), "path", None),
            **error_fields(error),
        )
        response = visit.error_page(
            PageError(500, "Something went wrong", "The error is logged. Please try again.")
        )
    return _finish(visit, response, now)


def _answer(
    visit: Visit,
    handler: Handler,
    allowed: frozenset[str],
    roles: frozenset[Role] | None,
    csrf: CsrfCheck | None = None,
) -> Response:
    request, deps, session = visit.request, visit.deps, visit.session
    if request.method not in allowed:
        raise PageError(
            405,
            "Not allowed",
            f"This page does not answer {request.method}.",
            {"allow": ", ".join(sorted(allowed))},
        )
    if roles is not None:
        user = None
        if session.user_id is not None:
            user = session_user(session.user_id, session.epoch, uow=deps.reader())
        if user is None:
            if session.signed_in:  # a staff session that has ended: afresh, saying so
                visit.replace_session(with_flash(new_session(deps.clock.now()), SESSION_ENDED))
            # Any other session (a customer's portal) is left as it is: a link to a staff
            # page from anywhere never signs a customer out.
            wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            back = return_path(wanted) if request.method == "GET" else None
            return visit.redirect(f"/sign-in?next={quote(back, safe='/')}" if back else "/sign-in")
        visit.user = user
        with deps.reader() as uow:
            visit.company = uow.companies.get(user.company_id)
        if user.role not in roles:
            raise PageError(403, "Not for your role", "This page is not open to your role.")
    if request.method == "POST":
        valid = csrf(visit) if csrf else deps.sessions.csrf_valid(session, visit.field(CSRF_FIELD))
        if not valid:
            raise forbidden_form()
    return handler(visit)


def _finish(visit: Visit, response: Response, now: Any) -> Response:
    for name, value in SECURITY_HEADERS.items():
        if not (visit.frameable and name == "x-frame-options"):
            response.headers.setdefault(name, value)
    if visit.cookie_changed:
        remaining = visit.session.issued_at + LIFETIME - now
        response.set_cookie(
            COOKIE,
            visit.deps.sessions.dump(visit.session),
            max_age=max(0, int(remaining.total_seconds())),
            path="/",
            httponly=True,
            samesite="lax",
            secure=visit.deps.secure_cookies,
        )
    return response


def position_text(position: Position) -> str:
    """A list position as a page's ``after`` parameter writes it (the "Older" links of the
    workspace's lists): ``<instant>~<id>[~<seq>]``."""
    parts = [position.at.isoformat(), position.id]
    if position.seq is not None:
        parts.append(str(position.seq))
    return "~".join(parts)


POSITION_ID = re.compile(r"[A-Za-z0-9_-]{1,100}\Z")
"""What a row id in a page position may be: the service's ids are a prefix and hex."""


def read_position(text: str) -> Position | None:
    """The position an ``after`` parameter names; None (the first page) if unreadable."""
    parts = text.split("~")
    try:
        at = datetime.fromisoformat(parts[0])
        seq = int(parts[2]) if len(parts) == 3 else None
    except (ValueError, IndexError):
        return None
    if len(parts) not in (2, 3) or at.utcoffset() is None or not POSITION_ID.match(parts[1]):
        return None  # an id is letters, digits and _ (a NUL would not even reach SQL)
    if not FIRST_DATE <= at.date() <= LAST_DATE or (seq is not None and not 0 <= seq < 2**63):
        return None  # year 1 or 9999 would overflow on its way to UTC; a seq is a bigint
    return Position(at=at, id=parts[1], seq=seq)


def pager_links(
    path: str, page: Page[Any], kept: Sequence[tuple[str, str]] = ()
) -> tuple[str | None, str]:
    """The links under a paged list of the workspace at ``path`` (``kept``: its filters,
    which every link keeps): the next page's ("Older ...", None on the last page) and the
    first page's ("Newest ...")."""
    older = None
    if page.has_more and page.next_after is not None:
        older = f"{path}?{urlencode([*kept, ('after', position_text(page.next_after))])}"
    return older, f"{path}?{urlencode(kept)}" if kept else path
