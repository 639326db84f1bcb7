"""SQLAlchemy Core tables: the schema the Alembic revisions build.

Fields that are looked up, filtered or ordered on are real columns with indexes; value
trees that are only ever read whole (a catalog, a quote's selection and breakdown, a
customer's addresses, a lead's timeline, a crew member's hours) are JSON documents in
text columns, written by ``adapters.sql.codecs``. Listed tables carry ``created_at``
and ``changed_at`` with the two keyset indexes ``(company_id, created_at, id)`` and
``(company_id, changed_at, id)``, and ``changed_xid``, the id of the transaction that
last wrote the row (PostgreSQL only: a trigger sets it and ``changed_at``; NULL on
SQLite), with the index ``(company_id, changed_xid, id)`` the change order pages
through on PostgreSQL. No table references another: every aggregate is reached through
its company id and stands alone, as the repository ports do.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    func,
    literal,
    text,
)
from sqlalchemy.dialects.postgresql import ExcludeConstraint

from adapters.sql.columns import id_column_type, instant_type, money_type, text_type

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


def _id(name: str, *, nullable: bool = False) -> Column[str]:
    return Column(name, id_column_type(), nullable=nullable)


def _text(name: str, *, nullable: bool = False) -> Column[str]:
    return Column(name, text_type(), nullable=nullable)


def _change_columns() -> tuple[Column[object], Column[int]]:
    """The last change of a listed row: when it was made, and (PostgreSQL) by which
    transaction. Always a table's last two columns (``crew.py`` relies on it)."""
    return (
        Column("changed_at", instant_type(), nullable=True),
        Column("changed_xid", BigInteger, nullable=True),
    )


def _keyset_indexes(table: str) -> tuple[Index, Index, Index]:
    """The orders every list pages through: newest first, and by change (by instant on
    SQLite, by transaction id on PostgreSQL, which alone has that index)."""
    return (
        Index(f"ix_{table}_created", "company_id", "created_at", "id"),
        Index(f"ix_{table}_changed", "company_id", "changed_at", "id"),
        Index(f"ix_{table}_changed_xid", "company_id", "changed_xid", "id").ddl_if(
            dialect="postgresql"
        ),
    )


companies = Table(
    "companies",
    metadata,
    _id("id"),
    _text("slug"),
    _text("name"),
    _text("timezone"),
    _text("code_prefix"),
    Column("created_at", instant_type(), nullable=False),
    Column("tax_rate_bps", Integer, nullable=False),
    _text("custom_domain", nullable=True),
    Column("self_service_cutoff_hours", Integer, nullable=False),
    Column("min_notice_minutes", Integer, nullable=False),
    _text("brand_color", nullable=True),  # "#rrggbb" (0011); NULL: the default colours
    _text("notify_email", nullable=True),  # (0012) reply-to and staff notices; NULL: none
    Column("reminder_hours", Integer, nullable=False, server_default="24"),  # (0012)
    # (0016) taken off a new customer's first visit by a referral code; 0: programme off
    Column("referral_discount_cents", money_type(), nullable=False, server_default="0"),
    PrimaryKeyConstraint("id"),
    UniqueConstraint("slug"),
    # (0017) one company per connected domain; NULLs (no domain) do not collide
    Index("uq_companies_custom_domain", "custom_domain", unique=True),
)

api_keys = Table(
    "api_keys",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("name"),
    Column("scopes", Text, nullable=False),  # JSON: sorted list of scope names
    Column("rate_limit_per_minute", Integer, nullable=False),
    _text("lookup_prefix"),
    _text("secret_hash"),
    _text("status"),
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    Column("revoked_at", instant_type(), nullable=True),
    PrimaryKeyConstraint("company_id", "id"),
    UniqueConstraint("lookup_prefix"),
    Index("ix_api_keys_created", "company_id", "created_at", "id"),
)

catalogs = Table(
    "catalogs",
    metadata,
    _id("company_id"),
    Column("document", Text, nullable=False),  # JSON: the whole Catalog
    PrimaryKeyConstraint("company_id"),
)

coupon_redemptions = Table(
    "coupon_redemptions",
    metadata,
    _id("company_id"),
    _id("booking_id"),
    _id("coupon_id"),
    _id("customer_id"),
    PrimaryKeyConstraint("company_id", "booking_id", "coupon_id"),
    Index("ix_coupon_redemptions_usage", "company_id", "coupon_id", "customer_id"),
)

customers = Table(
    "customers",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("name"),
    _text("name_key"),  # casefolded name, for search
    _text("email"),
    _text("email_key"),  # normalised email, unique per company
    _text("phone", nullable=True),
    Column("addresses", Text, nullable=False),  # JSON: saved addresses
    _id("default_address_id", nullable=True),
    _id("merged_into", nullable=True),
    _text("notes"),
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    *_change_columns(),
    _text("referral_code"),  # (0016) eight Crockford characters, unique per company
    PrimaryKeyConstraint("company_id", "id"),
    UniqueConstraint("company_id", "email_key"),
    UniqueConstraint("company_id", "referral_code"),
    *_keyset_indexes("customers"),
)

leads = Table(
    "leads",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("name"),
    _text("email", nullable=True),
    _text("email_key", nullable=True),
    _text("phone_e164", nullable=True),
    _text("stage"),
    _text("owner", nullable=True),
    Column("follow_up_on", Date, nullable=True),
    _text("source"),
    _text("message"),
    _id("service_id", nullable=True),
    Column("timeline", Text, nullable=False),  # JSON: timeline entries
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    *_change_columns(),
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_leads_email_key", "company_id", "email_key"),
    Index("ix_leads_phone_e164", "company_id", "phone_e164"),
    Index("ix_leads_stage", "company_id", "stage", "created_at", "id"),
    Index("ix_leads_owner", "company_id", "owner", "created_at", "id"),
    Index("ix_leads_follow_up_on", "company_id", "follow_up_on"),
    *_keyset_indexes("leads"),
)

waitlist_entries = Table(
    "waitlist_entries",
    metadata,
    _id("company_id"),
    _id("id"),  # wl_...
    _id("service_id"),
    _text("zip"),
    Column("date_from", Date, nullable=False),
    Column("date_to", Date, nullable=False),
    _text("frequency_slug"),
    _text("name"),
    _text("email"),
    _text("phone", nullable=True),
    _text("note"),
    Column("created_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_waitlist_entries_created", "company_id", "created_at", "id"),
)
"""Requests for dates with no opening (0009), paged newest first only: no change stamps."""

quotes = Table(
    "quotes",
    metadata,
    _id("company_id"),
    _id("id"),
    _id("customer_id", nullable=True),
    _id("lead_id", nullable=True),
    _text("status"),
    Column("version", Integer, nullable=False),
    Column("total_cents", money_type(), nullable=False),
    Column("selection", Text, nullable=True),  # JSON: Selection, None when hand-priced
    Column("breakdown", Text, nullable=True),  # JSON: PriceBreakdown
    Column("manual_lines", Text, nullable=False),  # JSON: hand-priced lines
    Column("follow_ups", Text, nullable=False),  # JSON: scheduled follow-ups
    Column("follow_ups_paused", Boolean, nullable=False),
    _text("public_token"),
    _id("booking_id", nullable=True),
    _text("message"),
    _text("note"),
    Column("expires_at", instant_type(), nullable=True),
    Column("sent_at", instant_type(), nullable=True),
    Column("accepted_at", instant_type(), nullable=True),
    Column("declined_at", instant_type(), nullable=True),
    Column("converted_at", instant_type(), nullable=True),
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    *_change_columns(),
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_quotes_status", "company_id", "status", "created_at", "id"),
    Index("ix_quotes_lead", "company_id", "lead_id", "created_at", "id"),
    Index("ix_quotes_customer", "company_id", "customer_id", "created_at", "id"),
    Index("ix_quotes_public_token", "public_token"),
    *_keyset_indexes("quotes"),
)

payments = Table(
    "payments",
    metadata,
    _id("company_id"),
    _id("id"),
    _id("booking_id", nullable=True),
    _id("customer_id", nullable=True),
    _text("kind"),
    _text("method"),
    Column("amount_cents", money_type(), nullable=False),
    Column("offline", Boolean, nullable=False),
    _text("note"),
    _id("reverses", nullable=True),
    _text("external_ref", nullable=True),
    Column("dispute", Boolean, nullable=False),
    _text("origin"),
    Column("created_at", instant_type(), nullable=False),
    *_change_columns(),
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_payments_booking", "company_id", "booking_id", "created_at", "id"),
    Index("ix_payments_customer", "company_id", "customer_id", "created_at", "id"),
    Index("ix_payments_reverses", "company_id", "reverses"),
    Index("ix_payments_external_ref", "company_id", "external_ref"),
    *_keyset_indexes("payments"),
)

crew_members = Table(
    "crew_members",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("name"),
    _text("home_zip"),
    Column("service_areas", Text, nullable=False),  # JSON: zips, in the member's order
    Column("excluded_service_ids", Text, nullable=False),  # JSON: sorted service ids
    Column("working_hours", Text, nullable=False),  # JSON: weekday stretches
    Column("time_off", Text, nullable=False),  # JSON: absences
    Column("active", Boolean, nullable=False),
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    *_change_columns(),
    PrimaryKeyConstraint("company_id", "id"),
    *_keyset_indexes("crew_members"),
)

teams = Table(
    "teams",
    metadata,
    _id("company_id"),
    _id("id"),  # team_...
    _text("name"),
    _text("name_key"),  # the name as names are matched (crew_drafts.name_key)
    Column("member_ids", Text, nullable=False),  # JSON: crew member ids, in chosen order
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id", "id"),
    UniqueConstraint("company_id", "name_key"),
)
"""Teams: named sets of one company's crew members, not in the API. A team's job is each
member's job, so bookings store members, never a team id; the members are checked to be
the company's crew by the repository (no table references another)."""

idempotency_records = Table(
    "idempotency_records",
    metadata,
    _id("company_id"),
    _text("key"),
    _text("fingerprint"),
    _text("state"),
    Column("created_at", instant_type(), nullable=False),
    Column("response_status", Integer, nullable=True),
    Column("response_body", LargeBinary, nullable=True),
    PrimaryKeyConstraint("company_id", "key"),
    Index("ix_idempotency_records_created", "created_at"),
)

bookings = Table(
    "bookings",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("code"),  # human code, unique per company
    _id("customer_id"),
    _text("status"),
    _id("plan_id", nullable=True),
    Column("visit_index", Integer, nullable=False),
    _id("group_id", nullable=True),
    Column("starts_at", instant_type(), nullable=False),  # the first day's start and end
    Column("ends_at", instant_type(), nullable=False),
    _text("tracking_token"),
    Column("version", Integer, nullable=False),
    Column("document", Text, nullable=False),  # JSON: every other field of the Booking
    Column("created_at", instant_type(), nullable=False),
    _id("form_id", nullable=True),  # the booking form it was made through (0010)
    Column("answers", Text, nullable=True),  # JSON: the intake answers; NULL: none
    *_change_columns(),
    PrimaryKeyConstraint("company_id", "id"),
    UniqueConstraint("company_id", "code"),
    UniqueConstraint("tracking_token"),
    Index(
        "uq_bookings_plan_visit",
        "company_id",
        "plan_id",
        "visit_index",
        unique=True,
        sqlite_where=text("plan_id IS NOT NULL"),
        postgresql_where=text("plan_id IS NOT NULL"),
    ),
    Index("ix_bookings_group", "company_id", "group_id", "visit_index"),
    Index("ix_bookings_customer", "company_id", "customer_id", "created_at", "id"),
    Index("ix_bookings_status", "company_id", "status", "created_at", "id"),
    Index("ix_bookings_starts", "company_id", "starts_at"),
    *_keyset_indexes("bookings"),
)

booking_assignments = Table(
    "booking_assignments",
    metadata,
    _id("company_id"),
    _id("booking_id"),
    _id("crew_id"),
    Column("starts_at", instant_type(), nullable=False),  # one day block, half-open
    Column("ends_at", instant_type(), nullable=False),
    _text("zip_code"),  # where the job is: what availability's drive times start from
    Column("open", Boolean, nullable=False),  # the booking is scheduled or in progress
    PrimaryKeyConstraint("company_id", "booking_id", "crew_id", "starts_at"),
    Index("ix_booking_assignments_busy", "company_id", "crew_id", "starts_at"),
)
"""One row per (booking, crew member, day block): a team's job is each member's job."""

OVERLAP_CONSTRAINT = "ex_booking_assignments_overlap"
booking_assignments.append_constraint(
    # PostgreSQL only (on SQLite the repository checks with a query under the write
    # lock): no two open blocks of one crew member overlap, half-open. The btree_gist
    # extension gives GiST its `=` on text.
    ExcludeConstraint(
        (booking_assignments.c.company_id, "="),
        (booking_assignments.c.crew_id, "="),
        (
            func.tstzrange(
                booking_assignments.c.starts_at, booking_assignments.c.ends_at, literal("[)")
            ),
            "&&",
        ),
        name=OVERLAP_CONSTRAINT,
        using="gist",
        where=booking_assignments.c.open,
    ).ddl_if(dialect="postgresql")
)

booking_forms = Table(
    "booking_forms",
    metadata,
    _id("company_id"),
    _id("id"),  # bf_...
    _text("name"),
    Column("active", Boolean, nullable=False),
    Column("document", Text, nullable=False),  # JSON: services, frequencies, extras, questions
    Column("created_at", instant_type(), nullable=False),
    Column("updated_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_booking_forms_created", "company_id", "created_at", "id"),
)
"""A company's booking forms, paged newest first; what a form offers and asks is read
whole, so it is one JSON document."""

processor_accounts = Table(
    "processor_accounts",
    metadata,
    _text("account_id"),  # acct_...: one account belongs to one company for good
    _id("company_id"),
    Column("connected_at", instant_type(), nullable=False),
    Column("disconnected_at", instant_type(), nullable=True),
    PrimaryKeyConstraint("account_id"),
    Index(
        "uq_processor_accounts_connected",
        "company_id",
        unique=True,
        sqlite_where=text("disconnected_at IS NULL"),
        postgresql_where=text("disconnected_at IS NULL"),
    ),
)
"""Companies' card-processor accounts, kept when disconnected; at most one connected per
company (the partial unique index)."""

processor_events = Table(
    "processor_events",
    metadata,
    _text("event_id"),  # the processor's event id (evt_...)
    _text("account_id"),
    Column("ingested_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("event_id"),
)
"""Processor events already ingested: the primary key lets one delivery of an event land,
however many arrive at once."""

change_clock = Table(
    "change_clock",
    metadata,
    _id("company_id"),
    Column("last_change", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id"),
)
"""One row per company: the last ``changed_at`` stamped on SQLite (see uow.py); unused on
PostgreSQL."""

outbox_events = Table(
    "outbox_events",
    metadata,
    _id("id"),  # evt_...: the worker reads events of every company, by id
    _id("company_id"),
    _text("type"),
    Column("created_at", instant_type(), nullable=False),
    _text("subject_kind", nullable=True),  # booking|customer|lead|quote|payment; None: no subject
    Column("document", Text, nullable=True),  # JSON: the subject, None with subject_kind
    Column("dispatched_at", instant_type(), nullable=True),
    Column("mailed_at", instant_type(), nullable=True),  # (0012) turned into messages
    PrimaryKeyConstraint("id"),
    Index(
        "ix_outbox_events_undispatched",
        "created_at",
        "id",
        sqlite_where=text("dispatched_at IS NULL"),
        postgresql_where=text("dispatched_at IS NULL"),
    ),
    Index(
        "ix_outbox_events_unmailed",
        "created_at",
        "id",
        sqlite_where=text("mailed_at IS NULL"),
        postgresql_where=text("mailed_at IS NULL"),
    ),
)
"""Domain events written in the transaction of their change; the worker claims the
undispatched ones (webhooks) and the unmailed ones (messages) oldest first through the
partial indexes, each consumer with its own marker."""

messages = Table(
    "messages",
    metadata,
    _id("company_id"),
    _id("id"),  # msg_...
    _text("kind"),  # booking.confirmed, quote.sent, ...
    _text("to_address"),
    _text("subject"),
    Column("text_body", Text, nullable=False),
    Column("html_body", Text, nullable=False),
    _text("dedupe_key"),  # the cause: the same cause never queues twice
    _text("reply_to", nullable=True),
    _id("subject_id", nullable=True),  # the booking, quote, lead or customer
    _text("status"),  # pending|sent|failed
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", instant_type(), nullable=False),
    _text("last_error", nullable=True),
    Column("sent_at", instant_type(), nullable=True),
    Column("created_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id", "id"),
    UniqueConstraint("company_id", "dedupe_key"),
    Index(
        "ix_messages_due",
        "next_attempt_at",
        "created_at",
        "id",
        sqlite_where=text("status = 'pending'"),
        postgresql_where=text("status = 'pending'"),
    ),
    Index("ix_messages_created", "company_id", "created_at", "id"),
    Index("ix_messages_subject", "company_id", "subject_id", "created_at", "id"),
)
"""Emails queued with their cause (0012); the worker claims pending ones that are due
through the partial index, across companies."""

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    _id("company_id"),
    _id("id"),
    _text("url"),
    Column("events", Text, nullable=False),  # JSON: event names, or ["*"]
    Column("active", Boolean, nullable=False),
    _text("description"),
    Column("secrets", Text, nullable=False),  # JSON: [{value, expiresAt}], current first
    Column("created_at", instant_type(), nullable=False),
    _text("disabled_reason", nullable=True),
    Column("failing_since", instant_type(), nullable=True),
    Column("active_since", instant_type(), nullable=True),  # NULL: on since created_at
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_webhook_endpoints_created", "company_id", "created_at", "id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    _id("company_id"),
    _id("id"),
    _id("endpoint_id"),
    _id("event_id"),
    _text("event_type"),
    Column("body", LargeBinary, nullable=False),  # the envelope exactly as sent
    _text("state"),  # pending|delivered|failed
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", instant_type(), nullable=True),
    Column("created_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("company_id", "id"),
    Index(
        "ix_webhook_deliveries_due",
        "next_attempt_at",
        "created_at",
        "id",
        sqlite_where=text("state = 'pending'"),
        postgresql_where=text("state = 'pending'"),
    ),
    Index("ix_webhook_deliveries_endpoint", "company_id", "endpoint_id", "state"),
)
"""One event on its way to one endpoint; the worker claims pending ones that are due
through the partial index, across companies."""

webhook_attempts = Table(
    "webhook_attempts",
    metadata,
    _id("company_id"),
    _id("id"),
    _id("endpoint_id"),
    _id("delivery_id"),
    _id("event_id"),
    _text("event_type"),
    Column("attempt", Integer, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("duration_ms", Integer, nullable=False),
    _text("error", nullable=True),
    Column("next_retry_at", instant_type(), nullable=True),
    Column("created_at", instant_type(), nullable=False),  # the attempt's ``at``
    PrimaryKeyConstraint("company_id", "id"),
    Index("ix_webhook_attempts_log", "company_id", "endpoint_id", "created_at", "id"),
)
"""An endpoint's delivery log: one row per try, paged newest first."""

users = Table(
    "users",
    metadata,
    _id("id"),  # usr_...: a session names only its user
    _id("company_id"),
    _text("email"),  # normalised (stripped, lower-case); unique across the service
    _text("name"),
    _text("role"),  # owner|dispatcher|crew
    _id("crew_member_id", nullable=True),  # set exactly for crew
    _text("password_hash", nullable=True),  # argon2id, opaque
    Column("session_epoch", Integer, nullable=False),
    Column("created_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("id"),
    UniqueConstraint("email"),
    Index("ix_users_company", "company_id", "created_at", "id"),
)
"""Users of the admin workspace and crew portal. Keyed by id alone, and the email unique
across companies: signing in names no company, the company is the user's."""

sign_in_links = Table(
    "sign_in_links",
    metadata,
    _text("token_hash"),  # SHA-256 hex of the 256-bit token, never the token
    _id("user_id"),
    Column("created_at", instant_type(), nullable=False),
    Column("expires_at", instant_type(), nullable=False),
    Column("used_at", instant_type(), nullable=True),
    PrimaryKeyConstraint("token_hash"),
)
"""One-time sign-in links; claimed by an ``UPDATE ... WHERE used_at IS NULL``."""

portal_links = Table(
    "portal_links",
    metadata,
    _text("token_hash"),  # SHA-256 hex of the 256-bit token, never the token
    _id("id"),  # pln_...: the sign-in message's dedupe key names it
    _id("company_id"),
    _id("customer_id"),
    Column("created_at", instant_type(), nullable=False),
    Column("expires_at", instant_type(), nullable=False),
    Column("used_at", instant_type(), nullable=True),
    PrimaryKeyConstraint("token_hash"),
)
"""Customer portal sign-in links (``booking_core.portal``); claimed, inside their company
only, by an ``UPDATE ... WHERE company_id = :c AND used_at IS NULL``."""

service_secrets = Table(
    "service_secrets",
    metadata,
    _text("name"),  # "cursors", "sessions"
    _text("value"),  # 64 hex digits (32 random bytes)
    Column("created_at", instant_type(), nullable=False),
    PrimaryKeyConstraint("name"),
)
"""(0018) The secrets signing pagination cursors and session cookies when the
environment sets none: made once, by the first process that needs one, and kept, so
every worker and server of the database signs alike and a restart breaks nothing."""

STAMPED = {t.name: t for t in (customers, leads, quotes, payments, crew_members, bookings)}
"""Tables listed by change: on SQLite their touched rows get ``changed_at`` at commit; on
PostgreSQL a trigger sets ``changed_at`` and ``changed_xid`` on every write."""

ALL_TABLES = tuple(metadata.sorted_tables)
