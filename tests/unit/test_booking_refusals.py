"""Refused booking moves word for word (DECISIONS.md, booking statuses): each names the
action, the booking and its status, and why; naive instants name the argument; the
cancellation reason's limit; and the tracking address built from any base."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from booking_core.bookings import (
    Booking,
    cancel,
    complete_job,
    start_job,
    tracking_active,
    tracking_url,
)
from booking_core.errors import InvalidTransition, ValidationFailed
from tests.unit.bookings_support import AT, single


def refused(
    move: Callable[[Booking, datetime], Booking], booking: Booking, at: datetime
) -> InvalidTransition:
    with pytest.raises(InvalidTransition) as caught:
        move(booking, at)
    return caught.value


def test_starting_a_job_already_started_is_refused_with_its_message() -> None:
    started = start_job(single(), AT)

    error = refused(start_job, started, AT)

    assert (error.entity, error.entity_id, error.action) == ("booking", started.id, "start")
    assert error.message == (
        f"Cannot start booking {started.id} (in_progress): the job has already started"
    )


def test_cancelling_a_completed_job_is_refused_with_its_message() -> None:
    made = single()
    done = complete_job(start_job(made, AT), made.start)

    error = refused(cancel, done, AT)

    assert error.message == (
        f"Cannot cancel booking {done.id} (completed): the job is already completed"
    )


def test_completing_a_job_before_its_start_is_refused_with_its_message() -> None:
    made = single()

    error = refused(complete_job, made, made.start - timedelta(minutes=1))

    assert error.message == (
        f"Cannot complete booking {made.id} (scheduled): the job has not started yet"
    )


def test_completing_a_cancelled_job_is_refused_with_its_message() -> None:
    gone = cancel(single(), AT)

    error = refused(complete_job, gone, AT + timedelta(days=9))

    assert error.message == (
        f"Cannot complete booking {gone.id} (cancelled): it is already cancelled"
    )


def test_a_transition_at_a_naive_instant_names_the_at_argument() -> None:
    with pytest.raises(ValueError, match=r"^at must carry a UTC offset$"):
        start_job(single(), datetime(2026, 3, 3, 9))


def test_asking_whether_tracking_works_at_a_naive_instant_names_the_at_argument() -> None:
    made = single()
    done = complete_job(start_job(made, AT), made.start)

    with pytest.raises(ValueError, match=r"^at must carry a UTC offset$"):
        tracking_active(done, datetime(2026, 3, 3, 9))


def test_a_reason_of_500_characters_is_kept_and_one_more_is_refused_naming_the_limit() -> None:
    assert cancel(single(), AT, "x" * 500).cancel_reason == "x" * 500

    with pytest.raises(ValidationFailed) as caught:
        cancel(single(), AT, "x" * 501)

    assert caught.value.field_errors == {"reason": "At most 500 characters."}


def test_tracking_url_keeps_a_base_that_ends_in_a_letter_whole() -> None:
    assert (
        tracking_url("https://example.com/BOX", "sparkle", "tok")
        == "https://example.com/BOX/sparkle/track/tok"
    )
