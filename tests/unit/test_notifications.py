"""Email notices over the memory unit of work and a memory mailer: which change mails
what (one confirmation per booking, plan or request; no notice for a change of crew
alone), reminders (at their time, once per visit and start, none for a visit booked
inside the window, none when the company turned them off), the retry schedule, and the
refusals that keep headers and HTML safe (line breaks in names and subjects, markup in
names), the SMTP URL and the email as written."""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, timedelta
from email import message_from_bytes, policy
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.notifications import JinjaComposer, MemoryMailer, parse_smtp_url
from adapters.notifications.composer import money
from adapters.notifications.smtp import SmtpSettings, SmtpUrlError, email_of
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import ValidationFailed
from booking_core.notifications import (
    RETRY_DELAYS,
    MailRejected,
    Message,
    MessageKind,
    MessageStatus,
    after_failure,
)
from booking_core.paging import PageRequest
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.pricing import SelectedItem
from booking_core.quotes import ManualLine
from booking_core.services import companies, leads, scheduling, self_service
from booking_core.services import quotes as quote_cases
from booking_core.services.notifications import (
    booking_context,
    change_context,
    confirmation_context,
    sender_address,
    when,
)
from booking_core.services.quotes import QuoteAction
from booking_core.services.setup import validate_company
from entrypoints.settings import ConfigError, Settings
from entrypoints.worker import Mail, Worker
from tests import factories
from tests.unit.bookings_support import NY, single

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
DRIVE = TableDriveTime(default=20)
HOME = Address("1 Main St", "New York", "NY", "10001")
MAIL_FROM = "bookings@mail.example.com"


def tuesday_at(hour: int, weeks: int = 0) -> datetime:
    # New York is UTC-5 in November.
    return datetime(2026, 11, 24, tzinfo=UTC) + timedelta(weeks=weeks, hours=hour + 5)


class World:
    """One company (demo catalog, Rosa working every day) over one store, and a worker
    that mails into ``mailer``."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(NOW)
        self.mailer = MemoryMailer()
        made = companies.create_company(
            companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
            uow=self.uow(),
            clock=self.clock,
        )
        self.company = attrs.evolve(made, notify_email="office@acme.example")
        with self.uow() as unit:
            unit.companies.save(self.company)
            unit.crew.add(factories.all_week_crew(made.id, NOW))
            unit.commit()
        self.worker = Worker(
            uow=self.uow,
            render=lambda event: b"{}",  # type: ignore[arg-type,return-value]
            send=lambda *_: pytest.fail("no webhook endpoint"),  # type: ignore[arg-type]
            clock=self.clock,
            mail=Mail(JinjaComposer(), self.mailer, MAIL_FROM, "https://book.example.com"),
        )

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def book(
        self,
        start: datetime,
        frequency: str = "one_time",
        email: str = "ada@example.com",
        *,
        extras: tuple[str, ...] = (),
        more_starts: tuple[datetime, ...] = (),
    ) -> list[Booking]:
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug=frequency,
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email=email),
                address=HOME,
                extras=tuple(SelectedItem(extra) for extra in extras),
                additional_starts=more_starts,
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PhonenumbersNormalizer(),
        )

    def move(
        self,
        booking_id: str,
        start: datetime,
        scope: RescheduleScope = RescheduleScope.THIS,
        crew_ids: tuple[str, ...] | None = None,
    ) -> list[Booking]:
        return scheduling.reschedule_booking(
            self.company.id,
            booking_id,
            start,
            scope,
            crew_ids=crew_ids,
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
        )

    def cancel(
        self, booking_id: str, scope: CancelScope = CancelScope.THIS, after: date | None = None
    ) -> list[Booking]:
        return scheduling.cancel_booking(
            self.company.id, booking_id, scope, after=after, uow=self.uow(), clock=self.clock
        )

    def sent(self, kind: MessageKind | None = None) -> list[Message]:
        return [m for m, _ in self.mailer.sent if kind is None or m.kind is kind]

    def stored(self) -> list[Message]:
        with self.uow() as unit:
            return list(unit.messages.list(self.company.id, PageRequest(limit=200)).items)


@pytest.fixture
def world() -> World:
    return World()


def test_a_booking_mails_one_confirmation_from_the_company_with_its_reply_to(world: World):
    (made,) = world.book(tuesday_at(9))
    world.worker.run_once()
    world.worker.run_once()
    ((message, sender),) = world.mailer.sent
    assert sender == f"Acme Maids <{MAIL_FROM}>"
    assert message.kind is MessageKind.BOOKING_CONFIRMED
    assert (message.to, message.reply_to, message.subject_id) == (
        "ada@example.com",
        "office@acme.example",
        made.id,
    )
    assert message.subject == "Booked: Standard clean on Tuesday, November 24, 2026 at 9:00 AM EST"
    assert f"https://book.example.com/acme/track/{made.tracking_token}" in message.text
    assert [m.status for m in world.stored()] == [MessageStatus.SENT]


@pytest.mark.parametrize("frequency", ["one_time", "weekly"])
def test_a_visit_cancelled_before_its_confirmation_went_out_is_not_confirmed(
    world: World, frequency: str
):
    """Booked and cancelled (for a plan: every visit) before the worker mailed: the
    customer gets the cancellation alone, never a "Booked" email offering to
    reschedule a cancelled visit."""
    made = world.book(tuesday_at(9, weeks=1), frequency)
    world.cancel(made[0].id, CancelScope.THIS_AND_FUTURE)
    world.worker.run_once()
    world.worker.run_once()
    assert world.sent(MessageKind.BOOKING_CONFIRMED) == []
    (cancelled,) = world.sent(MessageKind.BOOKING_CANCELLED)
    assert cancelled.subject_id == made[0].id


@pytest.mark.parametrize("scope", [CancelScope.PLAN_AFTER, CancelScope.THIS_AND_FUTURE])
def test_a_plans_cancellation_notice_names_the_first_visit_it_cancelled(
    world: World, scope: CancelScope
):
    """The one notice of a plan's visits cancelled together named whichever visit's event
    came first (often the last visit), so the earlier cancelled ones read as still on."""
    visits = world.book(tuesday_at(9, weeks=1), "weekly")
    world.worker.run_once()
    if scope is CancelScope.PLAN_AFTER:
        ends = visits[2].start.astimezone(NY).date()
        cancelled = world.cancel(visits[0].id, scope, after=ends)
    else:
        cancelled = world.cancel(visits[3].id, scope)
    first = min((v for v in cancelled if v.status.value == "cancelled"), key=lambda v: v.start)
    assert first.id == visits[3].id
    assert len([v for v in cancelled if v.status.value == "cancelled"]) > 2
    world.worker.run_once()
    (notice,) = world.sent(MessageKind.BOOKING_CANCELLED)
    assert notice.subject_id == first.id
    assert "Tuesday, December 22, 2026" in notice.subject
    assert "The later visits of your plan are cancelled too." in notice.text


def test_one_visit_of_a_plan_cancelled_alone_says_the_plan_goes_on_and_when(world: World):
    visits = world.book(tuesday_at(9, weeks=1), "weekly")
    world.worker.run_once()
    world.cancel(visits[1].id, CancelScope.THIS)
    world.worker.run_once()
    (notice,) = world.sent(MessageKind.BOOKING_CANCELLED)
    assert notice.subject_id == visits[1].id
    assert "The later visits of your plan are cancelled too." not in notice.text
    assert (  # the earliest visit still booked: the first, a week before the one cancelled
        "Only this visit is cancelled: your other visits stay booked. "
        "The next is on Tuesday, December 1, 2026 at 9:00 AM EST."
    ) in notice.text
    (one_time,) = world.book(tuesday_at(14, weeks=2), email="once@example.com")
    world.cancel(one_time.id, CancelScope.THIS)
    world.worker.run_once()
    assert "Only this visit" not in world.sent(MessageKind.BOOKING_CANCELLED)[-1].text


def test_a_customer_merged_twice_is_written_to_at_the_last_survivor(world: World):
    (made,) = world.book(tuesday_at(9))
    middle = factories.customer(world.company.id, "middle@example.com")
    survivor = factories.customer(world.company.id, "survivor@example.com")
    with world.uow() as unit:
        first = unit.customers.get(world.company.id, made.customer_id)
        unit.customers.add(attrs.evolve(middle, merged_into=survivor.id))
        unit.customers.add(survivor)
        unit.customers.save(attrs.evolve(first, merged_into=middle.id))
        unit.commit()

    world.worker.run_once()
    world.worker.run_once()

    assert [m.to for m in world.sent(MessageKind.BOOKING_CONFIRMED)] == ["survivor@example.com"]


def test_a_plan_mails_one_confirmation_listing_its_visits(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly", email="plan@example.com")
    assert len(visits) > 2
    world.worker.run_once()
    (confirmation,) = world.sent()
    assert confirmation.subject == "Your recurring Standard clean with Acme Maids is booked"
    assert "- Tuesday, December 1, 2026 at 9:00 AM EST" in confirmation.text
    assert confirmation.subject_id == visits[0].id


def test_a_plan_confirmation_states_the_first_visit_and_the_later_visits_to_the_cent(
    world: World,
):
    """A first-visit-only extra makes the first visit dearer than the later ones: the
    email names both prices, never the first one "per visit"."""
    visits = world.book(tuesday_at(9), frequency="weekly", extras=("ext_first_deep",))
    first, later = visits[0].price.total_cents, visits[1].price.total_cents
    assert first > later
    world.worker.run_once()
    (confirmation,) = world.sent()
    expected = f"first visit {money(first)}, then {money(later)} a visit"
    assert f"Price:   {expected}\n" in confirmation.text
    assert "per visit" not in confirmation.text
    html = re.sub(r"</?strong>", "", confirmation.html)
    assert expected in html
    assert "per visit" not in html


def test_a_several_dates_confirmation_totals_every_date(world: World):
    visits = world.book(tuesday_at(9), more_starts=(tuesday_at(9, 1), tuesday_at(9, 2)))
    assert len(visits) == 3
    world.worker.run_once()
    (confirmation,) = world.sent()
    total = money(sum(v.price.total_cents for v in visits))
    assert f"Total:   {total} for all 3 dates\n" in confirmation.text
    assert f"Total: <strong>{total}</strong> for all 3 dates" in confirmation.html
    for visit in visits:
        listed = f"{when(visit.start, visit.zone)}: {money(visit.price.total_cents)}"
        assert f"- {listed}\n" in confirmation.text
        assert f"<li>{listed}</li>" in confirmation.html


def test_a_one_time_confirmation_states_its_total_and_lists_no_visits(world: World):
    (made,) = world.book(tuesday_at(9))
    world.worker.run_once()
    (confirmation,) = world.sent()
    assert f"Total:   {money(made.price.total_cents)}\n" in confirmation.text
    assert "Your visits" not in confirmation.text


def test_a_change_of_crew_alone_mails_nothing_and_a_plan_move_mails_once(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly", email="plan@example.com")
    with world.uow() as unit:
        unit.crew.add(factories.all_week_crew(world.company.id, NOW, member_id="crew_sam"))
        unit.commit()
    world.worker.run_once()
    world.move(visits[1].id, visits[1].start, RescheduleScope.THIS, crew_ids=("crew_sam",))
    world.worker.run_once()
    assert world.sent(MessageKind.BOOKING_RESCHEDULED) == []
    world.move(visits[1].id, visits[1].start + timedelta(hours=2), RescheduleScope.THIS_AND_FUTURE)
    world.worker.run_once()
    (moved,) = world.sent(MessageKind.BOOKING_RESCHEDULED)
    assert moved.subject_id == visits[1].id
    assert "from Tuesday, December 1, 2026 at 9:00 AM EST" in moved.text
    assert "The later visits of your plan moved along with it." in moved.text
    world.cancel(visits[2].id, CancelScope.THIS_AND_FUTURE)
    world.worker.run_once()
    (cancelled,) = world.sent(MessageKind.BOOKING_CANCELLED)
    assert cancelled.subject_id == visits[2].id
    assert "The later visits of your plan are cancelled too." in cancelled.text


def test_each_move_of_a_booking_mails_its_own_notice(world: World):
    (made,) = world.book(tuesday_at(9, weeks=1))
    for hours in (2, 4):
        world.clock.advance(timedelta(minutes=5))
        world.move(made.id, made.start + timedelta(hours=hours), RescheduleScope.THIS)
        world.worker.run_once()
    first, second = world.sent(MessageKind.BOOKING_RESCHEDULED)
    assert "at 11:00 AM" in first.subject
    assert "at 1:00 PM" in second.subject
    assert "from Tuesday, December 1, 2026 at 11:00 AM EST" in second.text


def test_reminders_come_at_their_time_once_per_visit_and_start(world: World):
    (made,) = world.book(tuesday_at(9, weeks=1))
    world.worker.run_once()
    world.clock.current = made.start - timedelta(hours=24, seconds=1)
    world.worker.run_once()
    assert world.sent(MessageKind.BOOKING_REMINDER) == []
    world.clock.current = made.start - timedelta(hours=23)
    world.worker.run_once()
    world.worker.run_once()
    (reminder,) = world.sent(MessageKind.BOOKING_REMINDER)
    assert reminder.dedupe_key == f"reminder:{made.id}:{made.start.isoformat()}"
    assert (
        reminder.subject == "Reminder: Standard clean on Tuesday, December 1, 2026 at 9:00 AM EST"
    )


def test_a_visit_booked_inside_the_window_or_a_company_without_reminders_gets_none(
    world: World,
):
    (soon,) = world.book(NOW + timedelta(hours=6))  # the confirmation is its reminder
    world.clock.current = soon.start - timedelta(hours=1)
    world.worker.run_once()
    assert [m.kind for m in world.sent()] == [MessageKind.BOOKING_CONFIRMED]
    (later,) = world.book(tuesday_at(9, weeks=2), email="bea@example.com")
    with world.uow() as unit:
        unit.companies.save(attrs.evolve(world.company, reminder_hours=0))
        unit.commit()
    world.clock.current = later.start - timedelta(hours=1)
    world.worker.run_once()
    assert world.sent(MessageKind.BOOKING_REMINDER) == []


def test_a_visit_moved_into_the_window_is_not_reminded_but_one_moved_out_is_again(
    world: World,
):
    (made,) = world.book(tuesday_at(9, weeks=2))
    world.clock.current = made.start - timedelta(hours=23)
    world.worker.run_once()
    assert len(world.sent(MessageKind.BOOKING_REMINDER)) == 1
    # Moved inside the window: the notice says it.
    world.move(made.id, made.start + timedelta(minutes=30), RescheduleScope.THIS)
    world.worker.run_once()
    assert len(world.sent(MessageKind.BOOKING_RESCHEDULED)) == 1
    assert len(world.sent(MessageKind.BOOKING_REMINDER)) == 1
    world.move(made.id, made.start + timedelta(days=7), RescheduleScope.THIS)
    world.clock.current = made.start + timedelta(days=6, hours=1)
    world.worker.run_once()
    reminders = world.sent(MessageKind.BOOKING_REMINDER)
    assert len(reminders) == 2
    assert reminders[1].dedupe_key == (
        f"reminder:{made.id}:{(made.start + timedelta(days=7)).isoformat()}"
    )


def test_a_transient_failure_is_retried_on_the_schedule_then_given_up(world: World):
    world.book(tuesday_at(9, weeks=2))
    world.mailer.failures = [MailRejected(False, "451 later")] * 6
    first = world.worker.run_once().as_json()
    # A retry to come is a failed attempt, not yet an email given up (as the text says).
    assert (first["mailAttempts"], first["mailsFailed"], first["mailsGivenUp"]) == (1, 1, 0)
    done = None
    for delay in RETRY_DELAYS:
        (pending,) = world.stored()
        assert pending.status is MessageStatus.PENDING
        assert pending.next_attempt_at == world.clock.now() + delay
        world.clock.advance(delay)
        done = world.worker.run_once().as_json()
    assert done is not None
    assert (done["mailsFailed"], done["mailsGivenUp"]) == (1, 1)
    (failed,) = world.stored()
    assert (failed.status, failed.attempts, failed.last_error) == (
        MessageStatus.FAILED,
        6,
        "451 later",
    )
    assert world.mailer.sent == []


def test_after_failure_follows_the_schedule_and_a_permanent_one_fails_at_once():
    message = a_message()
    tried = after_failure(message, NOW, "451", permanent=False)
    assert (tried.attempts, tried.next_attempt_at) == (1, NOW + timedelta(minutes=1))
    refused = after_failure(message, NOW, "550", permanent=True)
    assert (refused.status, refused.attempts) == (MessageStatus.FAILED, 1)
    assert [d.total_seconds() for d in RETRY_DELAYS] == [60, 300, 1800, 7200, 21600]


# --- Header and HTML injection ---------------------------------------------------------------


def a_message(**changes: object) -> Message:
    return factories.message(**{"next_attempt_at": NOW, "created_at": NOW, **changes})


@pytest.mark.parametrize("field", ["to", "subject", "reply_to"])
@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_a_message_refuses_a_line_break_in_a_header_field(field: str, newline: str):
    with pytest.raises(ValueError, match="single line"):
        a_message(**{field: f"ada@example.com{newline}Bcc: eve@example.com"})


def composed(name: str, customer_name: str) -> tuple[str, str, str]:
    company = Company(
        id="cmp_a",
        slug="acme",
        name=name,
        timezone="America/New_York",
        code_prefix="AC",
        created_at=NOW,
        brand_color="#1d4ed8",
    )
    context = {
        "customer_name": customer_name,
        "booking_code": "AC-1",
        "service": "Standard clean",
        "starts": "Tuesday, November 24, 2026 at 9:00 AM EST",
        "address": "1 Main St, New York, NY 10001",
        "tracking_url": "https://book.example.com/acme/track/t",
        "portal_url": "https://book.example.com/acme/portal",
        "total_cents": 12_345,
        "is_plan": True,
        "days": 1,
        "day_starts": [],
        "can_change": True,
        "changes_close": "Monday, November 23, 2026 at 9:00 AM EST",
        "visits": [],
        "more_visits": 0,
    }
    return JinjaComposer().compose(MessageKind.BOOKING_CONFIRMED, company, context)


def test_a_line_break_in_a_name_never_reaches_a_header():
    subject, _, _ = composed("Acme\r\nBcc: eve@example.com", "Ada")
    assert subject == "Your recurring Standard clean with Acme Bcc: eve@example.com is booked"
    email = email_of(a_message(subject=subject), "Acme Bcc: eve <bookings@example.com>")
    assert email["Bcc"] is None
    assert b"\r\nBcc:" not in email.as_bytes()


def test_markup_in_names_is_escaped_in_the_html_part_only():
    _, text, html = composed("<i>Acme</i>", '<script>alert("x")</script> Ada')
    assert 'Hello <script>alert("x")</script> Ada,' in text
    assert "<script>" not in html
    assert "Hello &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Ada," in html
    assert "&lt;i&gt;Acme&lt;/i&gt;" in html
    assert "background:#1d4ed8" in html  # the company's colour
    assert "$123.45" in text


@pytest.mark.parametrize(
    ("name", "signed"),
    [
        ("Sparkle Cleaning Co.", "Sent by Sparkle Cleaning Co.</td>"),
        ("Acme Maids", "Sent by Acme Maids.</td>"),
    ],
)
def test_a_company_name_ending_in_a_full_stop_closes_the_html_sentence_once(name: str, signed: str):
    _, _, html = composed(name, "Ada")
    assert signed in html.replace("\n", "")
    assert "Co..".lower() not in html.lower()


def test_a_template_variable_missing_from_the_context_is_an_error():
    company = Company(
        id="c", slug="acme", name="Acme", timezone="UTC", code_prefix="AC", created_at=NOW
    )
    with pytest.raises(ValueError, match="undefined"):
        JinjaComposer().compose(MessageKind.BOOKING_REMINDER, company, {})


def test_a_company_template_overrides_the_default(tmp_path):
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "booking.reminder.subject").write_text("See you, {{ customer_name }}!")
    company = Company(
        id="c", slug="acme", name="Acme", timezone="UTC", code_prefix="AC", created_at=NOW
    )
    other = attrs.evolve(company, slug="other")
    context = {
        "customer_name": "Ada",
        "booking_code": "AC-1",
        "service": "Standard clean",
        "starts": "Tuesday",
        "address": "1 Main St",
        "tracking_url": "https://x/t",
        "portal_url": "https://x/acme/portal",
        "hours": 24,
        "days": 1,
        "day_starts": [],
        "can_change": False,
        "changes_close": "Monday",
    }
    composer = JinjaComposer(tmp_path)
    assert composer.compose(MessageKind.BOOKING_REMINDER, company, context)[0] == "See you, Ada!"
    assert composer.compose(MessageKind.BOOKING_REMINDER, other, context)[0] == (
        "Reminder: Standard clean on Tuesday"
    )


# --- Settings, the SMTP URL and the email as written ------------------------------------------


def test_smtp_urls():
    assert parse_smtp_url("smtp://mail.example.com") == SmtpSettings("mail.example.com", 25)
    assert parse_smtp_url("smtps://u%40x:p%3Aw@mail.example.com") == SmtpSettings(
        "mail.example.com", 465, implicit_tls=True, username="u@x", password="p:w"
    )
    assert parse_smtp_url("smtp://mail.example.com:587?starttls=1") == SmtpSettings(
        "mail.example.com", 587, starttls=True
    )
    assert "p:w" not in repr(parse_smtp_url("smtps://u:p%3Aw@mail.example.com"))
    for bad in ("http://mail.example.com", "smtp://", "smtp://h:x", "smtps://h?starttls=1"):
        with pytest.raises(SmtpUrlError):
            parse_smtp_url(bad)


def test_settings_refuse_a_bad_smtp_url_or_sender():
    with pytest.raises(ConfigError, match="smtp://"):
        Settings.from_env({"BOOKING_SMTP_URL": "mail.example.com:25"})
    with pytest.raises(ConfigError, match="BOOKING_MAIL_FROM"):
        Settings.from_env({"BOOKING_MAIL_FROM": "Acme <a@example.com>"})
    made = Settings.from_env({"BOOKING_SMTP_URL": "smtp://u:secret@h:25"})
    assert (made.smtp_url, made.mail_from) == ("smtp://u:secret@h:25", "bookings@localhost")
    assert "secret" not in repr(made)


def test_the_email_carries_both_parts_and_the_message_id_of_its_message():
    message = a_message(reply_to="office@acme.example")
    email = email_of(message, "Café Acme <bookings@mail.example.com>")
    assert email["Message-ID"] == f"<{message.id}@mail.example.com>"
    assert email["Reply-To"] == "office@acme.example"
    assert email["Auto-Submitted"] == "auto-generated"
    assert [p.get_content_type() for p in email.iter_parts()] == ["text/plain", "text/html"]


def test_an_email_with_8bit_parts_says_body_8bitmime():
    """Parts of UTF-8 text go out 8bit: the MAIL FROM must say so (RFC 6152)."""
    from adapters.notifications.smtp import SmtpMailer
    from tests.mail_server import MailServer

    server = MailServer().start()
    try:
        SmtpMailer(parse_smtp_url(server.url)).send(
            a_message(text="Hello Zoë", html="<p>Hello Zoë</p>"), "Acme <bookings@example.com>"
        )
        ((options),) = server.mail_options
        assert "BODY=8BITMIME" in options
        assert server.received[0].get_body(("plain",)).get_content().strip() == "Hello Zoë"
    finally:
        server.stop()


@pytest.mark.parametrize(
    "name",
    ["Sparkle Cleaning Co.", "Smith, Jones & Co.", "Zoë Cleaning, Inc.",
     'Zoë\'s "Ångström" Helpers, Inc. <x@y>'],
)  # fmt: skip
def test_a_company_name_of_any_text_stays_the_name_of_the_one_sending_address(name: str):
    company = attrs.evolve(World().company, name=name)
    email = email_of(a_message(), sender_address(company, "bookings@example.com"))

    read = message_from_bytes(email.as_bytes(), policy=policy.default)

    (sender,) = read["From"].addresses  # a comma or <x@y> in the name adds no address
    assert (sender.display_name, sender.addr_spec) == (name, "bookings@example.com")


@pytest.mark.parametrize(
    "address", ["office@acme.example.", "office@acme..example", "office@acme.example\u200b"]
)
def test_a_company_notify_email_follows_the_one_email_rule(address: str):
    company = Company(
        id="c", slug="acme", name="Acme", timezone="UTC", code_prefix="AC", created_at=NOW
    )
    with pytest.raises(ValidationFailed) as refused:
        validate_company(attrs.evolve(company, notify_email=address))
    assert set(refused.value.field_errors) == {"notify_email"}


def test_a_company_notify_email_and_reminder_hours_are_validated():
    company = Company(
        id="c", slug="acme", name="Acme", timezone="UTC", code_prefix="AC", created_at=NOW
    )
    with pytest.raises(ValidationFailed) as refused:
        validate_company(
            attrs.evolve(company, notify_email="office@acme.example\nBcc: x", reminder_hours=-1)
        )
    assert set(refused.value.field_errors) == {"notify_email", "reminder_hours"}


def test_an_email_names_the_zone_of_a_time_the_fall_back_night_repeats() -> None:
    zone = NY
    first = datetime(2027, 11, 7, 1, 30, tzinfo=zone)
    assert when(first, zone) == "Sunday, November 7, 2027 at 1:30 AM EDT"
    assert when(first.replace(fold=1), zone) == "Sunday, November 7, 2027 at 1:30 AM EST"
    assert when(datetime(2027, 11, 7, 9, tzinfo=zone), zone) == (
        "Sunday, November 7, 2027 at 9:00 AM EST"
    )
    lettered = ZoneInfo("America/Sao_Paulo")  # its abbreviation is "-03"
    assert when(datetime(2026, 12, 1, 9, tzinfo=lettered), lettered) == (
        "Tuesday, December 1, 2026 at 9:00 AM UTC-03"
    )


def test_a_reminder_offers_online_changes_only_while_they_are_open(world: World):
    """With the defaults (reminders and the self-service cutoff both 24 hours) the
    reminder is sent inside the cutoff: it says how to reach the company instead."""
    (made,) = world.book(tuesday_at(9, weeks=1))
    world.worker.run_once()
    world.clock.current = made.start - timedelta(hours=23, minutes=59)
    world.worker.run_once()
    (closed,) = world.sent(MessageKind.BOOKING_REMINDER)
    for part in (closed.text, closed.html):
        assert "reschedule" not in part
        assert "Changes online have closed for this visit. To change it, reply to this" in part
    assert "write to office@acme.example." in closed.text

    with world.uow() as unit:  # reminders two days ahead: changes are still open then
        unit.companies.save(attrs.evolve(world.company, reminder_hours=48, notify_email=None))
        unit.commit()
    (early,) = world.book(tuesday_at(9, weeks=2), email="bea@example.com")
    (late,) = world.book(tuesday_at(9, weeks=3), email="cy@example.com")
    world.clock.current = early.start - timedelta(hours=47)
    world.worker.run_once()
    (open_,) = [m for m in world.sent(MessageKind.BOOKING_REMINDER) if m.subject_id == early.id]
    assert "or reschedule (online until Monday, December 7, 2026 at 9:00 AM EST):" in open_.text
    assert "reschedule or cancel online until Monday, December 7, 2026 at 9:00 AM EST" in open_.html
    world.clock.current = late.start - timedelta(hours=20)
    world.worker.run_once()
    (no_address,) = [m for m in world.sent(MessageKind.BOOKING_REMINDER) if m.subject_id == late.id]
    assert "To change it, call or email Acme Maids." in no_address.text
    assert "reschedule" not in no_address.text


def test_the_confirmations_two_parts_both_offer_to_reschedule_until_the_cutoff(world: World):
    """The HTML part had the button alone: the offer and its deadline were in the text."""
    world.book(tuesday_at(9, weeks=2))
    world.worker.run_once()
    (confirmed,) = world.sent(MessageKind.BOOKING_CONFIRMED)
    offer = "or reschedule (online until Monday, December 7, 2026 at 9:00 AM EST):"
    assert offer in confirmed.text
    assert offer in confirmed.html
    (soon,) = world.book(NOW + timedelta(hours=5), email="bea@example.com")
    world.worker.run_once()
    (closed,) = [m for m in world.sent(MessageKind.BOOKING_CONFIRMED) if m.subject_id == soon.id]
    for part in (closed.text, closed.html):
        assert "reschedule" not in part
        assert "See your booking and follow the crew on the day:" in part


def test_a_multi_day_confirmation_says_how_many_days_and_each_day_s_start_across_dst(
    world: World,
):
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=world.company.id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=tuesday_at(9, weeks=1),
            customer=scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
            address=HOME,
            days=3,
        ),
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
        phones=PhonenumbersNormalizer(),
    )
    world.worker.run_once()
    (confirmation,) = world.sent(MessageKind.BOOKING_CONFIRMED)
    assert made[0].days == 3
    assert (
        "When:    Tuesday, December 1, 2026 at 9:00 AM EST, 3 days in a row\n" in confirmation.text
    )
    assert "day 1:" not in confirmation.text  # every day starts at 9:00 AM
    assert "9:00 AM EST, 3 days in a row</td>" in confirmation.html

    # The third day of a job at 2:30 AM from Friday, March 12, 2027 falls in the spring
    # gap (New York): the crew comes at 3:30 AM that day, and the email says so.
    start = datetime(2027, 3, 12, 2, 30, tzinfo=NY)
    booking = single(start=start, end=start + timedelta(minutes=made[0].duration_minutes), days=3,
                     duration_minutes=made[0].duration_minutes)  # fmt: skip
    context = {
        **booking_context(booking, factories.customer("cmp_a"), "https://b.example", world.company),
        **change_context(world.company, booking, NOW),
        **confirmation_context([booking], NY),
    }
    _, text, html = JinjaComposer().compose(MessageKind.BOOKING_CONFIRMED, world.company, context)
    assert "When:    Friday, March 12, 2027 at 2:30 AM EST, 3 days in a row\n" in text
    assert "day 1: Friday, March 12, 2027 at 2:30 AM EST\n" in text
    assert "day 2: Saturday, March 13, 2027 at 2:30 AM EST\n" in text
    assert "day 3: Sunday, March 14, 2027 at 3:30 AM EDT\n" in text
    assert "Day 3</td><td" in html
    assert "Sunday, March 14, 2027 at 3:30 AM EDT</td>" in html


def test_a_visit_moved_then_cancelled_at_once_gets_no_notice_of_the_move(world):
    (made,) = world.book(tuesday_at(10))
    world.worker.run_once()
    world.move(made.id, tuesday_at(14))
    world.cancel(made.id, CancelScope.THIS)
    world.worker.run_once()  # both changes mailed in one batch
    assert [m.kind for m in world.sent()] == [
        MessageKind.BOOKING_CONFIRMED,
        MessageKind.BOOKING_CANCELLED,
    ]


def test_notices_of_one_batch_go_out_in_the_order_of_their_changes(world):
    (made,) = world.book(tuesday_at(10))
    world.worker.run_once()
    for hour in (12, 9, 14, 11, 13):  # five moves, mailed together
        world.clock.advance(timedelta(seconds=1))
        world.move(made.id, tuesday_at(hour))
    world.worker.run_once()
    moved = world.sent(MessageKind.BOOKING_RESCHEDULED)
    assert [re.sub(r".* at (\d+:\d\d [AP]M).*", r"\1", m.subject) for m in moved] == [
        "12:00 PM",
        "9:00 AM",
        "2:00 PM",
        "11:00 AM",
        "1:00 PM",
    ]


def test_the_office_is_told_when_a_customer_moves_or_cancels_on_their_own_page(world: World):
    """The office changed nothing: without this notice it learns of the customer's own
    move or cancellation only from the calendar. The office's own changes send none."""
    (moved, kept, office) = (world.book(tuesday_at(h, weeks=1)) for h in (9, 12, 15))
    world.worker.run_once()
    with world.uow() as unit:
        settled = unit.companies.get(world.company.id)
    to = self_service.reschedule_times(
        settled, moved[0], moved[0].local_start.date() + timedelta(days=1),
        uow=world.uow(), clock=world.clock, drive=DRIVE,
    )[0].start  # fmt: skip
    self_service.customer_reschedule(
        world.company.id, moved[0].tracking_token, to, shown_total_cents=None,
        uow=world.uow(), clock=world.clock, drive=DRIVE,
    )  # fmt: skip
    self_service.customer_cancel(
        world.company.id, kept[0].tracking_token, uow=world.uow(), clock=world.clock
    )
    world.cancel(office[0].id)  # by the office: no notice to itself
    world.worker.run_once()
    by_visit = {m.subject_id: m for m in world.sent(MessageKind.OFFICE_CUSTOMER_CHANGE)}
    assert set(by_visit) == {moved[0].id, kept[0].id}  # not the office's own cancellation
    told = [by_visit[moved[0].id], by_visit[kept[0].id]]
    assert {m.to for m in told} == {"office@acme.example"}
    assert told[0].subject.startswith(f"Ada moved {moved[0].code} (")
    assert "moved a visit from Tuesday, December 1, 2026 at 9:00 AM EST" in told[0].text
    assert f"https://book.example.com/admin/bookings/{moved[0].id}" in told[0].text
    assert told[1].subject.startswith(f"Ada cancelled {kept[0].code} (")
    assert {m.reply_to for m in told} == {"ada@example.com"}  # a reply writes to the customer
    assert "A reply goes to ada@example.com." in told[1].html
    # The customers were written to as ever.
    assert len(world.sent(MessageKind.BOOKING_CANCELLED)) == 2
    assert len(world.sent(MessageKind.BOOKING_RESCHEDULED)) == 1


def _enquiry(world: World, email: str | None = "tom@example.com", **more: str) -> None:
    leads.capture_lead(
        leads.CaptureLead(company_id=world.company.id, name="Tom Nguyen", email=email,
                          phone="(312) 555-0100", message="Two bedrooms, any Friday?", **more),
        uow=world.uow(), clock=world.clock, phones=PhonenumbersNormalizer(),
    )  # fmt: skip


def test_the_office_is_told_of_a_new_enquiry_once_and_a_reply_writes_to_it(world: World):
    """A lead from the website reached no one unless someone watched the API."""
    _enquiry(world, service_id="svc_standard_clean")
    _enquiry(world)  # the same person again: folded into the open lead, not news
    world.worker.run_once()
    (told,) = world.sent(MessageKind.OFFICE_NEW_LEAD)
    assert (told.to, told.reply_to) == ("office@acme.example", "tom@example.com")
    assert told.subject == "New enquiry: Tom Nguyen (Standard clean)"
    for part in (told.text, html.unescape(re.sub(r"<[^>]+>", "", told.html))):
        for said in ("Tom Nguyen sent an enquiry about Standard clean.", "tom@example.com",
                     "(312) 555-0100", "Two bedrooms, any Friday?"):  # fmt: skip
            assert said in part, (said, part)
    assert 'href="mailto:tom@example.com"' in told.html  # one click to answer
    assert world.sent(MessageKind.LEAD_FOLLOW_UP) == []


def test_the_office_is_told_when_a_sent_quote_is_accepted_or_declined(world: World):
    """ "Acme Maids sees your answer at once", the quote page says: now it does."""
    with world.uow() as unit:
        customer = factories.customer(world.company.id, "ada@example.com")
        unit.customers.add(customer)
        unit.commit()
    made = []
    for _ in range(2):
        made.append(
            quote_cases.create_quote(
                quote_cases.CreateQuote(
                    company_id=world.company.id,
                    customer_id=customer.id,
                    manual_lines=(ManualLine("Deep clean, whole house", 32050),),
                    send_now=True,
                ),
                uow=world.uow(),
                clock=world.clock,
            )
        )
    for quote, action in zip(made, (QuoteAction.ACCEPT, QuoteAction.REJECT), strict=True):
        quote_cases.act_on_quote(
            quote_cases.ActOnQuote(company_id=world.company.id, quote_id=quote.id, action=action),
            uow=world.uow(),
            clock=world.clock,
        )
    world.worker.run_once()
    by_quote = {m.subject_id: m for m in world.sent(MessageKind.OFFICE_QUOTE_ANSWERED)}
    accepted, declined = by_quote[made[0].id], by_quote[made[1].id]
    assert {accepted.to, declined.to} == {"office@acme.example"}
    assert {accepted.reply_to, declined.reply_to} == {"ada@example.com"}
    assert accepted.subject == f"{customer.name} accepted a quote of $320.50"
    assert declined.subject == f"{customer.name} declined a quote of $320.50"
    assert f"POST /api/v1/quotes/{made[0].id}" in accepted.text
    assert "Nothing is booked." in declined.text
    assert f"https://book.example.com/acme/q/{made[0].public_token}" in accepted.text


def test_a_company_without_a_notify_email_is_not_told(world: World):
    with world.uow() as unit:
        unit.companies.save(attrs.evolve(world.company, notify_email=None))
        unit.commit()
    (booked,) = world.book(tuesday_at(9, weeks=1))
    self_service.customer_cancel(
        world.company.id, booked.tracking_token, uow=world.uow(), clock=world.clock
    )
    _enquiry(world)
    world.worker.run_once()
    assert world.sent(MessageKind.OFFICE_CUSTOMER_CHANGE) == []
    assert world.sent(MessageKind.OFFICE_NEW_LEAD) == []
    assert len(world.sent(MessageKind.BOOKING_CANCELLED)) == 1


def test_a_notice_s_two_parts_say_the_same_things(world: World):
    """A reader of the plain text and a reader of the HTML learn the same: whose booking,
    its code, and how to book again or ask."""
    (made,) = world.book(tuesday_at(9, weeks=1))
    world.move(made.id, made.start + timedelta(hours=2))
    world.worker.run_once()
    world.cancel(made.id)
    world.worker.run_once()
    (moved,) = world.sent(MessageKind.BOOKING_RESCHEDULED)
    (cancelled,) = world.sent(MessageKind.BOOKING_CANCELLED)
    name = world.company.name
    for notice, lead in ((moved, "Questions? Reply"), (cancelled, "To book again or ask")):
        flat = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", notice.html)))
        for said in (f"Your {name} booking {made.code}", made.code, lead):
            assert said in notice.text, said
            assert said in flat, said
        assert f"Booking: {made.code}" in notice.text
