"""How a customer page is served: ``/{slug}/...``, the company named in the address.

Customer pages (booking, tracking, a quote) are open to anyone: no sign-in, no role. The
slug names the company (SPEC.md: customer-facing pages name their company in the page
address); an unknown or malformed slug is the 404 page, never a hint whether a company
exists by another spelling. ``customer_page`` wraps ``adapters.web.pages.page``: the same
session cookie, CSRF check on every POST, security headers and refusal pages, with
``visit.company`` set to the slug's company before the handler runs.

A customer page's template extends ``customer_base.html``: the company's name in the
header, no workspace bar, and the company's colours: ``/{slug}/brand.css`` (``routes``),
linked after ``app.css``, sets ``--primary`` and its shades from the company's brand
colour (a stylesheet, since the pages' CSP allows no inline style). The link carries the
colour as ``?v=``, so a new colour is fetched at once despite the five-minute cache.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from adapters.web.deps import WebDeps
from adapters.web.pages import CsrfCheck, PageError, Visit, page
from booking_core.companies import SLUG_PATTERN, Company, darker, mixed

NOT_FOUND = PageError(404, "Not found", "There is nothing here. Check the link you were sent.")


def company_of(visit: Visit) -> Company:
    """The company the address names; the 404 page for an unknown or malformed slug."""
    slug = str(visit.request.path_params.get("slug", ""))
    if not 1 <= len(slug) <= 63 or not SLUG_PATTERN.match(slug):
        raise NOT_FOUND
    with visit.deps.reader() as uow:
        company = uow.companies.by_slug(slug)
    if company is None:
        raise NOT_FOUND
    return company


def customer_page(
    path: str,
    deps: WebDeps,
    handler: Callable[[Visit], Response],
    *,
    methods: Collection[str] = ("GET",),
    csrf: CsrfCheck | None = None,
    company: Callable[[Visit], Company] = company_of,
) -> Route:
    """The route of a customer page at ``path``, served by ``handler`` with
    ``visit.company`` set to the company ``company`` finds (by default the one the
    ``{slug}`` in the address names; ``csrf``: as ``page``)."""

    def with_company(visit: Visit) -> Response:
        try:
            visit.company = company(visit)
        except PageError as error:  # no company to send the visitor to, and no sign-in
            return visit.render(
                "error.html",
                status=error.status,
                code=error.status,
                title=error.title,
                message=error.message,
                customer_page=True,
            )
        return handler(visit)

    return page(path, deps, with_company, methods=methods, csrf=csrf)


def brand_stylesheet(company: Company) -> str:
    """The company's colours as CSS custom properties; empty for the default colours."""
    if company.brand_color is None:
        return ""
    brand = company.brand_color
    # The soft fill of a chosen card and of the quote's "Open" badge, tinted by the brand
    # (over white, and over the dark scheme's surface), the badge's text the darker shade.
    dark_soft = mixed(brand, "#171a23", 0.3)
    return (
        f":root{{--primary:{brand};--primary-hover:{darker(brand)};--on-primary:#fff;"
        f"--primary-soft:{mixed(brand, '#ffffff', 0.1)}}}\n"
        f"@media (prefers-color-scheme: dark){{:root{{--primary-soft:{dark_soft}}}}}\n"
        ".quote-state-sent{color:var(--primary-hover);background:var(--primary-soft)}\n"
        "@media (prefers-color-scheme: dark){.quote-state-sent{color:#fff}}\n"
    )


def brand_css(deps: WebDeps) -> Route:
    """``/{slug}/brand.css``: the company's colours (``brand_stylesheet``), cached five
    minutes; a plain-text 404 for an unknown or malformed slug. No cookie is read."""

    def stylesheet_of(slug: str) -> str | None:
        if not 1 <= len(slug) <= 63 or not SLUG_PATTERN.match(slug):
            return None
        with deps.reader() as uow:
            company = uow.companies.by_slug(slug)
        return None if company is None else brand_stylesheet(company)

    async def answer(request: Request) -> Response:
        css = await run_in_threadpool(stylesheet_of, str(request.path_params["slug"]))
        if css is None:
            return Response("No such company.\n", 404, media_type="text/plain")
        return Response(
            css,
            media_type="text/css",
            headers={"cache-control": "public, max-age=300", "x-content-type-options": "nosniff"},
        )

    return Route("/{slug}/brand.css", answer, methods=["GET"])


def routes(deps: WebDeps) -> list[BaseRoute]:
    """What every customer page shares: the company's brand stylesheet."""
    return [brand_css(deps)]
