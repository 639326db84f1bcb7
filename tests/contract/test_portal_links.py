"""The portal sign-in links of ``CustomerRepository``: claimed once, inside their own
company only, and by one of two units racing for a link."""

from __future__ import annotations

import threading
from datetime import timedelta

import attrs

from booking_core import portal
from tests import factories as f


def issued_for(company_id: str = "cmp_a") -> portal.IssuedPortalLink:
    return portal.issue_portal_link(f.customer(company_id), f.at())


def test_a_portal_link_is_claimed_once_and_an_unknown_one_never(uow_factory):
    issued = issued_for()
    with uow_factory() as uow:
        uow.customers.add_portal_link(issued.link)
        uow.commit()
    with uow_factory() as uow:
        claimed = uow.customers.claim_portal_link("cmp_a", portal.hash_token(issued.token), f.at(1))
        uow.commit()
    assert claimed == attrs.evolve(issued.link, used_at=f.at(1))
    assert claimed is not None
    assert claimed.expires_at == f.at() + timedelta(minutes=15)
    assert claimed.id.startswith("pln_")
    with uow_factory() as uow:
        assert uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(2)) is None
        unknown = portal.hash_token("not-a-token")
        assert uow.customers.claim_portal_link("cmp_a", unknown, f.at(2)) is None


def test_another_company_cannot_claim_a_link_and_leaves_it_usable(uow_factory):
    issued = issued_for("cmp_a")
    with uow_factory() as uow:
        uow.customers.add_portal_link(issued.link)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.claim_portal_link("cmp_b", issued.link.token_hash, f.at(1)) is None
        uow.commit()
    with uow_factory() as uow:
        claimed = uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(1))
    assert claimed is not None
    assert claimed.customer_id == issued.link.customer_id


def test_a_portal_claim_rolled_back_leaves_the_link_usable(uow_factory):
    issued = issued_for()
    with uow_factory() as uow:
        uow.customers.add_portal_link(issued.link)
        uow.commit()
    with uow_factory() as uow:
        assert uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(1))
    with uow_factory() as uow:
        assert uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(2))


def test_two_units_claiming_one_portal_link_at_once_give_it_to_one(uow_factory):
    issued = issued_for()
    with uow_factory() as uow:
        uow.customers.add_portal_link(issued.link)
        uow.commit()
    results: list[object] = []

    def second() -> None:
        with uow_factory() as uow:
            results.append(
                uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(2))
            )
            uow.commit()

    with uow_factory() as uow:
        results.append(uow.customers.claim_portal_link("cmp_a", issued.link.token_hash, f.at(1)))
        racer = threading.Thread(target=second)
        racer.start()
        racer.join(timeout=0.3)  # the second claim waits for this unit to end
        uow.commit()
    racer.join(timeout=10)
    assert not racer.is_alive()
    assert results[0] is not None
    assert results[1] is None
