"""``booking user create`` and ``booking user link``, and the users ``booking demo`` makes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adapters.passwords import Argon2Hasher
from booking_core.services import users as user_cases
from booking_core.users import hash_token
from entrypoints.bootstrap import bootstrap
from tests.integration.test_cli import Run, one_line


@pytest.fixture
def run(tmp_path: Path) -> Run:
    runner = Run(f"sqlite:///{tmp_path / 'users.sqlite3'}")
    assert runner("migrate")[0] == 0
    return runner


LINK = re.compile(r"http://x/sign-in/link/([A-Za-z0-9_-]{43})$")


def redeem(run: Run, token: str) -> str:
    container = bootstrap(run.settings)
    try:
        return user_cases.redeem_sign_in_link(token, uow=container.uow(), clock=container.clock).id
    finally:
        container.close()


def test_user_create_prints_a_one_time_link_that_signs_that_user_in(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, out, err = run(
        "user", "create", "--company", "acme", "--email", " Olivia@Acme.example ",
        "--role", "Owner", "--name", "Olivia Owner",
    )  # fmt: skip
    assert status == 0, err
    first, second = out.strip().splitlines()
    assert first.startswith("created olivia@acme.example (usr_")
    assert first.endswith(", owner of acme")
    link = LINK.search(second)
    assert link is not None, second
    user_id = first.split("(")[1].split(")")[0]
    assert redeem(run, link.group(1)) == user_id


def test_user_create_json_and_a_fresh_link(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, out, _ = run(
        "user", "create", "--company", "acme", "--email", "d@acme.example", "--role",
        "dispatcher", "--json",
    )  # fmt: skip
    assert status == 0
    made = json.loads(out)
    assert set(made) == {"id", "companyId", "email", "name", "role", "crewMemberId", "signInLink"}
    assert made["role"] == "dispatcher"
    assert made["crewMemberId"] is None
    status, out, _ = run("user", "link", "--email", "D@ACME.example", "--json")
    assert status == 0
    fresh = json.loads(out)
    assert fresh["id"] == made["id"]
    assert fresh["signInLink"] != made["signInLink"]
    token = LINK.search(fresh["signInLink"])
    assert token is not None
    assert hash_token(token.group(1)) != token.group(1)
    assert redeem(run, token.group(1)) == made["id"]


def test_password_stdin_sets_a_password_and_prints_no_link(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    status, out, _ = run(
        "user", "create", "--company", "acme", "--email", "o@acme.example", "--role", "owner",
        "--password-stdin", stdin="a long and careful passphrase\n",
    )  # fmt: skip
    assert status == 0
    assert "sign-in/link" not in out
    assert "password set: sign in at http://x/sign-in" in out
    container = bootstrap(run.settings)
    try:
        user = user_cases.sign_in_with_password(
            "o@acme.example",
            "a long and careful passphrase",
            uow=container.uow(),
            hasher=Argon2Hasher(),
        )
    finally:
        container.close()
    assert user.password_hash is not None
    assert user.password_hash.startswith("$argon2id$")


def test_bad_user_input_is_one_line_and_exit_status_2(run):
    run("company", "create", "--slug", "acme", "--name", "Acme Maids")
    base = ("user", "create", "--company", "acme")
    cases = [
        ((*base, "--email", "nope", "--role", "owner"), "email: Not an email address."),
        ((*base, "--email", "a@acme.example", "--role", "admin"), "--role: One of owner"),
        ((*base, "--email", "a@acme.example", "--role", "crew"), "--crew-member: A crew user"),
        (
            (*base, "--email", "a@acme.example", "--role", "crew", "--crew-member", "crew_x"),
            "--crew-member: No crew member 'crew_x' in this company.",
        ),
        ((*base[:2], "--company", "nope", "--email", "a@x.example", "--role", "owner"), "nope"),
        (("user", "link", "--email", "nobody@acme.example"), "no user with email"),
    ]
    for argv, expected in cases:
        status, out, err = run(*argv)
        assert status == 2, (argv, out, err)
        assert expected in one_line(err), err
    status, _, err = run(*base, "--email", "s@acme.example", "--role", "owner", "--password-stdin",
                         stdin="too short\n")  # fmt: skip
    assert status == 2
    assert "--password-stdin: At least 12 characters." in one_line(err)  # named by its flag
    status, _, err = run(*base, "--email", "s@acme.example", "--role", "owner", "--password-stdin",
                         stdin="\n")  # fmt: skip
    assert status == 2
    assert "--password-stdin: no password on stdin's first line" in one_line(err)
    run(*base, "--email", "taken@acme.example", "--role", "owner")
    run("company", "create", "--slug", "other", "--name", "Other Co")
    status, _, err = run(
        "user", "create", "--company", "other", "--email", "TAKEN@acme.example", "--role", "owner"
    )
    assert status == 2
    assert "email: A user with this email exists already." in one_line(err)


def test_demo_makes_an_owner_and_a_crew_user_per_company_with_fresh_links(run):
    first = json.loads(run("demo", "--json")[1])["companies"]
    second = json.loads(run("demo", "--json")[1])["companies"]
    for before, after in zip(first, second, strict=True):
        emails = [u["email"] for u in before["users"]]
        assert emails == [u["email"] for u in after["users"]]
        assert emails[0] == f"owner@{before['slug']}.example"
        assert [u["signInLink"] for u in before["users"]] != [
            u["signInLink"] for u in after["users"]
        ]
    status, out, _ = run("demo")
    assert status == 0
    assert "sign in as owner owner@sparkle-cleaning.example: http://x/sign-in/link/" in out
    assert "Sign in:  http://x/sign-in" in out
