"""The load generator of ``make bench-http``: wrk when it can be had, else a small
asyncio HTTP/1.1 client in this process.

A load is a list of ``Request``s written to a pool file, one a line; each connection
takes the next request in turn. ``cycle`` starts over at the end (reads: the same 60
keyed requests again and again); ``once`` never repeats one (bookings: each line is a
distinct slot and idempotency key), and a run that uses the pool up is reported as
``exhausted`` so that its figure is not mistaken for the server's limit.

wrk runs the Lua script below: every thread takes every n-th line, counts the answers
by status, and prints one ``WRK_RESULT {json}`` line at the end with the counts and the
latency percentiles it measured (from a request's first byte written to its answer's
last byte read).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.bench.pg_bench import percentile

SEPARATOR = "\x1f"
"""Between one line's headers (a JSON body never holds it raw, nor a tab)."""


@dataclass(frozen=True)
class Request:
    """One HTTP request of a load; ``body`` is sent as JSON when not empty."""

    method: str
    path: str
    headers: dict[str, str]
    body: str = ""

    def line(self) -> str:
        """This request as one pool-file line."""
        headers = SEPARATOR.join(f"{name}: {value}" for name, value in self.headers.items())
        return "\t".join((self.method, self.path, headers, self.body))


@dataclass(frozen=True)
class Outcome:
    """What one run of the load measured."""

    seconds: float
    answers: Counter[int]
    """Answers by HTTP status."""
    failures: int
    """Connections broken or timed out (no answer)."""
    p50_ms: float
    p99_ms: float
    used: int
    """Pool lines taken: every line before this one may have been sent (not always
    answered), none after it."""
    exhausted: bool
    tool: str

    def rate(self, status: int) -> float:
        """Answers with ``status`` per second."""
        return self.answers[status] / self.seconds

    def unexpected(self, status: int) -> str:
        """A one-line account of everything but ``status`` answers, empty when clean."""
        other = {code: n for code, n in sorted(self.answers.items()) if code != status}
        parts = [f"{n} x {code}" for code, n in other.items()]
        if self.failures:
            parts.append(f"{self.failures} broken or timed out")
        if self.exhausted:
            parts.append("request pool used up (raise its size)")
        return ", ".join(parts)


LUA = r"""
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  nthreads = tonumber(args[2])
  cycle = args[3] == "cycle"
  reqs, codes, sent, exhausted = {}, {}, 0, 0
  local n = 0
  for line in io.lines(args[1]) do
    if n % nthreads == id then
      local method, target, hdrs, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      local headers = {}
      for h in hdrs:gmatch("[^\31]+") do
        local name, value = h:match("^([^:]+): (.*)$")
        headers[name] = value
      end
      if body == "" then body = nil end
      reqs[#reqs + 1] = wrk.format(method, target, headers, body)
    end
    n = n + 1
  end
  pooled = #reqs
  spare = wrk.format("GET", "/healthz")
end

function request()
  sent = sent + 1
  if sent <= #reqs then return reqs[sent] end
  if cycle then return reqs[(sent - 1) % #reqs + 1] end
  exhausted = 1
  wrk.thread:stop()
  return spare
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end

function done(summary, latency, requests)
  local used, used_up, merged, parts = 0, 0, {}, {}
  for _, t in ipairs(threads) do
    local taken = math.min(t:get("sent"), t:get("pooled"))
    if taken > 0 then
      used = math.max(used, (taken - 1) * t:get("nthreads") + t:get("id") + 1)
    end
    used_up = math.max(used_up, t:get("exhausted"))
    for code, n in pairs(t:get("codes")) do merged[code] = (merged[code] or 0) + n end
  end
  for code, n in pairs(merged) do parts[#parts + 1] = string.format('"%d": %d', code, n) end
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"duration_us": %d, "used": %d, "exhausted": %d, "codes": {%s}, '
    .. '"failures": %d, "p50_us": %d, "p99_us": %d}\n',
    summary.duration, used, used_up, table.concat(parts, ", "),
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


def _apt(*args: str) -> bool:
    done = subprocess.run(
        ["apt-get", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return done.returncode == 0


def installed(command: str, package: str) -> str | None:
    """The path of ``command``, installing Debian's ``package`` first when it is missing
    and apt can (as root); None when it cannot be had."""
    found = shutil.which(command)
    if found or shutil.which("apt-get") is None or os.geteuid() != 0:
        return found
    if not _apt("install", "-y", "-qq", package):
        _apt("update", "-qq")
        _apt("install", "-y", "-qq", package)
    return shutil.which(command)


class LoadGenerator:
    """Runs loads with wrk when given its path, else with the asyncio client."""

    def __init__(self, wrk: str | None, folder: Path) -> None:
        self.wrk = wrk
        self.folder = folder
        self.tool = "wrk" if wrk else "python-asyncio"
        self._script = folder / "pool.lua"
        self._script.write_text(LUA)

    def run(
        self,
        base: str,
        requests: Sequence[Request],
        *,
        connections: int,
        seconds: float,
        cycle: bool,
    ) -> Outcome:
        """Send ``requests`` over ``connections`` keep-alive connections for ``seconds``."""
        if self.wrk is None:
            return asyncio.run(_drive(base, requests, connections, seconds, cycle))
        threads = min(2, connections)
        with tempfile.NamedTemporaryFile(
            "w", dir=self.folder, suffix=".pool", delete=False
        ) as pool:
            pool.write("\n".join(r.line() for r in requests) + "\n")
        try:
            run = subprocess.run(
                [
                    self.wrk,
                    f"-t{threads}",
                    f"-c{connections}",
                    f"-d{max(1, round(seconds))}s",
                    "--timeout",
                    "60s",
                    "-s",
                    str(self._script),
                    base,
                    "--",
                    pool.name,
                    str(threads),
                    "cycle" if cycle else "once",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            os.unlink(pool.name)
        line = next((x for x in run.stdout.splitlines() if x.startswith("WRK_RESULT ")), None)
        if run.returncode != 0 or line is None:
            raise RuntimeError(f"wrk failed ({run.returncode}): {run.stderr}{run.stdout}")
        found = json.loads(line.removeprefix("WRK_RESULT "))
        return Outcome(
            seconds=found["duration_us"] / 1e6,
            answers=Counter({int(code): n for code, n in found["codes"].items()}),
            failures=found["failures"],
            p50_ms=found["p50_us"] / 1e3,
            p99_ms=found["p99_us"] / 1e3,
            used=found["used"],
            exhausted=bool(found["exhausted"]),
            tool=self.tool,
        )


def _raw(request: Request, host: str) -> bytes:
    body = request.body.encode()
    lines = [f"{request.method} {request.path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in request.headers.items()]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _answer(reader: asyncio.StreamReader) -> int:
    """Read one answer (Content-Length or chunked body); its status."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
    if fields.get("transfer-encoding", "").lower() == "chunked":
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            await reader.readexactly(size + 2)
        await reader.readuntil(b"\r\n")
    else:
        await reader.readexactly(int(fields.get("content-length", "0")))
    return status


async def _drive(
    base: str, requests: Sequence[Request], connections: int, seconds: float, cycle: bool
) -> Outcome:
    """The same load as the wrk script, from asyncio connections in this process."""
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    raw = [_raw(r, f"{host}:{port}") for r in requests]
    answers: Counter[int] = Counter()
    latencies: list[float] = []
    state = {"next": 0, "failures": 0, "exhausted": 0}
    deadline = time.perf_counter() + seconds

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while time.perf_counter() < deadline:
                index = state["next"]
                if index >= len(raw) and not cycle:
                    state["exhausted"] = 1
                    return
                state["next"] += 1
                sent = time.perf_counter()
                writer.write(raw[index % len(raw)])
                await writer.drain()
                answers[await _answer(reader)] += 1
                latencies.append(time.perf_counter() - sent)
        except (OSError, asyncio.IncompleteReadError):
            state["failures"] += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(connections)))
    elapsed = time.perf_counter() - started
    return Outcome(
        seconds=elapsed,
        answers=answers,
        failures=state["failures"],
        p50_ms=percentile(latencies, 0.5) * 1e3 if latencies else float("nan"),
        p99_ms=percentile(latencies, 0.99) * 1e3 if latencies else float("nan"),
        used=state["next"],
        exhausted=bool(state["exhausted"]),
        tool="python-asyncio",
    )
