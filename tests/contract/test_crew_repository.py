from __future__ import annotations

from datetime import UTC, datetime, time

import attrs
import pytest

from booking_core.crew import TimeOff, WorkingHours, deactivate, new_crew_member
from booking_core.errors import NotFoundError
from tests import factories as f
from tests.contract.paging import assert_paginates


def member(company_id: str = "cmp_a", minutes: int = 0, name: str = "Rosa"):
    return new_crew_member(
        member_id=f"crew_{name.lower()}_{minutes}",
        company_id=company_id,
        name=name,
        home_zip="10001",
        at=f.at(minutes),
        service_areas=("10001", "10002", "11201"),
        excluded_service_ids=("svc_deep_clean",),
        working_hours=(WorkingHours(1, time(9), time(17)), WorkingHours(6, time(13), time(18))),
    )


def test_crew_member_round_trips_with_hours_and_time_off(uow_factory):
    rosa = attrs.evolve(
        member(),
        time_off=(TimeOff(datetime(2026, 12, 24, tzinfo=UTC), datetime(2026, 12, 27, tzinfo=UTC)),),
    )
    with uow_factory() as uow:
        uow.crew.add(rosa)
        uow.commit()
    with uow_factory() as uow:
        assert uow.crew.get("cmp_a", rosa.id) == rosa
        assert uow.crew.get_for_update("cmp_a", rosa.id) == rosa
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.crew.get("cmp_b", rosa.id)
    with uow_factory() as uow, pytest.raises(NotFoundError):
        uow.crew.get_for_update("cmp_b", rosa.id)


def test_only_active_members_are_listed_newest_first(uow_factory):
    members = [member(minutes=i, name=n) for i, n in enumerate(["Ana", "Ben", "Cy", "Dee"])]
    with uow_factory() as uow:
        for m in members:
            uow.crew.add(m)
        uow.crew.add(member("cmp_b", name="Eve"))
        uow.commit()
    with uow_factory() as uow:
        uow.crew.save(deactivate(members[1], at=f.at(9)))
        uow.commit()
    with uow_factory() as uow:
        assert_paginates(
            lambda p: uow.crew.list_active("cmp_a", p), [members[i].id for i in (3, 2, 0)]
        )
