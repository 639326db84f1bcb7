"""Teams in memory (the memory unit of work's table ``teams``), checked against its crew
table: a member must be a crew member of the team's company."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.memory.repositories import Table
from booking_core.crew import CrewMember, Team
from booking_core.crew_drafts import name_key
from booking_core.errors import ConflictError, NotFoundError

NAME_TAKEN = "Another team has this name already."


class MemoryTeamRepository:
    """Teams by company; names unique per company as ``name_key`` matches them."""

    def __init__(self, teams: Table[Team], crew: Table[CrewMember]) -> None:
        self._t = teams
        self._crew = crew

    def get(self, company_id: str, team_id: str) -> Team:
        found = self._t.find(company_id, team_id)
        if found is None:
            raise NotFoundError("team", team_id)
        return found

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def add(self, team: Team) -> None:
        self._check(team)
        self._t.insert(team.company_id, team.id, team, team.created_at)

    def save(self, team: Team) -> None:
        self.get(team.company_id, team.id)
        self._check(team)
        self._t.replace(team.company_id, team.id, team)

    def list(self, company_id: str) -> Sequence[Team]:
        return sorted(self._t.values(company_id), key=lambda t: (name_key(t.name), t.id))

    def _check(self, team: Team) -> None:
        for member_id in team.member_ids:
            if self._crew.find(team.company_id, member_id) is None:
                raise NotFoundError("crew member", member_id)
        key = name_key(team.name)
        if any(
            name_key(t.name) == key and t.id != team.id for t in self._t.values(team.company_id)
        ):
            raise ConflictError(NAME_TAKEN)
