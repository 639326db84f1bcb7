"""A webhook receiver for tests: a real HTTP server on a loopback port, in a thread.

It records every request (path, lower-cased headers, body) and answers by path with a
``Script``: a status for the n-th request on that path, an optional pause before the
answer, and a hook called as each request arrives. It also notes when two requests with
the same ``webhook-id`` to the same path were in flight at once (``overlaps``): a
delivery sent twice concurrently. (One event goes to several endpoints with one
``webhook-id``; those may well be sent at once.)"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attrs import define, frozen


@frozen
class Seen:
    """One request as the receiver got it."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


@define
class Script:
    """How a path answers: ``status(n)`` for its n-th request (1 first), after ``pause``
    seconds; ``arrived(seen)`` is called as each request arrives, before the pause."""

    status: Callable[[int], int] = lambda n: 204
    pause: float = 0.0
    arrived: Callable[[Seen], None] = lambda seen: None


def fails(times: int, status: int = 500) -> Script:
    """Answers ``status`` to the first ``times`` requests, then 200."""
    return Script(lambda n: status if n <= times else 200)


class Receiver(ThreadingHTTPServer):
    """The receiver; ``url(path)`` is the address of one of its paths."""

    daemon_threads = True

    def __init__(self, scripts: dict[str, Script] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.port: int = self.server_address[1]
        self.scripts = dict(scripts or {})
        self.seen: list[Seen] = []
        self.overlaps: list[str] = []
        self._counts: Counter[str] = Counter()
        self._in_flight: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def on(self, path: str) -> list[Seen]:
        """The requests that reached ``path``, in order of arrival."""
        with self._lock:
            return [s for s in self.seen if s.path == path]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a worker killed mid-request) is no error here."""

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def _arrive(self, seen: Seen) -> tuple[Script, int]:
        with self._lock:
            self.seen.append(seen)
            self._counts[seen.path] += 1
            number = self._counts[seen.path]
            key = _delivery_key(seen)
            self._in_flight[key] += 1
            if self._in_flight[key] > 1:
                self.overlaps.append(seen.headers.get("webhook-id", ""))
        return self.scripts.get(seen.path, Script()), number

    def _leave(self, seen: Seen) -> None:
        with self._lock:
            self._in_flight[_delivery_key(seen)] -= 1


def _delivery_key(seen: Seen) -> str:
    """One delivery: its endpoint (the path) and its ``webhook-id``."""
    return f"{seen.path} {seen.headers.get('webhook-id', '')}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        script, number = self.server._arrive(seen)
        try:
            script.arrived(seen)
            if script.pause:
                time.sleep(script.pause)
            self.send_response(script.status(number))
            self.send_header("content-length", "0")
            self.end_headers()
        finally:
            self.server._leave(seen)
