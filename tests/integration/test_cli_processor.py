"""``booking processor connect`` and ``disconnect`` on a real SQLite file: a company's
card-processor account, its refusals as one line and exit status 2, and the account kept
(with its company) after a disconnect."""

from __future__ import annotations

import json

import pytest

from booking_core.processor_accounts import ProcessorAccount
from entrypoints.bootstrap import bootstrap
from tests.integration.test_cli import Run, one_line


@pytest.fixture
def run(tmp_path) -> Run:
    runner = Run(f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    assert runner("migrate")[0] == 0
    for slug in ("acme", "other"):
        assert runner("company", "create", "--slug", slug, "--name", slug.title())[0] == 0
    return runner


def stored(run: Run, account_id: str) -> ProcessorAccount | None:
    container = bootstrap(run.settings)
    try:
        with container.uow() as uow:
            return uow.processor.account(account_id)
    finally:
        container.close()


def test_connect_then_disconnect_keeps_the_account_with_its_company(run):
    status, out, _ = run("processor", "connect", "--company", "acme", "--account", "acct_1Acme")
    assert (status, out.strip()) == (0, "connected acme to acct_1Acme")
    status, out, _ = run("processor", "disconnect", "--company", "acme", "--json")
    assert status == 0
    shown = json.loads(out)
    assert (shown["account"], shown["connected"]) == ("acct_1Acme", False)
    assert shown["disconnectedAt"] is not None
    account = stored(run, "acct_1Acme")
    assert account is not None
    assert not account.connected
    assert account.company_id == shown["companyId"]


def test_connect_json_names_the_company_and_the_account(run):
    status, out, _ = run(
        "processor", "connect", "--company", "acme", "--account", "acct_1Acme", "--json"
    )
    assert status == 0
    shown = json.loads(out)
    assert set(shown) == {"companyId", "account", "connected", "connectedAt", "disconnectedAt"}
    assert (shown["account"], shown["connected"], shown["disconnectedAt"]) == (
        "acct_1Acme",
        True,
        None,
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("connect", "--company", "acme", "--account", "ch_123"), "--account: "),
        (("connect", "--company", "nope", "--account", "acct_1"), "no company with slug 'nope'"),
        (("connect", "--company", "other", "--account", "acct_1Acme"), "another company"),
        (("connect", "--company", "acme", "--account", "acct_2Acme"), "disconnect it first"),
        (("disconnect", "--company", "other"), "other has no processor account connected"),
        (("connect", "--company", "acme"), "--account"),
    ],
)
def test_refusals_are_one_line_and_exit_status_2(run, argv, says):
    assert run("processor", "connect", "--company", "acme", "--account", "acct_1Acme")[0] == 0
    status, out, err = run("processor", *argv)
    assert status == 2
    assert out == ""
    assert says in one_line(err)
    account = stored(run, "acct_1Acme")
    assert account is not None
    assert account.connected
