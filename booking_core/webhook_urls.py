"""The webhook URL policy: which URLs the service agrees to send a company's events to.

``check_url`` parses a URL, resolves its host through a ``Resolver`` port and returns a
``CheckedUrl`` carrying the addresses that passed; the sender connects to one of those
addresses (never to a second lookup's answer, so a name cannot be re-pointed at a private
address between the check and the connection: no DNS rebinding). A refused URL raises
``ValidationFailed`` on field ``url`` whose text says why in words a person understands.

The rules (docs/webhooks.md, "URL policy"):

- ``https`` only; no user name or password in the URL; a port between 1 and 65535.
- Every address the host resolves to must be public (global unicast). IPv6 forms that carry
  an IPv4 address are unwrapped and the IPv4 address is checked: IPv4-mapped
  (``::ffff:0:0/96``), IPv4-compatible (``::/96``, refused even when public: it is
  deprecated and routes nowhere), 6to4 (``2002::/16``), Teredo (``2001::/32``: the server
  and the client, the inverted last 32 bits) and NAT64 (``64:ff9b::/96``,
  ``64:ff9b:1::/96``; the rest of the local-use ``64:ff9b:1::/48`` is refused).
- An address written in the URL is checked the same way. A host that is not a canonical IP
  literal goes through the resolver as a name, so the decimal, octal and hex forms that
  resolvers accept (``2130706433``, ``0x7f.1``, ``017700000001``) are checked as the
  addresses they stand for. A name that resolves to nothing is refused.
- Hosts listed in ``allow_hosts`` (``BOOKING_WEBHOOK_ALLOW_HOSTS``, for local development
  and tests only) may use ``http`` too and resolve to any address.

The ranges are listed here rather than taken from ``ipaddress``'s ``is_global``, whose
answers changed between Python releases.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import SplitResult, urlsplit

from attrs import frozen

from booking_core.errors import ValidationFailed

if TYPE_CHECKING:
    from booking_core.ports import Resolver

PUBLIC_ONLY = "webhook URLs must be reachable on the public internet"
HTTPS_ONLY = "webhook URLs must use https"
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_HOST_LENGTH = 253

_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_V4 = IPv4Network
_V6 = IPv6Network

# First match wins: the narrow ranges come before the wide ones holding them.
_V4_REFUSED: tuple[tuple[IPv4Network, str], ...] = (
    (_V4("0.0.0.0/32"), "the unspecified address"),
    (_V4("0.0.0.0/8"), "a 'this network' address (0.0.0.0/8)"),
    (_V4("10.0.0.0/8"), "a private address"),
    (_V4("100.64.0.0/10"), "a carrier-grade NAT address (100.64.0.0/10)"),
    (_V4("127.0.0.0/8"), "a loopback address"),
    (_V4("169.254.0.0/16"), "a link-local address"),
    (_V4("172.16.0.0/12"), "a private address"),
    (_V4("192.0.0.0/24"), "an IETF protocol assignment (192.0.0.0/24)"),
    (_V4("192.0.2.0/24"), "a documentation address (192.0.2.0/24)"),
    (_V4("192.88.99.0/24"), "a deprecated 6to4 relay address (192.88.99.0/24)"),
    (_V4("192.168.0.0/16"), "a private address"),
    (_V4("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"),
    (_V4("198.51.100.0/24"), "a documentation address (198.51.100.0/24)"),
    (_V4("203.0.113.0/24"), "a documentation address (203.0.113.0/24)"),
    (_V4("224.0.0.0/4"), "a multicast address"),
    (_V4("255.255.255.255/32"), "the broadcast address"),
    (_V4("240.0.0.0/4"), "a reserved address (240.0.0.0/4)"),
)

_V6_REFUSED: tuple[tuple[IPv6Network, str], ...] = (
    (_V6("::/128"), "the unspecified address"),
    (_V6("::1/128"), "a loopback address"),
    (_V6("100::/64"), "a discard-only address (100::/64)"),
    (_V6("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48)"),
    (_V6("2001:db8::/32"), "a documentation address (2001:db8::/32)"),
    (_V6("2001:2::/48"), "a benchmarking address (2001:2::/48)"),
    (_V6("2001::/23"), "an IETF protocol assignment (2001::/23)"),
    (_V6("3fff::/20"), "a documentation address (3fff::/20)"),
    (_V6("fc00::/7"), "a unique-local address (fc00::/7)"),
    (_V6("fe80::/10"), "a link-local address"),
    (_V6("fec0::/10"), "a site-local address (fec0::/10)"),
    (_V6("ff00::/8"), "a multicast address"),
)
_V6_GLOBAL_UNICAST = _V6("2000::/3")
_V4_COMPATIBLE = _V6("::/96")
_NAT64 = (_V6("64:ff9b::/96"), _V6("64:ff9b:1::/96"))
_TEREDO = _V6("2001::/32")


@frozen(kw_only=True)
class CheckedUrl:
    """A webhook URL that passed ``check_url``, with the addresses to connect to."""

    url: str
    """The URL as given."""
    scheme: str
    """``https``, or ``http`` for an allowed host."""
    host: str
    """Lower-case, in its ASCII (IDNA) form, with no trailing dot; an IPv6 literal without
    brackets."""
    port: int
    """The URL's port, or the scheme's default."""
    path_query: str
    """What follows the host: the path (``/`` when empty) and ``?query``; no fragment."""
    addresses: tuple[str, ...]
    """The addresses the host resolved to, every one checked (unless the host is allowed)."""
    allowed: bool = False
    """True when the host passed through ``allow_hosts`` rather than the public-only rule."""

    @property
    def host_header(self) -> str:
        """The ``Host`` header a request to this URL carries (the port only when not the
        scheme's default)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

    def url_for(self, address: str) -> str:
        """This URL with its host replaced by ``address`` (one of ``addresses``): what the
        sender connects to, sending ``host_header`` as the ``Host``."""
        literal = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{literal}:{self.port}{self.path_query}"


def check_url(url: str, resolver: Resolver, allow_hosts: Collection[str] = ()) -> CheckedUrl:
    """``url`` checked against the URL policy (see the module), its host resolved.

    ``allow_hosts`` holds host names or addresses (``allowed_hosts`` parses the setting)
    exempt from the https and public-address rules. Raises ``ValidationFailed`` on field
    ``url`` with the reason."""
    if not url:
        _refuse("Give the URL the events should be sent to.")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        _refuse("URL must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
    except ValueError:
        _refuse("URL is not valid.")
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        _refuse(f"{_cap(HTTPS_ONLY)}.")
    if "@" in parts.netloc:
        _refuse("Webhook URLs must not contain a user name or password.")
    if not parts.hostname:
        _refuse("URL has no host.")
    port = _port(parts, scheme)
    literal, host = _host(parts)
    allowed = _normal_host(host) in {_normal_host(h) for h in allow_hosts}
    if scheme != "https" and not allowed:
        _refuse(f"{_cap(HTTPS_ONLY)}.")
    if literal is not None:
        if not allowed and (problem := address_problem(literal)):
            _refuse(f"{literal} is {problem}; {PUBLIC_ONLY}.")
        addresses: tuple[str, ...] = (str(literal),)
    else:
        addresses = _resolve(resolver, host, port, allowed)
    path_query = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return CheckedUrl(
        url=url,
        scheme=scheme,
        host=host,
        port=port,
        path_query=path_query,
        addresses=addresses,
        allowed=allowed,
    )


def address_problem(address: IPv4Address | IPv6Address) -> str | None:
    """Why ``address`` is not a public unicast address (a phrase such as ``"a private
    address"``), or None when a webhook may go to it."""
    if isinstance(address, IPv4Address):
        return _v4_problem(address)
    return _v6_problem(address)


def allowed_hosts(setting: str) -> frozenset[str]:
    """The hosts of a ``BOOKING_WEBHOOK_ALLOW_HOSTS`` value: comma-separated host names or
    addresses, blanks ignored (``"localhost, 127.0.0.1,[::1]"``)."""
    return frozenset(h for h in (_normal_host(part) for part in setting.split(",")) if h)


def _v4_problem(address: IPv4Address) -> str | None:
    for network, problem in _V4_REFUSED:
        if address in network:
            return problem
    return None


def _v6_problem(address: IPv6Address) -> str | None:
    if (mapped := address.ipv4_mapped) is not None:
        return _embedded("an IPv4-mapped form", mapped)
    if address in _V4_COMPATIBLE and int(address) > 1:
        inner = IPv4Address(int(address) & 0xFFFFFFFF)
        return _embedded("an IPv4-compatible form", inner) or (
            f"a deprecated IPv4-compatible form of {inner}"
        )
    for nat64 in _NAT64:
        if address in nat64:
            return _embedded("a NAT64 form", IPv4Address(int(address) & 0xFFFFFFFF))
    if (sixtofour := address.sixtofour) is not None:
        return _embedded("a 6to4 form", sixtofour)
    if address in _TEREDO and address.teredo is not None:
        server, client = address.teredo
        for role, inner in (("client", client), ("server", server)):
            if problem := _v4_problem(inner):
                return f"a Teredo address whose {role} is {inner}, {problem}"
        return None
    for network, problem in _V6_REFUSED:
        if address in network:
            return problem
    if address not in _V6_GLOBAL_UNICAST:
        return "a reserved address (outside the global unicast range 2000::/3)"
    return None


def _embedded(form: str, inner: IPv4Address) -> str | None:
    problem = _v4_problem(inner)
    return f"{form} of {inner}, {problem}" if problem else None


def _port(parts: SplitResult, scheme: str) -> int:
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        _refuse("URL port must be a number between 1 and 65535.")
    return port if port is not None else DEFAULT_PORTS[scheme]


def _host(parts: SplitResult) -> tuple[IPv4Address | IPv6Address | None, str]:
    """The host as an address when it is a canonical IP literal (IPv6 in brackets), and
    its normal text form."""
    raw = parts.hostname or ""
    if "[" in parts.netloc:
        try:
            v6 = IPv6Address(raw)
        except ValueError:
            _refuse("URL host is not a valid IPv6 address.")
        if v6.scope_id:
            _refuse("URL host must not name a network interface (an IPv6 zone).")
        return v6, str(v6)
    try:
        host = raw.encode("idna").decode("ascii")
    except UnicodeError:
        _refuse(f"{raw} is not a valid host name.")
    host = host.removesuffix(".")  # the root's dot: "example.com." is "example.com"
    if len(host) > MAX_HOST_LENGTH or not all(_LABEL.fullmatch(x) for x in host.split(".")):
        _refuse(f"{raw} is not a valid host name.")
    try:
        v4 = IPv4Address(host)
    except ValueError:
        return None, host
    return v4, str(v4)


def _resolve(resolver: Resolver, host: str, port: int, allowed: bool) -> tuple[str, ...]:
    try:
        found = resolver.addresses(host, port)
    except OSError:
        found = []
    addresses = tuple(dict.fromkeys(str(ip_address(a.partition("%")[0])) for a in found))
    if not addresses:
        _refuse(f"{host} does not resolve to any address.")
    if not allowed:
        for text in addresses:
            if problem := address_problem(ip_address(text)):
                _refuse(f"{host} resolves to {text}, {problem}; {PUBLIC_ONLY}.")
    return addresses


def _normal_host(text: str) -> str:
    """A host as compared with the allow list: lower-case, no trailing dot or brackets,
    an address in its canonical form."""
    host = text.strip().lower().removesuffix(".").removeprefix("[").removesuffix("]")
    try:
        return str(ip_address(host))
    except ValueError:
        pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _refuse(reason: str) -> NoReturn:
    raise ValidationFailed({"url": reason}, reason)
