"""Coupons: case-insensitive codes with a percentage or fixed discount and the rules
that decide whether one may be used. A coupon that fails a rule is refused with
``CouponRejected`` naming the rule; it is never silently ignored.

Rules, checked in this order: ``unknown``, ``inactive``, ``not_yet_valid``,
``expired``, ``max_redemptions``, ``per_customer_limit``, ``service``, ``frequency``,
``min_subtotal`` (against the subtotal of lines before any discount).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import field, frozen, validators

from booking_core.errors import CouponRejected
from booking_core.money import apply_bps


def normalize_code(code: str) -> str:
    """Normalise a coupon or referral code for case-insensitive matching."""
    return code.strip().casefold()


@frozen
class CouponUsage:
    """How often a coupon was redeemed: in total, and by the customer being priced."""

    total: int = 0
    by_customer: int = 0


@frozen
class Coupon:
    """A discount code. Exactly one of ``percent_bps`` and ``amount_cents`` is set.

    The code matches case-insensitively. ``valid_from``/``valid_until`` bound the
    instant of pricing (half-open: from inclusive, until exclusive). Empty
    ``service_ids``/``frequency_slugs`` mean no restriction.
    """

    id: str
    code: str
    percent_bps: int | None = None
    amount_cents: int | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    max_redemptions: int | None = None
    per_customer_limit: int | None = None
    min_subtotal_cents: int = field(default=0, validator=validators.ge(0))
    service_ids: frozenset[str] = frozenset()
    frequency_slugs: frozenset[str] = frozenset()
    active: bool = True

    def __attrs_post_init__(self) -> None:
        if (self.percent_bps is None) == (self.amount_cents is None):
            raise ValueError("a coupon has exactly one of percent_bps and amount_cents")
        if self.percent_bps is not None and not 0 < self.percent_bps <= 10_000:
            raise ValueError("percent_bps must be within 1..10000")
        if self.amount_cents is not None and self.amount_cents <= 0:
            raise ValueError("amount_cents must be > 0")
        for instant in (self.valid_from, self.valid_until):
            if instant is not None and instant.utcoffset() is None:
                raise ValueError("coupon validity bounds must be aware datetimes")
        if not self.code.strip():
            raise ValueError("coupon code must not be blank")

    @property
    def normalized_code(self) -> str:
        """The code as it is matched: stripped and case-folded."""
        return normalize_code(self.code)

    def discount_on(self, amount_cents: int) -> int:
        """The discount this coupon takes off ``amount_cents``; never more than it."""
        if self.percent_bps is not None:
            return apply_bps(amount_cents, self.percent_bps)
        return min(self.amount_cents or 0, amount_cents)

    def refusal(
        self,
        *,
        at: datetime,
        service_id: str,
        frequency_slug: str,
        subtotal_cents: int,
        usage: CouponUsage,
    ) -> tuple[str, str] | None:
        """The first rule this use breaks as ``(rule, detail)``, or None if it may be used."""
        # Checked in order, each only when the ones before it passed (priced on every quote).
        if not self.active:
            return "inactive", "it is no longer active."
        if self.valid_from is not None and at < self.valid_from:
            return "not_yet_valid", "it is not valid yet."
        if self.valid_until is not None and at >= self.valid_until:
            return "expired", "it has expired."
        if self.max_redemptions is not None and usage.total >= self.max_redemptions:
            return "max_redemptions", "it has been redeemed the maximum number of times."
        if self.per_customer_limit is not None and usage.by_customer >= self.per_customer_limit:
            return "per_customer_limit", "this customer has used it the maximum number of times."
        if self.service_ids and service_id not in self.service_ids:
            return "service", "it does not apply to this service."
        if self.frequency_slugs and frequency_slug not in self.frequency_slugs:
            return "frequency", "it does not apply to this frequency."
        if subtotal_cents < self.min_subtotal_cents:
            minimum = _dollars(self.min_subtotal_cents)
            return "min_subtotal", f"the subtotal must be at least {minimum}."
        return None


def _dollars(cents: int) -> str:
    # The detail is a sentence shown to a person, so the amount reads as money.
    whole, part = divmod(cents, 100)
    return f"${whole:,}.{part:02d}"


def usable_coupon(
    coupons_by_code: Mapping[str, Coupon],
    code: str,
    *,
    at: datetime,
    service_id: str,
    frequency_slug: str,
    subtotal_cents: int,
    usage: CouponUsage,
) -> Coupon:
    """The coupon for ``code`` if this use passes every rule; else ``CouponRejected``."""
    coupon = coupons_by_code.get(normalize_code(code))
    if coupon is None:
        raise CouponRejected(code, "unknown", "no coupon has this code.")
    refusal = coupon.refusal(
        at=at,
        service_id=service_id,
        frequency_slug=frequency_slug,
        subtotal_cents=subtotal_cents,
        usage=usage,
    )
    if refusal is not None:
        raise CouponRejected(coupon.code, *refusal)
    return coupon
