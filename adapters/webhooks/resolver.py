"""``Resolver`` adapters: the system's resolver, and a fixed table for tests.

``SystemResolver`` asks ``socket.getaddrinfo`` (so ``/etc/hosts``, DNS and the numeric forms
the C library accepts, such as ``2130706433`` for ``127.0.0.1``). It has no timeout of its
own: the system resolver's (``/etc/resolv.conf``: ``timeout``, ``attempts``) applies.
``StaticResolver`` answers from a mapping, and answers IP literals as the system resolver
would, so a test decides what every name resolves to without touching DNS.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from ipaddress import IPv6Address


class SystemResolver:
    """``Resolver`` over ``socket.getaddrinfo``; ``[]`` when the name does not resolve."""

    def addresses(self, host: str, port: int) -> list[str]:
        """The host's addresses, in the order the system gives them, each once."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            return []
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


class StaticResolver:
    """``Resolver`` answering from ``table`` (host name -> addresses); a name not in it
    resolves to nothing. IP literals, including the decimal, octal and hex IPv4 forms the
    C library accepts (``2130706433``, ``0x7f.1``), resolve to the address they stand
    for, as with ``SystemResolver``."""

    def __init__(self, table: Mapping[str, str | Iterable[str]] | None = None) -> None:
        self._table = {
            name.lower().removesuffix("."): [found] if isinstance(found, str) else list(found)
            for name, found in (table or {}).items()
        }

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses ``table`` gives ``host`` (case-insensitive, trailing dot
        ignored), or the address an IP literal stands for."""
        name = host.lower().removesuffix(".")
        if name in self._table:
            return list(self._table[name])
        if name and not any(ch.isspace() for ch in name):  # inet_aton allows "1.2.3.4 x"
            try:
                return [socket.inet_ntoa(socket.inet_aton(name))]
            except OSError:
                pass
        try:
            return [str(IPv6Address(name))]
        except ValueError:
            return []
