"""``GET /customers``, ``POST /customers`` and ``POST /customers/{id}/merge``."""

from __future__ import annotations

from attrs import field, frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.jsonschema import schema
from adapters.http.queries import PageQuery
from adapters.http.structuring import (
    AccessNotes,
    City,
    Email,
    Id,
    PersonName,
    Phone,
    ShortText,
    Street,
    Zip,
)
from adapters.http.views.customers import CustomerView, customer_view
from booking_core.customers import Address
from booking_core.services.customers import (
    CreateCustomer,
    MergeCustomers,
    create_customer,
    customer_standing,
    customer_standings,
    list_customers,
    merge_customers,
)


@frozen(kw_only=True)
class AddressBody:
    """A US street address."""

    line1: Street = field(metadata=schema(pattern=r"\S"))  # not blank
    line2: Street = ""
    city: City = field(metadata=schema(pattern=r"\S"))
    state: ShortText = field(
        metadata=schema(pattern="^[A-Za-z]{2}$", description="a two-letter state code")
    )
    zip: Zip
    access_notes: AccessNotes = ""

    def address(self) -> Address:
        """The domain address."""
        return Address(self.line1, self.city, self.state, self.zip, self.line2, self.access_notes)


@frozen(kw_only=True)
class CustomerBody:
    """A new customer; an email that exists already returns that customer."""

    name: PersonName
    email: Email
    phone: Phone | None = None
    address: AddressBody | None = None


@frozen(kw_only=True)
class CustomerListQuery(PageQuery):
    """Customers, optionally searched."""

    search: ShortText | None = field(
        default=None,
        metadata={
            "description": "matches name or email, case-insensitive; spaces around it are ignored"
        },
    )


def get_customers(ctx: Context) -> Reply:
    """List and search customers, each with its statistics (two queries for the page)."""
    query: CustomerListQuery = ctx.query
    search = (query.search or "").strip() or None
    page = ctx.page_request("customers", {"search": search})
    result = list_customers(ctx.company_id, page, search=search, uow=ctx.deps.read())
    with ctx.deps.read() as uow:
        standings = customer_standings(result.items, uow=uow, at=ctx.now())
    render = ctx.render()
    return ctx.page_reply(result, lambda c: customer_view(c, *standings[c.id], render))


def post_customer(ctx: Context) -> Reply:
    """Create a customer, or return the existing one for that email (200, not 201)."""
    body: CustomerBody = ctx.body
    customer, created = create_customer(
        CreateCustomer(
            company_id=ctx.company_id,
            name=body.name,
            email=body.email,
            phone=body.phone,
            address=body.address.address() if body.address else None,
        ),
        uow=ctx.deps.uow(),
        clock=ctx.deps.clock,
        phones=ctx.deps.phones,
    )
    # Statistics from real visits and payments: an existing customer may have some.
    with ctx.deps.read() as uow:
        stats, churn = customer_standing(customer, uow=uow, at=ctx.now())
    view = customer_view(customer, stats, churn, ctx.render())
    return Reply(view, 201 if created else 200)


@frozen(kw_only=True)
class MergeBody:
    """The customer record to merge into the one the address names."""

    merged_id: Id = field(
        metadata={
            "description": "cus_...: the record merged away; its bookings, quotes, payments"
            " and coupon redemptions are re-filed under the survivor"
        }
    )


def post_merge(ctx: Context) -> Reply:
    """Merge ``mergedId`` into the customer of the address; the answer is the survivor,
    its statistics counting the history it gained (read in the merge's transaction)."""
    body: MergeBody = ctx.body
    unit = ctx.uow()
    survivor = merge_customers(
        MergeCustomers(
            company_id=ctx.company_id,
            survivor_id=ctx.path_params["id"],
            merged_id=body.merged_id,
        ),
        uow=unit,
        clock=ctx.deps.clock,
    )
    with unit:
        stats, churn = customer_standing(survivor, uow=unit, at=ctx.now())
    return Reply(customer_view(survivor, stats, churn, ctx.render()))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/customers",
        scope="customers:read",
        handler=get_customers,
        response=CustomerView,
        paginated=True,
        query=CustomerListQuery,
        tag="customers",
        summary="List or search customers with churn risk and lifetime statistics",
    ),
    Endpoint(
        method="POST",
        path="/customers",
        scope="customers:write",
        handler=post_customer,
        response=CustomerView,
        body=CustomerBody,
        success_status=201,
        also={200: "the customer with this email already existed (or survived a merge)"},
        tag="customers",
        summary="Create a customer, or return the existing one for that email (200)",
    ),
    Endpoint(
        method="POST",
        path="/customers/{id}/merge",
        scope="customers:write",
        handler=post_merge,
        response=CustomerView,
        body=MergeBody,
        idempotent=True,
        tag="customers",
        summary="Merge another customer record into this one; answers the survivor",
    ),
]
