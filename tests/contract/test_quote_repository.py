from __future__ import annotations

from datetime import timedelta

import pytest

from booking_core import quotes
from booking_core.demo import DEMO_SELECTION, demo_catalog
from booking_core.errors import ConflictError, NotFoundError
from booking_core.paging import PageRequest
from booking_core.pricing import price
from booking_core.quotes import QuoteStatus
from tests import factories as f


def priced_quote(company_id: str, minutes: int = 0):
    breakdown = price(demo_catalog(company_id), DEMO_SELECTION, at=f.T0)
    return quotes.create_quote(
        company_id=company_id,
        at=f.at(minutes),
        lead_id="lead_1",
        selection=DEMO_SELECTION,
        breakdown=breakdown,
        expires_at=f.T0 + timedelta(days=14),
        message="Thanks for asking!",
    )


def test_catalog_priced_quote_round_trips_with_selection_breakdown_and_follow_ups(uow_factory):
    quote = quotes.send(priced_quote("cmp_a"), f.at(1))
    with uow_factory() as uow:
        uow.quotes.add(quote)
        uow.commit()
    with uow_factory() as uow:
        assert uow.quotes.get("cmp_a", quote.id) == quote


def test_hand_priced_quote_round_trips(uow_factory):
    quote = f.quote("cmp_a")
    with uow_factory() as uow:
        uow.quotes.add(quote)
        uow.commit()
    with uow_factory() as uow:
        assert uow.quotes.get("cmp_a", quote.id) == quote


def test_save_against_a_stale_version_conflicts_and_writes_nothing(uow_factory):
    quote = f.quote("cmp_a")
    with uow_factory() as uow:
        uow.quotes.add(quote)
        uow.commit()
    sent = quotes.send(quote, f.at(1))
    with uow_factory() as uow:
        uow.quotes.save(sent, expected_version=quote.version)
        uow.commit()
    again = quotes.pause(sent, f.at(2))
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.quotes.save(again, expected_version=quote.version)
    with uow_factory() as uow:
        assert uow.quotes.get("cmp_a", quote.id) == sent


def test_other_company_quote_is_not_found(uow_factory):
    quote = f.quote("cmp_a")
    with uow_factory() as uow:
        uow.quotes.add(quote)
        uow.commit()
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.quotes.get("cmp_b", quote.id)


def test_list_filters_by_status_lead_and_customer(uow_factory):
    a = f.quote("cmp_a", customer_id="cus_1")
    b = quotes.send(f.quote("cmp_a", customer_id="cus_2", minutes=1), f.at(2))
    c = priced_quote("cmp_a", minutes=5)
    with uow_factory() as uow:
        for quote in (a, b, c):
            uow.quotes.add(quote)
        uow.quotes.add(f.quote("cmp_b"))
        uow.commit()
    with uow_factory() as uow:

        def ids(**filters):
            return [q.id for q in uow.quotes.list("cmp_a", PageRequest(), **filters).items]

        assert ids() == [c.id, b.id, a.id]
        assert ids(status=QuoteStatus.SENT) == [b.id]
        assert ids(customer_id="cus_1") == [a.id]
        assert ids(lead_id="lead_1") == [c.id]


def test_status_filter_as_of_an_instant_treats_a_lapsed_sent_quote_as_expired(uow_factory):
    lapsing = quotes.send(
        quotes.create_quote(
            company_id="cmp_a",
            at=f.T0,
            customer_id="cus_1",
            manual_lines=(quotes.ManualLine("Gutters", 9_000),),
            expires_at=f.at(60),
        ),
        f.at(1),
    )
    open_ended = quotes.send(f.quote("cmp_a", minutes=2), f.at(3))
    with uow_factory() as uow:
        uow.quotes.add(lapsing)
        uow.quotes.add(open_ended)
        uow.commit()
    with uow_factory() as uow:

        def ids(status, as_of):
            page = uow.quotes.list("cmp_a", PageRequest(), status=status, as_of=as_of)
            return {q.id for q in page.items}

        before, after = f.at(30), f.at(60)
        assert ids(QuoteStatus.SENT, before) == {lapsing.id, open_ended.id}
        assert ids(QuoteStatus.EXPIRED, before) == set()
        assert ids(QuoteStatus.SENT, after) == {open_ended.id}
        assert ids(QuoteStatus.EXPIRED, after) == {lapsing.id}
        assert ids(QuoteStatus.SENT, None) == {lapsing.id, open_ended.id}


def test_a_quote_is_found_by_its_public_token_in_any_company(uow_factory):
    mine, theirs = f.quote("cmp_a"), f.quote("cmp_b")
    with uow_factory() as uow:
        uow.quotes.add(mine)
        uow.quotes.add(theirs)
        uow.commit()
    sent = quotes.send(mine, f.at(1))
    with uow_factory() as uow:
        uow.quotes.save(sent, expected_version=mine.version)
        uow.commit()
    with uow_factory() as uow:
        assert uow.quotes.by_public_token(mine.public_token) == sent  # as stored now
        assert uow.quotes.by_public_token(theirs.public_token) == theirs
        assert uow.quotes.by_public_token("no-such-token") is None
        assert uow.quotes.by_public_token(mine.public_token.upper()) is None


def test_of_customer_lists_every_quote_filed_under_a_customer_oldest_first(uow_factory):
    later = f.quote("cmp_a", customer_id="cus_1", minutes=5)
    first = quotes.send(f.quote("cmp_a", customer_id="cus_1", minutes=1), f.at(2))
    other = f.quote("cmp_a", customer_id="cus_2", minutes=3)
    elsewhere = f.quote("cmp_b", customer_id="cus_1", minutes=4)
    with uow_factory() as uow:
        for quote in (later, first, other, elsewhere):
            uow.quotes.add(quote)
        uow.commit()
    with uow_factory() as uow:
        assert [q.id for q in uow.quotes.of_customer("cmp_a", "cus_1")] == [first.id, later.id]
        assert uow.quotes.of_customer("cmp_a", "cus_1")[0] == first
        assert not uow.quotes.of_customer("cmp_a", "cus_9")
