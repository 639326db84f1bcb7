"""Teams: one row each, the member ids a JSON list (read whole, in chosen order).

A team's members are checked against ``crew_members`` of the team's company on every
write, so another company's crew member id is refused as one that never existed. The
name is unique in a company as names are matched (``uq_teams_company_id_name_key``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import crew_members, teams
from booking_core.crew import Team
from booking_core.crew_drafts import name_key
from booking_core.errors import NotFoundError

NAME_TAKEN = "Another team has this name already."
MemberIds = tuple[str, ...]


def _values(team: Team) -> dict[str, Any]:
    return {
        "company_id": team.company_id,
        "id": team.id,
        "name": team.name,
        "name_key": name_key(team.name),
        "member_ids": codecs.dumps(team.member_ids, MemberIds),
        "created_at": team.created_at,
        "updated_at": team.updated_at,
    }


def _team(row: AnyRow) -> Team:
    return Team(
        id=row.id,
        company_id=row.company_id,
        name=row.name,
        member_ids=codecs.loads_any(row.member_ids, MemberIds),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SqlTeamRepository:
    """Teams by company, listed by name."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, team_id: str) -> Team:
        return _team(self._cx.row(teams, company_id, team_id, "team"))

    def get_for_update(self, company_id: str, team_id: str) -> Team:
        return _team(self._cx.row(teams, company_id, team_id, "team", locked=True))

    def add(self, team: Team) -> None:
        self._check_members(team)
        self._cx.insert_new(teams, _values(team), NAME_TAKEN)

    def save(self, team: Team) -> None:
        self._check_members(team)
        statement = (
            update(teams)
            .where(teams.c.company_id == team.company_id, teams.c.id == team.id)
            .values(**without_keys(_values(team)))
        )
        if self._cx.execute_guarded(statement, NAME_TAKEN).rowcount == 0:
            raise NotFoundError("team", team.id)

    def list(self, company_id: str) -> Sequence[Team]:
        statement = (
            select(teams)
            .where(teams.c.company_id == company_id)
            .order_by(teams.c.name_key, teams.c.id)
        )
        return [_team(row) for row in self._cx.execute(statement)]

    def _check_members(self, team: Team) -> None:
        if not team.member_ids:
            return
        statement = select(crew_members.c.id).where(
            crew_members.c.company_id == team.company_id,
            crew_members.c.id.in_(team.member_ids),
        )
        found = set(self._cx.execute(statement).scalars())
        for member_id in team.member_ids:
            if member_id not in found:
                raise NotFoundError("crew member", member_id)
