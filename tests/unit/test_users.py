from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from adapters.memory import MemoryUnitOfWork
from adapters.passwords import Argon2Hasher
from booking_core import users
from booking_core.clock import FixedClock
from booking_core.crew import new_crew_member
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.services import companies as company_cases
from booking_core.services import users as cases
from booking_core.users import Role, SignInRefused
from tests import factories as f


@attrs.define
class CountingHasher:
    """A fast stand-in for ``Argon2Hasher`` that counts its work; ``version`` plays the
    part of the argon2 parameters."""

    version: str = "v2"
    work: list[str] = attrs.Factory(list)

    def hash(self, password: str) -> str:
        self.work.append("hash")
        return f"fake${self.version}${password[::-1]}"

    def verify(self, password_hash: str, password: str) -> bool:
        self.work.append("verify")
        return password_hash.rsplit("$", maxsplit=1)[-1] == password[::-1]

    def needs_rehash(self, password_hash: str) -> bool:
        return not password_hash.startswith(f"fake${self.version}$")


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(f.at())


@pytest.fixture
def uow() -> MemoryUnitOfWork:
    return MemoryUnitOfWork()


@pytest.fixture
def company_id(uow: MemoryUnitOfWork, clock: FixedClock) -> str:
    return company_cases.create_company(
        company_cases.CreateCompany(slug="sparkle", name="Sparkle"), uow=uow, clock=clock
    ).id


def crew_member(uow: MemoryUnitOfWork, company_id: str) -> str:
    member = new_crew_member(
        member_id=f"crew_{company_id[-6:]}",
        company_id=company_id,
        name="Rosa",
        home_zip="10001",
        at=f.at(),
    )
    with uow:
        uow.crew.add(member)
        uow.commit()
    return member.id


def owner(uow, clock, company_id, email="Owner@Example.com", password=None, hasher=None):
    cmd = cases.CreateUser(
        company_id=company_id, email=email, role=Role.OWNER, name="Olive Owner", password=password
    )
    return cases.create_user(cmd, uow=uow, clock=clock, hasher=hasher)


def test_a_user_is_created_with_a_normalised_email_and_no_password(uow, clock, company_id):
    made = owner(uow, clock, company_id)
    assert made.id.startswith("usr_")
    assert made.email == "owner@example.com"
    assert made.password_hash is None
    assert made.session_epoch == 0
    assert cases.list_users(company_id, uow=uow) == [made]


def test_an_email_is_refused_when_any_company_uses_it(uow, clock, company_id):
    owner(uow, clock, company_id)
    other = company_cases.create_company(
        company_cases.CreateCompany(slug="handy", name="Handy"), uow=uow, clock=clock
    )
    with pytest.raises(ValidationFailed) as refused:
        owner(uow, clock, other.id, email=" OWNER@example.com")
    assert refused.value.field_errors == {"email": "A user with this email exists already."}


@pytest.mark.parametrize(
    ("email", "role", "crew", "field"),
    [
        ("not-an-email", Role.OWNER, None, "email"),
        ("c@example.com", Role.CREW, None, "crew_member_id"),
        ("d@example.com", Role.DISPATCHER, "crew_x", "crew_member_id"),
        ("e@example.com", Role.CREW, "crew_of_nobody", "crew_member_id"),
    ],
)
def test_bad_fields_are_named(uow, clock, company_id, email, role, crew, field):
    cmd = cases.CreateUser(company_id=company_id, email=email, role=role, crew_member_id=crew)
    with pytest.raises(ValidationFailed) as refused:
        cases.create_user(cmd, uow=uow, clock=clock)
    assert list(refused.value.field_errors) == [field]


@pytest.mark.parametrize("name", ["Line1\nLine2", "Ana\tKim", "evil\u202egnp", "Ana\u2028Kim"])
def test_a_user_s_name_is_one_line_as_the_top_bar_shows_it(uow, clock, company_id, name):
    cmd = cases.CreateUser(
        company_id=company_id, email="n@example.com", role=Role.DISPATCHER, name=name
    )
    with pytest.raises(ValidationFailed) as refused:
        cases.create_user(cmd, uow=uow, clock=clock)
    assert list(refused.value.field_errors) == ["name"]


def test_a_crew_user_needs_a_crew_member_of_its_own_company(uow, clock, company_id):
    other = company_cases.create_company(
        company_cases.CreateCompany(slug="handy", name="Handy"), uow=uow, clock=clock
    )
    theirs = crew_member(uow, other.id)
    mine = crew_member(uow, company_id)
    cmd = cases.CreateUser(company_id=company_id, email="c@example.com", role=Role.CREW)
    with pytest.raises(ValidationFailed):
        cases.create_user(attrs.evolve(cmd, crew_member_id=theirs), uow=uow, clock=clock)
    made = cases.create_user(attrs.evolve(cmd, crew_member_id=mine), uow=uow, clock=clock)
    assert made.crew_member_id == mine


def test_an_unknown_company_is_not_found(uow, clock):
    with pytest.raises(NotFoundError):
        owner(uow, clock, "cmp_never")


def test_parse_role_names_the_choices():
    assert users.parse_role(" Crew ") is Role.CREW
    with pytest.raises(ValidationFailed) as refused:
        users.parse_role("admin")
    assert refused.value.field_errors == {"role": "One of owner, dispatcher, crew."}


def test_a_link_signs_in_once(uow, clock, company_id):
    made = owner(uow, clock, company_id)
    user, issued = cases.issue_sign_in_link("OWNER@example.com", uow=uow, clock=clock)
    assert user == made
    with uow:
        stored = list(uow.store.values("sign_in_links").values())
    assert [s.token_hash for s in stored] == [users.hash_token(issued.token)]
    assert issued.token not in repr(stored)
    assert cases.redeem_sign_in_link(issued.token, uow=uow, clock=clock) == made
    with pytest.raises(SignInRefused) as again:
        cases.redeem_sign_in_link(issued.token, uow=uow, clock=clock)
    assert again.value.message == users.LINK_REFUSED


def test_a_link_expires_after_15_minutes(uow, clock, company_id):
    owner(uow, clock, company_id)
    _, fresh = cases.issue_sign_in_link("owner@example.com", uow=uow, clock=clock)
    _, stale = cases.issue_sign_in_link("owner@example.com", uow=uow, clock=clock)
    clock.advance(timedelta(minutes=14, seconds=59))
    assert cases.redeem_sign_in_link(fresh.token, uow=uow, clock=clock).email
    clock.advance(timedelta(seconds=1))
    with pytest.raises(SignInRefused):
        cases.redeem_sign_in_link(stale.token, uow=uow, clock=clock)


def test_a_made_up_link_and_an_unknown_email_are_refused(uow, clock, company_id):
    with pytest.raises(SignInRefused):
        cases.redeem_sign_in_link("made-up", uow=uow, clock=clock)
    with pytest.raises(NotFoundError):
        cases.issue_sign_in_link("nobody@example.com", uow=uow, clock=clock)


def test_password_sign_in_answers_alike_for_unknown_email_wrong_password_and_no_password(
    uow, clock, company_id
):
    hasher = CountingHasher()
    owner(uow, clock, company_id, password="correct horse battery", hasher=hasher)
    owner(uow, clock, company_id, email="linkonly@example.com")
    messages = set()
    for email, password in (
        ("nobody@example.com", "correct horse battery"),
        ("owner@example.com", "wrong horse battery"),
        ("linkonly@example.com", "correct horse battery"),
    ):
        hasher.work.clear()
        with pytest.raises(SignInRefused) as refused:
            cases.sign_in_with_password(email, password, uow=uow, hasher=hasher)
        messages.add(refused.value.message)
        assert len(hasher.work) == 1  # one argon2 computation, whatever went wrong
    assert messages == {users.REFUSED}
    signed_in = cases.sign_in_with_password(
        " Owner@Example.com", "correct horse battery", uow=uow, hasher=hasher
    )
    assert signed_in.email == "owner@example.com"


def test_an_old_hash_is_replaced_at_sign_in(uow, clock, company_id):
    made = owner(
        uow, clock, company_id, password="correct horse battery", hasher=CountingHasher("v1")
    )
    assert made.password_hash.startswith("fake$v1$")
    current = CountingHasher("v2")
    signed_in = cases.sign_in_with_password(
        "owner@example.com", "correct horse battery", uow=uow, hasher=current
    )
    assert signed_in.password_hash.startswith("fake$v2$")
    with uow:
        assert uow.users.get(made.id).password_hash == signed_in.password_hash


@pytest.mark.parametrize(("length", "ok"), [(11, False), (12, True), (1_000, True), (1_001, False)])
def test_a_password_has_12_to_1000_characters(uow, clock, company_id, length, ok):
    made = owner(uow, clock, company_id)
    if not ok:
        with pytest.raises(ValidationFailed) as refused:
            cases.set_password(made.id, "x" * length, uow=uow, hasher=CountingHasher())
        assert list(refused.value.field_errors) == ["password"]
        return
    changed = cases.set_password(made.id, "x" * length, uow=uow, hasher=CountingHasher())
    assert (
        cases.sign_in_with_password(made.email, "x" * length, uow=uow, hasher=CountingHasher())
        == changed
    )


def test_a_new_password_and_signing_out_everywhere_end_older_sessions(uow, clock, company_id):
    made = owner(uow, clock, company_id)
    assert cases.session_user(made.id, 0, uow=uow) == made
    after_password = cases.set_password(
        made.id, "a new long password", uow=uow, hasher=CountingHasher()
    )
    assert cases.session_user(made.id, 0, uow=uow) is None
    assert cases.session_user(made.id, after_password.session_epoch, uow=uow) == after_password
    after = cases.sign_out_everywhere(made.id, uow=uow)
    assert after.session_epoch == after_password.session_epoch + 1
    assert cases.session_user(made.id, after_password.session_epoch, uow=uow) is None
    assert cases.session_user("usr_gone", 0, uow=uow) is None


def test_argon2_hasher_makes_argon2id_hashes_and_spots_old_parameters():
    cheap = Argon2Hasher(time_cost=1, memory_cost=8, parallelism=1)
    hashed = cheap.hash("correct horse battery")
    assert hashed.startswith("$argon2id$")
    assert cheap.verify(hashed, "correct horse battery")
    assert not cheap.verify(hashed, "Correct horse battery")
    assert not cheap.verify("not a hash", "correct horse battery")
    assert not cheap.needs_rehash(hashed)
    assert Argon2Hasher(time_cost=2, memory_cost=8, parallelism=1).needs_rehash(hashed)


OLD, NEW = "correct horse battery", "a new long password"


def change(uow, clock, user_id, *, current="", confirm=NEW, link_at=None, hasher=None):
    return cases.change_password(
        user_id,
        NEW,
        confirm=confirm,
        current=current,
        link_sign_in_at=link_at,
        at=clock.now(),
        uow=uow,
        hasher=hasher or CountingHasher(),
    )


def test_changing_a_password_takes_the_current_one_and_names_every_problem(uow, clock, company_id):
    made = owner(uow, clock, company_id, password=OLD, hasher=CountingHasher())
    for current, message in (("", users.CURRENT_MISSING), ("wrong one", users.CURRENT_WRONG)):
        with pytest.raises(ValidationFailed) as refused:
            change(uow, clock, made.id, current=current)
        assert refused.value.field_errors == {"current": message}
    with pytest.raises(ValidationFailed) as refused:
        cases.change_password(
            made.id,
            "short",
            confirm="other",
            current="x" * 1_001,
            link_sign_in_at=None,
            at=clock.now(),
            uow=uow,
            hasher=CountingHasher(),
        )
    assert set(refused.value.field_errors) == {"current", "password", "confirm"}
    with uow:
        assert uow.users.get(made.id) == made  # nothing changed, no session ended
    changed = change(uow, clock, made.id, current=OLD)
    assert changed.session_epoch == made.session_epoch + 1
    assert cases.sign_in_with_password(made.email, NEW, uow=uow, hasher=CountingHasher())


def test_a_user_without_a_password_or_just_signed_in_by_link_need_not_type_the_current_one(
    uow, clock, company_id
):
    first = owner(uow, clock, company_id)
    assert change(uow, clock, first.id).password_hash is not None
    with pytest.raises(ValidationFailed):  # from now on they have one to type
        change(uow, clock, first.id)
    now = clock.now()
    assert change(uow, clock, first.id, link_at=now - users.FRESH_LINK_SIGN_IN)
    for stale in (now - users.FRESH_LINK_SIGN_IN - timedelta(seconds=1), now + timedelta(1)):
        with pytest.raises(ValidationFailed) as refused:
            change(uow, clock, first.id, link_at=stale)
        assert refused.value.field_errors == {"current": users.CURRENT_MISSING}
