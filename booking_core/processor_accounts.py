"""A company's account at the card processor (a Stripe Connect account, ``acct_...``).

One account belongs to one company for good. Disconnecting keeps the record, marked with
when: money still moving on the old account (a late refund, a dispute) still lands in
that company's ledger (SPEC.md changelog 2026-10-10). A company has at most one
connected account at a time.
"""

from __future__ import annotations

import re
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.errors import RuleViolation, ValidationFailed

ACCOUNT_ID = re.compile(r"acct_[A-Za-z0-9]{1,250}")
"""What a connected account id looks like: ``acct_`` and letters and digits."""


@frozen(kw_only=True)
class ProcessorAccount:
    """The link between a processor account and the company it belongs to."""

    account_id: str
    company_id: str
    connected_at: datetime
    disconnected_at: datetime | None = None

    @property
    def connected(self) -> bool:
        """True until the company disconnects it (or the processor deauthorises it)."""
        return self.disconnected_at is None


def account_id_of(text: str) -> str:
    """``text`` as an account id, stripped; ``ValidationFailed`` on ``account`` if it is not one."""
    account_id = text.strip()
    if not ACCOUNT_ID.fullmatch(account_id):
        raise ValidationFailed(
            {"account": "Give a connected account id: acct_ and letters and digits."}
        )
    return account_id


def connect(
    *,
    company_id: str,
    account_id: str,
    stored: ProcessorAccount | None,
    current: ProcessorAccount | None,
    at: datetime,
) -> ProcessorAccount:
    """The account connected to the company, from what is stored: the record of
    ``account_id`` (any company's) and the company's connected account.

    Refused (``RuleViolation``) when the account belongs to another company, connected
    or not, and when the company has another account connected (disconnect that first).
    Connecting the account it has again changes nothing; connecting one it disconnected
    reconnects it from ``at``.
    """
    if stored is not None and stored.company_id != company_id:
        raise RuleViolation(f"Account {account_id} belongs to another company.")
    if current is not None and current.account_id != account_id:
        raise RuleViolation(
            f"The company is connected to account {current.account_id}; disconnect it first."
        )
    if stored is None:
        return ProcessorAccount(account_id=account_id, company_id=company_id, connected_at=at)
    if stored.connected:
        return stored
    return attrs.evolve(stored, connected_at=at, disconnected_at=None)


def disconnected(account: ProcessorAccount, at: datetime) -> ProcessorAccount:
    """``account`` marked disconnected at ``at``; unchanged if it already was."""
    if not account.connected:
        return account
    return attrs.evolve(account, disconnected_at=at)
