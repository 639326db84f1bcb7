from __future__ import annotations

import threading
from datetime import timedelta

import attrs
import pytest

from booking_core import users
from booking_core.errors import ConflictError, NotFoundError
from booking_core.ids import new_id
from booking_core.users import Role, User
from tests import factories as f


def user(company_id: str = "cmp_a", email: str | None = None, **changes: object) -> User:
    uid = new_id("usr")
    made = users.new_user(
        user_id=uid,
        company_id=company_id,
        email=email or f"{uid}@example.com",
        name="Rosa Diaz",
        role=Role.OWNER,
        at=f.at(),
    )
    return attrs.evolve(made, **changes)


def test_user_round_trips_and_is_found_by_id_and_by_email_in_any_case(uow_factory):
    crew = user(
        email="rosa@example.com",
        role=Role.CREW,
        crew_member_id="crew_1",
        password_hash="$argon2id$v=19$opaque",
        session_epoch=3,
    )
    with uow_factory() as uow:
        uow.users.add(crew)
        uow.commit()
    with uow_factory() as uow:
        assert uow.users.get(crew.id) == crew
        assert uow.users.get_for_update(crew.id) == crew
        assert uow.users.by_email("  Rosa@Example.COM ") == crew
        assert uow.users.by_email("nobody@example.com") is None


def test_unknown_user_is_not_found(uow_factory):
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.users.get("usr_never")
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.users.get_for_update("usr_never")


def test_an_email_is_unique_across_companies_and_a_refused_add_leaves_the_unit_usable(
    uow_factory,
):
    first = user("cmp_a", email="ada@example.com")
    with uow_factory() as uow:
        uow.users.add(first)
        uow.commit()
    later = user("cmp_b", email="ada@example.com")
    other = user("cmp_b")
    with uow_factory() as uow:
        with pytest.raises(ConflictError):
            uow.users.add(later)
        uow.users.add(other)
        uow.commit()
    with uow_factory() as uow:
        assert [u.id for u in uow.users.list("cmp_b")] == [other.id]


def test_saved_user_keeps_its_new_password_and_epoch(uow_factory):
    stored = user()
    with uow_factory() as uow:
        uow.users.add(stored)
        uow.commit()
    changed = users.signed_out_everywhere(users.with_password_hash(stored, "$argon2id$new"))
    with uow_factory() as uow:
        uow.users.save(changed)
        uow.commit()
    with uow_factory() as uow:
        assert uow.users.get(stored.id) == changed
        assert uow.users.get(stored.id).session_epoch == 1


def test_saving_a_user_never_stored_is_not_found(uow_factory):
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.users.save(user())


def test_users_are_listed_oldest_first_within_their_company(uow_factory):
    older, newer = user(), user(created_at=f.at(5))
    elsewhere = user("cmp_b")
    with uow_factory() as uow:
        for one in (newer, elsewhere, older):
            uow.users.add(one)
        uow.commit()
    with uow_factory() as uow:
        assert [u.id for u in uow.users.list("cmp_a")] == [older.id, newer.id]
        assert list(uow.users.list("cmp_none")) == []


def test_a_link_is_claimed_once_and_an_unknown_one_never(uow_factory):
    owner = user()
    issued = users.issue_link(owner, f.at())
    with uow_factory() as uow:
        uow.users.add(owner)
        uow.users.add_link(issued.link)
        uow.commit()
    with uow_factory() as uow:
        claimed = uow.users.claim_link(users.hash_token(issued.token), f.at(1))
        uow.commit()
    assert claimed == attrs.evolve(issued.link, used_at=f.at(1))
    assert claimed.expires_at == f.at() + timedelta(minutes=15)
    with uow_factory() as uow:
        assert uow.users.claim_link(users.hash_token(issued.token), f.at(2)) is None
        assert uow.users.claim_link(users.hash_token("not-a-token"), f.at(2)) is None


def test_a_claim_rolled_back_leaves_the_link_usable(uow_factory):
    owner = user()
    issued = users.issue_link(owner, f.at())
    with uow_factory() as uow:
        uow.users.add_link(issued.link)
        uow.commit()
    with uow_factory() as uow:
        assert uow.users.claim_link(issued.link.token_hash, f.at(1)) is not None
    with uow_factory() as uow:
        assert uow.users.claim_link(issued.link.token_hash, f.at(2)) is not None


def test_two_units_claiming_one_link_at_once_give_it_to_one(uow_factory):
    issued = users.issue_link(user(), f.at())
    with uow_factory() as uow:
        uow.users.add_link(issued.link)
        uow.commit()
    results: list[object] = []

    def second() -> None:
        with uow_factory() as uow:
            results.append(uow.users.claim_link(issued.link.token_hash, f.at(2)))
            uow.commit()

    with uow_factory() as uow:
        results.append(uow.users.claim_link(issued.link.token_hash, f.at(1)))
        racer = threading.Thread(target=second)
        racer.start()
        # The second claim waits: on the row (PostgreSQL), the write lock (SQLite), the
        # store's lock (memory).
        racer.join(timeout=0.3)
        uow.commit()
    racer.join(timeout=10)
    assert not racer.is_alive()
    assert results[0] is not None
    assert results[1] is None


def test_a_removed_user_is_gone_with_their_links_and_their_email_is_free(uow_factory):
    gone, kept = user("cmp_a", email="gone@example.com"), user("cmp_a")
    issued = users.issue_link(gone, f.at())
    theirs = users.issue_link(kept, f.at())
    with uow_factory() as uow:
        uow.users.add(gone)
        uow.users.add(kept)
        uow.users.add_link(issued.link)
        uow.users.add_link(theirs.link)
        uow.commit()
    with uow_factory() as uow:
        uow.users.remove(gone.id)
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.users.get(gone.id)
        assert uow.users.by_email("gone@example.com") is None
        assert [u.id for u in uow.users.list("cmp_a")] == [kept.id]
        assert uow.users.claim_link(issued.link.token_hash, f.at(1)) is None
        assert uow.users.claim_link(theirs.link.token_hash, f.at(1)) is not None
        uow.users.add(user("cmp_b", email="gone@example.com"))  # the email is free again
        uow.commit()
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.users.remove(gone.id)


def test_a_removal_rolled_back_keeps_the_user(uow_factory):
    kept = user()
    with uow_factory() as uow:
        uow.users.add(kept)
        uow.commit()
    with uow_factory() as uow:
        uow.users.remove(kept.id)  # no commit
    with uow_factory() as uow:
        assert uow.users.get(kept.id) == kept
