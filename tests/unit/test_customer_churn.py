"""Churn risk at its edges (DECISIONS.md, customers): where the levels change, which gap is
the usual cadence, and the shortest cadence a customer is held to."""

from __future__ import annotations

from datetime import datetime, timedelta

from booking_core.customers import ChurnLevel, ChurnRisk, Visit, VisitStatus, churn_risk
from tests.factories import T0

DAY = timedelta(days=1)


def completed(*starts: datetime) -> list[Visit]:
    return [Visit(s, VisitStatus.COMPLETED) for s in starts]


def cancelling(cancelled: int, booked: int) -> list[Visit]:
    """``cancelled`` cancelled visits and ``booked`` still to come: only cancellations
    count, as a customer with a visit to come is not overdue."""
    return [Visit(T0 - DAY * (i + 1), VisitStatus.CANCELLED) for i in range(cancelled)] + [
        Visit(T0 + DAY * (i + 1), VisitStatus.SCHEDULED) for i in range(booked)
    ]


def test_a_score_of_33_is_low_risk() -> None:
    # 5 of the last 6 cancelled: 40 * 5/6 = 33.3
    assert churn_risk(cancelling(5, 1), at=T0) == ChurnRisk(ChurnLevel.LOW, 33)


def test_a_score_of_34_is_medium_risk() -> None:
    # 6 of the last 7 cancelled: 40 * 6/7 = 34.3
    assert churn_risk(cancelling(6, 1), at=T0) == ChurnRisk(ChurnLevel.MEDIUM, 34)


def test_a_score_of_65_is_medium_risk() -> None:
    # one visit, 30-day cadence, 69 days ago: (69/30 - 1) * 50 = 65
    assert churn_risk(completed(T0), at=T0 + 69 * DAY) == ChurnRisk(ChurnLevel.MEDIUM, 65)


def test_a_score_of_67_is_high_risk() -> None:
    # one visit, 30-day cadence, 70 days ago: (70/30 - 1) * 50 = 66.7
    assert churn_risk(completed(T0), at=T0 + 70 * DAY) == ChurnRisk(ChurnLevel.HIGH, 67)


def test_with_two_gaps_the_longer_one_is_the_usual_cadence() -> None:
    """The upper median of gaps of 7 and 14 days is 14 days: 28 days after the last visit
    is two cadences, one overdue (50), not four (80)."""
    visits = completed(T0 - 21 * DAY, T0 - 14 * DAY, T0)

    assert churn_risk(visits, at=T0 + 28 * DAY) == ChurnRisk(ChurnLevel.MEDIUM, 50)


def test_a_daily_customer_is_held_to_a_one_day_cadence() -> None:
    visits = completed(T0 - 2 * DAY, T0 - DAY, T0)

    assert churn_risk(visits, at=T0 + DAY).score == 0
    assert churn_risk(visits, at=T0 + 2 * DAY) == ChurnRisk(ChurnLevel.MEDIUM, 50)


def test_visits_hours_apart_count_as_a_cadence_of_one_day() -> None:
    hour = timedelta(hours=1)
    visits = completed(T0, T0 + hour, T0 + 2 * hour)

    assert churn_risk(visits, at=T0 + 2 * hour + DAY).score == 0
    assert churn_risk(visits, at=T0 + 2 * hour + 2 * DAY).score == 50
