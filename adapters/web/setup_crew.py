"""The crew in the admin workspace: ``/admin/crew`` lists the company's crew members, and
a form adds or changes one: name, home zip, service areas, services not done, weekly
hours, time off, active.

A saved form is one member of ``import_crew`` (matched by id when changing one, so
renaming works; added when new), which checks the member whole and writes nothing when
anything is wrong. The member is named in the address and looked up in the signed-in
user's company only: another company's id is the 404 page.

The page lists the company's teams too, and ``/admin/crew/teams/new`` and
``/admin/crew/teams/{team_id}`` add or change one (``save_team``: a name and at least two
active members), the team looked up in the signed-in user's company only.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.calendar import read_date
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import FIRST_DATE, LAST_DATE, Visit, crew_named, page
from adapters.web.setup_forms import (
    STALE,
    FieldErrors,
    checked,
    fingerprint,
    items,
    sort_errors,
    stale,
    ticked,
)
from booking_core.crew import CrewMember, Team
from booking_core.crew_drafts import (
    CrewDraft,
    CrewMemberDraft,
    TimeOffDraft,
    WorkingHoursDraft,
    name_key,
)
from booking_core.errors import ConflictError, NotFoundError, ValidationFailed
from booking_core.plain_text import quoted
from booking_core.ports import UnitOfWork
from booking_core.services.scheduling import active_crew
from booking_core.services.setup import (
    ChangedMeanwhile,
    ImportCrew,
    SaveTeam,
    export_catalog,
    import_crew,
    list_teams,
    save_team,
)

CREW = "/admin/crew"
TEAMS = f"{CREW}/teams"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
STRETCH = re.compile(r"^([0-9]{1,2}):([0-9]{2})\s*(?:-|\u2013|to)\s*([0-9]{1,2}):([0-9]{2})\Z")
DAYS_OFF = re.compile(
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:\s*(?:to|\u2013|\.\.)\s*([0-9]{4}-[0-9]{2}-[0-9]{2}))?\Z"
)
HOURS_HELP = "Hours such as 08:00-17:00 (or 08:00-12:00, 13:00-17:00); empty for a day off."
TIME_OFF_HELP = "one line each, 2026-12-24 or 2026-12-24 to 2026-12-26."
SAME_NAME = "An active crew member has this name already: edit theirs, or tell them apart."
MEMBER_FIELDS = {
    "id": "name",
    "name": "name",
    "home_zip": "home_zip",
    "service_areas": "service_areas",
    "excluded_service_ids": "excluded",
    "time_off": "time_off",
}


@frozen
class Row:
    """A crew member as the list shows them."""

    id: str
    name: str
    home_zip: str
    areas: str
    hours: tuple[str, ...]
    excluded: tuple[str, ...]
    time_off: str
    active: bool


def hhmm(value: time) -> str:
    """``08:00``."""
    return f"{value.hour:02d}:{value.minute:02d}"


def _day_text(member: CrewMember | CrewMemberDraft, weekday: int) -> str:
    return ", ".join(
        f"{hhmm(h.start)}-{hhmm(h.end)}" for h in member.working_hours if h.weekday == weekday
    )


def _time_off_text(member: CrewMember | CrewMemberDraft, zone: ZoneInfo) -> str:
    lines = []
    for off in member.time_off:
        first = off.start.astimezone(zone)
        end = off.end.astimezone(zone)
        if first.time() == time() and end.time() == time():  # whole days, as the form writes
            last = end.date() - timedelta(days=1)
            lines.append(first.date().isoformat() + ("" if last == first.date() else f" to {last}"))
        else:
            # not whole days here: an import's exact times, or days set before the company's
            # timezone changed; shown with their times and kept as they are
            lines.append(f"{first:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} {EXACT_TIMES}")
    return "\n".join(lines)


def crew_page(visit: Visit) -> Response:
    """``GET /admin/crew``: the active members by name (an inactive one leaves the list, as
    from ``booking crew export``)."""
    company = visit.signed_in_company
    zone = ZoneInfo(company.timezone)
    with visit.deps.reader() as uow:
        members = active_crew(uow, company.id)
    catalog = export_catalog(company.id, uow=visit.deps.reader())
    names = {s.id: s.name for i in catalog.industries for s in i.services}
    rows = [
        Row(
            id=m.id,
            name=m.name,
            home_zip=m.home_zip,
            areas=", ".join(m.service_areas),
            hours=tuple(
                f"{WEEKDAYS[d - 1][:3]} {_day_text(m, d)}" for d in range(1, 8) if _day_text(m, d)
            ),
            excluded=tuple(sorted(names.get(s, s) for s in m.excluded_service_ids)),
            time_off=_time_off_text(m, zone).replace("\n", "; "),
            active=m.active,
        )
        for m in sorted(members, key=lambda m: m.name.casefold())
    ]
    teams = list_teams(company.id, uow=visit.deps.reader())
    with visit.deps.reader() as uow:
        names = _member_names(uow, company.id, members, teams)
    team_rows = [
        TeamRow(id=t.id, name=t.name, members=tuple(names[m] for m in t.member_ids)) for t in teams
    ]
    return visit.render("setup_crew.html", rows=rows, teams=team_rows)


@frozen
class TeamRow:
    """A team as the list shows it: its name and its members' names."""

    id: str
    name: str
    members: tuple[str, ...]


def _member_names(
    uow: UnitOfWork, company_id: str, roster: list[CrewMember], teams: list[Team]
) -> dict[str, str]:
    """Names by member id for the teams' members; one no longer active says so."""
    names = {m.id: m.name for m in roster}
    for member_id in {m for t in teams for m in t.member_ids} - names.keys():
        try:
            names[member_id] = f"{uow.crew.get(company_id, member_id).name} (inactive)"
        except NotFoundError:  # storage refuses a team of unknown members; shown plainly
            names[member_id] = member_id
    return names


def team_form(visit: Visit) -> Response:
    """``/admin/crew/teams/new`` and ``/admin/crew/teams/{team_id}``: add or change a team:
    its name and, ticked, its members (at least two active crew members)."""
    company = visit.signed_in_company
    team_id = visit.request.path_params.get("team_id")
    current: Team | None = None
    with visit.deps.reader() as uow:
        if team_id is not None:
            current = uow.teams.get(company.id, team_id)  # another company's: 404
        roster = sorted(active_crew(uow, company.id), key=lambda m: m.name.casefold())
        names = _member_names(uow, company.id, roster, [current] if current else [])
    # The active roster by name, then a member of the team no longer active (to untick).
    on_roster = {m.id for m in roster}
    choices = [(m.id, m.name) for m in roster]
    choices += [
        (m, names[m]) for m in (current.member_ids if current else ()) if m not in on_roster
    ]
    stored = values = _team_values(current)
    errors = FieldErrors()
    others: list[str] = []
    saved: Team | None = None
    if visit.request.method == "POST" and current is not None and stale(visit.form, stored):
        others = [STALE.format(what="team")]
    elif visit.request.method == "POST":
        values = {"name": visit.field("name")}
        values |= {n: "on" for n in visit.form if n.startswith("member_")}
        chosen = ticked(errors, visit.form, "member_", [m for m, _ in choices], field="members")
        kept = [m for m in (current.member_ids if current else ()) if m in chosen]
        cmd = SaveTeam(
            company_id=company.id,
            name=values["name"],
            member_ids=tuple(kept + [m for m in chosen if m not in kept]),
            team_id=current.id if current else None,
            expected=current,
        )
        try:
            saved = None if errors else save_team(cmd, uow=visit.deps.uow(), clock=visit.deps.clock)
        except ValidationFailed as refused:
            # Members named as the form names them (the core's text names their ids).
            plain = {m: n.removesuffix(" (inactive)") for m, n in choices}
            for path, said in refused.field_errors.items():
                inactive = path == "member_ids" and said.startswith("Not an active crew member")
                shown = (
                    f"{crew_named(said, plain)} Untick them to save the team." if inactive else said
                )
                errors.add("members" if path == "member_ids" else path, shown)
        except ChangedMeanwhile:  # saved by someone else between this read and the write
            with visit.deps.uow() as uow:
                current = uow.teams.get(company.id, cmd.team_id or "")
            stored = values = _team_values(current)
            others = [STALE.format(what="team")]
        except ConflictError:  # another team took the name a moment ago
            errors.add("name", "Another team has this name already.")
        if saved is not None:
            return visit.redirect(CREW, flash=f"Saved the team {saved.name}.")
    return visit.render(
        "setup_crew_team.html",
        status=422 if errors or others else 200,
        values=values,
        errors=errors,
        others=others,
        shown=fingerprint(stored) if current else "",
        team=current,
        choices=choices,
    )


def _team_values(team: Team | None) -> dict[str, str]:
    """What the team form shows of a stored team (nothing of a new one)."""
    values = {"name": team.name if team else ""}
    return values | {f"member_{m}": "on" for m in (team.member_ids if team else ())}


def _values(member: CrewMember | None, zone: ZoneInfo) -> dict[str, str]:
    if member is None:
        return {"name": "", "home_zip": "", "service_areas": "", "time_off": "", "active": "on"}
    return {
        "name": member.name,
        "home_zip": member.home_zip,
        "service_areas": ", ".join(member.service_areas),
        "time_off": _time_off_text(member, zone),
        **{f"day_{d}": _day_text(member, d) for d in range(1, 8)},
        **{f"exclude_{s}": "on" for s in member.excluded_service_ids},
        **({"active": "on"} if member.active else {}),
    }


def _hours(errors: FieldErrors, values: dict[str, str]) -> list[WorkingHoursDraft]:
    stretches = []
    for day in range(1, 8):
        name = f"day_{day}"
        for part in items(values.get(name, "")):
            if part.lower() == "off":
                continue
            found = STRETCH.match(part)
            try:
                if found is None:
                    raise ValueError(part)
                h1, m1, h2, m2 = (int(g) for g in found.groups())
                start = time(h1, m1)
                end = time(0) if (h2, m2) == (24, 0) else time(h2, m2)
            except ValueError:
                errors.add(name, f"Could not read {quoted(part)}. {HOURS_HELP}")
                continue
            if end == time(0):
                errors.add(name, "End by 23:59: working hours stay within the day.")
                continue
            stretches.append(WorkingHoursDraft(weekday=day, start=start, end=end))
    return stretches


EXACT_TIMES = "(exact times)"
"""Marks a time-off line that is not whole days of the company's timezone."""


def _time_off(errors: FieldErrors, text: str, zone: ZoneInfo) -> list[TimeOffDraft]:
    """Lines of ``2026-12-24`` or ``2026-12-24 to 2026-12-26``: whole days, the company's;
    a line the form did not write (an import's exact times) is kept as it was."""
    found = []
    for line in (line.strip() for line in text.splitlines()):
        if not line:
            continue
        if line.endswith(EXACT_TIMES):
            parts = line.removesuffix(EXACT_TIMES).strip().split(" to ")
            try:
                start, end = (datetime.fromisoformat(p).replace(tzinfo=zone) for p in parts)
                if not all(FIRST_DATE <= t.date() <= LAST_DATE for t in (start, end)):
                    raise ValueError(line)  # outside 1970 to 2999, as every form date
            except ValueError:
                errors.add("time_off", f"Could not read {quoted(line)}.")
                continue
            found.append(TimeOffDraft(start=start, end=end))
            continue
        match = DAYS_OFF.match(line)
        try:
            if match is None:
                raise ValueError(line)
            first = read_date(match.group(1))  # 1970 to 2999: the day after the last is one
            last = read_date(match.group(2)) if match.group(2) else first
            if first is None or last is None:
                raise ValueError(line)
        except ValueError:
            errors.add("time_off", f"Could not read {quoted(line)}: {TIME_OFF_HELP}")
            continue
        if last < first:
            errors.add("time_off", f"{line}: the last day comes before the first.")
            continue
        found.append(
            TimeOffDraft(
                start=datetime.combine(first, time(), tzinfo=zone),
                end=datetime.combine(last + timedelta(days=1), time(), tzinfo=zone),
            )
        )
    return found


def member_form(visit: Visit) -> Response:
    """``/admin/crew/new`` and ``/admin/crew/{member_id}``: add or change a crew member."""
    company = visit.signed_in_company
    zone = ZoneInfo(company.timezone)
    member_id = visit.request.path_params.get("member_id")
    current: CrewMember | None = None
    if member_id is not None:
        with visit.deps.reader() as uow:
            current = uow.crew.get(company.id, member_id)  # another company's: 404
    catalog = export_catalog(company.id, uow=visit.deps.reader())
    services = [s for i in catalog.industries for s in i.services]
    stored = values = _values(current, zone)
    errors = FieldErrors()
    others: list[str] = []
    if visit.request.method == "POST" and current is not None and stale(visit.form, stored):
        others = [STALE.format(what="crew member")]
    elif visit.request.method == "POST":
        values = {
            name: visit.field(name) for name in ("name", "home_zip", "service_areas", "time_off")
        }
        values |= {f"day_{d}": visit.field(f"day_{d}") for d in range(1, 8)}
        values |= {n: "on" for n in visit.form if n.startswith("exclude_") or n == "active"}
        hours = _hours(errors, values)
        time_off = _time_off(errors, values["time_off"], zone)
        offered = [s.id for s in services]
        excluded = ticked(errors, visit.form, "exclude_", offered, field="excluded")
        # What could be read is checked whole even with the form's own problems (only a
        # check then, nothing saved), so that every problem shows at once.
        draft = CrewMemberDraft(
            id=current.id if current else None,
            name=values["name"].strip(),
            home_zip=values["home_zip"].strip(),
            service_areas=items(values["service_areas"], spaces=True),
            excluded_service_ids=excluded,
            working_hours=tuple(hours),
            time_off=tuple(time_off),
            active=checked(visit.form, "active"),
        )
        if current is None and _named_like_someone(visit, draft.name):
            errors.add("name", SAME_NAME)  # import would change that member: checked as new
            draft = attrs.evolve(draft, name=f"{draft.name} (new)")
        try:
            changes = import_crew(
                ImportCrew(
                    company_id=company.id,
                    crew=CrewDraft(members=(draft,)),
                    dry_run=bool(errors),
                    expected=(current,) if current else (),
                ),
                uow=visit.deps.uow(),
                clock=visit.deps.clock,
                drive=visit.deps.drive,
            )
        except ChangedMeanwhile:  # saved by someone else since this request read it
            with visit.deps.uow() as uow:
                current = uow.crew.get(company.id, draft.id or "")
            stored = values = _values(current, zone)
            errors, others = FieldErrors(), [STALE.format(what="crew member")]
        except ValidationFailed as refused:
            plain = {path: _plain(path, text) for path, text in refused.field_errors.items()}
            found, others = sort_errors(plain, {"members.0": MEMBER_FIELDS})
            _place_hours(plain, draft, found)
            for name, text in found.items():
                errors.add(name, text)
            others = [o for o in others if "working hours" not in o]
        else:
            if not errors:
                saved = f"Saved {draft.name}."
                for member, count in changes.still_booked:
                    jobs = "job" if count == 1 else "jobs"
                    saved += (
                        f" {member.name} is inactive and still holds {count} scheduled"
                        f" {jobs}: give each to someone else from its booking page."
                    )
                return visit.redirect(CREW, flash=saved)
    return visit.render(
        "setup_crew_member.html",
        status=422 if errors or others else 200,
        values=values,
        errors=errors,
        others=others,
        shown=fingerprint(stored) if current else "",
        member=current,
        services=services,
        weekdays=list(enumerate(WEEKDAYS, start=1)),
    )


def _named_like_someone(visit: Visit, name: str) -> bool:
    """A new member named like an active one would change that one (import matches by
    name); the form adds, so it refuses instead."""
    key = name_key(name)
    company_id = visit.signed_in_company.id
    with visit.deps.reader() as uow:
        roster = active_crew(uow, company_id)
    return any(name_key(m.name) == key for m in roster)


PLAIN = {
    "Required: may not be blank.": "Required.",
    "Overlaps another stretch of that day.": (
        "Two stretches of this day overlap: end one before the next starts."
    ),
}
"""The crew rules' texts (written for the API and the command line) in the page's words."""


def _plain(path: str, text: str) -> str:
    """A crew rule's ``text`` at ``path`` as the form says it."""
    if text == "After start.":
        if ".working_hours." in path:
            return "The end must be after the start, e.g. 08:00-17:00."
        return "The last day off must not come before the first."
    return PLAIN.get(text, text)


def _place_hours(problems: dict[str, str], draft: CrewMemberDraft, errors: FieldErrors) -> None:
    """``members.0.working_hours.N...`` beside the weekday of stretch N."""
    for path, text in problems.items():
        parts = path.split(".")
        if parts[2:3] == ["working_hours"] and len(parts) > 3 and parts[3].isdigit():
            stretch = draft.working_hours[int(parts[3])]
            errors.add(f"day_{stretch.weekday}", text)


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The crew list, the team form and the member form (``new`` before an id: it is
    not one)."""
    both = ("GET", "POST")
    return [
        page(CREW, deps, crew_page, roles=ADMINS),
        page(f"{TEAMS}/new", deps, team_form, methods=both, roles=ADMINS),
        page(f"{TEAMS}/{{team_id}}", deps, team_form, methods=both, roles=ADMINS),
        page(f"{CREW}/new", deps, member_form, methods=both, roles=ADMINS),
        page(f"{CREW}/{{member_id}}", deps, member_form, methods=both, roles=ADMINS),
    ]
