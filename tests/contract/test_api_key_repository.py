from __future__ import annotations

import pytest

from booking_core import auth
from booking_core.errors import NotFoundError
from tests import factories as f


def test_key_round_trips_and_is_found_by_its_lookup_prefix(uow_factory):
    issued = f.api_key("cmp_a", scopes={"catalog:read", "quotes:write"}, rate_limit=600)
    with uow_factory() as uow:
        uow.api_keys.add(issued.key)
        uow.commit()
    with uow_factory() as uow:
        assert uow.api_keys.get("cmp_a", issued.key.id) == issued.key
        assert uow.api_keys.get_for_update("cmp_a", issued.key.id) == issued.key
        found = uow.api_keys.by_lookup_prefix(auth.lookup_prefix(issued.secret))
        assert found == issued.key
        assert auth.matches(found, issued.secret)
        assert uow.api_keys.by_lookup_prefix("bsk_00000000") is None


def test_key_of_another_company_is_not_found(uow_factory):
    issued = f.api_key("cmp_a")
    with uow_factory() as uow:
        uow.api_keys.add(issued.key)
        uow.commit()
    with uow_factory() as uow, pytest.raises(NotFoundError) as caught:
        uow.api_keys.get("cmp_b", issued.key.id)
    with uow_factory() as uow, pytest.raises(NotFoundError) as never:
        uow.api_keys.get("cmp_b", "key_never")
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.api_keys.get_for_update("cmp_b", issued.key.id)
    assert caught.value.message.replace(issued.key.id, "X") == never.value.message.replace(
        "key_never", "X"
    )


def test_rotated_and_revoked_keys_are_saved(uow_factory):
    issued = f.api_key("cmp_a")
    with uow_factory() as uow:
        uow.api_keys.add(issued.key)
        uow.commit()
    rotated = auth.rotate_key(issued.key, at=f.at(1))
    with uow_factory() as uow:
        uow.api_keys.save(rotated.key)
        uow.commit()
    with uow_factory() as uow:
        assert uow.api_keys.by_lookup_prefix(auth.lookup_prefix(issued.secret)) is None
        assert uow.api_keys.by_lookup_prefix(auth.lookup_prefix(rotated.secret)) == rotated.key
    revoked = auth.revoke_key(rotated.key, at=f.at(2))
    with uow_factory() as uow:
        uow.api_keys.save(revoked)
        uow.commit()
    with uow_factory() as uow:
        assert not uow.api_keys.get("cmp_a", issued.key.id).active


def test_keys_are_listed_newest_first_within_their_company(uow_factory):
    older = f.api_key("cmp_a").key
    newer = auth.issue_key(key_id="key_new", company_id="cmp_a", name="Zapier", at=f.at(9)).key
    other = f.api_key("cmp_b").key
    with uow_factory() as uow:
        for key in (older, newer, other):
            uow.api_keys.add(key)
        uow.commit()
    with uow_factory() as uow:
        assert [k.id for k in uow.api_keys.list("cmp_a")] == [newer.id, older.id]
