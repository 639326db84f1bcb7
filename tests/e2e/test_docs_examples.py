"""The curl examples of docs/api.md, run against a live server.

Every fenced ``sh`` block that calls ``curl`` is a list of examples, each ended by a line
``# -> STATUS`` or ``# -> STATUS error_code``. Placeholders (``$BASE``, ``$KEY``, ...) are
shell variables set to the live server, a key and fresh records. The examples run twice:
with the real ``curl`` (when installed) on a demo company, and translated to httpx on a
company of their own, so the translation that stands in where curl is missing is itself
checked against the same expectations.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import string
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from attrs import frozen

from tests.e2e.support import API, Stack, add_booking, idem

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
MARK = re.compile(r"^# -> (\d{3})(?: ([a-z_]+))?\s*$")
CURL = shutil.which("curl")
WRAPPER = (
    'curl() { command curl --silent --show-error --noproxy "*" --max-time 20 '
    '--output "$E2E_BODY" --write-out "%{http_code}" "$@"; }\n'
)


@frozen
class Example:
    script: str
    status: int
    code: str | None


def examples(text: str) -> list[Example]:
    found: list[Example] = []
    for block in FENCE.findall(text):
        if not re.search(r"^curl ", block, re.M):
            continue  # setup lines, not an example
        lines: list[str] = []
        for line in block.splitlines():
            mark = MARK.match(line)
            if mark is None:
                lines.append(line)
                continue
            found.append(Example("\n".join(lines).strip(), int(mark[1]), mark[2]))
            lines = []
        assert not "".join(lines).strip(), f"a curl example without a '# ->' line:\n{block}"
    return found


EXAMPLES = examples(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_examples_of_every_outcome_it_describes():
    assert all(e.script.count("curl ") == 1 for e in EXAMPLES)
    statuses = {e.status for e in EXAMPLES}
    assert statuses >= {200, 201, 400, 401, 403, 404, 405, 409, 422}
    codes = {e.code for e in EXAMPLES}
    assert codes >= {
        "unauthorized",
        "insufficient_scope",
        "invalid_request",
        "not_found",
        "method_not_allowed",
        "idempotency_key_reused",
        "unprocessable",
    }
    assert all(e.code is not None for e in EXAMPLES if e.status >= 400)
    # Money is recorded on a real booking: every payment example names ``$BOOKING``.
    recorded = [e for e in EXAMPLES if "/payments" in e.script and '"bookingId"' in e.script]
    assert recorded
    assert all('"bookingId": "$BOOKING"' in e.script for e in recorded)


def placeholders(stack: Stack, c: httpx.Client, key: str, company_id: str) -> dict[str, str]:
    """Values for the doc's placeholders, made fresh in the company ``c`` acts for."""
    customer = c.post(f"{API}/customers", json={"name": "Doc Reader", "email": "doc@example.com"})
    customer_id = customer.json()["id"]
    quote = c.post(
        f"{API}/quotes",
        json={"customerId": customer_id, "manualLines": [{"description": "x", "amountCents": 1}]},
        headers=idem(),
    )
    booking_id = add_booking(stack.container, company_id)
    payment = c.post(
        f"{API}/payments",
        json={"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 800, "method": "CASH"},
        headers=idem(),
    )
    assert payment.status_code == 201, payment.text
    catalog_key = stack.issue_key({"catalog:read"}, company_id=company_id).secret
    return {
        "BASE": stack.base_url,
        "KEY": key,
        "CATALOG_KEY": catalog_key,
        "CUSTOMER_ID": customer_id,
        "QUOTE_ID": quote.json()["id"],
        "BOOKING": booking_id,
        "PAYMENT_ID": payment.json()["id"],
    }


def check(example: Example, status: int, body: bytes) -> None:
    assert status == example.status, f"{example.script}\n-> {status} {body!r}"
    if example.code is not None:
        assert json.loads(body)["error"]["code"] == example.code, example.script


@pytest.mark.skipif(CURL is None, reason="curl is not installed (the httpx run still checks)")
def test_the_curl_examples_answer_as_documented(stack: Stack, tmp_path: Path):
    with stack.client(stack.key) as c:
        values = placeholders(stack, c, stack.key, stack.company.id)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    body_file = tmp_path / "body"
    env.update(values, E2E_BODY=str(body_file))
    for example in EXAMPLES:
        body_file.write_bytes(b"")
        run = subprocess.run(
            ["bash", "-c", WRAPPER + example.script],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert run.returncode == 0, f"{example.script}\n{run.stderr}"
        check(example, int(run.stdout.strip()), body_file.read_bytes())


def translate(script: str, values: dict[str, str]) -> dict[str, Any]:
    """The httpx request a doc example's curl command makes (the options the doc uses)."""
    lines = script.splitlines()
    stdin = None
    for index, line in enumerate(lines):
        heredoc = re.search(r"<<\s*'?(\w+)'?\s*$", line)
        if heredoc:
            end = lines.index(heredoc[1], index + 1)
            stdin = "\n".join(lines[index + 1 : end]) + "\n"
            lines = [*lines[:index], line[: heredoc.start()], *lines[end + 1 :]]
            break
    command = string.Template("\n".join(lines).replace("\\\n", " ")).substitute(values)
    argv = shlex.split(command)
    assert argv.pop(0) == "curl"
    request: dict[str, Any] = {"method": None, "headers": {}, "content": None, "params": []}
    get = False
    while argv:
        arg = argv.pop(0)
        if arg in ("-s", "-S", "-sS", "--silent", "--show-error"):
            continue
        if arg == "-X":
            request["method"] = argv.pop(0)
        elif arg == "-H":
            name, _, value = argv.pop(0).partition(":")
            request["headers"][name.strip()] = value.strip()
        elif arg in ("-d", "--data"):
            data = argv.pop(0)
            request["content"] = (
                string.Template(stdin or "").substitute(values) if data == "@-" else data
            )
        elif arg == "--data-urlencode":
            name, _, value = argv.pop(0).partition("=")
            request["params"].append((name, value))
        elif arg == "-G":
            get = True
        elif arg.startswith("-"):
            raise AssertionError(f"the translation does not know curl's {arg}")
        else:
            request["url"] = arg
    if get:
        request["method"] = "GET"
    elif request["method"] is None:
        request["method"] = "POST" if request["content"] is not None else "GET"
    return request


def test_the_examples_answer_as_documented_over_httpx(stack: Stack):
    company, key = stack.new_company()
    with stack.client(key) as c:
        values = placeholders(stack, c, key, company.id)
    with httpx.Client(trust_env=False, timeout=30) as c:
        for example in EXAMPLES:
            request = translate(example.script, values)
            response = c.request(
                request["method"],
                request["url"],
                headers=request["headers"],
                content=request["content"],
                params=request["params"] or None,
            )
            check(example, response.status_code, response.content)
