"""Domain values as API JSON: camelCase, money in integer cents, times in the company's
timezone with their offset.

The JSON Schema of what each method returns is in ``adapters.http.schemas`` under the
method's name (``catalog`` -> ``CATALOG_SCHEMA``); change the two together. The e2e suite
validates live answers against the served OpenAPI document built from those schemas.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from booking_core.catalog import Catalog, Extra, FeeDefinition, Parameter, Service
from booking_core.customers import Address, ChurnRisk, Customer, Lifetime
from booking_core.leads import Lead
from booking_core.ledger import PaymentEntry
from booking_core.pricing import PlanPrice, PriceBreakdown
from booking_core.quotes import Quote, effective_status, public_url


class Renderer:
    """Renders values for one company (its timezone, its public addresses)."""

    def __init__(self, zone: ZoneInfo, *, base_url: str, slug: str, custom_domain: str | None):
        self.zone = zone
        self.base_url = base_url
        self.slug = slug
        self.custom_domain = custom_domain

    def time(self, value: datetime | None) -> str | None:
        """ISO 8601 in the company's timezone, with offset."""
        return value.astimezone(self.zone).isoformat() if value is not None else None

    @staticmethod
    def day(value: date | None) -> str | None:
        """ISO date."""
        return value.isoformat() if value is not None else None

    # -- catalog and prices ------------------------------------------------------------

    def catalog(self, catalog: Catalog) -> dict[str, Any]:
        """``GET /services``; ``CATALOG_SCHEMA``."""
        return {
            "industries": [
                {
                    "id": industry.id,
                    "name": industry.name,
                    "services": [self.service(s) for s in industry.services if s.active],
                }
                for industry in catalog.industries
            ],
            "frequencies": [
                {
                    "slug": f.slug,
                    "name": f.name,
                    "intervalDays": f.interval_days,
                    "discountBps": f.discount_bps,
                }
                for f in catalog.frequencies
            ],
            "fees": [self.fee(f) for f in catalog.active_fees()],
            "taxRateBps": catalog.tax_rate_bps,
            "timezone": catalog.timezone,
        }

    def service(self, s: Service) -> dict[str, Any]:
        """One catalog service with its parameters and extras; ``SERVICE_SCHEMA``."""
        return {
            "id": s.id,
            "name": s.name,
            "description": s.description,
            "basePriceCents": s.base_price_cents,
            "baseDurationMinutes": s.base_duration_minutes,
            "taxable": s.taxable,
            "parameters": [self.parameter(p) for p in s.parameters],
            "extras": [self.extra(e) for e in s.extras],
        }

    @staticmethod
    def parameter(p: Parameter) -> dict[str, Any]:
        """One parameter; ``PARAMETER_SCHEMA``."""
        return {
            "id": p.id,
            "name": p.name,
            "priceCents": p.price_cents,
            "durationMinutes": p.duration_minutes,
            "minQuantity": p.min_quantity,
            "maxQuantity": p.max_quantity,
        }

    @staticmethod
    def extra(e: Extra) -> dict[str, Any]:
        """One extra, with the three fields SPEC.md names; ``EXTRA_SCHEMA``."""
        return {
            "id": e.id,
            "name": e.name,
            "priceCents": e.price_cents,
            "durationMinutes": e.duration_minutes,
            "maxQuantity": e.max_quantity,
            "frequencySlugs": list(e.frequency_slugs),
            "discountExempt": e.discount_exempt,
            "firstVisitOnly": e.first_visit_only,
        }

    @staticmethod
    def fee(f: FeeDefinition) -> dict[str, Any]:
        """One fee definition; ``FEE_SCHEMA``."""
        return {
            "id": f.id,
            "name": f.name,
            "kind": f.kind.value,
            "amountCents": f.amount_cents,
            "amountBps": f.amount_bps,
            "taxable": f.taxable,
            "weekdays": sorted(f.weekdays),
            "dates": sorted(d.isoformat() for d in f.dates),
            "zips": sorted(f.zips),
            "serviceIds": sorted(f.service_ids),
        }

    @staticmethod
    def breakdown(b: PriceBreakdown) -> dict[str, Any]:
        """A priced visit; its parts sum to ``totalCents`` exactly; ``BREAKDOWN_SCHEMA``."""
        return {
            "visit": b.visit.value,
            "lines": [
                {
                    "kind": x.kind.value,
                    "id": x.id,
                    "name": x.name,
                    "quantity": x.quantity,
                    "unitPriceCents": x.unit_price_cents,
                    "amountCents": x.amount_cents,
                    "discountable": x.discountable,
                    "durationMinutes": x.duration_minutes,
                }
                for x in b.lines
            ],
            "subtotalCents": b.subtotal_cents,
            "discounts": [
                {
                    "kind": d.kind.value,
                    "name": d.name,
                    "code": d.code,
                    "amountCents": d.amount_cents,
                }
                for d in b.discounts
            ],
            "discountCents": b.discount_cents,
            "referralDiscountCents": b.referral_discount_cents,
            "discountedSubtotalCents": b.discounted_subtotal_cents,
            "fees": [
                {
                    "id": f.id,
                    "name": f.name,
                    "kind": f.kind.value,
                    "amountCents": f.amount_cents,
                    "taxable": f.taxable,
                }
                for f in b.fees
            ],
            "feesCents": b.fees_cents,
            "taxableCents": b.taxable_cents,
            "taxRateBps": b.tax_rate_bps,
            "taxCents": b.tax_cents,
            "totalCents": b.total_cents,
            "durationMinutes": b.duration_minutes,
        }

    def plan_price(self, plan: PlanPrice) -> dict[str, Any]:
        """``POST /quote``; ``PLAN_PRICE_SCHEMA``."""
        return {
            "currency": "usd",
            "firstVisit": self.breakdown(plan.first_visit),
            "laterVisits": self.breakdown(plan.later_visits) if plan.later_visits else None,
        }

    # -- customers, leads ----------------------------------------------------------------

    @staticmethod
    def address(a: Address) -> dict[str, Any]:
        """A street address; ``ADDRESS_SCHEMA``."""
        return {
            "line1": a.line1,
            "line2": a.line2,
            "city": a.city,
            "state": a.state,
            "zip": a.zip,
            "accessNotes": a.access_notes,
        }

    def customer(self, c: Customer, lifetime: Lifetime, churn: ChurnRisk) -> dict[str, Any]:
        """A customer with churn risk and lifetime statistics; ``CUSTOMER_SCHEMA``."""
        return {
            "id": c.id,
            "name": c.name,
            "email": c.email,
            "phone": c.phone,
            "addresses": [
                {"id": s.id, "default": s.id == c.default_address_id, **self.address(s.address)}
                for s in c.addresses
            ],
            "defaultAddressId": c.default_address_id,
            "createdAt": self.time(c.created_at),
            "updatedAt": self.time(c.updated_at),
            "churnRisk": {"level": churn.level.value, "score": churn.score},
            "lifetime": {
                "bookings": lifetime.bookings,
                "completed": lifetime.completed,
                "cancelled": lifetime.cancelled,
                "paidCents": lifetime.paid_cents,
                "firstVisitAt": self.time(lifetime.first_visit_at),
                "lastVisitAt": self.time(lifetime.last_visit_at),
                "nextVisitAt": self.time(lifetime.next_visit_at),
            },
        }

    def lead(self, lead: Lead, *, timeline: bool = False) -> dict[str, Any]:
        """A lead; with its full timeline when fetched alone.

        ``LEAD_SCHEMA``, or ``LEAD_WITH_TIMELINE_SCHEMA`` with ``timeline``.
        """
        out: dict[str, Any] = {
            "id": lead.id,
            "name": lead.name,
            "email": lead.email,
            "phone": lead.phone_e164,
            "stage": lead.stage.value,
            "open": lead.stage.open,
            "owner": lead.owner,
            "followUpOn": self.day(lead.follow_up_on),
            "source": lead.source,
            "message": lead.message,
            "serviceId": lead.service_id,
            "createdAt": self.time(lead.created_at),
            "updatedAt": self.time(lead.updated_at),
        }
        if timeline:
            out["timeline"] = [
                {"at": self.time(e.at), "kind": e.kind.value, "details": e.details}
                for e in lead.timeline
            ]
        return out

    # -- quotes, payments ---------------------------------------------------------------

    def quote(self, q: Quote, at: datetime, *, follow_ups: bool = False) -> dict[str, Any]:
        """A quote as of ``at`` (a sent quote past expiry reads as expired).

        ``QUOTE_SCHEMA``, or ``QUOTE_WITH_FOLLOW_UPS_SCHEMA`` with ``follow_ups``.
        """
        out: dict[str, Any] = {
            "id": q.id,
            "status": effective_status(q, at).value,
            "customerId": q.customer_id,
            "leadId": q.lead_id,
            "serviceId": q.selection.service_id if q.selection else None,
            "handPriced": q.hand_priced,
            "frequencySlug": q.selection.frequency_slug if q.selection else None,
            "manualLines": [
                {"description": x.description, "amountCents": x.amount_cents}
                for x in q.manual_lines
            ],
            "price": self.breakdown(q.breakdown) if q.breakdown else None,
            "totalCents": q.total_cents,
            "expiresAt": self.time(q.expires_at),
            "publicUrl": public_url(
                base_url=self.base_url,
                company_slug=self.slug,
                custom_domain=self.custom_domain,
                token=q.public_token,
            ),
            "followUpsPaused": q.follow_ups_paused,
            "bookingId": q.booking_id,
            "message": q.message,
            "createdAt": self.time(q.created_at),
            "updatedAt": self.time(q.updated_at),
            "sentAt": self.time(q.sent_at),
            "acceptedAt": self.time(q.accepted_at),
            "declinedAt": self.time(q.declined_at),
            "convertedAt": self.time(q.converted_at),
        }
        if follow_ups:
            out["followUps"] = [
                {"dueAt": self.time(f.due_at), "status": f.status.value} for f in q.follow_ups
            ]
        return out

    def payment(self, e: PaymentEntry) -> dict[str, Any]:
        """One ledger entry; ``PAYMENT_SCHEMA``."""
        return {
            "id": e.id,
            "kind": e.kind.value,
            "method": e.method.value,
            "offline": e.offline,
            "amountCents": e.amount_cents,
            "note": e.note,
            "reverses": e.reverses,
            "externalRef": e.external_ref,
            "bookingId": e.booking_id,
            "customerId": e.customer_id,
            "dispute": e.dispute,
            "createdAt": self.time(e.created_at),
        }
