"""The referral programme: a customer's code gives a new customer the company's
``referral_discount_cents`` off the first visit (pricing takes it, first visit only, capped).

Rules, in this order, each refused with ``ReferralRejected`` naming it: ``disabled`` (the
company's discount is 0), ``unknown`` (no customer of the company has the code),
``own_code`` (the booking's own customer's code), ``not_first_booking`` (the booking's
customer has a booking already, of any status). Pricing a selection knows no customer and
checks the first two only.
"""

from __future__ import annotations

from booking_core.companies import Company
from booking_core.customers import Customer
from booking_core.errors import ReferralRejected

DISABLED = "Referral codes are not enabled for this company."
OWN_CODE = "A customer cannot use their own referral code."
NOT_FIRST_BOOKING = (
    "The referral discount is for a new customer's first booking; this customer has booked before."
)


def referral_discount(
    company: Company, code: str, referrer: Customer | None
) -> tuple[int, Customer]:
    """The discount ``code`` gives a first visit (the company's setting) and the customer
    it refers to. ``referrer`` is the customer holding the code (its merge survivor),
    None when nobody does."""
    if company.referral_discount_cents <= 0:
        raise ReferralRejected(code, "disabled", DISABLED)
    if referrer is None:
        raise ReferralRejected(
            code, "unknown", f"No customer of this company has the referral code {code!r}."
        )
    return company.referral_discount_cents, referrer


def check_referred(code: str, referrer: Customer, customer: Customer, *, booked: bool) -> None:
    """Whether ``customer`` (the booking's, after email matching) may book with the code
    of ``referrer``: not their own code, and only as their first booking (``booked``:
    they have a booking already, of any status)."""
    if referrer.id == customer.id:
        raise ReferralRejected(code, "own_code", OWN_CODE)
    if booked:
        raise ReferralRejected(code, "not_first_booking", NOT_FIRST_BOOKING)
