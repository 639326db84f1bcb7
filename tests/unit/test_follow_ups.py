"""Quote follow-ups and lead follow-up reminders (``booking_core.services.follow_ups``)
over the memory unit of work with a controlled clock."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.notifications import JinjaComposer
from booking_core import leads, quotes
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.events import EventType, event
from booking_core.leads import Lead, LeadStage
from booking_core.notifications import Message, MessageKind
from booking_core.paging import PageRequest
from booking_core.quotes import FollowUpStatus, Quote, QuoteStatus
from booking_core.services.follow_ups import (
    LEAD_REMINDER_HOUR,
    FollowUpsQueued,
    queue_due_follow_ups,
    quote_sent_message,
)
from booking_core.services.notifications import mail_events
from booking_core.services.quotes import (
    ActOnQuote,
    CreateQuote,
    QuoteAction,
    act_on_quote,
    create_quote,
)
from tests import factories as f

AT = datetime(2026, 6, 1, 13, 0, tzinfo=UTC)  # 09:00 in New York
BASE = "https://book.example"
DAY = timedelta(days=1)


class Composer:
    """Says what it was asked: the kind as subject, the context in the text."""

    def __init__(self) -> None:
        self.broken = False

    def compose(
        self, kind: MessageKind, company: Company, context: Mapping[str, object]
    ) -> tuple[str, str, str]:
        if self.broken:
            raise RuntimeError("template error")
        text = "\n".join(f"{k}={v}" for k, v in sorted(context.items()))
        return f"{kind} from {company.name}", text, f"<p>{text}</p>"


@attrs.define
class Shop:
    store: MemoryStore
    company: Company
    clock: FixedClock
    composer: Composer

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def sweep(self, at: datetime | None = None) -> FollowUpsQueued:
        if at is not None:
            self.clock.current = at
        return queue_due_follow_ups(
            None,
            uow_factory=self.uow,
            clock=self.clock,
            composer=self.composer,
            base_url=BASE,
        )

    def messages(self, subject_id: str | None = None) -> list[Message]:
        with self.uow() as uow:
            found = uow.messages.list(
                self.company.id, PageRequest(limit=100), subject_id=subject_id
            ).items
        return sorted(found, key=lambda m: m.created_at)

    def quote(self, quote_id: str) -> Quote:
        with self.uow() as uow:
            return uow.quotes.get(self.company.id, quote_id)

    def act(self, quote_id: str, action: QuoteAction, at: datetime) -> Quote:
        self.clock.current = at
        cmd = ActOnQuote(company_id=self.company.id, quote_id=quote_id, action=action)
        return act_on_quote(cmd, uow=self.uow(), clock=self.clock)


@pytest.fixture
def shop() -> Shop:
    store = MemoryStore()
    company = f.company()
    with MemoryUnitOfWork(store) as uow:
        uow.companies.add(company)
        uow.commit()
    return Shop(store, company, FixedClock(AT), Composer())


def sent_quote(
    shop: Shop,
    *,
    expires_at: datetime | None = AT + 14 * DAY,
    customer: bool = True,
    email: str = "ada@example.com",
) -> Quote:
    """A quote sent at ``AT``: follow-ups due at AT+2d and AT+5d."""
    with shop.uow() as uow:
        if customer:
            person = f.customer(shop.company.id, email=email)
            uow.customers.add(person)
            owner = {"customer_id": person.id}
        else:
            lead = f.lead(shop.company.id)
            uow.leads.add(lead)
            owner = {"lead_id": lead.id}
        draft = quotes.create_quote(
            company_id=shop.company.id,
            at=AT,
            manual_lines=(quotes.ManualLine("Windows", 12_000),),
            expires_at=expires_at,
            **owner,  # type: ignore[arg-type]
        )
        quote = quotes.send(draft, AT)
        uow.quotes.add(quote)
        uow.commit()
    return quote


def statuses(quote: Quote) -> list[FollowUpStatus]:
    return [x.status for x in quote.follow_ups]


S, SENT, SKIP, X = (
    FollowUpStatus.SCHEDULED,
    FollowUpStatus.SENT,
    FollowUpStatus.SKIPPED,
    FollowUpStatus.CANCELLED,
)


# --- the core: settle_due_follow_ups and resume ---------------------------------------


def _sent() -> Quote:
    draft = quotes.create_quote(
        company_id="cmp_1",
        at=AT,
        customer_id="cus_1",
        manual_lines=(quotes.ManualLine("Windows", 1),),
        expires_at=AT + 14 * DAY,
    )
    return quotes.send(draft, AT)


def test_nothing_is_settled_before_a_follow_up_is_due() -> None:
    quote = _sent()
    assert quotes.settle_due_follow_ups(quote, AT + 2 * DAY - timedelta(seconds=1)) == (
        quote,
        None,
    )


def test_a_due_follow_up_is_sent_and_the_quote_changes_version() -> None:
    quote = _sent()
    settled, index = quotes.settle_due_follow_ups(quote, AT + 2 * DAY)
    assert index == 0
    assert statuses(settled) == [SENT, S]
    assert settled.version == quote.version + 1


def test_a_follow_up_due_while_paused_is_skipped() -> None:
    paused = quotes.pause(_sent(), AT + DAY)
    settled, index = quotes.settle_due_follow_ups(paused, AT + 2 * DAY)
    assert index is None
    assert statuses(settled) == [SKIP, S]


def test_of_several_due_at_once_only_the_latest_is_sent() -> None:
    settled, index = quotes.settle_due_follow_ups(_sent(), AT + 6 * DAY)
    assert index == 1
    assert statuses(settled) == [SKIP, SENT]


def test_resuming_skips_what_fell_due_while_paused() -> None:
    paused = quotes.pause(_sent(), AT + DAY)
    resumed = quotes.resume(paused, AT + 3 * DAY)
    assert statuses(resumed) == [SKIP, S]
    assert quotes.settle_due_follow_ups(resumed, AT + 3 * DAY)[1] is None
    assert quotes.settle_due_follow_ups(resumed, AT + 5 * DAY)[1] == 1


def test_an_answered_or_expired_quote_has_nothing_to_settle() -> None:
    quote = _sent()
    accepted = quotes.accept(quote, AT + DAY)
    assert statuses(accepted) == [X, X]
    assert quotes.settle_due_follow_ups(accepted, AT + 6 * DAY) == (accepted, None)
    # Past expiry, before any sweeper stored it: nothing goes out either.
    assert quotes.settle_due_follow_ups(quote, AT + 15 * DAY) == (quote, None)


# --- the sweep --------------------------------------------------------------------------


def test_a_follow_up_is_mailed_at_its_time_once(shop: Shop) -> None:
    quote = sent_quote(shop)
    assert shop.sweep(AT + 2 * DAY - timedelta(minutes=1)) == FollowUpsQueued()
    assert shop.messages() == []
    done = shop.sweep(AT + 2 * DAY)
    assert done == FollowUpsQueued(quote_follow_ups=1)
    (message,) = shop.messages()
    assert message.kind is MessageKind.QUOTE_FOLLOW_UP
    assert message.to == "ada@example.com"
    assert message.subject_id == quote.id
    assert message.dedupe_key == f"quote.follow_up:{quote.id}:0"
    assert f"quote_url={BASE}/{shop.company.slug}/q/{quote.public_token}" in message.text
    assert "follow_up=1" in message.text
    assert message.next_attempt_at == AT + 2 * DAY
    assert statuses(shop.quote(quote.id)) == [SENT, S]
    # Sweeping again, at once or later before the next one is due, queues nothing.
    assert shop.sweep(AT + 2 * DAY) == FollowUpsQueued()
    assert shop.sweep(AT + 4 * DAY) == FollowUpsQueued()
    assert len(shop.messages()) == 1
    assert shop.sweep(AT + 5 * DAY) == FollowUpsQueued(quote_follow_ups=1)
    assert [m.dedupe_key for m in shop.messages()] == [
        f"quote.follow_up:{quote.id}:0",
        f"quote.follow_up:{quote.id}:1",
    ]
    assert statuses(shop.quote(quote.id)) == [SENT, SENT]


def test_paused_follow_up_is_skipped_and_one_due_after_resuming_is_sent(shop: Shop) -> None:
    quote = sent_quote(shop)
    shop.act(quote.id, QuoteAction.PAUSE, AT + DAY)
    assert shop.sweep(AT + 2 * DAY) == FollowUpsQueued(skipped=1)
    assert shop.messages() == []
    assert statuses(shop.quote(quote.id)) == [SKIP, S]
    shop.act(quote.id, QuoteAction.RESUME, AT + 3 * DAY)
    assert shop.sweep(AT + 3 * DAY) == FollowUpsQueued()  # the skipped one stays skipped
    assert shop.sweep(AT + 5 * DAY) == FollowUpsQueued(quote_follow_ups=1)
    (message,) = shop.messages()
    assert message.dedupe_key == f"quote.follow_up:{quote.id}:1"
    assert statuses(shop.quote(quote.id)) == [SKIP, SENT]


def test_a_follow_up_due_while_paused_is_not_sent_after_resuming_even_unswept(
    shop: Shop,
) -> None:
    quote = sent_quote(shop)
    shop.act(quote.id, QuoteAction.PAUSE, AT + DAY)
    resumed = shop.act(quote.id, QuoteAction.RESUME, AT + 3 * DAY)
    assert statuses(resumed) == [SKIP, S]
    assert shop.sweep(AT + 3 * DAY) == FollowUpsQueued()
    assert shop.messages() == []


@pytest.mark.parametrize("action", [QuoteAction.ACCEPT, QuoteAction.REJECT])
def test_an_answered_quote_is_not_followed_up(shop: Shop, action: QuoteAction) -> None:
    quote = sent_quote(shop)
    shop.act(quote.id, action, AT + DAY)
    assert shop.sweep(AT + 6 * DAY) == FollowUpsQueued()
    assert shop.messages() == []
    assert statuses(shop.quote(quote.id)) == [X, X]


def test_an_expired_quote_is_not_followed_up(shop: Shop) -> None:
    quote = sent_quote(shop, expires_at=AT + 4 * DAY)
    assert len(quote.follow_ups) == 1  # the 5-day one falls after expiry
    assert shop.sweep(AT + 4 * DAY) == FollowUpsQueued()
    assert shop.messages() == []
    assert shop.quote(quote.id).status is QuoteStatus.SENT  # the expiry sweep stores it


def test_after_a_worker_outage_only_the_latest_due_follow_up_is_sent(shop: Shop) -> None:
    quote = sent_quote(shop)
    assert shop.sweep(AT + 6 * DAY) == FollowUpsQueued(quote_follow_ups=1, skipped=1)
    (message,) = shop.messages()
    assert message.dedupe_key == f"quote.follow_up:{quote.id}:1"


def test_a_quote_for_a_lead_is_mailed_to_the_lead(shop: Shop) -> None:
    quote = sent_quote(shop, customer=False)
    shop.sweep(AT + 2 * DAY)
    (message,) = shop.messages()
    with shop.uow() as uow:
        assert quote.lead_id is not None
        assert message.to == uow.leads.get(shop.company.id, quote.lead_id).email


def test_a_follow_up_with_no_address_is_skipped(shop: Shop) -> None:
    quote = sent_quote(shop, customer=False)
    with shop.uow() as uow:
        assert quote.lead_id is not None
        lead = uow.leads.get(shop.company.id, quote.lead_id)
        uow.leads.save(attrs.evolve(lead, email=None, phone_e164="+12125550100"))
        uow.commit()
    assert shop.sweep(AT + 2 * DAY) == FollowUpsQueued(skipped=1)
    assert shop.messages() == []
    assert statuses(shop.quote(quote.id)) == [SKIP, S]


def test_a_failing_template_stores_nothing_and_is_tried_again(shop: Shop) -> None:
    quote = sent_quote(shop)
    other = sent_quote(shop, email="bob@example.com")
    shop.composer.broken = True
    done = shop.sweep(AT + 2 * DAY)
    assert {quote_id for quote_id, _ in done.failures} == {quote.id, other.id}
    assert "template error" in done.failures[0][1]
    assert shop.messages() == []
    assert statuses(shop.quote(quote.id)) == [S, S]
    shop.composer.broken = False
    assert shop.sweep(AT + 2 * DAY + timedelta(minutes=1)).quote_follow_ups == 2


def test_the_quote_sent_message_carries_the_page_link_on_the_companys_domain(
    shop: Shop,
) -> None:
    quote = sent_quote(shop)
    company = attrs.evolve(shop.company, custom_domain="quotes.sparkle.example")
    with shop.uow() as uow:
        message = quote_sent_message(
            uow, company, quote, at=AT, composer=shop.composer, base_url=BASE
        )
    assert message is not None
    assert message.kind is MessageKind.QUOTE_SENT
    assert message.to == "ada@example.com"
    assert f"quote_url=https://quotes.sparkle.example/q/{quote.public_token}" in message.text
    assert "name=Ada Lovelace" in message.text
    assert "total_cents=12000" in message.text
    assert message.dedupe_key == f"quote.sent:{quote.id}"


# --- lead follow-up reminders -----------------------------------------------------------

ON = date(2026, 6, 3)
LOCAL_EIGHT = datetime(2026, 6, 3, 12, 0, tzinfo=UTC)  # 08:00 in New York, EDT


def add_lead(
    shop: Shop, *, owner: str | None, on: date | None = ON, stage: LeadStage | None = None
) -> Lead:
    lead = f.lead(shop.company.id)
    lead = leads.update(lead, at=f.T0, owner=owner, follow_up_on=on, stage=stage)
    with shop.uow() as uow:
        uow.leads.add(lead)
        uow.commit()
    return lead


def test_a_lead_reminder_goes_to_its_owner_on_the_date_from_eight_once(shop: Shop) -> None:
    assert LEAD_REMINDER_HOUR == 8
    lead = add_lead(shop, owner="sam@sparkle.example")
    add_lead(shop, owner="sam@sparkle.example", on=ON + DAY)
    assert shop.sweep(LOCAL_EIGHT - timedelta(minutes=1)).lead_reminders == 0
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 1
    (message,) = shop.messages()
    assert message.kind is MessageKind.LEAD_FOLLOW_UP
    assert message.to == "sam@sparkle.example"
    assert message.subject_id == lead.id
    assert message.dedupe_key == f"lead.follow_up:{lead.id}:2026-06-03"
    assert shop.sweep(LOCAL_EIGHT + timedelta(hours=3)).lead_reminders == 0
    assert len(shop.messages(lead.id)) == 1


def test_no_lead_reminder_the_day_before_or_after(shop: Shop) -> None:
    add_lead(shop, owner="sam@sparkle.example")
    assert shop.sweep(LOCAL_EIGHT - DAY).lead_reminders == 0
    assert shop.sweep(LOCAL_EIGHT + DAY).lead_reminders == 0
    assert shop.messages() == []


def test_a_closed_lead_gets_no_reminder(shop: Shop) -> None:
    add_lead(shop, owner="sam@sparkle.example", stage=LeadStage.LOST)
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 0


def test_an_owner_that_is_not_an_address_with_no_company_address_gets_nothing(
    shop: Shop,
) -> None:
    add_lead(shop, owner="Sam")
    add_lead(shop, owner=None)
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 0
    assert shop.messages() == []


def test_an_owner_that_is_almost_an_address_is_not_written_to(shop: Shop) -> None:
    add_lead(shop, owner="sam@sparkle.example.")
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 0
    assert shop.messages() == []


def test_an_owner_that_is_not_an_address_is_reminded_through_the_company_address(
    shop: Shop,
) -> None:
    with shop.uow() as uow:
        uow.companies.save(attrs.evolve(shop.company, notify_email="office@sparkle.example"))
        uow.commit()
    lead = add_lead(shop, owner="Sam")
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 1
    (message,) = shop.messages()
    assert message.to == "office@sparkle.example"
    assert lead.email
    assert message.reply_to == lead.email  # a reply writes to the lead, not to the office
    assert "to_office=True" in message.text  # the templates say so (no "write to" itself)
    assert "owner=Sam" in message.text
    assert message.subject_id == lead.id


def test_a_reminder_of_a_lead_without_an_email_has_no_reply_to_the_office_itself(
    shop: Shop,
) -> None:
    with shop.uow() as uow:
        uow.companies.save(attrs.evolve(shop.company, notify_email="office@sparkle.example"))
        uow.commit()
    lead = attrs.evolve(f.lead(shop.company.id), email=None, phone_e164="+12125550101")
    lead = leads.update(lead, at=f.T0, owner="Sam", follow_up_on=ON)
    with shop.uow() as uow:
        uow.leads.add(lead)
        uow.commit()
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 1
    (message,) = shop.messages()
    assert (message.to, message.reply_to) == ("office@sparkle.example", None)


def test_a_lead_reminder_keeps_what_the_lead_typed_out_of_headers_and_markup(
    shop: Shop,
) -> None:
    shop.composer = JinjaComposer()  # type: ignore[assignment]
    lead = attrs.evolve(
        add_lead(shop, owner="sam@sparkle.example"),
        name="Grace\r\nBcc: all@example.com",
        message="<script>alert(1)</script>",
    )
    with shop.uow() as uow:
        uow.leads.save(lead)
        uow.commit()
    assert shop.sweep(LOCAL_EIGHT).lead_reminders == 1
    (message,) = shop.messages()
    assert message.subject == "Follow up today: Grace Bcc: all@example.com"
    assert "<script>" not in message.html
    assert "&lt;script&gt;" in message.html
    assert message.to == "sam@sparkle.example"


# --- the quote.sent email, from its event -------------------------------------------------


def mail_events_now(shop: Shop) -> None:
    mail_events(uow=shop.uow(), composer=shop.composer, clock=shop.clock, base_url=BASE)


def test_sending_a_quote_mails_it_once_with_its_link(shop: Shop) -> None:
    with shop.uow() as uow:
        person = f.customer(shop.company.id, email="ada@example.com")
        uow.customers.add(person)
        uow.commit()
    cmd = CreateQuote(
        company_id=shop.company.id,
        customer_id=person.id,
        manual_lines=(quotes.ManualLine("Windows", 12_000),),
        send_now=True,
    )
    quote = create_quote(cmd, uow=shop.uow(), clock=shop.clock)
    mail_events_now(shop)
    mail_events_now(shop)
    (message,) = shop.messages(quote.id)
    assert message.kind is MessageKind.QUOTE_SENT
    assert message.to == "ada@example.com"
    assert f"quote_url={BASE}/{shop.company.slug}/q/{quote.public_token}" in message.text


def test_a_quote_answered_before_the_worker_ran_is_not_mailed(shop: Shop) -> None:
    quote = sent_quote(shop)
    with shop.uow() as uow:
        uow.outbox.add(event(EventType.QUOTE_SENT, quote, company_id=shop.company.id, at=AT))
        uow.commit()
    shop.act(quote.id, QuoteAction.ACCEPT, AT + timedelta(minutes=1))
    mail_events_now(shop)
    assert shop.messages(quote.id) == []


def test_a_quote_expiring_at_local_midnight_is_mailed_as_open_until_the_day_before(
    shop: Shop,
) -> None:
    """Expiring at 00:00 on Monday, June 15 (New York): its last day is Sunday, June 14."""
    midnight = datetime(2026, 6, 15, 4, 0, tzinfo=UTC)
    quote = sent_quote(shop, expires_at=midnight)
    with shop.uow() as uow:
        message = quote_sent_message(
            uow, shop.company, quote, at=AT, composer=JinjaComposer(), base_url=BASE
        )
    assert message is not None
    assert "The quote is open until Sunday, June 14, 2026." in message.text
    assert "The quote is open until Sunday, June 14, 2026." in message.html
    assert "June 15" not in message.text + message.html
