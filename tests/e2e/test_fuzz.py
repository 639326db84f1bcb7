"""Schemathesis fuzzes every operation of ``/api/openapi.json`` against the live server,
on SQLite and on PostgreSQL, with valid and invalid data.

Every answer must not be a server error and must match the document: a documented status,
a documented content type, a body of the documented schema. The run is bounded and
reproducible: a fixed number of examples per operation, derandomized generation (no seed
to pick: Schemathesis's deterministic mode uses none), one worker, no example database and
no cache, so a failure here fails the same way on every run, and the output says how to
reproduce it with curl.

Schemathesis runs as its own process (its ``run`` command), not through its pytest plugin:
the plugin's fixture-based schemas (``schemathesis.pytest.from_fixture``), which a server
started by a fixture needs, fail on pytest 9.2 (they set ``Function._nodeid``, which pytest
9.2 no longer has), and a separate process lets the fuzzer and the server use both cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from booking_core import auth
from tests.e2e.support import Stack

MAX_EXAMPLES = 30
"""Examples per operation in the fuzzing phase; the coverage phase adds its own boundary
and invalid cases, and the stateful phase chains operations through the document's links."""
RUN_TIMEOUT_SECONDS = 1_500
"""Far above a normal run (under two minutes on a busy two-core machine, past ten at a load
of twenty): a hang fails the test instead of holding CI to its 90 minutes."""

CONFIG = """
workers = 1
request-timeout = 30
# Keep testing an operation after its first failure: every distinct failure in one run.
continue-on-failure = true
# Below the key's limit, so that no answer is a 429 the run did not ask for.
rate-limit = "{rate_limit}/m"
headers = {{ Authorization = "Bearer {key}" }}

[generation]
mode = "all"
max-examples = {max_examples}
deterministic = true
database = "none"

[cache]
enabled = false

# The key belongs to a throwaway database: the curl lines stay runnable as printed.
[output.sanitization]
enabled = false

[phases.examples]
enabled = true
[phases.coverage]
enabled = true
[phases.fuzzing]
enabled = true
[phases.stateful]
enabled = true

[checks]
enabled = false
not_a_server_error.enabled = true
status_code_conformance.enabled = true
content_type_conformance.enabled = true
response_schema_conformance.enabled = true
"""


def run_schemathesis(stack: Stack, workdir: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    """``schemathesis run`` against the stack's server with a fresh full-scope key of the
    first demo company; the process's output and its JSON report."""
    key = stack.new_key(rate_limit=auth.MAX_RATE_LIMIT)
    config = workdir / "schemathesis.toml"
    config.write_text(
        CONFIG.format(
            key=key,
            max_examples=MAX_EXAMPLES,
            rate_limit=auth.MAX_RATE_LIMIT * 9 // 10,
        ),
        encoding="utf-8",
    )
    report = workdir / "report.json"
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(config),
        "--no-color",
        "run",
        f"{stack.base_url}/api/openapi.json",
        "--report",
        "json",
        "--report-json-path",
        str(report),
    ]
    # A proxy configured in the environment must not see loopback calls (as in support.py).
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    # The working directory takes the files Schemathesis leaves behind (.hypothesis).
    result = subprocess.run(
        command,
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    assert report.exists(), f"schemathesis wrote no report:\n{result.stdout}\n{result.stderr}"
    return result, json.loads(report.read_text(encoding="utf-8"))


def failures_section(output: str) -> str:
    """The FAILURES part of Schemathesis's output: each failure with its curl line."""
    start = output.find(" FAILURES ")
    return output[output.rfind("\n", 0, start) + 1 :] if start >= 0 else output


def test_every_operation_answers_as_documented_under_fuzzing(stack: Stack, tmp_path: Path):
    result, report = run_schemathesis(stack, tmp_path)
    assert report["failures"] == [], failures_section(result.stdout)
    assert report["errors"] == [], result.stdout
    operations = report["operations"]
    assert operations["total"] > 0
    assert operations["tested"] == operations["selected"] == operations["total"], operations
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
